// The two-head worked example (Alex, Emma, Daniel × spicy, cheap, cozy, fast, flavor, vibe).
import { createMHA } from 'mha-wasm';

const m = (cols, ...v) => ({ data: v, shape: [v.length / cols, cols] });   // row-major [rows, cols]
const X = m(6, .98,.95,.12,.97,.15,.08, .11,.96,.94,.09,.13,.18, .14,.17,.92,.11,.96,.95);
const taste = { wQ: m(2, .97,.08,.99,.11,.12,.96,.98,.09,.13,.07,.10,.98), wK: m(2, .96,.09,.98,.11,.10,.97,.97,.08,.12,.96,.09,.99),
                wV: m(3, .97,.11,.09,.10,.98,.08,.09,.12,.96,.98,.10,.11,.11,.97,.09,.08,.09,.99) };
const budget = { wQ: m(2, .95,.08,.98,.06,.09,.94,.91,.11,.10,.96,.07,.97), wK: m(2, .94,.09,.97,.07,.08,.95,.92,.10,.09,.97,.08,.96),
                 wV: m(2, .96,.09,.97,.08,.10,.95,.93,.11,.09,.96,.08,.97) };
const wO = m(6, .96,.09,.08,.95,.10,.07, .10,.94,.11,.09,.96,.08, .08,.10,.95,.07,.11,.97, .11,.96,.09,.10,.12,.08, .09,.10,.12,.08,.95,.96);

const mha = await createMHA();
const layer = mha.createLayer({ weights: { heads: [taste, budget], wO } });   // d_v = 3 and 2 → concat 5 → W_O 5×6
const { heads, output } = layer.trace(X);
console.log('head 0 weights (taste):', heads[0].weights.toArray());
console.log("Alex's final cheap:", output.get(0, 1).toFixed(3));             // 4.050
layer.dispose();

// The two-head worked example (Alex, Emma, Daniel × spicy, cheap, cozy, fast, flavor, vibe).
import { createMHA } from 'mha-wasm';
import { X0 as X, HEADS, WO as wO } from '../web/lib/components/logic/restaurant.js';   // X [3, 6] and the weights, nested arrays

const [taste, budget] = HEADS.map(({ wQ, wK, wV }) => ({ wQ, wK, wV }));   // W_Q, W_K [6, 2]; W_V [6, 3] and [6, 2]

const mha = await createMHA();
const layer = mha.createLayer({ weights: { heads: [taste, budget], wO } });   // d_v = 3 and 2 → concat 5 → W_O 5×6
const { heads, output } = layer.trace(X);
console.log('head 0 weights (taste):', heads[0].weights.toArray());
console.log("Alex's final cheap:", output.get(0, 1).toFixed(3));             // 4.050
layer.dispose();

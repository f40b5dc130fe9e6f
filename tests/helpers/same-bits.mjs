// Forwards whose results must not depend on how the engine runs them (thread count, GEMM register
// tile): every forward option that changes how the work is split or tiled, run on one engine and
// compared bit for bit with another's.
import assert from 'node:assert/strict';
import { mulberry32 } from '../../web/lib/src/index.js';

/** n uniform floats in [-1, 1) from seed. */
export function rand(n, seed) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 2 * r() - 1);
}

/** Fails unless a and b hold the same floats bit for bit (Object.is: -0 ≠ 0, NaN = NaN). */
export function bitsEqual(a, b, what) {
  assert.equal(a.length, b.length, `${what}: lengths`);
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i])) assert.fail(`${what}: element ${i} differs: ${a[i]} vs ${b[i]}`);
  }
}

/**
 * Forward options on sizes the pool splits and the tiles cover with remainders: row counts that
 * are not multiples of 4 or 6, row-split and column-split GEMMs, every mask, the streaming path,
 * grouped-query attention with the score modifiers, cross-attention.
 */
export const CASES = [
  { name: 'self-attention, 300 tokens, d 128, 4 heads (row-split GEMMs, 20 attention tasks)', layer: { dModel: 128, numHeads: 4 }, T: 300 },
  { name: 'causal, batch 2, needWeights', layer: { dModel: 96, numHeads: 6 }, T: 200, B: 2, opts: { causal: true, needWeights: true } },
  { name: 'averaged weights (one task per row block, heads in order)', layer: { dModel: 96, numHeads: 6 }, T: 200, opts: { needWeights: true, averageWeights: true } },
  { name: 'streaming path (600 keys, no weights), key padding mask', layer: { dModel: 64, numHeads: 4 }, T: 600, opts: { needWeights: false }, kpm: true },
  { name: 'grouped-query, RoPE, ALiBi, soft-cap, sliding window', layer: { dModel: 128, numHeads: 8, kvHeads: 2, rope: true, alibi: true, softcap: 30, window: [64, 0] }, T: 260, opts: { causal: true } },
  { name: 'cross-attention 100 queries × 500 keys, additive attention mask, head mask', layer: { dModel: 128, numHeads: 4 }, T: 100, Tk: 500, mask: true, opts: { headMask: [1, 0, 0.5, 1] } },
  { name: 'few rows, wide output: column-split GEMMs', layer: { dModel: 512, numHeads: 8 }, T: 24 },
  { name: '131 tokens (131 = 21·6 + 5 = 32·4 + 3 rows), d 72, 3 heads', layer: { dModel: 72, numHeads: 3 }, T: 131, opts: { needWeights: true } },
];

/**
 * Runs every case of CASES on `engine`: {output, weights?, trace?} per case (trace for
 * self-attention cases), then a KV cache (a 250-token prompt and 10 single steps).
 */
export function runCases(engine) {
  const cases = CASES.map((c) => {
    const B = c.B ?? 1, T = c.T, d = c.layer.dModel;
    const x = { data: rand(B * T * d, 11), shape: B === 1 ? [T, d] : [B, T, d] };
    const opts = { ...c.opts };
    if (c.Tk) {
      opts.key = { data: rand(c.Tk * d, 12), shape: [c.Tk, d] };
      opts.value = { data: rand(c.Tk * d, 13), shape: [c.Tk, d] };
    }
    const Tk = c.Tk ?? T;
    if (c.kpm) opts.keyPaddingMask = Array.from({ length: B }, (_, b) => Array.from({ length: Tk }, (_, j) => j % 7 === b));
    if (c.mask) opts.attnMask = Array.from({ length: T }, (_, i) => Array.from({ length: Tk }, (_, j) => ((i + j) % 5 === 0 ? -Infinity : -0.01 * ((i * j) % 13))));
    const layer = engine.createLayer({ ...c.layer, seed: 5 });
    const r = layer.forward(x, opts);
    const out = { output: r.output.data, weights: r.weights?.data };
    const { key, value, needWeights, averageWeights, ...traceOpts } = opts;
    if (!c.Tk) out.trace = layer.trace(x, traceOpts);
    layer.dispose();
    return out;
  });
  const layer = engine.createLayer({ dModel: 256, numHeads: 8, kvHeads: 4, rope: true, seed: 9 });
  const cache = layer.createKVCache({ maxLen: 400 });
  const steps = [cache.step({ data: rand(250 * 256, 21), shape: [250, 256] }).output.data];
  for (let s = 0; s < 10; s++) steps.push(cache.step({ data: rand(256, 30 + s), shape: [1, 256] }).output.data);
  cache.dispose();
  layer.dispose();
  return { cases, steps };
}

/** Fails unless runCases gave the same bits on two engines (`what` names the difference). */
export function sameResults(got, want, what) {
  CASES.forEach((c, i) => {
    const g = got.cases[i], w = want.cases[i];
    bitsEqual(g.output, w.output, `${c.name}: output, ${what}`);
    if (w.weights) bitsEqual(g.weights, w.weights, `${c.name}: weights, ${what}`);
    if (w.trace) {
      for (const k of ['concat', 'output']) bitsEqual(g.trace[k].data, w.trace[k].data, `${c.name}: trace.${k}, ${what}`);
      w.trace.heads.forEach((h, j) => {
        for (const k of Object.keys(h)) {
          if (h[k] && h[k].data) bitsEqual(g.trace.heads[j][k].data, h[k].data, `${c.name}: trace.heads[${j}].${k}, ${what}`);
        }
      });
    }
  });
  got.steps.forEach((o, s) => bitsEqual(o, want.steps[s], `KV-cache step ${s}, ${what}`));
}

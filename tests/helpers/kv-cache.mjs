// The KV-cache property shared by the option suites: feeding a sequence through a layer's KV cache
// in random chunks gives, step by step, the same output rows and attention rows as the layer's
// full causal forward.
import fc from 'fast-check';
import { mulberry32 } from '../../web/lib/src/index.js';
import { assertClose } from './golden.mjs';
import { RUNS, fcParams, values, layerDesc } from './random-layer.mjs';

/**
 * @param {object} layer a Layer
 * @param {{B: number, T: number, d: number, h: number}} dims batch, length, d_model, query heads
 * @param {Float32Array} x input [B, T, d]
 * @param {number} chunkSeed seed of the chunk lengths (1 to 4 tokens a step)
 * @param {{atol: number, rtol: number}} tol
 */
export function assertCacheMatchesForward(layer, { B, T, d, h }, x, chunkSeed, tol) {
  const full = layer.forward({ data: x, shape: [B, T, d] }, { causal: true });
  const cache = layer.createKVCache({ maxLen: T, batch: B });
  try {
    const rand = mulberry32(chunkSeed);
    for (let t0 = 0; t0 < T;) {
      const n = Math.min(T - t0, 1 + Math.floor(rand() * 4));
      const part = new Float32Array(B * n * d);
      for (let b = 0; b < B; b++) part.set(x.subarray((b * T + t0) * d, (b * T + t0 + n) * d), b * n * d);
      const st = cache.step({ data: part, shape: [B, n, d] });
      for (let b = 0; b < B; b++) {
        assertClose(st.output.data.subarray(b * n * d, (b + 1) * n * d), full.output.data.subarray((b * T + t0) * d, (b * T + t0 + n) * d),
          tol, `step at ${t0}`);
        const len = t0 + n;  // weights [B, h, n, len] vs the full forward's [B, h, T, T] rows t0.., columns ..len
        for (let i = 0; i < h; i++) for (let q = 0; q < n; q++) {
          const got = st.weights.data.subarray(((b * h + i) * n + q) * len, ((b * h + i) * n + q + 1) * len);
          const ref = full.weights.data.subarray(((b * h + i) * T + t0 + q) * T, ((b * h + i) * T + t0 + q) * T + len);
          assertClose(got, ref, tol, `step weights at ${t0}`);
        }
      }
      t0 += n;
    }
  } finally {
    cache.dispose();
  }
}

/**
 * The property over random layers of `layerArb` (descriptions for layerDesc), batches of 1–2 and
 * lengths of 1–24, fed in random chunks.
 * @param {object} mha an engine
 * @param {object} layerArb fast-check arbitrary of layer descriptions
 * @param {{atol: number, rtol: number}} tol
 */
export function checkCacheProperty(mha, layerArb, tol) {
  const arb = fc.record({ layer: layerArb, B: fc.integer({ min: 1, max: 2 }), T: fc.integer({ min: 1, max: 24 }), xseed: fc.nat(), chunkSeed: fc.nat() });
  fc.assert(fc.property(arb, (a) => {
    const L = layerDesc(a.layer);
    const layer = mha.createLayer(L.opts);
    try {
      assertCacheMatchesForward(layer, { B: a.B, T: a.T, d: L.d, h: L.h }, values(mulberry32(a.xseed), a.B * a.T * L.d, 2), a.chunkSeed, tol);
    } finally {
      layer.dispose();
    }
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 2)) }));
}

// Property-based test of the KV cache with fast-check: a cache fed a sequence in random chunks
// (random layers of layerArb, batch 1–2, with or without weights, then reset and fed again)
// reproduces causal self-attention of the float64 reference (tests/helpers/property.mjs), step by
// step, and refuses a step past maxLen with INVALID_ARGUMENT. FC_NUM_RUNS / FC_SEED: see the helper.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { assertClose } from './helpers/golden.mjs';
import { throwsMHA } from './helpers/errors.mjs';
import { fcParams, prng, values, reference, layerArb, buildLayer, TOL } from './helpers/property.mjs';

const mha = await createMHA(tierOptions());
const runsDone = {};  // property name -> runs executed (printed at the end)

test('property: a KV cache fed random chunks reproduces causal self-attention', () => {
  let n = 0;
  const arb = fc.record({
    d: layerArb, maxLen: fc.integer({ min: 1, max: 24 }), fill: fc.integer({ min: 1, max: 24 }),
    chunks: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 24 }),
    B: fc.integer({ min: 1, max: 2 }), batched: fc.boolean(), weights: fc.boolean(), seed: fc.integer(),
    reset: fc.boolean(),
  });
  fc.assert(fc.property(arb, (a) => {
    n++;
    const { opts, L } = buildLayer(a.d, null, a.seed, 0);
    const rand = prng(a.seed + 1);
    const T = Math.min(a.fill, a.maxLen);
    const B = a.B, batched = a.batched || B > 1, lead = batched ? [B] : [];
    const x = values(rand, B * T * L.dModel);
    const M = new Float64Array(B * L.h * T * T);
    for (let b = 0; b < B; b++) for (let i = 0; i < L.h; i++) for (let t = 0; t < T; t++) for (let j = t + 1; j < T; j++) M[((b * L.h + i) * T + t) * T + j] = -Infinity;
    const ref = reference(L, { B, Tq: T, Tk: T, q: x, k: x, v: x }, M);
    const layer = mha.createLayer(opts);
    try {
      const cache = layer.createKVCache({ maxLen: a.maxLen, batch: B });
      const feed = () => {
        let at = 0, ci = 0;
        while (at < T) {
          const len = Math.min(T - at, a.chunks[ci++ % a.chunks.length]);
          const chunk = new Float32Array(B * len * L.dModel);
          for (let b = 0; b < B; b++) chunk.set(x.subarray((b * T + at) * L.dModel, (b * T + at + len) * L.dModel), b * len * L.dModel);
          const r = cache.step({ data: chunk, shape: [...lead, len, L.dModel] }, { needWeights: a.weights });
          assert.deepEqual(r.output.shape, [...lead, len, L.dModel]);
          const want = new Float64Array(B * len * L.dModel);
          for (let b = 0; b < B; b++) want.set(ref.out.subarray((b * T + at) * L.dModel, (b * T + at + len) * L.dModel), b * len * L.dModel);
          assertClose(r.output.data, want, TOL, `step at ${at} output`);
          if (a.weights) {
            assert.deepEqual(r.weights.shape, [...lead, L.h, len, at + len]);
            for (let b = 0; b < B; b++) {
              for (let i = 0; i < L.h; i++) {
                for (let t = 0; t < len; t++) {
                  for (let j = 0; j < at + len; j++) {
                    const got = r.weights.data[((b * L.h + i) * len + t) * (at + len) + j];
                    const w = ref.A[((b * L.h + i) * T + at + t) * T + j];
                    assert.ok(Math.abs(got - w) <= 2e-4, `step weights [${b}, ${i}, ${t}, ${j}] ${got} vs ${w}`);
                  }
                }
              }
            }
          }
          at += len;
          assert.equal(cache.length, at);
        }
      };
      feed();
      if (T === a.maxLen) {
        throwsMHA(() => cache.step({ data: new Float32Array(B * L.dModel), shape: [...lead, 1, L.dModel] }), 'INVALID_ARGUMENT', /maxLen/);
        assert.equal(cache.length, T);
      }
      if (a.reset) {
        cache.reset();
        assert.equal(cache.length, 0);
        feed();  // the same sequence again gives the same rows
      }
    } finally {
      layer.dispose();
    }
  }), fcParams());
  runsDone.kvCache = n;
});

after(() => console.log(`# property runs: ${JSON.stringify(runsDone)}`));

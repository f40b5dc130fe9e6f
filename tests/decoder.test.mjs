// The JS side of the core's decoder (web/lib/src/lm/decoder.js) value by value, on a tiny golden model
// (tests/golden-decoder/default: vocab 12, d_model 16, 4 heads, 2 layers, context 16): batched
// forwards equal the single ones, lastOnly and weights, the head mask, KV-cache steps against the
// forward's rows, every refusal (the core's message with the call's name), dispose and its order,
// and the FinalizationRegistry reclaiming decoders and caches dropped without dispose().
// Written for the mutation testing of decoder.js (stryker.config.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { Decoder } from '../web/lib/src/lm/decoder.js';
import { throwsExactly } from './helpers/exact-error.mjs';
import { maxDiff } from './helpers/model-golden.mjs';

const mha = await createMHA();
const core = mha._core;
const golden = JSON.parse(fs.readFileSync(new URL('./golden-decoder/default.json', import.meta.url)));
const lm = await mha.loadModel(fs.readFileSync(new URL('./golden-decoder/default.safetensors', import.meta.url)));
const spec = lm._decoder.spec;
const V = 12, L = 2, h = 4;

const inUse = () => mha.memory().inUseBytes;

test('forward: one sequence equals the golden log-probabilities and attention; two sequences in a batch equal each alone', () => {
  const c = golden.cases.find((k) => k.ids.length > 5 && !k.ablate.length);
  const T = c.ids.length;
  const d = new Decoder(core, spec);
  try {
    const one = d.forward(Int32Array.from(c.ids), 1, { weights: true });
    assert.ok(maxDiff(one.logProbs, c.logProbs.flat()) < 2e-4);
    assert.equal(one.weights.length, L * h * T * T);
    for (let l = 0; l < L; l++) assert.ok(maxDiff(one.weights.subarray(l * h * T * T, (l + 1) * h * T * T), c.attention[l].flat(2)) < 2e-5);
    assert.equal(d.forward(Int32Array.from(c.ids), 1).weights, null, 'no weights unless asked');
    const other = Int32Array.from(c.ids, (id) => (id + 5) % V);
    const single = d.forward(other, 1, { weights: true });
    const both = d.forward(Int32Array.from([...c.ids, ...other]), 2, { weights: true });
    assert.equal(both.logProbs.length, 2 * T * V);
    assert.deepEqual(both.logProbs.subarray(0, T * V), one.logProbs);
    assert.deepEqual(both.logProbs.subarray(T * V), single.logProbs);
    // weights [L, B, h, n, n]
    for (let l = 0; l < L; l++) {
      const at = (b) => (l * 2 + b) * h * T * T;
      assert.deepEqual(both.weights.subarray(at(0), at(0) + h * T * T), one.weights.subarray(l * h * T * T, (l + 1) * h * T * T));
      assert.deepEqual(both.weights.subarray(at(1), at(1) + h * T * T), single.weights.subarray(l * h * T * T, (l + 1) * h * T * T));
    }
    // lastOnly: each sequence's last row
    const last = d.forward(Int32Array.from([...c.ids, ...other]), 2, { lastOnly: true });
    assert.equal(last.logProbs.length, 2 * V);
    assert.deepEqual(last.logProbs.subarray(0, V), one.logProbs.subarray((T - 1) * V));
    assert.deepEqual(last.logProbs.subarray(V), single.logProbs.subarray((T - 1) * V));
    assert.equal(last.weights, null);
  } finally {
    d.dispose();
  }
});

test('forward: the head mask of the golden ablation case; a mask of ones changes nothing', () => {
  const c = golden.cases.find((k) => k.ablate.length);
  const mask = new Float32Array(L * h).fill(1);
  for (const [l, j] of c.ablate) mask[l * h + j] = 0;
  const ids = Int32Array.from(c.ids);
  const r = lm._decoder.forward(ids, 1, { headMask: mask });
  assert.ok(maxDiff(r.logProbs, c.logProbs.flat()) < 2e-4);
  assert.deepEqual(lm._decoder.forward(ids, 1, { headMask: new Float32Array(L * h).fill(1) }).logProbs, lm._decoder.forward(ids, 1).logProbs);
  // the cache takes the same mask
  const cache = lm._decoder.createCache(ids.length);
  try {
    const s = cache.step(ids, { headMask: mask });
    assert.ok(maxDiff(s.logProbs, c.logProbs.flat()) < 2e-4);
  } finally {
    cache.dispose();
  }
});

test('cache: steps give the forward\'s rows and weights over the cached keys; batch 2; length, reset', () => {
  const c = golden.cases.find((k) => k.ids.length > 5 && !k.ablate.length);
  const T = c.ids.length;
  const ids = Int32Array.from(c.ids);
  const full = lm._decoder.forward(ids, 1, { weights: true });
  const cache = lm._decoder.createCache(T);
  try {
    assert.equal(cache.length, 0);
    let r = cache.step(ids.subarray(0, 3), { weights: true });
    assert.equal(cache.length, 3);
    assert.ok(maxDiff(r.logProbs, full.logProbs.subarray(0, 3 * V)) < 1e-5);
    assert.equal(r.weights.length, L * h * 3 * 3);
    for (let t = 3; t < T; t++) {
      r = cache.step(ids.subarray(t, t + 1), { weights: true, lastOnly: true });
      assert.equal(cache.length, t + 1);
      assert.equal(r.logProbs.length, V);
      assert.ok(maxDiff(r.logProbs, full.logProbs.subarray(t * V, (t + 1) * V)) < 1e-5);
      // weights [L, 1, h, 1, t + 1]: row t of the forward's [h, T, T]
      assert.equal(r.weights.length, L * h * (t + 1));
      for (let l = 0; l < L; l++) {
        for (let j = 0; j < h; j++) {
          const got = r.weights.subarray((l * h + j) * (t + 1), (l * h + j + 1) * (t + 1));
          const at = ((l * h + j) * T + t) * T;
          assert.ok(maxDiff(got, full.weights.subarray(at, at + t + 1)) < 1e-5, `layer ${l} head ${j} row ${t}`);
        }
      }
    }
    throwsExactly(() => cache.step(Int32Array.of(1)), 'INVALID_ARGUMENT', `step: the cache holds ${T} of maxLen = ${T} tokens; 1 more would exceed it (reset() or a larger maxLen)`);
    cache.reset();
    assert.equal(cache.length, 0);
    assert.ok(maxDiff(cache.step(ids, { lastOnly: true }).logProbs, full.logProbs.subarray((T - 1) * V)) < 1e-5);
  } finally {
    cache.dispose();
  }
  // two sequences in one cache
  const other = Int32Array.from(c.ids, (id) => (id + 5) % V);
  const fo = lm._decoder.forward(other, 1);
  const c2 = lm._decoder.createCache(T, 2);
  try {
    const a = c2.step(Int32Array.from([...ids.subarray(0, 4), ...other.subarray(0, 4)]));
    assert.equal(a.logProbs.length, 2 * 4 * V);
    assert.equal(c2.length, 4);
    const b = c2.step(Int32Array.of(ids[4], other[4]), { lastOnly: true });
    assert.equal(c2.length, 5);
    assert.ok(maxDiff(b.logProbs.subarray(0, V), full.logProbs.subarray(4 * V, 5 * V)) < 1e-5);
    assert.ok(maxDiff(b.logProbs.subarray(V), fo.logProbs.subarray(4 * V, 5 * V)) < 1e-5);
  } finally {
    c2.dispose();
  }
});

test('refusals: the core\'s message under the call\'s name; the decoder keeps working', () => {
  // (the core keeps the last error's message allocated: the heap is compared over later identical
  // passes; where dlmalloc places a refused decoder's blocks can move one 8-byte granule between
  // passes, while a leak grows with every pass: six passes must stay within 8 bytes)
  refusals();
  const before = inUse();
  const deltas = [];
  for (let i = 0; i < 6; i++) {
    refusals();
    deltas.push(inUse() - before);
  }
  assert.ok(deltas.every((b) => Math.abs(b) <= 8), `the refused calls left nothing allocated: heap in use after each pass ${deltas.join(', ')} bytes from the first`);
  assert.equal(lm._decoder.forward(Int32Array.of(1, 2), 1).logProbs.length, 2 * V);
});

function refusals() {
  throwsExactly(() => lm._decoder.forward(Int32Array.of(1, 12), 1), 'INVALID_ARGUMENT', 'forward: ids[0, 1] is 12; expected a token id in [0, 12)');
  throwsExactly(() => lm._decoder.forward(Int32Array.of(1, 12), 1, {}, 'run'), 'INVALID_ARGUMENT', 'run: ids[0, 1] is 12; expected a token id in [0, 12)');  // the API call it serves
  throwsExactly(() => lm._decoder.forward(new Int32Array(17), 1), 'SHAPE_MISMATCH', 'forward: ids holds 17 tokens per sequence, more than the 16 positions of the learned position table (context)');
  throwsExactly(() => lm._decoder.createCache(17), 'INVALID_ARGUMENT', 'createCache: maxLen = 17 exceeds the 16 positions of the learned position table (context)');
  throwsExactly(() => lm._decoder.createCache(0), 'INVALID_ARGUMENT', 'createCache: maxLen must be a positive integer, got 0');
  const cache = lm._decoder.createCache(4);
  throwsExactly(() => cache.step(Int32Array.of(1, 2, 3, 4, 5)), 'INVALID_ARGUMENT', 'step: the cache holds 0 of maxLen = 4 tokens; 5 more would exceed it (reset() or a larger maxLen)');
  throwsExactly(() => cache.step(Int32Array.of(1, 12)), 'INVALID_ARGUMENT', 'step: ids[0, 1] is 12; expected a token id in [0, 12)');
  assert.equal(cache.length, 0, 'a refused step caches nothing');
  assert.equal(cache.step(Int32Array.of(1, 2)).logProbs.length, 2 * V);
  cache.dispose();
  // a configuration the core refuses, and one too large for the heap: nothing stays allocated
  throwsExactly(() => new Decoder(core, { ...spec, normEps: -1 }), 'INVALID_CONFIG', 'loadModel: normEps must be a finite number > 0, got -1.000000');
  throwsExactly(() => new Decoder(core, { ...spec, numHeads: 3 }), 'INVALID_CONFIG', 'loadModel: kvHeads must divide numHeads (3), got kvHeads = 4');
  // the blocks go in one by one: a block the core refuses after block 0 went in, and a block count
  // other than numLayers, free the half-built decoder and the staging (the heap check above)
  const wFc = Float32Array.from(spec.weights.layers[1].wFc);
  wFc[2 * 32 + 5] = NaN;
  const withLayers = (layers) => ({ ...spec, weights: { ...spec.weights, layers } });
  throwsExactly(() => new Decoder(core, withLayers([spec.weights.layers[0], { ...spec.weights.layers[1], wFc }])),
    'NON_FINITE', 'loadModel: layers.wFc[1, 2, 5] is NaN; expected a finite number');
  throwsExactly(() => new Decoder(core, withLayers(spec.weights.layers.slice(0, 1))),
    'INVALID_ARGUMENT', 'loadModel: weights: 2 blocks expected (numLayers), got 1');
  // 6·10^8 floats: the staged embedding and the core's copy of it (with the other weights and one
  // staged block, a few kB here) cannot fit
  const huge = { ...spec, weights: { ...spec.weights, tokEmb: { length: 6e8 } } };
  assert.throws(() => new Decoder(core, huge), (e) => {
    assert.equal(e.code, 'OUT_OF_MEMORY');
    assert.match(e.message, /^loadModel needs \d+ bytes, more than the wasm heap can give/);
    assert.ok(e.bytes >= 2 * 4 * 6e8 && e.bytes < 2 * 4 * 6e8 + 1e6, `${e.bytes}`);
    return true;
  });
}

test('dispose: a decoder frees its caches; calls after dispose are refused; dispose is idempotent', () => {
  const before = inUse();
  const d = new Decoder(core, spec);
  const c1 = d.createCache(8);
  const c2 = d.createCache(8);
  c1.step(Int32Array.of(1, 2, 3));
  c2.step(Int32Array.of(4));
  c2.dispose();
  c2.dispose();
  assert.equal(c2.length, 0);
  throwsExactly(() => c2.step(Int32Array.of(1)), 'DISPOSED', 'step: this decoder cache was disposed');
  throwsExactly(() => c2.reset(), 'DISPOSED', 'reset: this decoder cache was disposed');  // as every method once disposed
  assert.equal(c1.length, 3);
  d.dispose();
  assert.equal(c1.length, 0, 'the decoder disposed its cache');
  throwsExactly(() => c1.step(Int32Array.of(1)), 'DISPOSED', 'step: this decoder cache was disposed');
  throwsExactly(() => d.forward(Int32Array.of(1), 1), 'DISPOSED', 'forward: this decoder was disposed');
  throwsExactly(() => d.createCache(4), 'DISPOSED', 'createCache: this decoder was disposed');
  d.dispose();
  c1.dispose();
  assert.equal(inUse(), before);
});

test('decoders and caches dropped without dispose() are reclaimed by the FinalizationRegistry', async () => {
  const settle = async (cond) => {
    for (let k = 0; k < 200 && !cond(); k++) {
      globalThis.gc();
      await new Promise((r) => setImmediate(r));
    }
  };
  // warm-up: the sizes of this model's staging exist once
  (() => { const d = new Decoder(core, spec); d.forward(Int32Array.of(1, 2, 3), 1); d.createCache(8).step(Int32Array.of(1, 2)); d.dispose(); })();
  await settle(() => false);
  const start = inUse();
  (() => {
    for (let i = 0; i < 6; i++) {
      const d = new Decoder(core, spec);
      d.forward(Int32Array.of(1, 2, 3), 1);
      if (i % 2) d.createCache(8).step(Int32Array.of(1, 2));   // a cache dropped with its decoder
    }
    // a cache dropped while its decoder lives on: the decoder's set of caches holds it until dispose
  })();
  assert.ok(inUse() > start + 6 * 12 * 16 * 4, 'the dropped decoders still hold their weights');
  await settle(() => inUse() === start);
  assert.equal(inUse(), start, 'every dropped decoder and cache was freed');
  assert.equal(lm._decoder.forward(Int32Array.of(1, 2), 1).logProbs.length, 2 * V);
});

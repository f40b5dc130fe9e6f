// Memory over long use: 10,000 create/forward/trace/dispose cycles and 10,000 KV-cache
// steps with resets return the wasm heap size, the bytes malloc'd and the count of live embind
// handles (LayerHandle, KVCacheHandle; and emval handles) to their starting values; a layer
// dropped without dispose() is reclaimed by the FinalizationRegistry after a GC.
//
// scripts/test.mjs runs node with --expose-gc; run alone, the file enables it itself.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { throwsMHA, stillWorksProbe } from './helpers/errors.mjs';

if (typeof globalThis.gc !== 'function') {
  v8.setFlagsFromString('--expose-gc');
  globalThis.gc = vm.runInNewContext('gc');
}

const mha = await createMHA(tierOptions());
const core = mha._core;

// Count live embind class handles: constructions through the module's class objects minus
// delete() calls (the API creates handles only as `new core.LayerHandle()` / `new core.KVCacheHandle()`).
const live = { LayerHandle: 0, KVCacheHandle: 0 };
for (const name of Object.keys(live)) {
  const Cls = core[name];
  const del = Cls.prototype.delete;
  Cls.prototype.delete = function countedDelete() { live[name]--; return del.call(this); };
  core[name] = new Proxy(Cls, { construct(target, args, newTarget) { live[name]++; return Reflect.construct(target, args, newTarget); } });
}
// embind's live-handle count; without it the "live emval handles" checks below could not fail.
assert.equal(typeof core.count_emval_handles, 'function', 'the core exports count_emval_handles');
const emvals = () => core.count_emval_handles();
const snapshot = () => ({ ...mha.memory(), layers: live.LayerHandle, caches: live.KVCacheHandle, emvals: emvals() });
const figures = {};
const probe = stillWorksProbe(mha);  // made (and its layer held) before any snapshot
after(() => console.log(`# memory figures: ${JSON.stringify(figures)}`));

const rows = (T, d, s) => Array.from({ length: T }, (_, t) => Array.from({ length: d }, (_, e) => Math.sin(s + t * 3 + e)));
const x24 = rows(7, 24, 0);
const xf = { data: Float32Array.from(x24.flat()), shape: [7, 24] };

test('the handle counter sees creations and deletions', () => {
  const s0 = snapshot();
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 1 });
  const c = l.createKVCache({ maxLen: 2 });
  assert.equal(live.LayerHandle, s0.layers + 1);
  assert.equal(live.KVCacheHandle, s0.caches + 1);
  c.dispose();
  assert.equal(live.KVCacheHandle, s0.caches);
  l.dispose();
  assert.equal(live.LayerHandle, s0.layers);
});

test('10,000 create/forward/trace/dispose cycles: heap, malloc in-use and live handles return to the start', () => {
  const heads = [1, 2, 3, 4, 6, 8, 12, 24];
  const cycle = (i) => {
    const h = heads[i % heads.length];
    const kv = [1, h][i % 2];
    const l = mha.createLayer({ dModel: 24, numHeads: h, kvHeads: kv, bias: i % 3 !== 0, seed: i });
    const r = l.forward(i % 2 ? x24 : xf, { causal: i % 2 === 0, needWeights: i % 5 !== 0, averageWeights: i % 7 === 0,
      keyPaddingMask: i % 4 === 0 ? [false, false, true, false, false, false, true] : undefined });
    if (!r.output.data.every(Number.isFinite)) assert.fail(`cycle ${i}: non-finite output`);
    if (i % 10 === 0) l.trace(xf, { attnMask: { data: new Float32Array(49), shape: [7, 7] } });
    if (i % 13 === 0) {  // a refused call allocates nothing that stays
      throwsMHA(() => l.forward([[NaN, ...new Array(23).fill(0)]]), 'NON_FINITE');
    }
    if (i % 3 === 0) {
      const c = l.createKVCache({ maxLen: 8, batch: 1 + (i % 2) });
      c.step({ data: new Float32Array(c.batch * 3 * 24).fill(0.5), shape: [c.batch, 3, 24] });
      if (i % 6 === 0) c.dispose();  // otherwise layer.dispose() frees it
    }
    if (i % 17 === 0) {  // cross-attention with its own sizes
      const lc = mha.createLayer({ dModel: 24, numHeads: 2, kDim: 5, vDim: 3, seed: i });
      lc.forward(x24.slice(0, 3), { key: rows(4 + (i % 5), 5, i), value: rows(4 + (i % 5), 3, i) });
      lc.dispose();
    }
    l.dispose();
  };
  for (let i = 0; i < 2 * 8 * 3 * 17; i++) cycle(i);  // warm-up over every variant: the heap reaches its working size
  const before = snapshot();
  for (let i = 0; i < 10000; i++) cycle(i);
  const afterS = snapshot();
  figures.cycles = { before, after: afterS };
  // the core keeps the last error's message allocated, and where dlmalloc places it can move by one
  // 8-byte granule; a leak of even one byte a cycle would show as 10,000 bytes here
  assert.ok(Math.abs(afterS.inUseBytes - before.inUseBytes) <= 8, `malloc in-use ${before.inUseBytes} → ${afterS.inUseBytes}`);
  assert.equal(afterS.heapBytes, before.heapBytes, `heap ${before.heapBytes} → ${afterS.heapBytes}`);
  assert.equal(afterS.layers, before.layers, 'live LayerHandles');
  assert.equal(afterS.caches, before.caches, 'live KVCacheHandles');
  assert.equal(afterS.emvals, before.emvals, 'live emval handles');
});

test('10,000 KV-cache steps with resets: memory and handles constant, results reproducible', () => {
  const l = mha.createLayer({ dModel: 16, numHeads: 4, kvHeads: 2, seed: 9 });
  const cache = l.createKVCache({ maxLen: 16, batch: 2 });
  const tok = (k, n) => ({ data: Float32Array.from({ length: 2 * n * 16 }, (_, j) => Math.cos(k * 7 + j)), shape: [2, n, 16] });
  const window = () => {  // fills the cache in steps of 1–3 tokens, then a refused step and a reset
    const outs = [];
    let steps = 0;
    for (let k = 0; cache.length < 16; k++) {
      const n = Math.min(1 + (k % 3), 16 - cache.length);
      outs.push(cache.step(tok(k, n), { needWeights: k % 2 === 0 }).output.data);
      steps++;
    }
    throwsMHA(() => cache.step(tok(0, 1)), 'INVALID_ARGUMENT');
    throwsMHA(() => { cache.reset(); cache.step({ data: new Float32Array(32).fill(NaN), shape: [2, 1, 16] }); }, 'NON_FINITE');
    assert.equal(cache.length, 0);
    return { outs, steps };
  };
  const first = window();
  const before = snapshot();
  let steps = 0, last = null;
  while (steps < 10000) { last = window(); steps += last.steps; }
  const afterS = snapshot();
  figures.kvCache = { steps, before, after: afterS };
  // the core keeps the last error's message allocated, and where dlmalloc places it can move by one
  // 8-byte granule; a leak of even one byte a cycle would show as 10,000 bytes here
  assert.ok(Math.abs(afterS.inUseBytes - before.inUseBytes) <= 8, `malloc in-use ${before.inUseBytes} → ${afterS.inUseBytes}`);
  assert.equal(afterS.heapBytes, before.heapBytes);
  assert.equal(afterS.layers, before.layers);
  assert.equal(afterS.caches, before.caches);
  assert.equal(afterS.emvals, before.emvals);
  // The last window reproduces the first bit for bit: nothing drifted in the cache or workspace.
  assert.equal(last.outs.length, first.outs.length);
  first.outs.forEach((o, i) => assert.deepEqual(Array.from(last.outs[i]), Array.from(o), `step ${i}`));
  l.dispose();
  const end = snapshot();
  assert.equal(end.layers, before.layers - 1);
  assert.equal(end.caches, before.caches - 1);
});

test('layers and caches dropped without dispose() are reclaimed by the FinalizationRegistry', async () => {
  const settle = async (cond) => {
    for (let k = 0; k < 200 && !cond(); k++) {
      globalThis.gc();
      await new Promise((r) => setImmediate(r));
    }
  };
  // Warm-up so that the staging and workspace sizes of this shape exist once.
  (() => { const l = mha.createLayer({ dModel: 32, numHeads: 4, seed: 1 }); l.forward(rows(9, 32, 1)); l.createKVCache({ maxLen: 4 }).step(rows(2, 32, 2)); l.dispose(); })();
  await settle(() => false);
  const start = snapshot();
  (() => {
    for (let i = 0; i < 20; i++) {
      const l = mha.createLayer({ dModel: 32, numHeads: 4, seed: i });
      l.forward(rows(9, 32, i));
      if (i % 2) l.createKVCache({ maxLen: 4 }).step(rows(2, 32, i));  // a cache dropped with its layer
    }
  })();
  const held = snapshot();
  assert.equal(held.layers, start.layers + 20);
  assert.equal(held.caches, start.caches + 10);
  assert.ok(held.inUseBytes > start.inUseBytes + 20 * 4 * 32 * 32 * 4, `20 layers hold their weights: ${start.inUseBytes} → ${held.inUseBytes}`);
  await settle(() => live.LayerHandle === start.layers && live.KVCacheHandle === start.caches);
  const end = snapshot();
  figures.finalization = { start, held, end };
  assert.equal(end.layers, start.layers, 'every dropped LayerHandle was deleted');
  assert.equal(end.caches, start.caches, 'every dropped KVCacheHandle was deleted');
  assert.equal(end.inUseBytes, start.inUseBytes, `malloc in-use back to ${start.inUseBytes}, got ${end.inUseBytes}`);
  probe.check();  // the module still works
});

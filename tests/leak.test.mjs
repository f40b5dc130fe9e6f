// Memory: create/forward/dispose cycles return every byte the module malloc'd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';

const mha = await createMHA();
const x = Array.from({ length: 7 }, (_, t) => Array.from({ length: 24 }, (_, e) => Math.sin(t * 3 + e)));

test('1,000 create/forward/trace/dispose cycles: malloc in-use and heap size do not grow', () => {
  const cycle = (i) => {
    const l = mha.createLayer({ dModel: 24, numHeads: [1, 2, 4, 8][i % 4], kvHeads: 1, seed: i });
    l.forward(x, { causal: i % 2 === 0 });
    if (i % 10 === 0) l.trace(x);
    const c = l.createKVCache({ maxLen: 8 });
    c.step(x.slice(0, 3));
    if (i % 3 === 0) c.dispose();
    l.dispose();  // also frees the cache when it is still alive
  };
  for (let i = 0; i < 20; i++) cycle(i);  // warm-up
  const before = mha.memory();
  for (let i = 0; i < 1000; i++) cycle(i);
  const after = mha.memory();
  assert.equal(after.inUseBytes, before.inUseBytes, `in-use bytes ${before.inUseBytes} → ${after.inUseBytes}`);
  assert.equal(after.heapBytes, before.heapBytes, `heap ${before.heapBytes} → ${after.heapBytes}`);
});

test('errors free what they allocated', () => {
  const fail = (i) => {
    try { mha.createLayer({ dModel: 24, numHeads: 2, weights: { wQ: [[NaN]], wK: [[1]], wV: [[1]], wO: [[1]] } }); } catch { /* expected */ }
    const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
    try { l.forward([[NaN, ...new Array(23).fill(0)]]); } catch { /* expected */ }
    l.dispose();
  };
  fail(0);  // warm-up: the core's last-error string keeps its capacity
  const before = mha.memory().inUseBytes;
  for (let i = 0; i < 200; i++) fail(i);
  assert.equal(mha.memory().inUseBytes, before);
});

// Memory: create/forward/dispose cycles and refused calls (each asserted to throw its MHAError) return
// every byte the module malloc'd, and the heap does not grow.
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

/** assert.throws with an MHAError of `code`, the fields the error must carry, and a message pattern. */
function throwsMHA(fn, code, fields, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.name, 'MHAError');
    assert.equal(e.code, code);
    for (const [k, v] of Object.entries(fields)) assert.deepEqual(e[k], v, `${code}: ${k}`);
    assert.match(e.message, message);
    return true;
  });
}

test('errors free what they allocated: every refused call throws its MHAError, and neither malloc in-use nor the heap grows', () => {
  const w = Array.from({ length: 24 }, (_, r) => Array.from({ length: 24 }, (_, c) => Math.cos(r + c) / 24));
  const bad = w.map((r) => r.slice());
  bad[3][5] = NaN;
  const x3 = x.slice(0, 3);
  const fail = () => {
    // the core rejects the weights after copying them in
    throwsMHA(() => mha.createLayer({ dModel: 24, numHeads: 2, weights: { wQ: bad, wK: w, wV: w, wO: w } }),
      'NON_FINITE', { argument: 'weights.wQ', index: [3, 5] }, /weights\.wQ\[3, 5\] is NaN/);
    throwsMHA(() => mha.createLayer({ dModel: 24, numHeads: 2, weights: { wQ: [[NaN]], wK: [[1]], wV: [[1]], wO: [[1]] } }),
      'SHAPE_MISMATCH', {}, /weights\.wQ: expected shape \[24, 24\], got \[1, 1\]/);
    throwsMHA(() => mha.createLayer({ dModel: 24, numHeads: 5 }), 'INVALID_CONFIG', { argument: 'numHeads' }, /divisible by numHeads = 5/);
    const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
    throwsMHA(() => l.forward([[0, NaN, ...new Array(22).fill(0)]]), 'NON_FINITE', { argument: 'query', index: [0, 1] }, /query\[0, 1\] is NaN/);
    throwsMHA(() => l.forward([[1, 2, 3]]), 'SHAPE_MISMATCH', {}, /query: expected shape \[Tq, 24\].*got \[1, 3\]/);
    const c = l.createKVCache({ maxLen: 4 });
    c.step(x3);
    throwsMHA(() => c.step(x3), 'INVALID_ARGUMENT', { argument: 'maxLen' }, /holds 3 of maxLen = 4/);
    c.dispose();
    throwsMHA(() => c.step(x3), 'DISPOSED', {}, /disposed/);
    l.dispose();
    throwsMHA(() => l.forward(x3), 'DISPOSED', {}, /disposed/);
  };
  fail();  // warm-up: the core's last-error string keeps its capacity
  const before = mha.memory();
  for (let i = 0; i < 200; i++) fail();
  const after = mha.memory();
  assert.equal(after.inUseBytes, before.inUseBytes, `in-use bytes ${before.inUseBytes} → ${after.inUseBytes}`);
  assert.equal(after.heapBytes, before.heapBytes, `heap ${before.heapBytes} → ${after.heapBytes}`);
});

// Shared helpers of the node suites: asserting the MHAError contract and that a module instance
// still computes correctly after an error.
import assert from 'node:assert/strict';
import { MHAError, mulberry32 } from '../../web/lib/src/index.js';

/**
 * Asserts that fn() throws an MHAError (not a RangeError, a wasm RuntimeError or another Error)
 * with `e.code === code` and a message matching every RegExp of `patterns` (one RegExp or an
 * array). With `minBytes`, also asserts `e.bytes >= minBytes` (OUT_OF_MEMORY reports the bytes the
 * request needed). Returns the error.
 */
export function throwsMHA(fn, code, patterns = [], { minBytes } = {}) {
  let err;
  assert.throws(fn, (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, `code of "${e.message}"`);
    for (const p of [].concat(patterns)) assert.match(e.message, p);
    if (minBytes !== undefined) assert.ok(e.bytes >= minBytes, `bytes = ${e.bytes} < ${minBytes}`);
    err = e;
    return true;
  });
  return err;
}

/**
 * A "the module still works" probe of one instance, made while the instance is known to be good:
 * it runs a forward of a probe layer it keeps (`layer`, on `x`, with `options`) and a forward of a
 * freshly created layer (then disposed), asserts both outputs are finite, and keeps them.
 * `check()` asserts that both forwards again give the same bits, i.e. an error (or anything else
 * the test did) left no aborted instance, corrupted heap or workspace, or stale error state, and a
 * new layer can still be created. `layer` and `x` are exposed so tests can aim bad calls at them.
 */
export function stillWorksProbe(mha, {
  layerOptions = { dModel: 8, numHeads: 2, seed: 11 },
  x = { data: Float32Array.from({ length: 3 * 8 }, ((r) => () => Math.fround(2 * r() - 1))(mulberry32(5))), shape: [3, 8] },
  options = { causal: true },
} = {}) {
  const layer = mha.createLayer(layerOptions);
  const run = () => Array.from(layer.forward(x, options).output.data);
  const fresh = () => {
    const l = mha.createLayer({ dModel: 4, numHeads: 2, seed: 2 });
    try { return Array.from(l.forward([[1, 2, 3, 4]]).output.data); } finally { l.dispose(); }
  };
  const want = run();
  const wantFresh = fresh();
  assert.ok(want.length > 0 && want.every(Number.isFinite), `probe output ${want}`);
  assert.ok(wantFresh.length > 0 && wantFresh.every(Number.isFinite), `fresh-layer output ${wantFresh}`);
  return {
    layer,
    x,
    check() {
      assert.deepEqual(run(), want, 'the probe forward gives the same bits as before');
      const got = fresh();
      assert.ok(got.every(Number.isFinite), `a new layer's output is not finite: ${got}`);
      assert.deepEqual(got, wantFresh, 'a new layer gives the same bits as before');
    },
  };
}

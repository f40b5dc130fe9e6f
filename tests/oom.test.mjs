// Out of memory at layer creation, beyond tests/errors.test.mjs (which covers forward
// and KV cache): weights the heap cannot hold are refused with OUT_OF_MEMORY and the bytes before
// anything is allocated, and a layer that does fit is created without aborting the instance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { throwsMHA, stillWorksProbe } from './helpers/errors.mjs';

const mha = await createMHA();
const probe = stillWorksProbe(mha);

/** Asserts fn throws MHAError OUT_OF_MEMORY saying "needs N bytes", with e.bytes ≥ minBytes. */
const throwsOOM = (fn, minBytes) => throwsMHA(fn, 'OUT_OF_MEMORY', /needs \d+ bytes/, { minBytes });

test('seeded weights larger than the heap are refused before the JS init builds them', () => {
  // createLayer({dModel: 30000}) would fill 4 × 9·10^8 Float32Array values (14 GB, minutes) before
  // saying OUT_OF_MEMORY if the passport's parameter count were not checked first.
  const rss0 = process.memoryUsage().rss;
  const mem0 = mha.memory();
  for (const [opts, params] of [
    [{ dModel: 30000, numHeads: 1 }, 4 * 30000 * 30000],
    [{ dModel: 9000, numHeads: 4, bias: false }, 4 * 9000 * 9000],
    [{ dModel: 8, numHeads: 1, dK: 2 ** 24 }, 4 * 8 * 2 ** 24],
    [{ dModel: 64, numHeads: 2, kDim: 2 ** 24, vDim: 2 ** 23 }, 64 * (2 ** 24 + 2 ** 23)],
  ]) {
    throwsOOM(() => mha.createLayer(opts), params * 4);
    probe.check();
  }
  assert.equal(mha.memory().inUseBytes, mem0.inUseBytes, 'nothing was malloc\'d');
  assert.equal(mha.memory().heapBytes, mem0.heapBytes, 'the heap did not grow');
  const grown = process.memoryUsage().rss - rss0;
  assert.ok(grown < 256 * 2 ** 20, `the JS side allocated ${grown} bytes`);
});

test('a layer of a third of the heap is created (without aborting the instance), a second one is refused', () => {
  // Regression: createLayer staged 2× the weights in wasm memory, so with the core's packed copy a
  // 718 MB layer needed 2.15 GB and the core's std::vector allocation aborted the instance
  // (RuntimeError: Aborted()). Now 1× is staged (2× is checked) and the core probes the heap.
  const d = 6700;
  const mem0 = mha.memory();
  const big = mha.createLayer({ dModel: d, numHeads: 1, bias: false, seed: 5 });
  const x = { data: new Float32Array(2 * d).fill(0.01), shape: [2, d] };
  const r = big.forward(x);
  assert.deepEqual(r.output.shape, [2, d]);
  assert.ok(r.output.data.every(Number.isFinite));
  assert.ok(mha.memory().inUseBytes >= 4 * d * d * 4, 'the layer holds its weights');
  throwsOOM(() => mha.createLayer({ dModel: d, numHeads: 1, bias: false, seed: 6 }), 4 * d * d * 4);
  assert.deepEqual(Array.from(big.forward(x).output.data), Array.from(r.output.data), 'the first layer is intact');
  probe.check();
  big.dispose();
  assert.ok(mha.memory().inUseBytes <= mem0.inUseBytes + 4 * d * 4 * 8, `in-use after dispose: ${mha.memory().inUseBytes}`);
  probe.check();
});

test('a layer whose staged weights and packed copy just fit is created: no temporary W_Q | W_K | W_V', () => {
  // d = 7200: the weights are 829 MB, so the JS check (2× the weights) passes. Layer::create used
  // to assemble W_Q | W_K | W_V in a temporary before packing it (0.75× the weights more, 2.28 GB
  // with the staged weights), so its heap probe refused this layer with OUT_OF_MEMORY. It now packs
  // the three matrices straight into the fused panels (kernels::pack_b_slices): the staged weights
  // and the packed copy are all it needs.
  const d = 7200;
  const mem0 = mha.memory();
  const big = mha.createLayer({ dModel: d, numHeads: 1, bias: false, seed: 7 });
  const r = big.forward({ data: new Float32Array(2 * d).fill(0.01), shape: [2, d] }, { needWeights: false });
  assert.deepEqual(r.output.shape, [2, d]);
  assert.ok(r.output.data.every(Number.isFinite));
  big.dispose();
  assert.ok(mha.memory().inUseBytes <= mem0.inUseBytes + 4 * d * 4 * 8, `in-use after dispose: ${mha.memory().inUseBytes}`);
  probe.check();
});

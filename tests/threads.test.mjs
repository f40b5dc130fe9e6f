// The threaded builds in Node: how many threads run, bad `threads` values, results that do not
// depend on the thread count (bit for bit, on sizes large enough that the pool splits the work:
// tests/helpers/same-bits.mjs),
// dispose(), and processes that exit by themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { createMHA } from '../web/lib/src/index.js';
import { bitsEqual, rand, runCases, sameResults } from './helpers/same-bits.mjs';
import { liveNodeWorkers, MAX_AUTO_THREADS } from '../web/lib/src/engine/threads.js';
import { readFileSync } from 'node:fs';

const INDEX = new URL('../web/lib/src/index.js', import.meta.url).href;
const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;

test("threads: 'auto' runs the reported cores (at most MAX_AUTO_THREADS) on the threaded build; 1 loads the single-thread build", async () => {
  const auto = await createMHA();
  assert.equal(auto.info.threads, Math.min(MAX_AUTO_THREADS, cores));
  const one = await createMHA({ threads: 1 });
  assert.equal(one.info.threads, 1);
  assert.equal(one._core.PThread, undefined, 'threads: 1 loads the build without pthreads');
  const three = await createMHA({ threads: 3, tier: 'simd' });
  assert.deepEqual([three.info.threads, three.info.tier], [3, 'simd']);
  const scalar = await createMHA({ threads: 2, tier: 'scalar' });
  assert.equal(scalar.info.threads, 1, 'the scalar tier has no threaded build');
  for (const m of [auto, three]) m.dispose();
});

test('threads: a value that is neither \'auto\' nor a whole number in [1, 64] is an MHALoadError naming it', async () => {
  for (const [bad, shown] of [[0, '0'], [1.5, '1.5'], [65, '65'], ['two', '"two"'], [null, 'null'], [Number.NaN, 'NaN']]) {
    await assert.rejects(createMHA({ threads: bad }), (e) => {
      assert.equal(e.name, 'MHALoadError');
      assert.equal(e.message, `mha-wasm: threads must be 'auto' or a whole number from 1 to 64, got ${shown}`);
      return true;
    });
  }
});

test('results are bit-identical for 1, 2 and 3 threads: forward, weights, trace and KV-cache steps', async () => {
  const engines = [await createMHA({ threads: 1 }), await createMHA({ threads: 2 }), await createMHA({ threads: 3 })];
  assert.deepEqual(engines.map((m) => m.info.threads), [1, 2, 3]);
  const results = engines.map(runCases);
  for (const n of [1, 2]) sameResults(results[n], results[0], `${n + 1} threads`);
  for (const m of engines) m.dispose();
});

test('the model runner gives the same log-probs and greedy text on 1 and 2 threads (stories260K)', async () => {
  const bytes = readFileSync(new URL('../web/lib/models/stories260K.safetensors', import.meta.url));
  const out = [];
  for (const threads of [1, 2]) {
    const m = await createMHA({ threads });
    const model = await m.loadModel(bytes);
    const run = model.run('Once upon a time, there was a little girl who liked to play in the park with her dog.');
    const { text } = model.generate('Once upon a time', 30, { temperature: 0 });
    out.push({ logProbs: run.logProbs.data, text });
    model.dispose();
    m.dispose();
  }
  bitsEqual(out[1].logProbs, out[0].logProbs, 'log-probs');
  assert.equal(out[1].text, out[0].text);
});

test('dispose() stops the pool: the engine keeps working on one thread; 100 create/dispose cycles leave no worker behind, print nothing and never hang', { timeout: 120_000 }, async () => {
  // Two faults this guards against: a worker terminated while its thread still ran its exit path
  // (holding the allocator's lock: the next free of the page's thread waited forever, e.g. from a
  // finalizer), and a first thread_local registration racing a worker's (libc++abi's once-guard:
  // Emscripten's "Blocking on the main thread" warning). Either showed within ~100–200 cycles.
  const printed = [];
  const saved = { warn: console.warn, error: console.error, log: console.log };
  for (const k of Object.keys(saved)) console[k] = (...a) => { printed.push(a.join(' ')); };
  // the earlier tests' engines are disposed; terminate() is asynchronous: wait for their exit events
  const settle = async (n) => {
    for (let i = 0; i < 200 && liveNodeWorkers() !== n; i++) await new Promise((r) => setTimeout(r, 20));
  };
  await settle(0);
  const before = liveNodeWorkers();
  assert.equal(before, 0);
  const m = await createMHA({ threads: 3 });
  assert.equal(liveNodeWorkers() - before, 2, 'threads − 1 workers');
  const layer = m.createLayer({ dModel: 128, numHeads: 4, seed: 1 });
  const x = { data: rand(300 * 128, 3), shape: [300, 128] };
  const y3 = layer.forward(x).output.data;
  m.dispose();
  assert.equal(m.info.threads, 1);
  bitsEqual(layer.forward(x).output.data, y3, 'after dispose');
  m.dispose();  // idempotent
  try {
    for (let i = 0; i < 100; i++) {
      const e = await createMHA({ threads: 2 });
      e.createLayer({ dModel: 128, numHeads: 4, seed: i }).forward(x);
      e.dispose();
      if (i % 10 === 0) globalThis.gc?.();  // finalizers free the earlier engines' layers
    }
  } finally {
    Object.assign(console, saved);
  }
  await settle(0);
  assert.equal(liveNodeWorkers(), 0);
  assert.deepEqual(printed, [], 'no console output');
});

test('a script that creates a threaded engine and runs a forward exits by itself, disposed or not, with no console output', () => {
  for (const dispose of [false, true]) {
    const script = `import { createMHA } from ${JSON.stringify(INDEX)};
      const m = await createMHA({ threads: 2 });
      const l = m.createLayer({ dModel: 128, numHeads: 4, seed: 1 });
      l.forward({ data: new Float32Array(300 * 128).fill(0.5), shape: [300, 128] });
      ${dispose ? 'm.dispose();' : ''}
      process.stdout.write(String(m.info.threads));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30000 });
    assert.equal(r.signal, null, `dispose=${dispose}: the process did not exit by itself`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, dispose ? '1' : '2');
    assert.equal(r.stderr, '');
  }
});

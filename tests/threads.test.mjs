// The threaded builds in Node: how many threads run, bad `threads` values, results that do not
// depend on the thread count (bit for bit, on sizes large enough that the pool splits the work),
// dispose(), and processes that exit by themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { createMHA, mulberry32 } from '../web/lib/src/index.js';
import { liveNodeWorkers, MAX_AUTO_THREADS } from '../web/lib/src/threads.js';
import { readFileSync } from 'node:fs';

const INDEX = new URL('../web/lib/src/index.js', import.meta.url).href;
const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;

function rand(n, seed) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => 2 * r() - 1);
}

function bitsEqual(a, b, what) {
  assert.equal(a.length, b.length, `${what}: lengths`);
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i])) assert.fail(`${what}: element ${i} differs: ${a[i]} vs ${b[i]}`);
  }
}

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

/** Every forward option that changes how the pool splits the work, on sizes the pool splits. */
const CASES = [
  { name: 'self-attention, 300 tokens, d 128, 4 heads (row-split GEMMs, 20 attention tasks)', layer: { dModel: 128, numHeads: 4 }, T: 300 },
  { name: 'causal, batch 2, needWeights', layer: { dModel: 96, numHeads: 6 }, T: 200, B: 2, opts: { causal: true, needWeights: true } },
  { name: 'averaged weights (one task per row block, heads in order)', layer: { dModel: 96, numHeads: 6 }, T: 200, opts: { needWeights: true, averageWeights: true } },
  { name: 'streaming path (600 keys, no weights), key padding mask', layer: { dModel: 64, numHeads: 4 }, T: 600, opts: { needWeights: false }, kpm: true },
  { name: 'grouped-query, RoPE, ALiBi, soft-cap, sliding window', layer: { dModel: 128, numHeads: 8, kvHeads: 2, rope: true, alibi: true, softcap: 30, window: [64, 0] }, T: 260, opts: { causal: true } },
  { name: 'cross-attention 100 queries × 500 keys, additive attention mask, head mask', layer: { dModel: 128, numHeads: 4 }, T: 100, Tk: 500, mask: true, opts: { headMask: [1, 0, 0.5, 1] } },
  { name: 'few rows, wide output: column-split GEMMs', layer: { dModel: 512, numHeads: 8 }, T: 24 },
];

test('results are bit-identical for 1, 2 and 3 threads: forward, weights, trace and KV-cache steps', async () => {
  const engines = [await createMHA({ threads: 1 }), await createMHA({ threads: 2 }), await createMHA({ threads: 3 })];
  assert.deepEqual(engines.map((m) => m.info.threads), [1, 2, 3]);
  for (const c of CASES) {
    const B = c.B ?? 1, T = c.T, d = c.layer.dModel;
    const shape = B === 1 ? [T, d] : [B, T, d];
    const x = { data: rand(B * T * d, 11), shape };
    const opts = { ...c.opts };
    if (c.Tk) {
      opts.key = { data: rand(c.Tk * d, 12), shape: [c.Tk, d] };
      opts.value = { data: rand(c.Tk * d, 13), shape: [c.Tk, d] };
    }
    const Tk = c.Tk ?? T;
    if (c.kpm) opts.keyPaddingMask = Array.from({ length: B }, (_, b) => Array.from({ length: Tk }, (_, j) => j % 7 === b));
    if (c.mask) opts.attnMask = Array.from({ length: T }, (_, i) => Array.from({ length: Tk }, (_, j) => ((i + j) % 5 === 0 ? -Infinity : -0.01 * ((i * j) % 13))));
    const results = engines.map((m) => {
      const layer = m.createLayer({ ...c.layer, seed: 5 });
      const r = layer.forward(x, opts);
      const out = { output: r.output.data, weights: r.weights?.data };
      const { key, value, needWeights, averageWeights, ...traceOpts } = opts;
      if (!c.Tk) out.trace = layer.trace(x, traceOpts);
      layer.dispose();
      return out;
    });
    for (const n of [1, 2]) {
      bitsEqual(results[n].output, results[0].output, `${c.name}: output, ${n + 1} threads`);
      if (results[0].weights) bitsEqual(results[n].weights, results[0].weights, `${c.name}: weights, ${n + 1} threads`);
      if (results[0].trace) {
        const t0 = results[0].trace, tn = results[n].trace;
        for (const k of ['concat', 'output']) bitsEqual(tn[k].data, t0[k].data, `${c.name}: trace.${k}, ${n + 1} threads`);
        t0.heads.forEach((h, i) => {
          for (const k of Object.keys(h)) {
            if (h[k] && h[k].data) bitsEqual(tn.heads[i][k].data, h[k].data, `${c.name}: trace.heads[${i}].${k}, ${n + 1} threads`);
          }
        });
      }
    }
  }
  // KV cache: a 40-token prompt, then 10 single steps, on a layer with 300 cached keys at the end
  const steps = engines.map((m) => {
    const layer = m.createLayer({ dModel: 256, numHeads: 8, kvHeads: 4, rope: true, seed: 9 });
    const cache = layer.createKVCache({ maxLen: 400 });
    const outs = [cache.step({ data: rand(250 * 256, 21), shape: [250, 256] }).output.data];
    for (let s = 0; s < 10; s++) outs.push(cache.step({ data: rand(256, 30 + s), shape: [1, 256] }).output.data);
    cache.dispose(); layer.dispose();
    return outs;
  });
  for (const n of [1, 2]) steps[n].forEach((o, s) => bitsEqual(o, steps[0][s], `KV-cache step ${s}, ${n + 1} threads`));
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

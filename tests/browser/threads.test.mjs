// The threaded build in Chromium: the lesson is served cross-origin isolated and its engine runs
// on every core it may use; the golden cases pass there on 2 threads; a large forward is the same
// bit for bit on 1 and 2 threads; the embed example page (not isolated) silently runs one thread.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';
import { loadGolden, tolerance, assertClose } from '../helpers/golden.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('Chromium, isolated lesson page: the engine runs max(1, min(4, cores − 1)) threads; golden cases pass on 2 threads; 1 and 2 threads agree bit for bit', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  const info = await page.evaluate(() => ({ isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency, engine: window.mhaLesson.engine.info }));
  assert.equal(info.isolated, true);
  assert.equal(info.engine.threads, Math.max(1, Math.min(4, info.cores - 1)), "a browser page: one thread fewer than its cores (threads.js resolveThreads)");
  assert.equal(info.engine.tier, 'relaxed-simd');

  const cases = loadGolden().filter(({ c }) => !['seed_restaurant', 'lesson_widget', 'kv_cache'].includes(c.kind) && !c.config.fully_masked_query_rows);
  assert.ok(cases.length >= 10, `${cases.length} golden cases`);
  const got = await page.evaluate(async (cs) => {
    const { createMHA } = await import('/dist/mha-components.js');
    const mha = await createMHA({ threads: 2 });
    const f = (t) => ({ data: Float32Array.from(t.data), shape: t.shape });
    const out = [];
    for (const c of cs) {
      const k = c.config, w = c.weights, inp = c.inputs;
      const weights = { wQ: f(w.Wq), wK: f(w.Wk), wV: f(w.Wv), wO: f(w.Wo) };
      for (const [a, b] of [['bQ', 'bq'], ['bK', 'bk'], ['bV', 'bv'], ['bO', 'bo']]) if (w[b]) weights[a] = f(w[b]);
      const layer = c.kind === 'gqa'
        ? mha.createLayer({ dModel: k.embed_dim, numHeads: k.num_heads, kvHeads: k.num_kv_heads, dK: k.head_dim, bias: k.bias, weights })
        : mha.createLayer({ dModel: k.embed_dim, numHeads: k.num_heads, kDim: k.kdim, vDim: k.vdim, bias: k.bias, weights });
      const opts = {};
      if (inp.key && !k.self_attention) { opts.key = f(inp.key); opts.value = f(inp.value); }
      if (inp.attn_mask) opts.attnMask = inp.attn_mask.dtype === 'bool' ? { data: Uint8Array.from(inp.attn_mask.data), shape: inp.attn_mask.shape } : f(inp.attn_mask);
      if (inp.key_padding_mask) opts.keyPaddingMask = { data: Uint8Array.from(inp.key_padding_mask.data), shape: inp.key_padding_mask.shape };
      const r = layer.forward(f(inp.query || inp.x), opts);
      out.push({ output: Array.from(r.output.data), weights: Array.from(r.weights.data) });
      layer.dispose();
    }
    // a forward the pool splits (row-split GEMMs, 20 attention tasks), on 1 and 2 threads
    // and with the 4 × 8 register tile (this Chromium runs 6 × 8 by default): the same bits
    const one = await createMHA({ threads: 1 });
    const four = await createMHA({ threads: 1, tile: '4x8' });
    const x = { data: Float32Array.from({ length: 300 * 128 }, (_, i) => Math.sin(0.37 * i)), shape: [300, 128] };
    const ys = [one, mha, four].map((m) => Array.from(m.createLayer({ dModel: 128, numHeads: 4, seed: 5 }).forward(x, { causal: true }).output.data));
    const tiles = [mha.info.tile, four.info.tile];
    mha.dispose();
    return { out, threads: mha.info.threads, same: ys[0].every((v, i) => Object.is(v, ys[1][i])), oneThreads: one.info.threads,
      tiles, sameTile: ys[0].every((v, i) => Object.is(v, ys[2][i])) };
  }, cases.map(({ c }) => c));
  cases.forEach(({ file, c }, i) => {
    assertClose(got.out[i].output, c.outputs.output, tolerance(c, 'output'), `${file} output`);
    assertClose(got.out[i].weights, c.outputs.attn_weights_per_head, tolerance(c, 'attn_weights_per_head'), `${file} weights`);
  });
  assert.equal(got.threads, 1, 'dispose() leaves one thread');
  assert.equal(got.oneThreads, 1);
  assert.equal(got.same, true, '1 and 2 threads give the same bits');
  assert.deepEqual(got.tiles, ['6x8', '4x8'], "Chromium ≥ 136 runs the 6 × 8 tile; tile: '4x8' forces the other");
  assert.equal(got.sameTile, true, 'the 6 × 8 and 4 × 8 tiles give the same bits');
  assert.deepEqual(errors, []);
  await context.close();
});

test('Chromium, a page that is not cross-origin isolated (the embed example): one thread, no console output', async () => {
  const { page, errors, context } = await env.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  await page.goto(`${env.url}examples/gqa-twins.html`);
  const r = await page.evaluate(async () => {
    const { createMHA } = await import('/dist/mha-components.js');
    const m = await createMHA();
    const y = m.createLayer({ dModel: 64, numHeads: 4, seed: 1 }).forward({ data: new Float32Array(40 * 64).fill(0.25), shape: [40, 64] });
    return { isolated: crossOriginIsolated, info: m.info, finite: y.output.data.every(Number.isFinite) };
  });
  assert.equal(r.isolated, false);
  assert.deepEqual([r.info.tier, r.info.threads, r.finite], ['relaxed-simd', 1, true]);
  assert.deepEqual(logs, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Chromium, isolated page: 40 create/forward/dispose cycles of a 2-thread engine print nothing and leave each engine working', async () => {
  // the page's thread must never wait on a worker: no "Blocking on the main thread" warning
  // (a first thread_local registration racing a worker's), and a disposed engine keeps working
  const { page, errors, context } = await env.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  const r = await page.evaluate(async () => {
    const { createMHA } = await import('/dist/mha-components.js');
    const x = { data: Float32Array.from({ length: 300 * 128 }, (_, i) => Math.sin(0.37 * i)), shape: [300, 128] };
    let threads = 0, same = true, first = null;
    for (let i = 0; i < 40; i++) {
      const m = await createMHA({ threads: 2 });
      threads = Math.max(threads, m.info.threads);
      const layer = m.createLayer({ dModel: 128, numHeads: 4, seed: 3 });
      const y = layer.forward(x).output.data;
      m.dispose();
      const after = layer.forward(x).output.data;  // one thread now, the same bits
      first ??= y;
      same &&= y.every((v, j) => Object.is(v, first[j]) && Object.is(v, after[j]));
      layer.dispose();
    }
    return { threads, same };
  });
  assert.deepEqual(r, { threads: 2, same: true });
  assert.deepEqual(logs.filter((l) => !l.startsWith('debug')), []);
  assert.deepEqual(errors, []);
  await context.close();
});

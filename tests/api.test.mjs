// The JS API contract of the README's "API tour": input forms, passport figures, seeded init, GQA, fromTorch,
// the SIMD build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMHA, Tensor, MHAError, VERSION } from '../web/lib/src/index.js';
import { loadGolden, input, assertClose, tolerance } from './helpers/golden.mjs';
import { throwsMHA } from './helpers/errors.mjs';

const mha = await createMHA();
const golden = loadGolden();
const x5 = Array.from({ length: 5 }, (_, t) => Array.from({ length: 24 }, (_, e) => Math.cos(0.3 * t + 0.7 * e)));

test('info: version equals package.json, built with SIMD; the .wasm holds f32x4 instructions', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url)));
  assert.equal(mha.info.version, pkg.version);
  assert.equal(VERSION, pkg.version);
  assert.equal(mha.info.simd, true);
  const text = execFileSync('wasm-dis', [new URL('../web/lib/wasm/mha_core.wasm', import.meta.url).pathname], { maxBuffer: 1 << 28 }).toString();
  const n = (text.match(/f32x4\.(mul|add)/g) || []).length;
  assert.ok(n > 20, `expected f32x4 mul/add instructions in the module, found ${n}`);
});

test('inputs as nested arrays, Tensor and {data, shape} give the same result', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 4, seed: 7 });
  const flat = Float32Array.from(x5.flat());
  const a = l.forward(x5);
  const b = l.forward(new Tensor(flat, [5, 24]));
  const c = l.forward({ data: Array.from(flat), shape: [5, 24] });
  assert.deepEqual(a.output.shape, [5, 24]);
  assert.deepEqual(a.weights.shape, [4, 5, 5]);
  assert.deepEqual(Array.from(b.output.data), Array.from(a.output.data));
  assert.deepEqual(Array.from(c.output.data), Array.from(a.output.data));
  // Tensor helpers.
  const arr = a.output.toArray();
  assert.equal(arr.length, 5);
  assert.equal(arr[2][3], a.output.get(2, 3));
  // Each weight row is a probability distribution.
  for (let i = 0; i < 4; i++) for (let q = 0; q < 5; q++) {
    let s = 0;
    for (let k = 0; k < 5; k++) s += a.weights.get(i, q, k);
    assert.ok(Math.abs(s - 1) < 1e-6);
  }
  l.dispose();
});

test('passport at d_model = 512, h = 8, batch 2 × 10 tokens', () => {
  const p = mha.passport({ seqLen: 10, dModel: 512, numHeads: 8, batch: 2 });
  assert.equal(p.dK, 64);
  assert.equal(p.dV, 64);
  const byName = Object.fromEntries(p.steps.map((s) => [s.name, s.shape]));
  assert.deepEqual(byName['input X'], [2, 10, 512]);
  assert.deepEqual(byName['per-head Q'], [2, 8, 10, 64]);
  assert.deepEqual(byName['per-head scores'], [2, 8, 10, 10]);
  assert.deepEqual(byName['concat'], [2, 10, 512]);
  assert.deepEqual(byName['output'], [2, 10, 512]);
  assert.equal(p.params.wQPerHead, 512 * 64);
  assert.equal(p.params.wQ, 512 * 512);
  assert.equal(p.params.total, 4 * 512 * 512 + 4 * 512);
  assert.equal(p.flops.projections, 2 * 2 * 3 * 10 * 512 * 512);
  assert.equal(p.flops.scores, 2 * 2 * 10 * 10 * 512);
  assert.equal(p.flops.matmul, 2 * 2 * 4 * 10 * 512 * 512 + 2 * 2 * 2 * 10 * 10 * 512);
  // total includes the scaling + softmax: 6 FLOPs per score of B·h·Tq·Tk, 1 per row of B·h·Tq
  assert.equal(p.flops.softmax, 2 * 8 * 10 * (6 * 10 + 1));
  assert.equal(p.flops.total, 2 * 2 * 4 * 10 * 512 * 512 + 2 * 2 * 2 * 10 * 10 * 512 + 2 * 8 * 10 * 61);
  // Grouped-query: K and V shrink by h/g, Q and O do not.
  const g = mha.passport({ seqLen: 10, dModel: 512, numHeads: 8, kvHeads: 2, bias: false });
  assert.equal(g.params.wK, 512 * 128);
  assert.equal(g.params.wQ, 512 * 512);
  assert.equal(g.params.total, 2 * 512 * 512 + 2 * 512 * 128);
});

test('seeded init: same seed, same packed weights for every h (the widget re-slices them)', () => {
  const t1 = mha.createLayer({ dModel: 24, numHeads: 1, seed: 42, bias: false }).trace(x5);
  const t2 = mha.createLayer({ dModel: 24, numHeads: 2, seed: 42, bias: false }).trace(x5);
  // Q of the single head = Q of head 0 and head 1 side by side.
  for (let t = 0; t < 5; t++) for (let e = 0; e < 24; e++) {
    const h2 = e < 12 ? t2.heads[0].q.get(t, e) : t2.heads[1].q.get(t, e - 12);
    assert.equal(h2, t1.heads[0].q.get(t, e));
  }
  const other = mha.createLayer({ dModel: 24, numHeads: 2, seed: 43, bias: false }).trace(x5);
  assert.notEqual(other.heads[0].q.get(0, 0), t2.heads[0].q.get(0, 0));
});

test('grouped-query and multi-query attention: query heads share K/V heads', () => {
  const l = mha.createLayer({ dModel: 32, numHeads: 8, kvHeads: 2, seed: 5 });
  assert.equal(l.config.kvHeads, 2);
  const x = Array.from({ length: 6 }, (_, t) => Array.from({ length: 32 }, (_, e) => Math.sin(t + 0.1 * e)));
  const tr = l.trace(x);
  // heads 0..3 use kv head 0, heads 4..7 kv head 1
  assert.deepEqual(Array.from(tr.heads[3].k.data), Array.from(tr.heads[0].k.data));
  assert.deepEqual(Array.from(tr.heads[4].v.data), Array.from(tr.heads[7].v.data));
  assert.notDeepEqual(Array.from(tr.heads[3].k.data), Array.from(tr.heads[4].k.data));
  const mqa = mha.createLayer({ dModel: 32, numHeads: 8, kvHeads: 1, seed: 5 });
  assert.deepEqual(mqa.forward(x).weights.shape, [8, 6, 6]);
  l.dispose(); mqa.dispose();
});

test('causal mask: weights above the diagonal are exactly 0; rows sum to 1', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 3, seed: 9 });
  const r = l.forward(x5, { causal: true });
  for (let i = 0; i < 3; i++) for (let q = 0; q < 5; q++) {
    let s = 0;
    for (let k = 0; k < 5; k++) {
      if (k > q) assert.equal(r.weights.get(i, q, k), 0);
      s += r.weights.get(i, q, k);
    }
    assert.ok(Math.abs(s - 1) < 1e-6);
  }
  // The first query can only attend to itself.
  assert.equal(r.weights.get(0, 0, 0), 1);
  l.dispose();
});

test('fromTorch: a PyTorch state dict ([out, in], packed in_proj) reproduces the golden output', () => {
  const { c } = golden.find((g) => g.file.startsWith('sa_E36_h3'));
  const E = c.config.embed_dim;
  const T = (m) => {  // our [in, out] back to torch's [out, in]
    const [r, k] = m.shape;
    const out = [];
    for (let j = 0; j < k; j++) out.push(Array.from({ length: r }, (_, i) => m.data[i * k + j]));
    return out;
  };
  const w = c.weights;
  const sd = {
    'self_attn.in_proj_weight': [...T(w.Wq), ...T(w.Wk), ...T(w.Wv)],
    'self_attn.in_proj_bias': { data: [...w.bq.data, ...w.bk.data, ...w.bv.data], shape: [3 * E] },
    'self_attn.out_proj.weight': T(w.Wo),
    'self_attn.out_proj.bias': w.bo.data,
  };
  const weights = mha.fromTorch(sd, { numHeads: c.config.num_heads });
  assert.deepEqual(weights.wQ.shape, [E, E]);
  const l = mha.createLayer({ numHeads: c.config.num_heads, weights });
  assert.equal(l.config.dModel, E);
  assert.equal(l.config.bias, true);
  const r = l.forward(input(c.inputs.query));
  assertClose(r.output, c.outputs.output, tolerance(c, 'output'), 'fromTorch output');
  // Separate q/k/v_proj_weight (kdim ≠ E) is accepted too.
  const ca = golden.find((g) => g.file.startsWith('ca_E12_h2')).c;
  const sd2 = {
    q_proj_weight: T(ca.weights.Wq), k_proj_weight: T(ca.weights.Wk), v_proj_weight: T(ca.weights.Wv),
    in_proj_bias: [...ca.weights.bq.data, ...ca.weights.bk.data, ...ca.weights.bv.data],
    'out_proj.weight': T(ca.weights.Wo), 'out_proj.bias': ca.weights.bo.data,
  };
  const l2 = mha.createLayer({ numHeads: 2, weights: mha.fromTorch(sd2, { numHeads: 2 }) });
  assert.equal(l2.config.kDim, 5);
  const r2 = l2.forward(input(ca.inputs.query), { key: input(ca.inputs.key), value: input(ca.inputs.value) });
  assertClose(r2.output, ca.outputs.output, tolerance(ca, 'output'), 'fromTorch cross-attention output');
  assert.throws(() => mha.fromTorch({ in_proj_weight: [] }, { numHeads: 2 }), (e) => e instanceof MHAError && /out_proj\.weight/.test(e.message));
  assert.throws(() => mha.fromTorch(sd, { numHeads: 5 }), (e) => e.code === 'INVALID_CONFIG' && /E = 36/.test(e.message));
  l.dispose(); l2.dispose();
});

test('additive key padding mask equals the boolean one', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 2 });
  const xb = [x5, x5.map((r) => r.map((v) => -v))];
  const a = l.forward(xb, { keyPaddingMask: [[false, false, false, true, true], [false, true, false, false, false]] });
  const b = l.forward(xb, { keyPaddingMask: [[0, 0, 0, -Infinity, -Infinity], [0, -Infinity, 0, 0, 0]] });
  assertClose(b.output, a.output.data, { atol: 1e-6, rtol: 1e-6 }, 'output');
  assert.equal(a.weights.get(0, 1, 2, 4), 0);
  assert.equal(a.weights.get(1, 0, 3, 1), 0);
  l.dispose();
});

test('an additive key padding mask goes to the core as [B, Tk]: O(B·Tk) memory, equal to the same offsets as an attnMask', async () => {
  const own = await createMHA();  // a module of its own: its heap has not grown yet, so growth shows
  const l = own.createLayer({ dModel: 64, numHeads: 8, seed: 4 });
  const T = 2048;
  const q = { data: new Float32Array(T * 64).map((_, i) => Math.sin(i * 0.01)), shape: [T, 64] };
  const add = new Float32Array(T).map((_, j) => (j >= T - 100 ? -Infinity : Math.cos(j)));
  const before = own.memory().heapBytes;
  const a = l.forward(q, { needWeights: false, keyPaddingMask: { data: add, shape: [T] } });
  const grown = own.memory().heapBytes - before;
  // Expanded to the [h, Tq, Tk] attention mask it would take 8·T²·4 = 134 MB.
  assert.ok(grown < 16 * T * 64 * 4, `heap grew by ${grown} bytes`);
  const rows = new Float32Array(T * T);
  for (let i = 0; i < T; i++) rows.set(add, i * T);
  const b = l.forward(q, { needWeights: false, attnMask: { data: rows, shape: [T, T] } });
  assertClose(a.output, b.output.data, { atol: 1e-6, rtol: 1e-5 }, 'output');
  l.dispose();
});

test('a long sequence without weights keeps O(T·d) memory', async () => {
  const own = await createMHA();  // a module of its own: its heap has not grown yet, so growth shows
  const l = own.createLayer({ dModel: 64, numHeads: 4, seed: 1 });
  const T = 4096;
  const q = { data: new Float32Array(T * 64).map((_, i) => Math.sin(i * 0.001)), shape: [T, 64] };
  const before = own.memory().heapBytes;
  const r = l.forward(q, { needWeights: false, causal: true });
  assert.ok(r.output.data.every(Number.isFinite));
  const grown = own.memory().heapBytes - before;
  assert.ok(grown < 16 * T * 64 * 4, `heap grew by ${grown} bytes for T = ${T}`);  // T² scores would be 64 MB per head
  l.dispose();
});

test('a forward writes its output over the staged query: one block of wasm memory for both, restaged on every call', async () => {
  const own = await createMHA();  // a module of its own, so that only this layer's buffers count
  const T = 2048, d = 128;
  const l = own.createLayer({ dModel: d, numHeads: 4, seed: 1 });
  const x = (s) => ({ data: new Float32Array(T * d).map((_, i) => Math.sin(s + i * 0.001)), shape: [T, d] });
  const x1 = x(0), x2 = x(1);
  const before = own.memory().inUseBytes;
  const y1 = l.forward(x1, { needWeights: false, causal: true }).output.data;
  // What the call keeps malloc'd: its staged arguments and the core's workspace (an upper bound).
  // A separate output block would add T·d floats (1 MiB) beyond this.
  const grown = own.memory().inUseBytes - before, query = T * d * 4, workspace = l._handle.workspaceBytes(1, T, T, true);
  assert.ok(grown <= query + workspace + 4096, `a forward keeps ${grown} bytes, more than the query (${query}) and the workspace (${workspace})`);
  const y2 = l.forward(x2, { needWeights: false, causal: true }).output.data;
  const out = new Float32Array(T * d);
  l.forward(x1, { needWeights: false, causal: true, out: { output: out } });
  assert.deepEqual(out, y1, 'the same query gives the same bits after another call wrote its output over the staging');
  assert.notDeepEqual(y2, y1);
  own.dispose();
});

test('the README worked example runs and prints 4.050', () => {
  // Resolve 'mha-wasm' to this package through its own exports map (self-reference).
  const out = execFileSync(process.execPath, [new URL('../examples/worked-example.mjs', import.meta.url).pathname], {
    cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8',
  });
  assert.match(out, /Alex's final cheap: 4\.050/);
});

test("the README's API tour runs as written", async () => {
  // The first ```js block under "## API tour", run as a module inside this package (so 'mha-wasm'
  // resolves to it), with the inputs it leaves to the reader defined after its import line.
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const tour = /## API tour\n+```js\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(tour, 'no js block under "## API tour" in the README');
  const [importLine, ...rest] = tour.split('\n');
  assert.match(importLine, /^import \{ createMHA \} from 'mha-wasm';$/);
  const inputs = `
const T = 5, row = (t) => Array.from({ length: 24 }, (_, e) => Math.sin(0.7 * t + e / 5));
const x = Array.from({ length: T }, (_, t) => row(t)), q = x, key = x, value = x;
const keyPaddingMask = [false, false, false, false, true];
const attnMask = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => -0.1 * Math.abs(i - j)));
const buf = new Float32Array(T * 24), token = [row(T)];`;
  const check = `
console.log(JSON.stringify({ info: mha.info, output: output.shape, weights: weights.shape, buf: buf.some((v) => v !== 0),
  trace: [tr.heads.length, tr.heads[0].scores.shape, tr.concat.shape] }));`;
  const dir = new URL('./artifacts/', import.meta.url);
  fs.mkdirSync(dir, { recursive: true });
  const file = new URL('readme-api-tour.mjs', dir);
  fs.writeFileSync(file, [importLine, inputs, ...rest, check].join('\n'));
  const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(file)], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').pop());
  assert.deepEqual(r.output, [5, 24]);
  assert.deepEqual(r.weights, [2, 5, 5]);
  assert.equal(r.buf, true, 'forward wrote into the caller\'s buffer');
  assert.deepEqual(r.trace, [2, [5, 5], [5, 24]]);
  assert.equal(r.info.tier, mha.info.tier);
});

test('streaming path (needWeights: false, several key blocks) equals the weights path', () => {
  // Tk > 512 keys (one key block) takes the online-softmax path; compare it with the path that
  // materializes weights.
  const l = mha.createLayer({ dModel: 32, numHeads: 4, kvHeads: 2, seed: 11 });
  const B = 2, Tq = 70, Tk = 700;
  const rnd = (n, s) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 3);
  const q = { data: rnd(B * Tq * 32, 1), shape: [B, Tq, 32] };
  const k = { data: rnd(B * Tk * 32, 2), shape: [B, Tk, 32] };
  const kpm = { data: Uint8Array.from({ length: B * Tk }, (_, i) => (i >= Tk && (i % 5 === 0 || i > 2 * Tk - 50) ? 1 : 0)), shape: [B, Tk] };
  const mask = Array.from({ length: Tq }, (_, i) => Array.from({ length: Tk }, (_, j) => (i === 3 && j > 100 ? -Infinity : Math.cos(i + j))));
  mask[5].fill(-Infinity);  // a fully masked query row: zero attention output
  for (const opts of [{}, { keyPaddingMask: kpm }, { attnMask: mask }, { causal: true, keyPaddingMask: kpm }]) {
    const a = l.forward(q, { key: k, value: k, ...opts });
    const b = l.forward(q, { key: k, value: k, ...opts, needWeights: false });
    assert.ok(b.output.data.every(Number.isFinite));
    assertClose(b.output, a.output.data, { atol: 2e-5, rtol: 1e-4 }, `streaming output ${Object.keys(opts)}`);
  }
  l.dispose();
});

test('small results share a pooled buffer without aliasing, and survive a transfer of it', async () => {
  const mha = await createMHA();
  const d = 8, T = 3;
  const w = (s) => ({ data: Float32Array.from({ length: d * d }, (_, i) => Math.sin(s + i) / 3), shape: [d, d] });
  const layer = mha.createLayer({ numHeads: 2, weights: { wQ: w(1), wK: w(2), wV: w(3), wO: w(4) } });
  const x1 = { data: Float32Array.from({ length: T * d }, (_, i) => Math.cos(i)), shape: [T, d] };
  const x2 = { data: Float32Array.from({ length: T * d }, (_, i) => Math.sin(3 * i)), shape: [T, d] };
  const a = layer.forward(x1, { needWeights: false }).output.data;
  const aCopy = a.slice();
  const b = layer.forward(x2, { needWeights: false }).output.data;
  assert.equal(a.buffer, b.buffer, 'small results come from one pooled buffer');
  assert.deepEqual(a, aCopy, 'a later result does not overwrite an earlier one');
  assert.ok(b.some((v, i) => v !== a[i]));
  // Transferring the shared buffer (what a worker postMessage does) detaches it: later calls
  // must still work and give the same values.
  structuredClone(b.buffer, { transfer: [b.buffer] });
  assert.equal(a.length, 0);
  const again = layer.forward(x1, { needWeights: false }).output.data;
  assert.deepEqual(again, aCopy);
  layer.dispose();
});

test('results stay right after the wasm memory grows between calls (cached heap views are renewed)', async () => {
  const own = await createMHA();  // a module of its own, so the growth below is certain
  const l = own.createLayer({ dModel: 24, numHeads: 2, seed: 3 });
  const a = l.forward(x5);  // caches the call's memory plan and its result views
  const cache = l.createKVCache({ maxLen: 8 });
  const s = cache.step(x5.slice(0, 2));
  const heap0 = own.memory().heapBytes;
  const big = own.createLayer({ dModel: 1024, numHeads: 8, seed: 1 });  // 4 M parameters, packed twice
  assert.ok(own.memory().heapBytes > heap0, `the heap grew (${heap0} → ${own.memory().heapBytes} bytes)`);
  const b = l.forward(x5);  // the same plan: its views of the old memory are detached now
  assert.deepEqual(b.output.shape, [5, 24]);
  assert.deepEqual(Array.from(b.output.data), Array.from(a.output.data));
  assert.deepEqual(Array.from(b.weights.data), Array.from(a.weights.data));
  cache.reset();
  const t = cache.step(x5.slice(0, 2));
  assert.deepEqual(Array.from(t.output.data), Array.from(s.output.data));
  big.dispose();
  l.dispose();
});

test('out: results are written into caller-owned arrays (forward and step), checked before anything is written', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 9 });
  const xb = [x5, x5.map((r) => r.map((v) => 0.5 * v))];
  const ref = l.forward(xb, { causal: true });
  const out = { output: new Float32Array(2 * 5 * 24).fill(NaN), weights: new Float32Array(2 * 2 * 5 * 5).fill(NaN) };
  const r = l.forward(xb, { causal: true, out });
  assert.equal(r.output.data, out.output, 'the output tensor wraps the given array');
  assert.equal(r.weights.data, out.weights);
  assert.deepEqual(r.output.shape, [2, 5, 24]);
  assert.deepEqual(Array.from(out.output), Array.from(ref.output.data));
  assert.deepEqual(Array.from(out.weights), Array.from(ref.weights.data));
  // Averaged weights and output only.
  const avg = new Float32Array(2 * 5 * 5);
  l.forward(xb, { averageWeights: true, out: { weights: avg } });
  assert.deepEqual(Array.from(avg), Array.from(l.forward(xb, { averageWeights: true }).weights.data));
  const only = new Float32Array(2 * 5 * 24).fill(NaN);
  assert.equal(l.forward(xb, { needWeights: false, out: { output: only } }).output.data, only);
  assert.deepEqual(Array.from(only), Array.from(l.forward(xb, { needWeights: false }).output.data));
  // Two views of one buffer are fine when they do not overlap.
  const shared = new Float32Array(240 + 200);
  l.forward(xb, { causal: true, out: { output: shared.subarray(0, 240), weights: shared.subarray(240, 340) } });
  assert.deepEqual(Array.from(shared.subarray(0, 240)), Array.from(ref.output.data));
  assert.deepEqual(Array.from(shared.subarray(240, 340)), Array.from(ref.weights.data));
  // Wrong arrays: named errors, checked before any result is written (a right-sized output stays untouched).
  const untouched = new Float32Array(240).fill(NaN);
  throwsMHA(() => l.forward(xb, { out: { output: untouched, weights: new Float32Array(10) } }), 'SHAPE_MISMATCH', [/out\.weights must hold 100 floats \(\[2, 2, 5, 5\]\), got 10/]);
  assert.ok(untouched.every(Number.isNaN), 'no result was written before the error');
  throwsMHA(() => l.forward(xb, { out: { output: new Float32Array(10) } }), 'SHAPE_MISMATCH', [/out\.output must hold 240 floats \(\[2, 5, 24\]\), got 10/]);
  throwsMHA(() => l.forward(xb, { out: { output: shared.subarray(0, 240), weights: shared.subarray(200, 300) } }), 'INVALID_ARGUMENT', [/out\.output and out\.weights overlap/]);
  throwsMHA(() => l.forward(xb, { out: new Float32Array(240) }), 'INVALID_ARGUMENT', [/out must be an object .* got Float32Array/]);
  throwsMHA(() => l.forward(xb, { out: { output: new Float64Array(240) } }), 'INVALID_ARGUMENT', [/out\.output must be a Float32Array, got Float64Array/]);
  throwsMHA(() => l.forward(xb, { needWeights: false, out: { weights: new Float32Array(100) } }), 'INVALID_ARGUMENT', [/returns no weights/]);
  throwsMHA(() => l.forward(xb, { out: { scores: new Float32Array(100) } }), 'INVALID_ARGUMENT', [/out\.scores is not a result/]);
  throwsMHA(() => l.trace(x5, { out: {} }), 'INVALID_ARGUMENT', [/trace: out is not supported/]);
  // KV cache step.
  const cache = l.createKVCache({ maxLen: 8 });
  const s0 = cache.step(x5.slice(0, 3));
  cache.reset();
  const so = { output: new Float32Array(3 * 24), weights: new Float32Array(2 * 3 * 3) };
  const s1 = cache.step(x5.slice(0, 3), { out: so });
  assert.equal(s1.output.data, so.output);
  assert.deepEqual(Array.from(so.output), Array.from(s0.output.data));
  assert.deepEqual(Array.from(so.weights), Array.from(s0.weights.data));
  throwsMHA(() => cache.step(x5.slice(3, 4), { out: { weights: new Float32Array(2 * 1 * 3) } }), 'SHAPE_MISMATCH', [/step: out\.weights must hold 8 floats \(\[2, 1, 4\]\), got 6/]);
  assert.equal(cache.length, 3, 'a refused step caches nothing');
  l.dispose();
});

// The JS API's side of the contract with the core, value by value: every passport option reaches
// the core (checked against the passport's formulas computed here), the resolved head geometry and
// the forward's argument struct (cross-attention, grouped-query and per-head widths against a
// float64 reference of the trace), option and shape errors with their exact messages, the
// lifecycle getters, staging's refusals (a malloc that fails, a region never laid out). Written to kill the mutants of `npm run mutation` that the other suites let live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { writeArgs, Staging, Layout } from '../web/lib/src/engine/memory.js';
import { tierOptions } from './helpers/tier.mjs';
import { throwsMHA } from './helpers/errors.mjs';

const mha = await createMHA(tierOptions());

test('info names the tier the engine loaded', () => {
  assert.ok(['relaxed-simd', 'simd', 'scalar'].includes(mha.info.tier));
  assert.equal(mha.info.simd, mha.info.tier !== 'scalar');
  assert.match(mha.info.version, /^\d+\.\d+\.\d+/);
});

test('passport: every option reaches the core (counts from the formulas)', () => {
  const cfg = { seqLen: 6, keyLen: 9, batch: 3, dModel: 32, numHeads: 8, kvHeads: 2, dK: 5, dV: 7, kDim: 11, vDim: 13 };
  const p = mha.passport(cfg);
  const { seqLen: Tq, keyLen: Tk, batch: B, dModel: d, numHeads: h, kvHeads: g, dK, dV, kDim, vDim } = cfg;
  assert.equal(p.dK, dK);
  assert.equal(p.dV, dV);
  assert.equal(p.params.wQ, d * h * dK);
  assert.equal(p.params.wK, kDim * g * dK);
  assert.equal(p.params.wV, vDim * g * dV);
  assert.equal(p.params.wO, h * dV * d);
  assert.equal(p.params.bias, h * dK + g * dK + g * dV + d);
  assert.equal(p.params.total, p.params.wQ + p.params.wK + p.params.wV + p.params.wO + p.params.bias);
  assert.equal(p.flops.scores, 2 * B * Tq * Tk * h * dK);
  assert.equal(p.flops.weighted, 2 * B * Tq * Tk * h * dV);
  assert.equal(p.flops.projections, 2 * B * (Tq * d * h * dK + Tk * kDim * g * dK + Tk * vDim * g * dV));
  assert.equal(p.flops.output, 2 * B * Tq * h * dV * d);
  assert.ok(p.steps.every((s) => typeof s.name === 'string' && Array.isArray(s.shape) && typeof s.formula === 'string'));
  assert.ok(p.steps.some((s) => s.shape.join() === [B, h, Tq, Tk].join()), JSON.stringify(p.steps.map((s) => s.shape)));
  assert.equal(mha.passport({ ...cfg, bias: false }).params.bias, 0);
  // defaults: kvHeads = h, keyLen = seqLen, batch omitted (unbatched), dV = dK, kDim = vDim = dModel
  const q = mha.passport({ seqLen: 4, dModel: 12, numHeads: 3 });
  assert.equal(q.params.wK, 12 * 12);
  assert.equal(q.flops.scores, 2 * 4 * 4 * 12);
  assert.ok(q.steps.some((s) => s.shape.join() === '3,4,4'));
});

test("argument structs: the core's layouts of init, passport, a forward and a KV-cache step, written by field name", () => {
  const core = mha._core;
  const layer = core.layerLayout(), passport = core.passportLayout(), kvStep = core.kvStepLayout(), forward = core.forwardLayout();
  assert.deepEqual(Object.keys(kvStep.fields), ['x', 'n', 'output', 'weights', 'head_mask']);
  assert.equal(kvStep.kinds.n, 'i32');
  assert.equal(forward.kinds.attn_mask_kind, 'i32');
  assert.equal(forward.kinds.query, 'ptr');
  const decoder = core.decoderLayout();
  assert.deepEqual(Object.keys(decoder).sort(), ['block', 'call', 'init']);
  for (const [name, l] of [['layer', layer], ['passport', passport], ['kvStep', kvStep], ['forward', forward],
    ['decoder.init', decoder.init], ['decoder.block', decoder.block], ['decoder.call', decoder.call]]) {
    const fields = Object.entries(l.fields).sort((a, b) => a[1] - b[1]);
    assert.deepEqual(Object.keys(l.kinds).sort(), Object.keys(l.fields).sort(), `${name}: a kind per field`);
    assert.ok(Object.values(l.kinds).every((k) => ['i32', 'f32', 'ptr'].includes(k)), `${name}: kinds`);
    fields.forEach(([, off], i) => assert.equal(off, 4 * i, `${name}: 4-byte fields, packed in order`));
    assert.equal(l.bytes, 4 * fields.length);
  }
  // both share the configuration's fields; init adds the weights, passport the sizes
  const config = Object.keys(layer.fields).filter((k) => k in passport.fields);
  assert.ok(['d_model', 'num_heads', 'scale', 'head_dims', 'softcap', 'alibi_slopes', 'rope_base'].every((k) => config.includes(k)));
  assert.deepEqual(Object.keys(layer.fields).filter((k) => !config.includes(k)), ['w_q', 'w_k', 'w_v', 'w_o', 'b_q', 'b_k', 'b_v', 'b_o']);
  // one spelling per weight in every argument struct: a transformer block's names its attention
  // weights alike, and its MLP's: w_fc for ReLU/GELU, SwiGLU's gate as w_gate
  for (const k of ['w_q', 'w_k', 'w_v', 'w_o', 'b_q', 'b_k', 'b_v', 'b_o', 'w_fc', 'b_fc', 'w_gate', 'b_gate', 'w_up', 'b_up', 'w_proj', 'b_proj']) {
    assert.ok(k in decoder.block.fields, k);
  }
  assert.deepEqual(Object.keys(passport.fields).filter((k) => !config.includes(k)), ['seq_len', 'key_len', 'batch']);
  assert.equal(layer.kinds.scale, 'f32');
  assert.equal(layer.kinds.w_q, 'ptr');
  // writeArgs writes each kind and refuses a field one side lacks
  const at = core._malloc(passport.bytes);
  try {
    const values = Object.fromEntries(Object.keys(passport.fields).map((k) => [k, 0]));
    writeArgs(core, passport, at, { ...values, scale: 0.5, window_left: -1, head_dims: 2 ** 31 }, 'test');
    assert.equal(core.HEAPF32[(at + passport.fields.scale) >> 2], 0.5);
    assert.equal(core.HEAP32[(at + passport.fields.window_left) >> 2], -1);
    assert.equal(core.HEAPU32[(at + passport.fields.head_dims) >> 2], 2 ** 31);
    const { d_model: _, ...missing } = values;
    assert.throws(() => writeArgs(core, passport, at, missing, 'test'), /has a field d_model this API does not fill/);
    assert.throws(() => writeArgs(core, passport, at, { ...values, extra: 1 }, 'test'), /has no field extra/);
  } finally {
    core._free(at);
  }
});

test('passport: a bad options object or bias is INVALID_CONFIG with the message', () => {
  throwsMHA(() => mha.passport(null), 'INVALID_CONFIG', /^passport: expected an object \{seqLen, dModel, numHeads, \.\.\.\}$/);
  throwsMHA(() => mha.passport(5), 'INVALID_CONFIG', /^passport: expected an object/);
  throwsMHA(() => mha.passport({ seqLen: 5, dModel: 8, numHeads: 2, bias: 1 }), 'INVALID_CONFIG', /^bias must be a boolean, got 1$/);
  throwsMHA(() => mha.passport({ seqLen: 5, dModel: 8, numHeads: 2, kvHeads: 0.5 }), 'INVALID_CONFIG', /kvHeads/);
  throwsMHA(() => mha.passport({ seqLen: 5, dModel: 8, numHeads: 2, dV: 'x' }), 'INVALID_CONFIG', /dV/);
  throwsMHA(() => mha.passport({ seqLen: 5, dModel: 8, numHeads: 2, kDim: -1 }), 'INVALID_CONFIG', /kDim/);
});

/** float64 reference of one trace: per head i, softmax(Q_i·K_gᵀ·scale)·V_g from the traced Q, K, V. */
function checkHeads(tr, h, g, scale) {
  for (let i = 0; i < h; i++) {
    const { q, k, v, weights, output } = tr.heads[i];
    const [Tq, dk] = q.shape.slice(-2), [Tk] = k.shape.slice(-2), dv = v.shape.at(-1);
    for (let t = 0; t < Tq; t++) {
      const s = [];
      for (let j = 0; j < Tk; j++) {
        let a = 0;
        for (let c = 0; c < dk; c++) a += q.data[t * dk + c] * k.data[j * dk + c];
        s.push(a * (scale ?? 1 / Math.sqrt(dk)));
      }
      const m = Math.max(...s), e = s.map((x) => Math.exp(x - m)), z = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < Tk; j++) assert.ok(Math.abs(weights.data[t * Tk + j] - e[j] / z) < 1e-5, `head ${i} weight [${t}, ${j}]`);
      for (let c = 0; c < dv; c++) {
        let o = 0;
        for (let j = 0; j < Tk; j++) o += (e[j] / z) * v.data[j * dv + c];
        assert.ok(Math.abs(output.data[t * dv + c] - o) < 1e-4, `head ${i} output [${t}, ${c}]`);
      }
    }
  }
  // heads sharing a kv head see the same K and V
  const rep = h / g;
  for (let i = 0; i < h; i++) assert.deepEqual(tr.heads[i].k.data, tr.heads[Math.floor(i / rep) * rep].k.data);
}

test('trace: head geometry from the core (grouped-query, cross-attention, per-head widths)', () => {
  const x = (T, d, s) => ({ data: Float32Array.from({ length: T * d }, (_, i) => Math.sin(s * i + 0.3)), shape: [T, d] });
  const gqa = mha.createLayer({ dModel: 16, numHeads: 4, kvHeads: 2, seed: 2 });
  const t1 = gqa.trace(x(5, 16, 0.7));
  assert.deepEqual(t1.heads.map((hd) => hd.k.shape), [[5, 4], [5, 4], [5, 4], [5, 4]]);
  assert.notDeepEqual(t1.heads[0].k.data, t1.heads[2].k.data);
  checkHeads(t1, 4, 2);
  const cross = mha.createLayer({ dModel: 12, numHeads: 3, kDim: 7, vDim: 9, dK: 2, dV: 5, seed: 4 });
  const t2 = cross.trace(x(3, 12, 0.5), { key: x(6, 7, 0.9), value: x(6, 9, 1.1) });
  assert.deepEqual(t2.heads[2].v.shape, [6, 5]);
  assert.deepEqual(t2.concat.shape, [3, 15]);
  checkHeads(t2, 3, 3);
  for (let i = 0; i < 3; i++) assert.deepEqual(Array.from(t2.concat.data.filter((_, j) => Math.floor((j % 15) / 5) === i)), Array.from(t2.heads[i].output.data));
  gqa.dispose();
  cross.dispose();
});

test("layer.config is the core's resolved configuration: each head's own scale (per-head d_k 4 and 16)", () => {
  // each head's own: head 0's 1/√d_k (0.5) is not head 1's, which the core scales (d_k = 16) by 1/4
  const m = (r, c, s) => ({ data: Float32Array.from({ length: r * c }, (_, i) => Math.sin(s * i + 0.2)), shape: [r, c] });
  const weights = { heads: [{ wQ: m(8, 4, 0.3), wK: m(8, 4, 0.5), wV: m(8, 3, 0.7) }, { wQ: m(8, 16, 0.9), wK: m(8, 16, 1.1), wV: m(8, 2, 1.3) }], wO: m(5, 8, 1.7) };
  const l = mha.createLayer({ weights });
  assert.deepEqual(l.config.headScale, [0.5, 0.25]);
  assert.equal(l.config.scale, null, 'no one scale for heads of unequal d_k');
  assert.deepEqual(l.config.headDims, { dK: [4, 16], dV: [3, 2] });
  assert.deepEqual([l.config.dModel, l.config.numHeads, l.config.kvHeads, l.config.dK, l.config.dV, l.config.kDim, l.config.vDim, l.config.bias],
    [8, 2, 2, 4, 3, 8, 8, false]);
  // the scale the core applies: scores_i = q_i·k_iᵀ·headScale[i]
  const tr = l.trace(m(3, 8, 0.4));
  tr.heads.forEach((hd, i) => {
    const [T, dk] = hd.q.shape;
    for (let a = 0; a < T; a++) {
      for (let b = 0; b < T; b++) {
        let dot = 0;
        for (let k = 0; k < dk; k++) dot += hd.q.data[a * dk + k] * hd.k.data[b * dk + k];
        assert.ok(Math.abs(hd.scores.data[a * T + b] - dot * l.config.headScale[i]) <= 1e-5 * (1 + Math.abs(dot)), `head ${i} [${a}, ${b}]`);
      }
    }
  });
  // a given scale is every head's; packed layers share 1/√d_k (as the float32 the core uses)
  const given = mha.createLayer({ weights, scale: 0.125 });
  assert.deepEqual([given.config.scale, given.config.headScale], [0.125, [0.125, 0.125]]);
  const packed = mha.createLayer({ dModel: 12, numHeads: 3, seed: 1 });
  assert.equal(packed.config.scale, 0.5);
  assert.deepEqual(packed.config.headScale, [0.5, 0.5, 0.5]);
  assert.equal(packed.config.headDims, null);
  const odd = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
  assert.equal(odd.config.scale, Math.fround(1 / Math.sqrt(12)));
  assert.ok(Object.isFrozen(l.config.headScale));
  for (const x of [l, given, packed, odd]) x.dispose();
});

test('forward and KV cache: option, shape and lifecycle errors, exact messages', () => {
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 1 });
  const x = { data: new Float32Array(3 * 8), shape: [3, 8] };
  throwsMHA(() => l.forward({ data: new Float32Array(8), shape: [8] }), 'SHAPE_MISMATCH', /^query: expected shape \[B, Tq, 8\] or \[Tq, 8\], got \[8\]$/);
  throwsMHA(() => l.forward({ data: new Float32Array(0), shape: [0, 8] }), 'SHAPE_MISMATCH', /^query: expected shape \[Tq, 8\] with B, Tq ≥ 1, got \[0, 8\]$/);
  throwsMHA(() => l.forward({ data: new Float32Array(0), shape: [0, 3, 8] }), 'SHAPE_MISMATCH', /^query: expected shape \[B, Tq, 8\] with B, Tq ≥ 1/);
  throwsMHA(() => l.forward(x, { value: x }), 'INVALID_ARGUMENT', /^value given without key: pass key \(and value\) for cross-attention$/);
  throwsMHA(() => l.forward(x, { key: { data: new Float32Array(16), shape: [2, 8] }, value: { data: new Float32Array(24), shape: [3, 8] } }),
    'SHAPE_MISMATCH', /^value: expected shape \[2, 8\] \(same batch and length as key, vDim = 8\), got \[3, 8\]$/);
  throwsMHA(() => l.forward(x, { key: { data: new Float32Array(0), shape: [0, 8] } }), 'SHAPE_MISMATCH', /^key: expected shape \[Tk, 8\]/);
  const xb = { data: new Float32Array(2 * 3 * 8), shape: [2, 3, 8] };
  throwsMHA(() => l.forward(xb, { key: { data: new Float32Array(24), shape: [1, 3, 8] } }), 'SHAPE_MISMATCH', /^key: expected shape \[2, Tk, 8\] \(same batch as query/);
  throwsMHA(() => l.forward(xb, { key: xb, value: { data: new Float32Array(24), shape: [1, 3, 8] } }), 'SHAPE_MISMATCH', /^value: expected shape \[2, 3, 8\]/);
  throwsMHA(() => l.forward(x, { needWeights: 'yes' }), 'INVALID_ARGUMENT', /^needWeights must be a boolean, got "yes"$/);
  throwsMHA(() => l.forward(x, null), 'INVALID_ARGUMENT', /^forward: options must be an object, got null$/);
  throwsMHA(() => l.forward(x, { out: new Float32Array(24) }), 'INVALID_ARGUMENT', /^forward: out must be an object \{output\?, weights\?\} of Float32Arrays, got Float32Array$/);
  throwsMHA(() => l.forward(x, { out: { output: [0] } }), 'INVALID_ARGUMENT', /^forward: out\.output must be a Float32Array, got Array$/);
  throwsMHA(() => l.forward(x, { out: { output: new Float32Array(23) } }), 'SHAPE_MISMATCH', /^forward: out\.output must hold 24 floats \(\[3, 8\]\), got 23$/);
  throwsMHA(() => l.forward(x, { needWeights: true, averageWeights: true, out: { weights: new Float32Array(8) } }), 'SHAPE_MISMATCH', /^forward: out\.weights must hold 9 floats \(\[3, 3\]\), got 8$/);
  throwsMHA(() => l.forward(x, { out: { weights: new Float32Array(18 + 1) } }), 'SHAPE_MISMATCH', /\(\[2, 3, 3\]\), got 19$/);
  // adjacent arrays in one buffer do not overlap; one float of overlap does
  const buf = new Float32Array(24 + 18);
  l.forward(x, { out: { output: buf.subarray(0, 24), weights: buf.subarray(24) } });
  l.forward(x, { out: { weights: buf.subarray(0, 18), output: buf.subarray(18) } });
  throwsMHA(() => l.forward(x, { out: { output: buf.subarray(0, 24), weights: buf.subarray(23, 41) } }), 'INVALID_ARGUMENT', /overlap/);
  throwsMHA(() => l.forward(x, { out: { weights: buf.subarray(0, 18), output: buf.subarray(17, 41) } }), 'INVALID_ARGUMENT', /overlap/);
  throwsMHA(() => l.trace(x, { out: {} }), 'INVALID_ARGUMENT', /^trace: out is not supported \(trace returns new tensors\)$/);

  throwsMHA(() => l.createKVCache(null), 'INVALID_ARGUMENT', /^createKVCache: options must be an object \{maxLen, batch\?\}$/);
  throwsMHA(() => l.createKVCache({}), 'INVALID_ARGUMENT', /^createKVCache: maxLen must be a positive integer, got undefined$/);
  const one = l.createKVCache({ maxLen: 4 });
  throwsMHA(() => one.step({ data: new Float32Array(16), shape: [2, 8, 1] }), 'SHAPE_MISMATCH', /^x: expected shape \[n, 8\] or \[1, n, 8\] with n ≥ 1, got \[2, 8, 1\]$/);
  const two = l.createKVCache({ maxLen: 4, batch: 2 });
  throwsMHA(() => two.step({ data: new Float32Array(8), shape: [1, 8] }), 'SHAPE_MISMATCH', /^x: expected shape \[2, n, 8\] with n ≥ 1, got \[1, 8\]$/);
  assert.equal(one.length, 0);
  one.step({ data: new Float32Array(16), shape: [2, 8] });
  assert.equal(one.length, 2);
  one.dispose();
  assert.equal(one.length, 0);
  throwsMHA(() => one.reset(), 'DISPOSED', /^reset: this KV cache was disposed$/);
  throwsMHA(() => one.step(x), 'DISPOSED', /^step: this KV cache was disposed$/);
  assert.equal(l.disposed, false);
  l.dispose();
  assert.equal(l.disposed, true);
  throwsMHA(() => l.forward(x), 'DISPOSED', /^forward: this layer was disposed$/);
  assert.ok(new MHAError('OK', 'm') instanceof Error);
});

test("ERROR_CODES are the core's own table of mha::Code names, in its order (enums().codes), and a core error maps through it", async () => {
  const { ERROR_CODES } = await import('../web/lib/src/index.js');
  const { codes } = mha._core.enums();
  assert.deepEqual([...ERROR_CODES], codes);
  assert.deepEqual(codes.slice(0, 3), ['OK', 'INVALID_CONFIG', 'SHAPE_MISMATCH']);
  // Each numeric code the core reports becomes the MHAError code of the same index: a bad
  // configuration is INVALID_CONFIG (1), a NaN in the input NON_FINITE (3).
  throwsMHA(() => mha.createLayer({ dModel: 6, numHeads: 4 }), codes[1], /numHeads|dModel/);
  const layer = mha.createLayer({ dModel: 4, numHeads: 2, seed: 1 });
  throwsMHA(() => layer.forward([[0, 0, NaN, 0]]), codes[3], /query\[0, 2\] is NaN/);
  layer.dispose();
});

test("the core's enumerations: mask, norm and MLP kinds by name (enums())", () => {
  const e = mha._core.enums();
  assert.deepEqual(e.maskKinds, { none: 0, shared: 1, perHead: 2 });
  assert.deepEqual(e.normKinds, { layernorm: 0, rmsnorm: 1 });
  assert.deepEqual(e.mlpKinds, { relu: 0, gelu: 1, gelu_tanh: 2, swiglu: 3 });
});

test('MHAError: name, code, and only the detail fields it was given', () => {
  const layer = mha.createLayer({ dModel: 8, numHeads: 2, seed: 1 });
  const e = throwsMHA(() => layer.createKVCache({ maxLen: 0 }), 'INVALID_ARGUMENT', /maxLen must be a positive integer, got 0/);
  assert.equal(e.name, 'MHAError');
  assert.ok(e instanceof Error);
  for (const key of ['bytes', 'argument', 'index']) assert.equal(Object.hasOwn(e, key), false, `no own ${key}`);
  const given = new MHAError('OUT_OF_MEMORY', 'm', { bytes: 12, argument: 'query', index: [1, 2] });
  assert.deepEqual([given.code, given.message, given.bytes, given.argument, given.index], ['OUT_OF_MEMORY', 'm', 12, 'query', [1, 2]]);
  assert.deepEqual(Object.keys(new MHAError('DISPOSED', 'm', { bytes: 3 })).sort(), ['bytes', 'code', 'name']);
  layer.dispose();
});

test('staging: a malloc the heap cannot give is OUT_OF_MEMORY with the bytes; a region never laid out is a plain Error naming it', () => {
  // a module whose malloc fails although the up-front check passes (its heap is small and empty)
  const heap = new ArrayBuffer(1024);
  const failing = { _malloc: () => 0, _free: () => assert.fail('nothing to free'), heapInUse: () => 0,
    HEAPF32: new Float32Array(heap), HEAP32: new Int32Array(heap), HEAPU32: new Uint32Array(heap), HEAPU8: new Uint8Array(heap) };
  const staging = new Staging(failing);
  assert.throws(() => staging.ensure(64, 'forward'), (e) => e instanceof MHAError && e.code === 'OUT_OF_MEMORY'
    && e.message === 'forward needs 64 bytes, which the wasm heap cannot give' && e.bytes === 64);
  assert.equal(staging.ptr, 0);
  const lay = new Layout();
  lay.add('x', 4);
  assert.equal(lay.ptr(16, 'x'), 16);
  assert.throws(() => lay.ptr(16, 'headmask'), (e) => !(e instanceof MHAError) && e.message === 'Layout: no region "headmask"');
});

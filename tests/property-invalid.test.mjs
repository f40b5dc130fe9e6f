// Property-based test of the error contract with fast-check: random invalid calls (configuration,
// weights, forward inputs, masks, options, KV cache steps, fromTorch) each throw an MHAError with
// the documented code (never a RangeError, a wasm RuntimeError/abort or a silent NaN), and the same
// module instance then still computes a probe forward bit for bit as before. Every code is
// exercised. FC_NUM_RUNS / FC_SEED: see tests/helpers/property.mjs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMHA, MHAError, Tensor } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { stillWorksProbe } from './helpers/errors.mjs';
import { RUNS, fcParams, prng, values, nest } from './helpers/property.mjs';

const mha = await createMHA(tierOptions());
const runsDone = {};  // property name -> runs executed (printed at the end)


// The probe layer (dModel 8, 2 heads) on probeX [3, 8]: the target of many bad calls below, and
// probe.check() says the module still works after each one.
const probe = stillWorksProbe(mha);
const { layer: probeLayer, x: probeX } = probe;

const bad = fc.constantFrom(0, -1, 1.5, NaN, Infinity, -Infinity, '8', true, [], {}, 2 ** 31, 1e300, -0.5);
const nonFinite = fc.constantFrom(NaN, Infinity, -Infinity);
const W = (r, c, rand) => ({ data: values(rand, r * c), shape: [r, c] });

/**
 * Each arbitrary yields {name, code, run(rand)}; run makes the bad call (creating what it needs).
 * `code` is the MHAError code the contract documents for it.
 */
const invalidArb = fc.oneof(
  // --- configuration ---
  fc.record({ key: fc.constantFrom('dModel', 'numHeads', 'kvHeads', 'dK', 'dV', 'kDim', 'vDim'), v: bad })
    .map(({ key, v }) => ({ name: `createLayer ${key} = ${String(v)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, seed: 1, [key]: v }) })),
  fc.record({ key: fc.constantFrom('seqLen', 'dModel', 'numHeads', 'kvHeads', 'keyLen', 'batch', 'dK', 'dV'), v: bad })
    .map(({ key, v }) => ({ name: `passport ${key} = ${String(v)}`, code: 'INVALID_CONFIG', run: () => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, [key]: v }) })),
  fc.record({ dModel: fc.integer({ min: 1, max: 64 }), h: fc.integer({ min: 2, max: 64 }) }).filter((o) => o.dModel % o.h !== 0)
    .map(({ dModel, h }) => ({ name: `numHeads ${h} ∤ dModel ${dModel}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel, numHeads: h }) })),
  fc.record({ h: fc.integer({ min: 2, max: 16 }), g: fc.integer({ min: 2, max: 16 }) }).filter((o) => o.h % o.g !== 0)
    .map(({ h, g }) => ({ name: `kvHeads ${g} ∤ numHeads ${h}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: h * 2, numHeads: h, kvHeads: g }) })),
  fc.constantFrom(NaN, -1, Infinity, '1', -Infinity).map((s) => ({ name: `scale ${String(s)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, scale: s }) })),
  fc.constantFrom(1.5, '3', NaN, {}).map((s) => ({ name: `seed ${String(s)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, seed: s }) })),
  fc.constantFrom('yes', 1, null).map((b) => ({ name: `bias ${String(b)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, bias: b }) })),
  fc.constantFrom(null, 5, 'x', undefined).map((o) => ({ name: `createLayer(${String(o)})`, code: 'INVALID_CONFIG', run: () => mha.createLayer(o) })),
  // huge sizes: too large for one matrix (INVALID_CONFIG) or for the heap (OUT_OF_MEMORY)
  fc.integer({ min: 46341, max: 2 ** 31 - 1 }).map((d) => ({ name: `dModel ${d}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: d, numHeads: 1 }) })),
  fc.integer({ min: 8300, max: 46340 }).map((d) => ({ name: `dModel ${d} (weights > heap)`, code: 'OUT_OF_MEMORY', run: () => mha.createLayer({ dModel: d, numHeads: 1 }) })),
  fc.integer({ min: 2 ** 24, max: 2 ** 28 - 1 }).map((dk) => ({ name: `dK ${dk}`, code: 'OUT_OF_MEMORY', run: () => mha.createLayer({ dModel: 8, numHeads: 1, dK: dk }) })),
  // numHeads beyond kMaxHeads (bug found by cpp/fuzz: resolve() allocated per-head tables first and
  // numHeads = 2^31 - 1 with dK = 1 aborted the instance, in passport() as in createLayer())
  fc.record({ h: fc.integer({ min: 65537, max: 2 ** 31 - 1 }), passport: fc.boolean() })
    .map(({ h, passport }) => ({ name: `numHeads ${h}${passport ? ' (passport)' : ''}`, code: 'INVALID_CONFIG', pattern: /numHeads/,
      run: () => (passport ? mha.passport({ seqLen: 1, dModel: 1, numHeads: h, dK: 1 }) : mha.createLayer({ dModel: 1, numHeads: h, dK: 1, kvHeads: 1 })) })),
  // --- weights ---
  fc.record({ which: fc.constantFrom('wQ', 'wK', 'wV', 'wO'), dr: fc.integer({ min: -3, max: 3 }), dc: fc.integer({ min: -3, max: 3 }), seed: fc.integer() })
    .filter((o) => o.dr !== 0 || o.dc !== 0)
    .map(({ which, dr, dc, seed }) => ({ name: `weights.${which} shape off by [${dr}, ${dc}]`, code: 'SHAPE_MISMATCH', run: () => {
      const rand = prng(seed);
      const w = { wQ: W(8, 8, rand), wK: W(8, 8, rand), wV: W(8, 8, rand), wO: W(8, 8, rand) };
      w[which] = W(Math.max(0, 8 + dr), Math.max(0, 8 + dc), rand);
      return mha.createLayer({ numHeads: 2, dModel: 8, kDim: 8, vDim: 8, bias: false, weights: w });  // (kDim, vDim are inferred from wK, wV when omitted)
    } })),
  fc.record({ which: fc.constantFrom('wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO'), at: fc.nat(), v: nonFinite, seed: fc.integer(), nested: fc.boolean() })
    .map(({ which, at, v, seed, nested }) => ({ name: `weights.${which} has ${v}`, code: 'NON_FINITE', pattern: new RegExp(`weights\\.${which}\\[`), run: () => {
      const rand = prng(seed);
      const w = { wQ: W(8, 8, rand), wK: W(8, 8, rand), wV: W(8, 8, rand), wO: W(8, 8, rand),
        bQ: { data: values(rand, 8), shape: [8] }, bK: { data: values(rand, 8), shape: [8] }, bV: { data: values(rand, 8), shape: [8] }, bO: { data: values(rand, 8), shape: [8] } };
      w[which].data[at % w[which].data.length] = v;
      if (nested) w[which] = nest(w[which].data, w[which].shape);
      return mha.createLayer({ numHeads: 2, weights: w });
    } })),
  fc.record({ which: fc.constantFrom('wQ', 'wK', 'wV', 'wO', 'bQ'), what: fc.constantFrom('missing', 'string', 'strings', 'number', 'null') })
    .map(({ which, what }) => ({ name: `weights.${which} ${what}`, code: 'INVALID_ARGUMENT', run: () => {
      const rand = prng(1);
      const w = { wQ: W(8, 8, rand), wK: W(8, 8, rand), wV: W(8, 8, rand), wO: W(8, 8, rand), bQ: { data: new Float32Array(8), shape: [8] }, bK: [0, 0, 0, 0, 0, 0, 0, 0], bV: new Tensor(new Float32Array(8), [8]), bO: { data: new Float32Array(8), shape: [8] } };
      if (what === 'missing') delete w[which];
      else if (what === 'string') w[which] = 'weights';
      else if (what === 'strings') w[which] = which[0] === 'b' ? new Array(8).fill('0') : Array.from({ length: 8 }, () => new Array(8).fill('1'));
      else if (what === 'number') w[which] = 3;
      else w[which] = null;
      return mha.createLayer({ numHeads: 2, dModel: 8, bias: true, weights: w });
    } })),
  fc.constantFrom(5, 'w', true).map((w) => ({ name: `weights = ${String(w)}`, code: 'INVALID_ARGUMENT', run: () => mha.createLayer({ dModel: 8, numHeads: 2, weights: w }) })),
  fc.constantFrom('missing wK', 'dk 0', 'wK width', 'head null', 'wO rows').map((what) => ({ name: `per-head ${what}`, code: what === 'missing wK' || what === 'head null' ? 'INVALID_ARGUMENT' : 'SHAPE_MISMATCH', run: () => {
    const rand = prng(3);
    const heads = [{ wQ: W(6, 3, rand), wK: W(6, 3, rand), wV: W(6, 3, rand) }, { wQ: W(6, 2, rand), wK: W(6, 2, rand), wV: W(6, 2, rand) }];
    let wO = W(5, 6, rand);
    if (what === 'missing wK') delete heads[1].wK;
    if (what === 'dk 0') heads[0] = { wQ: { data: new Float32Array(0), shape: [6, 0] }, wK: { data: new Float32Array(0), shape: [6, 0] }, wV: W(6, 3, rand) };
    if (what === 'wK width') heads[1].wK = W(6, 3, rand);
    if (what === 'head null') heads[1] = null;
    if (what === 'wO rows') wO = W(6, 6, rand);
    return mha.createLayer({ weights: { heads, wO } });
  } })),
  // --- forward inputs ---
  fc.record({ shape: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 5 }), mode: fc.constantFrom('forward', 'trace') })
    .filter(({ shape }) => !((shape.length === 2 || shape.length === 3) && shape[shape.length - 1] === 8 && shape.every((x) => x >= 1)))
    .map(({ shape, mode }) => ({ name: `${mode} query shape [${shape}]`, code: 'SHAPE_MISMATCH', run: () => {
      const n = shape.reduce((a, b) => a * b, 1);
      return probeLayer[mode]({ data: new Float32Array(n), shape });
    } })),
  fc.record({ at: fc.nat(), v: nonFinite, B: fc.integer({ min: 1, max: 3 }), T: fc.integer({ min: 1, max: 6 }), nested: fc.boolean(), mode: fc.constantFrom('forward', 'trace') })
    .map(({ at, v, B, T, nested, mode }) => ({ name: `${mode} query has ${v}`, code: 'NON_FINITE', pattern: /query\[/, run: () => {
      const data = values(prng(at), B * T * 8);
      data[at % data.length] = v;
      return probeLayer[mode](nested ? nest(data, [B, T, 8]) : { data, shape: [B, T, 8] });
    } })),
  fc.constantFrom(null, undefined, 5, 'hello', true, {}, [[]], [[1, 2], [3]], [['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']], [[null, 0, 0, 0, 0, 0, 0, 0]], { data: 'abc', shape: [1, 3] }, { data: [1, 2], shape: [1, 2, -1] }, { data: new Float32Array(8), shape: [1.5, 8] }, { data: new Float32Array(8), shape: '1,8' }, { data: new Float32Array(8), shape: [2 ** 40, 8] }, { data: [1n], shape: [1, 1] })
    .map((q) => ({ name: `query ${typeof q === 'object' && q ? JSON.stringify(q, (k, v) => typeof v === 'bigint' ? 'bigint' : v).slice(0, 40) : String(q)}`,
      code: Array.isArray(q) && (q.length === 0 || Array.isArray(q[0]) && (q[0].length === 0 || q.length === 2)) ? 'SHAPE_MISMATCH'
        : q && q.shape && Array.isArray(q.shape) && q.shape[0] === 2 ** 40 ? 'SHAPE_MISMATCH' : 'INVALID_ARGUMENT',
      run: () => probeLayer.forward(q) })),
  // cross-attention
  fc.record({ what: fc.constantFrom('value without key', 'key width', 'value length', 'key batch', 'key NaN', 'value Inf', 'key rank', 'key empty'), seed: fc.integer() })
    .map(({ what, seed }) => ({ name: `cross ${what}`, code: { 'value without key': 'INVALID_ARGUMENT', 'key NaN': 'NON_FINITE', 'value Inf': 'NON_FINITE' }[what] || 'SHAPE_MISMATCH', run: () => {
      const rand = prng(seed);
      const l = mha.createLayer({ dModel: 8, numHeads: 2, kDim: 3, vDim: 5, seed: 1 });
      try {
        const q = { data: values(rand, 2 * 4 * 8), shape: [2, 4, 8] };
        const k = { data: values(rand, 2 * 6 * 3), shape: [2, 6, 3] };
        const v = { data: values(rand, 2 * 6 * 5), shape: [2, 6, 5] };
        if (what === 'value without key') return l.forward(q, { value: v });
        if (what === 'key width') return l.forward(q, { key: { data: values(rand, 2 * 6 * 4), shape: [2, 6, 4] }, value: v });
        if (what === 'value length') return l.forward(q, { key: k, value: { data: values(rand, 2 * 5 * 5), shape: [2, 5, 5] } });
        if (what === 'key batch') return l.forward(q, { key: { data: values(rand, 6 * 3), shape: [1, 6, 3] }, value: v });
        if (what === 'key NaN') { k.data[Math.floor(rand() * k.data.length)] = NaN; return l.forward(q, { key: k, value: v }); }
        if (what === 'value Inf') { v.data[Math.floor(rand() * v.data.length)] = -Infinity; return l.forward(q, { key: k, value: v }); }
        if (what === 'key rank') return l.forward(q, { key: { data: k.data, shape: [12, 3] }, value: v });
        return l.forward(q, { key: { data: new Float32Array(0), shape: [2, 0, 3] }, value: { data: new Float32Array(0), shape: [2, 0, 5] } });
      } finally { l.dispose(); }
    } })),
  // masks
  fc.record({ which: fc.constantFrom('attnMask', 'keyPaddingMask'), shape: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 4 }), bool: fc.boolean() })
    .filter(({ which, shape }) => {
      const ok = which === 'attnMask' ? [[3, 3], [2, 3, 3], [1, 2, 3, 3]] : [[3], [1, 3]];
      return !ok.some((s) => s.length === shape.length && s.every((x, i) => x === shape[i]));
    })
    .map(({ which, shape, bool }) => ({ name: `${which} shape [${shape}]`, code: 'SHAPE_MISMATCH', run: () => {
      const n = shape.reduce((a, b) => a * b, 1);
      return probeLayer.forward(probeX, { [which]: { data: bool ? new Uint8Array(n) : new Float32Array(n), shape } });
    } })),
  fc.record({ which: fc.constantFrom('attnMask', 'keyPaddingMask'), v: fc.constantFrom(NaN, Infinity, 1e39), at: fc.nat(), nested: fc.boolean() })
    .map(({ which, v, at, nested }) => ({ name: `${which} has ${v}`, code: 'NON_FINITE', pattern: new RegExp(`^(forward: )?${which}\\[`), run: () => {
      const shape = which === 'attnMask' ? [3, 3] : [3];
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      data[at % data.length] = v;
      return probeLayer.forward(probeX, { [which]: nested ? nest(Array.from(data), shape) : { data, shape } });
    } })),
  fc.constantFrom('yes', 5, {}, [[true, 1, false], [0, 0, 0], [0, 0, 0]], [[0, 'a', 0], [0, 0, 0], [0, 0, 0]], { data: 'abcdefghi', shape: [3, 3] }, { data: [0, 0, 0, 0, 0, 0, 0, 0, {}], shape: [3, 3] }, { data: new Uint8Array(9), shape: [3, -3] })
    .chain((m) => fc.constantFrom('attnMask', 'keyPaddingMask').map((which) => ({ m, which })))
    .map(({ m, which }) => ({ name: `${which} = ${JSON.stringify(m)}`, code: 'INVALID_ARGUMENT',
      run: () => probeLayer.forward(probeX, { [which]: m }) })),
  fc.record({ key: fc.constantFrom('causal', 'needWeights', 'averageWeights'), v: fc.constantFrom('yes', 1, 0, null, {}, 'false') })
    .map(({ key, v }) => ({ name: `${key} = ${JSON.stringify(v)}`, code: 'INVALID_ARGUMENT', run: () => probeLayer.forward(probeX, { [key]: v }) })),
  fc.constantFrom(null, 'x', 5).map((o) => ({ name: `forward options ${String(o)}`, code: 'INVALID_ARGUMENT', run: () => probeLayer.forward(probeX, o) })),
  // --- memory ---
  fc.record({ T: fc.integer({ min: 23200, max: 60000 }), mode: fc.constantFrom('forward', 'trace', 'average') })
    .map(({ T, mode }) => ({ name: `${mode} T = ${T} (weights > heap)`, code: 'OUT_OF_MEMORY', bytes: true, run: () => {
      const l = mha.createLayer({ dModel: 1, numHeads: 1, seed: 1 });
      try {
        const q = { data: new Float32Array(T), shape: [T, 1] };
        return mode === 'trace' ? l.trace(q) : l.forward(q, { averageWeights: mode === 'average' });
      } finally { l.dispose(); }
    } })),
  fc.integer({ min: 2 ** 25, max: 2 ** 31 - 1 }).map((m) => ({ name: `createKVCache maxLen ${m}`, code: 'OUT_OF_MEMORY', bytes: true, run: () => probeLayer.createKVCache({ maxLen: m }) })),
  // float32 overflow of finite values: NON_FINITE, never a silent NaN
  fc.record({ wv: fc.constantFrom(1e20, 3e38, -1e30), xv: fc.constantFrom(1e20, -3e38, 1e25), T: fc.integer({ min: 1, max: 4 }), cache: fc.boolean() })
    .map(({ wv, xv, T, cache }) => ({ name: `overflow w ${wv} x ${xv}${cache ? ' (cache)' : ''}`, code: 'NON_FINITE', pattern: /float32 overflow/, run: () => {
      const l = mha.createLayer({ dModel: 4, numHeads: 2, bias: false, weights: { wQ: { data: new Float32Array(16).fill(wv), shape: [4, 4] }, wK: { data: new Float32Array(16).fill(wv), shape: [4, 4] }, wV: { data: new Float32Array(16).fill(wv), shape: [4, 4] }, wO: { data: new Float32Array(16).fill(wv), shape: [4, 4] } } });
      try {
        const x = { data: new Float32Array(T * 4).fill(xv), shape: [T, 4] };
        if (cache) {
          const c = l.createKVCache({ maxLen: 8 });
          try { return c.step(x); } finally { assert.equal(c.length, 0, 'a refused step keeps the cache length'); }
        }
        return l.forward(x);
      } finally { l.dispose(); }
    } })),
  // --- lifecycle ---
  fc.constantFrom('forward', 'trace', 'createKVCache', 'step', 'reset', 'step after layer dispose').map((what) => ({ name: `${what} after dispose`, code: 'DISPOSED', run: () => {
    const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 4 });
    const c = l.createKVCache({ maxLen: 4 });
    if (what === 'step after layer dispose') { l.dispose(); return c.step(probeX); }
    if (what === 'step' || what === 'reset') { c.dispose(); l.dispose(); return what === 'step' ? c.step(probeX) : c.reset(); }
    l.dispose();
    return what === 'createKVCache' ? l.createKVCache({ maxLen: 2 }) : l[what](probeX);
  } })),
  fc.record({ maxLen: fc.integer({ min: 1, max: 8 }), first: fc.integer({ min: 0, max: 8 }), more: fc.integer({ min: 1, max: 8 }) })
    .filter(({ maxLen, first, more }) => first <= maxLen && first + more > maxLen)
    .map(({ maxLen, first, more }) => ({ name: `cache ${first}+${more} past maxLen ${maxLen}`, code: 'INVALID_ARGUMENT', pattern: /maxLen/, run: () => {
      const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 4 });
      try {
        const c = l.createKVCache({ maxLen });
        if (first) c.step({ data: values(prng(first), first * 8), shape: [first, 8] });
        try { return c.step({ data: values(prng(more), more * 8), shape: [more, 8] }); } finally { assert.equal(c.length, first); }
      } finally { l.dispose(); }
    } })),
  fc.record({ key: fc.constantFrom('maxLen', 'batch'), v: fc.constantFrom(0, -1, 1.5, NaN, 'x', null, Infinity, 2 ** 31) })
    .filter(({ key, v }) => !(key === 'batch' && v === null))
    .map(({ key, v }) => ({ name: `createKVCache ${key} = ${String(v)}`, code: 'INVALID_ARGUMENT', run: () => probeLayer.createKVCache({ maxLen: 4, [key]: v }) })),
  fc.constantFrom('cross layer', 'step shape', 'step NaN', 'step batch', 'step empty').map((what) => ({ name: `cache ${what}`, code: { 'cross layer': 'INVALID_CONFIG', 'step NaN': 'NON_FINITE' }[what] || 'SHAPE_MISMATCH', run: () => {
    const l = mha.createLayer(what === 'cross layer' ? { dModel: 8, numHeads: 2, kDim: 3, seed: 1 } : { dModel: 8, numHeads: 2, seed: 1 });
    try {
      const c = l.createKVCache({ maxLen: 4 });
      if (what === 'step shape') return c.step({ data: new Float32Array(7), shape: [1, 7] });
      if (what === 'step NaN') { try { return c.step([[0, 0, 0, NaN, 0, 0, 0, 0]]); } finally { assert.equal(c.length, 0); } }
      if (what === 'step batch') return c.step({ data: new Float32Array(16), shape: [2, 1, 8] });
      return c.step({ data: new Float32Array(0), shape: [0, 8] });
    } finally { l.dispose(); }
  } })),
  fc.constantFrom(null, 'sd', {}, { 'out_proj.weight': [[1, 2]] }, { 'out_proj.weight': [[1, 0], [0, 1]] }, { 'out_proj.weight': [[1, 0], [0, 1]], in_proj_weight: [[1, 2]] })
    .map((sd) => ({ name: `fromTorch ${JSON.stringify(sd)}`, code: sd && sd['out_proj.weight'] && sd['out_proj.weight'].length === 1 ? 'SHAPE_MISMATCH' : sd && sd.in_proj_weight ? 'SHAPE_MISMATCH' : 'INVALID_ARGUMENT',
      run: () => mha.fromTorch(sd, { numHeads: 1 }) })),
);

test('property: every invalid call throws an MHAError with the documented code; the module keeps working', () => {
  let n = 0;
  const seen = new Map();
  fc.assert(fc.property(invalidArb, (c) => {
    n++;
    seen.set(c.code, (seen.get(c.code) || 0) + 1);
    let result, err = null;
    try { result = c.run(); } catch (e) { err = e; }
    if (err === null) assert.fail(`${c.name}: expected MHAError ${c.code}, the call returned ${result && result.output ? `output ${Array.from(result.output.data.slice(0, 4))}` : typeof result}`);
    if (!(err instanceof MHAError)) assert.fail(`${c.name}: expected MHAError ${c.code}, got ${err && err.constructor && err.constructor.name}: ${err && err.message}`);
    assert.equal(err.code, c.code, `${c.name}: "${err.message}"`);
    assert.ok(err.message.length > 10, `${c.name}: message "${err.message}"`);
    if (c.pattern) assert.match(err.message, c.pattern, c.name);
    if (c.bytes) assert.ok(Number.isFinite(err.bytes) && err.bytes > 2 ** 31 - 2 ** 25, `${c.name}: bytes = ${err.bytes}`);
    probe.check();
  }), fcParams());
  runsDone.invalid = n;
  // Every code was exercised (DISPOSED, OUT_OF_MEMORY included).
  for (const code of ['INVALID_CONFIG', 'SHAPE_MISMATCH', 'NON_FINITE', 'OUT_OF_MEMORY', 'DISPOSED', 'INVALID_ARGUMENT']) {
    assert.ok(RUNS < 200 || seen.get(code) > 0, `no run produced ${code}`);
  }
});

after(() => console.log(`# property runs: ${JSON.stringify(runsDone)}`));

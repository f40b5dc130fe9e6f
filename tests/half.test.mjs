// formats/half.js value by value, without an engine: float16 and bfloat16 bits widened to numbers
// (hand-computed anchors, and every float16 pattern against its float32 bits built here field by
// field), float32 rounded to float16 (anchors, every float16 round trip, and roundTiesToEven at
// every midpoint between neighbouring float16 values and one float32 step either side of it), the
// float16 range check's message, and how a decoder's weights are converted for each storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  halfToNumber, bfloat16ToNumber, numberToHalf, widen16, toFloat16, weightTarget, convertWeights, allMatrices16,
  applyWeightStorage, MATRIX_FIELDS, WEIGHT_STORAGES,
} from '../web/lib/src/formats/half.js';
import { MHAError } from '../web/lib/src/engine/errors.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** The float32 whose bits are `u`. */
const fromBits = (u) => { u32[0] = u >>> 0; return f32[0]; };
/** The bits of the float32 nearest x. */
const bitsOf = (x) => { f32[0] = x; return u32[0]; };

test('float16 bits → number: hand-computed values', () => {
  const cases = [
    [0x0000, 0], [0x3c00, 1], [0xbc00, -1], [0x4000, 2], [0xc000, -2], [0x3800, 0.5], [0x3555, 0.333251953125],
    [0x0001, 2 ** -24], [0x03ff, 1023 * 2 ** -24], [0x8001, -(2 ** -24)], [0x0400, 2 ** -14], [0x7bff, 65504],
    [0xfbff, -65504], [0x7c00, Infinity], [0xfc00, -Infinity], [0x3c01, 1 + 2 ** -10], [0x5640, 100],
  ];
  for (const [h, v] of cases) assert.equal(halfToNumber(h), v, `0x${h.toString(16)}`);
  assert.ok(Object.is(halfToNumber(0x8000), -0));
  for (const h of [0x7c01, 0x7e00, 0xfe00, 0x7fff]) assert.ok(Number.isNaN(halfToNumber(h)), `0x${h.toString(16)}`);
});

test('float16 bits → number: every pattern equals the float32 built from its sign, exponent and mantissa fields', () => {
  for (let h = 0; h < 0x10000; h++) {
    const s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    let want;
    if (e === 31) want = m ? NaN : fromBits((s << 31) | 0x7f800000);
    else if (e === 0) want = (s ? -1 : 1) * m / 2 ** 24;
    else want = fromBits((s << 31) | ((e - 15 + 127) << 23) | (m << 13));
    const got = halfToNumber(h);
    if (Number.isNaN(want)) assert.ok(Number.isNaN(got), `0x${h.toString(16)}`);
    else if (!Object.is(got, want)) assert.fail(`0x${h.toString(16)}: ${got}, expected ${want}`);
  }
});

test('bfloat16 bits → number: the upper half of a float32', () => {
  const cases = [[0x3f80, 1], [0xc040, -3], [0x4049, 3.140625], [0x0001, 2 ** -133], [0x7f7f, 3.3895313892515355e38], [0x7f80, Infinity], [0xff80, -Infinity], [0x0000, 0]];
  for (const [h, v] of cases) assert.equal(bfloat16ToNumber(h), v, `0x${h.toString(16)}`);
  assert.ok(Object.is(bfloat16ToNumber(0x8000), -0));
  assert.ok(Number.isNaN(bfloat16ToNumber(0x7fc0)));
});

test('number → float16 bits: hand-computed values, overflow to ±Infinity, underflow to ±0, NaN', () => {
  const cases = [
    [0, 0x0000], [1, 0x3c00], [-2, 0xc000], [0.1, 0x2e66], [1 / 3, 0x3555], [65504, 0x7bff], [-65504, 0xfbff],
    [65519, 0x7bff], [65520, 0x7c00], [65536, 0x7c00], [70000, 0x7c00], [-98304, 0xfc00], [131071, 0x7c00], [1e6, 0x7c00], [-1e6, 0xfc00], [Infinity, 0x7c00], [-Infinity, 0xfc00],
    [2 ** -14, 0x0400], [2 ** -24, 0x0001], [1023 * 2 ** -24, 0x03ff],
    // ties to even: 1 + 2^-11 lies halfway between 0x3c00 and 0x3c01 → 0x3c00 (even); 1 + 3·2^-11 → 0x3c02
    [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [2049, 0x6800], [2051, 0x6802],
    // subnormal ties: 2^-25 halfway between 0 and 0x0001 → 0; 3·2^-25 → 0x0002; just over 2^-25 → 0x0001
    [2 ** -25, 0x0000], [3 * 2 ** -25, 0x0002], [fromBits(0x33000001), 0x0001], [-(2 ** -25), 0x8000],
    [2 ** -26, 0x0000], [-(2 ** -40), 0x8000], [1e-30, 0x0000],
    // rounding up out of the subnormals and into the next binade (the carry into the exponent)
    [2 ** -14 - 2 ** -25, 0x0400], [2 - 2 ** -12, 0x4000], [65504 + 15.9, 0x7bff],
  ];
  for (const [x, h] of cases) assert.equal(numberToHalf(x), h, `${x} → 0x${numberToHalf(x).toString(16)}, expected 0x${h.toString(16)}`);
  assert.equal(numberToHalf(-0), 0x8000);
  assert.equal(numberToHalf(NaN), 0x7e00);
  assert.equal(numberToHalf(fromBits(0xff800001)), 0xfe00);   // a negative NaN keeps its sign, quiet
});

test('number → float16 bits: every finite float16 round-trips; every midpoint rounds to the even neighbour, one float32 step off it to the nearer', () => {
  for (let h = 0; h < 0x10000; h++) {
    if (((h >> 10) & 0x1f) === 31) continue;
    if (numberToHalf(halfToNumber(h)) !== h) assert.fail(`0x${h.toString(16)} round-trips to 0x${numberToHalf(halfToNumber(h)).toString(16)}`);
  }
  for (const sign of [0, 0x8000]) {
    for (let h = 0; h < 0x7bff; h++) {
      const a = halfToNumber(h | sign), b = halfToNumber((h + 1) | sign);
      const mid = (a + b) / 2;   // exact in float32: 12 significant bits
      const even = (h & 1) ? (h + 1) | sign : h | sign;
      const mb = bitsOf(mid);
      const below = fromBits(mb - 1), above = fromBits(mb + 1);   // one float32 step toward 0 / away from 0
      const got = [numberToHalf(mid), numberToHalf(below), numberToHalf(above)];
      const want = [even, h | sign, (h + 1) | sign];
      if (h === 0) want[1] = sign;   // below the smallest subnormal's midpoint: ±0 (h = 0 already)
      if (got.some((g, i) => g !== want[i])) assert.fail(`between 0x${(h | sign).toString(16)} and 0x${((h + 1) | sign).toString(16)}: ${got.map((g) => g.toString(16))}, expected ${want.map((g) => g.toString(16))}`);
    }
  }
  // the midpoint between 65504 and the next binade's first value (65536) rounds up into Infinity
  assert.equal(numberToHalf(65520), 0x7c00);
  assert.equal(numberToHalf(fromBits(bitsOf(65520) - 1)), 0x7bff);
});

test('widen16: a new Float32Array of the values, float16 or bfloat16', () => {
  const bits = Uint16Array.of(0x3c00, 0xc000, 0x0001, 0x7bff);
  const w = widen16(bits, 'float16');
  assert.ok(w instanceof Float32Array);
  assert.deepEqual([...w], [1, -2, 2 ** -24, 65504]);
  const b = widen16(Uint16Array.of(0x3f80, 0xc040, 0x4049), 'bfloat16');
  assert.ok(b instanceof Float32Array);
  assert.deepEqual([...b], [1, -3, 3.140625]);
  assert.deepEqual([...bits], [0x3c00, 0xc000, 0x0001, 0x7bff], 'the input is left as it was');
  assert.equal(widen16(new Uint16Array(0), 'bfloat16').length, 0);
});

test('toFloat16: rounds each value; one beyond ±65504 refused, naming the tensor, the value and its flat index', () => {
  assert.deepEqual([...toFloat16(Float32Array.of(1, -2, 0.1, 65504, -65504, 65519), 'wQ')], [0x3c00, 0xc000, 0x2e66, 0x7bff, 0xfbff, 0x7bff]);
  const refused = (a, msg) => assert.throws(() => toFloat16(a, 'wFc'), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === msg);
  refused(Float32Array.of(0, 1, 65520), "loadModel: weightStorage 'float16': wFc holds 65520 at flat index 2, beyond the float16 range (±65504); load it with weightStorage 'file' or 'float32'");
  refused(Float32Array.of(-70000), "loadModel: weightStorage 'float16': wFc holds -70000 at flat index 0, beyond the float16 range (±65504); load it with weightStorage 'file' or 'float32'");
  refused(Float32Array.of(3, -Infinity), "loadModel: weightStorage 'float16': wFc holds -Infinity at flat index 1, beyond the float16 range (±65504); load it with weightStorage 'file' or 'float32'");
});

test('weightTarget: each storage with each file type', () => {
  assert.deepEqual(WEIGHT_STORAGES, ['file', 'float16', 'float32']);
  for (const fileType of ['float16', 'bfloat16', null]) {
    for (const m16 of [true, false]) {
      assert.equal(weightTarget('float32', fileType, m16), 'float32');
      assert.equal(weightTarget('float16', fileType, m16), 'float16');
      assert.equal(weightTarget('file', fileType, m16), fileType !== null && m16 ? fileType : 'float32', `file, ${fileType}, ${m16}`);
    }
  }
});

/** Weights of a decoder with every field set: matrices and the other arrays as given. */
function weights(matrix, other) {
  const layer = () => ({
    // every field set (a block has wFc or wGate and wUp, not both: each is converted the same)
    wQ: matrix(), wK: matrix(), wV: matrix(), wO: matrix(), wFc: matrix(), wGate: matrix(), wUp: matrix(), wProj: matrix(),
    bQ: other(), bK: other(), bV: other(), bO: other(), bFc: other(), bGate: other(), bUp: other(), bProj: other(),
    norm1: { weight: other(), bias: other() }, norm2: { weight: other(), bias: null },
  });
  return { tokEmb: matrix(), lmHead: null, posEmb: other(), normF: { weight: other(), bias: other() }, lmHeadBias: other(), layers: [layer(), layer()] };
}
const H = () => Uint16Array.of(0x3c00, 0xc000);   // 1, −2 as float16 (bfloat16: 0x3c00 = 2^-7, 0xc000 = −2)
const F = () => Float32Array.of(1, -2);
/** Every [path, array] of the weights that is set. */
function arrays(w) {
  const out = [];
  const walk = (o, p) => {
    for (const [k, v] of Object.entries(o)) {
      if (ArrayBuffer.isView(v)) out.push([`${p}${k}`, v]);
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${p}${k}.${i}.`));
      else if (v && typeof v === 'object') walk(v, `${p}${k}.`);
    }
  };
  walk(w, '');
  return out;
}
const isMatrix = (p) => MATRIX_FIELDS.includes(p.split('.').at(-1));

test('allMatrices16: true only when every matrix present is 16-bit (the other arrays do not count)', () => {
  assert.deepEqual(MATRIX_FIELDS, ['tokEmb', 'lmHead', 'wQ', 'wK', 'wV', 'wO', 'wFc', 'wGate', 'wUp', 'wProj']);
  assert.equal(allMatrices16(weights(H, F)), true);
  assert.equal(allMatrices16(weights(H, H)), true);
  assert.equal(allMatrices16(weights(F, H)), false);
  const one = weights(H, F);
  one.layers[1].wProj = F();
  assert.equal(allMatrices16(one), false);
  const emb = weights(H, F);
  emb.tokEmb = F();
  assert.equal(allMatrices16(emb), false);
});

test('applyWeightStorage: matrices to the storage, every other array widened to float32, values kept', () => {
  // a float16 file kept 16-bit: matrices stay the same Uint16Arrays, the rest widened
  const w = weights(H, H);
  const before = new Map(arrays(w));
  assert.equal(applyWeightStorage(w, 'file', 'float16'), 'float16');
  for (const [p, a] of arrays(w)) {
    if (isMatrix(p)) assert.equal(a, before.get(p), `${p} kept as it was`);
    else assert.deepEqual(a, Float32Array.of(1, -2), p);
  }
  assert.equal(arrays(w).length, 5 + 2 * 19);
  // the same file as float32: every array widened
  const w32 = weights(H, H);
  assert.equal(applyWeightStorage(w32, 'float32', 'float16'), 'float32');
  for (const [p, a] of arrays(w32)) assert.deepEqual(a, Float32Array.of(1, -2), p);
  // bfloat16 as float16: matrices widened from bfloat16 and rounded to float16 bits
  const wb = weights(H, H);
  assert.equal(applyWeightStorage(wb, 'float16', 'bfloat16'), 'float16');
  for (const [p, a] of arrays(wb)) {
    if (isMatrix(p)) assert.deepEqual(a, Uint16Array.of(numberToHalf(2 ** -7), 0xc000), p);
    else assert.deepEqual(a, Float32Array.of(2 ** -7, -2), p);
  }
  // a float32 file as float16: matrices rounded, the rest left float32
  const wf = weights(F, F);
  const fBefore = new Map(arrays(wf));
  assert.equal(applyWeightStorage(wf, 'float16', null), 'float16');
  for (const [p, a] of arrays(wf)) {
    if (isMatrix(p)) assert.deepEqual(a, Uint16Array.of(0x3c00, 0xc000), p);
    else assert.equal(a, fBefore.get(p), `${p} kept as it was`);
  }
  // 'file' with one float32 matrix among 16-bit ones: float32 for all
  const mixed = weights(H, H);
  mixed.layers[0].wK = F();
  assert.equal(applyWeightStorage(mixed, 'file', 'float16'), 'float32');
  for (const [p, a] of arrays(mixed)) assert.deepEqual(a, Float32Array.of(1, -2), p);
});

test('convertWeights: one part at a time, a float16 beyond range named by its field', () => {
  const w = weights(F, F);
  w.layers[0].wO = Float32Array.of(0, 7e4);
  assert.throws(() => convertWeights(w.layers[0], true, 'float16', null),
    { message: "loadModel: weightStorage 'float16': wO holds 70000 at flat index 1, beyond the float16 range (±65504); load it with weightStorage 'file' or 'float32'" });
  const g = weights(H, H);
  assert.equal(convertWeights(g, false, 'float16', 'float16'), g);
  assert.ok(g.tokEmb instanceof Uint16Array && g.posEmb instanceof Float32Array && g.layers[0].wQ instanceof Uint16Array && g.layers[0].bQ instanceof Uint16Array,
    'only the part asked for is converted');
});

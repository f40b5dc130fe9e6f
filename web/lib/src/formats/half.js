/**
 * 16-bit weights: IEEE 754 binary16 (float16) and bfloat16 values as their bit patterns
 * (Uint16Array), widened to float32 exactly or rounded from float32 (to nearest, ties to even), and
 * the choice of how a decoder's matrices are held in wasm memory (loadModel's `weightStorage`).
 * The core keeps 16-bit matrices 16-bit and widens them in its kernels (cpp/src/half.hpp), so a
 * float16 file gives the results of its values widened to float32.
 * @module half
 */
import { MHAError } from '../engine/errors.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float16 bits → number (exact). */
export function halfToNumber(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** bfloat16 bits → number (exact: the upper half of a float32). */
export function bfloat16ToNumber(h) {
  u32[0] = h << 16;
  return f32[0];
}

/**
 * float32 → float16 bits, rounded to nearest, ties to even (IEEE 754 roundTiesToEven): values
 * beyond the float16 range (|x| ≥ 65520) give ±Infinity, tiny ones float16 subnormals or ±0.
 * @param {number} x
 * @returns {number} the 16-bit pattern
 */
export function numberToHalf(x) {
  f32[0] = x;
  const u = u32[0];
  const sign = (u >>> 16) & 0x8000;
  const e = (u >>> 23) & 0xff;
  const m = u & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (m ? 0x200 : 0);
  const he = e - 127 + 15;
  if (he >= 31) return sign | 0x7c00;
  if (he <= 0) {
    if (he < -10) return sign;   // below half the smallest subnormal: ±0
    const mm = m | 0x800000;     // with the implicit 1
    const shift = 14 - he;       // 14..24
    const q = mm >>> shift, r = mm & ((1 << shift) - 1), half = 1 << (shift - 1);
    return sign | (q + (r > half || (r === half && (q & 1)) ? 1 : 0));
  }
  const q = (he << 10) | (m >>> 13), r = m & 0x1fff;
  return sign | (q + (r > 0x1000 || (r === 0x1000 && (q & 1)) ? 1 : 0));   // a carry into the exponent is right
}

/**
 * A 16-bit array widened to a new Float32Array.
 * @param {Uint16Array} bits
 * @param {'float16'|'bfloat16'} type
 * @returns {Float32Array}
 */
export function widen16(bits, type) {
  const out = new Float32Array(bits.length);
  if (type === 'bfloat16') {
    new Uint32Array(out.buffer).set(bits);
    const o = new Uint32Array(out.buffer);
    for (let i = 0; i < o.length; i++) o[i] <<= 16;
    return out;
  }
  for (let i = 0; i < bits.length; i++) out[i] = halfToNumber(bits[i]);
  return out;
}

/**
 * A Float32Array rounded to float16 bits (numberToHalf).
 * @param {Float32Array} a
 * @param {string} name the tensor, for the error
 * @returns {Uint16Array}
 * @throws {MHAError} INVALID_ARGUMENT: a value beyond float16's range (|x| > 65504)
 */
export function toFloat16(a, name) {
  const out = new Uint16Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const h = numberToHalf(a[i]);
    if ((h & 0x7c00) === 0x7c00) {
      throw new MHAError('INVALID_ARGUMENT', `loadModel: weightStorage 'float16': ${name} holds ${a[i]} at flat index ${i}, beyond the float16 range (±65504); load it with weightStorage 'file' or 'float32'`);
    }
    out[i] = h;
  }
  return out;
}

/** The matrices of a decoder's weights (decoder.js spec): the ones the core may hold 16-bit. */
const GLOBAL_MATRICES = ['tokEmb', 'lmHead'];
const LAYER_MATRICES = ['wQ', 'wK', 'wV', 'wO', 'wFc', 'wGate', 'wUp', 'wProj'];
/** Every field of decoder.js's spec weights that is a matrix (outside the blocks, then in a block). */
export const MATRIX_FIELDS = Object.freeze([...GLOBAL_MATRICES, ...LAYER_MATRICES]);

/** The storages loadModel's `weightStorage` takes. */
export const WEIGHT_STORAGES = ['file', 'float16', 'float32'];

/** [object, key, isMatrix] of every array of the weights outside the blocks (layer: false) or of one block. */
function slotsOf(w, layer) {
  if (!layer) {
    return [...GLOBAL_MATRICES.map((k) => [w, k, true]), [w, 'posEmb', false], [w.normF, 'weight', false], [w.normF, 'bias', false], [w, 'lmHeadBias', false]];
  }
  return [...LAYER_MATRICES.map((k) => [w, k, true]), ...['bQ', 'bK', 'bV', 'bO', 'bFc', 'bGate', 'bUp', 'bProj'].map((k) => [w, k, false]),
    [w.norm1, 'weight', false], [w.norm1, 'bias', false], [w.norm2, 'weight', false], [w.norm2, 'bias', false]];
}

/**
 * What the core holds a decoder's matrices in, for a `weightStorage` and a file: 'file' keeps the
 * file's 16-bit type when every matrix is of it, else float32; 'float16' and 'float32' as named.
 * @param {'file'|'float16'|'float32'} storage
 * @param {'float16'|'bfloat16'|null} fileType the type of the file's 16-bit arrays (null: none)
 * @param {boolean} matrices16 whether every matrix is stored in fileType
 * @returns {'float32'|'float16'|'bfloat16'} decoder.js spec `weightType`
 */
export function weightTarget(storage, fileType, matrices16) {
  return storage === 'float32' ? 'float32' : storage === 'float16' ? 'float16' : fileType !== null && matrices16 ? fileType : 'float32';
}

/**
 * Converts one part of a decoder's weights (the arrays outside the blocks, or one block's) to what
 * the core holds: every matrix to `target` (float32 and bfloat16 ones rounded to float16 for
 * 'float16'), every other array (norms, biases, position table) widened to float32.
 * @param {object} w the weights outside the blocks (decoder.js spec `weights`) or one of its `layers`; changed in place
 * @param {boolean} layer whether `w` is a block
 * @param {'float32'|'float16'|'bfloat16'} target weightTarget()
 * @param {'float16'|'bfloat16'|null} fileType the type of the 16-bit arrays (Uint16Arrays)
 * @returns {object} w
 * @throws {MHAError} INVALID_ARGUMENT: for 'float16', a weight beyond ±65504 (toFloat16)
 */
export function convertWeights(w, layer, target, fileType) {
  for (const [o, k, matrix] of slotsOf(w, layer)) {
    const a = o && o[k];
    if (!a) continue;
    const is16 = a instanceof Uint16Array;
    if (!matrix || target === 'float32') {
      if (is16) o[k] = widen16(a, fileType);
    } else if (target !== fileType || !is16) {
      o[k] = toFloat16(is16 ? widen16(a, fileType) : a, k);
    }
  }
  return w;
}

/**
 * Whether every matrix of a decoder's weights (all blocks given) is 16-bit: stored in the file's
 * 16-bit type.
 * @param {object} weights decoder.js spec `weights`
 * @returns {boolean}
 */
export function allMatrices16(weights) {
  const parts = [[weights, false], ...weights.layers.map((lw) => [lw, true])];
  return parts.every(([w, layer]) => slotsOf(w, layer).every(([o, k, m]) => !m || !o[k] || o[k] instanceof Uint16Array));
}

/**
 * Sets how a decoder's matrices are held: the weights (decoder.js spec `weights`, whose arrays are
 * Float32Arrays or, straight from a 16-bit file, Uint16Arrays of `fileType`) with every matrix
 * converted to the chosen storage (weightTarget) and every other array (norms, biases, position
 * table) widened to float32 (convertWeights).
 * @param {object} weights decoder.js spec `weights`; changed in place
 * @param {'file'|'float16'|'float32'} storage
 * @param {'float16'|'bfloat16'|null} fileType the type of the file's 16-bit arrays (null: none)
 * @returns {'float32'|'float16'|'bfloat16'} the storage of the matrices (decoder.js spec `weightType`)
 */
export function applyWeightStorage(weights, storage, fileType) {
  const target = weightTarget(storage, fileType, allMatrices16(weights));
  convertWeights(weights, false, target, fileType);
  for (const lw of weights.layers) convertWeights(lw, true, target, fileType);
  return target;
}

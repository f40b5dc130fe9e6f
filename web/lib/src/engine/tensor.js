/**
 * Tensor: a Float32Array with a row-major shape, and the normalization of every tensor-like
 * input (nested arrays, Tensors, `{data, shape}`) the API accepts.
 * @module tensor
 */
import { MHAError } from './errors.js';

/** A dense row-major float32 tensor. */
export class Tensor {
  /**
   * @param {Float32Array} data row-major values; length must equal the product of `shape`
   * @param {number[]} shape dimensions, e.g. [B, Tq, dModel]
   * @throws {MHAError} SHAPE_MISMATCH when data.length ≠ ∏shape
   */
  constructor(data, shape) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (!(data instanceof Float32Array)) data = Float32Array.from(data);
    if (data.length !== n) {
      throw new MHAError('SHAPE_MISMATCH', `Tensor: data has ${data.length} values, shape [${shape.join(', ')}] needs ${n}`);
    }
    /** @type {Float32Array} */
    this.data = data;
    /** @type {number[]} */
    this.shape = shape.slice();
  }

  /**
   * @internal A Tensor over data and shape as they are (no copy, no check): for results the
   * library has just made, whose shape array it owns and whose length it knows.
   * @param {Float32Array} data
   * @param {number[]} shape
   */
  static wrap(data, shape) {
    const t = Object.create(Tensor.prototype);
    t.data = data;
    t.shape = shape;
    return t;
  }

  /** Number of elements (∏shape). */
  get size() { return this.data.length; }

  /**
   * The values as nested arrays of numbers (shape [] gives a number).
   * @returns {any}
   */
  toArray() {
    const { data, shape } = this;
    if (shape.length === 0) return data[0];
    const build = (dim, offset) => {
      const n = shape[dim];
      const stride = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
      const out = new Array(n);
      for (let i = 0; i < n; i++) {
        out[i] = dim === shape.length - 1 ? data[offset + i] : build(dim + 1, offset + i * stride);
      }
      return out;
    };
    return build(0, 0);
  }

  /**
   * The value at a multi-index.
   * @param {...number} idx one index per dimension
   */
  get(...idx) {
    let off = 0;
    for (let d = 0; d < this.shape.length; d++) off = off * this.shape[d] + idx[d];
    return this.data[off];
  }
}

const fmt = (shape) => `[${shape.join(', ')}]`;
export { fmt as formatShape };

/**
 * Infers the shape of nested arrays, checking they are rectangular.
 * @param {any[]} x nested arrays
 * @param {string} name the argument's name for error messages
 * @returns {number[]} the shape
 * @throws {MHAError} SHAPE_MISMATCH for ragged nesting
 */
export function nestedShape(x, name) {
  const shape = [];
  let cur = x;
  while (Array.isArray(cur)) {
    shape.push(cur.length);
    if (cur.length === 0) break;
    cur = cur[0];
  }
  // Check rectangularity.
  const check = (v, dim, path) => {
    if (dim === shape.length) {
      if (Array.isArray(v)) throw new MHAError('SHAPE_MISMATCH', `${name}${path} is an array, expected a number (ragged nesting; shape ${fmt(shape)})`);
      return;
    }
    if (!Array.isArray(v) || v.length !== shape[dim]) {
      const got = Array.isArray(v) ? `length ${v.length}` : typeof v;
      throw new MHAError('SHAPE_MISMATCH', `${name}${path}: expected an array of length ${shape[dim]} (shape ${fmt(shape)}), got ${got}`);
    }
    for (let i = 0; i < v.length; i++) check(v[i], dim + 1, `${path}[${i}]`);
  };
  check(x, 0, '');
  return shape;
}

/** True for a tensor-like object `{data, shape}` (including Tensor). */
export function isTensorLike(x) {
  return x !== null && typeof x === 'object' && !Array.isArray(x) && 'data' in x && 'shape' in x;
}

/**
 * Checks a shape (an array of non-negative integers) and returns its element count (∏shape).
 * @throws {MHAError} INVALID_ARGUMENT naming `name`.shape
 */
export function checkShape(shape, name) {
  if (!Array.isArray(shape)) throw new MHAError('INVALID_ARGUMENT', `${name}.shape must be an array of integers, got ${typeof shape}`);
  let n = 1;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (!Number.isInteger(d) || d < 0) throw new MHAError('INVALID_ARGUMENT', `${name}.shape must hold non-negative integers, got ${fmt(shape)}`);
    n *= d;
  }
  return n;
}

/**
 * Normalizes a tensor-like input to `{data: Float32Array, shape}` without copying a Float32Array.
 * @param {any} x nested arrays of numbers, a Tensor, or `{data, shape}`
 * @param {string} name the argument's name for error messages
 * @returns {{data: Float32Array, shape: number[]}}
 * @throws {MHAError} INVALID_ARGUMENT (not tensor-like, non-numbers), SHAPE_MISMATCH (ragged, wrong length)
 */
export function toFloat32(x, name) {
  if (isTensorLike(x)) {
    const n = checkShape(x.shape, name);
    let data = x.data;
    if (!(data instanceof Float32Array)) {
      if (!(ArrayBuffer.isView(data) || Array.isArray(data))) {
        throw new MHAError('INVALID_ARGUMENT', `${name}.data must be a Float32Array, a typed array or an array of numbers, got ${typeof data}`);
      }
      const src = data;
      data = new Float32Array(src.length);
      for (let i = 0; i < src.length; i++) {
        const v = src[i];
        if (typeof v !== 'number' && typeof v !== 'boolean') throw new MHAError('INVALID_ARGUMENT', `${name}.data[${i}] must be a number, got ${typeof v}`);
        data[i] = Number(v);
      }
    }
    if (data.length !== n) throw new MHAError('SHAPE_MISMATCH', `${name}: shape ${fmt(x.shape)} needs ${n} values, data has ${data.length}`);
    return { data, shape: x.shape.slice() };
  }
  if (!Array.isArray(x)) {
    throw new MHAError('INVALID_ARGUMENT', `${name} must be nested arrays of numbers, a Tensor or {data, shape}, got ${x === null ? 'null' : typeof x}`);
  }
  const shape = nestedShape(x, name);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  const flat = shape.length > 1 ? x.flat(shape.length - 1) : x;
  for (let i = 0; i < n; i++) {
    const v = flat[i];
    if (typeof v !== 'number') {
      throw new MHAError('INVALID_ARGUMENT', `${name}: element ${i} (row-major) must be a number, got ${v === null ? 'null' : typeof v}`);
    }
    data[i] = v;
  }
  return { data, shape };
}

/**
 * Checks a tensor's shape against an expected one (null entries match anything).
 * @throws {MHAError} SHAPE_MISMATCH naming the argument, the expected and the actual shape
 */
export function expectShape(t, expected, name) {
  const ok = t.shape.length === expected.length && expected.every((d, i) => d === null || d === t.shape[i]);
  if (!ok) {
    const e = expected.map((d) => (d === null ? '*' : d));
    throw new MHAError('SHAPE_MISMATCH', `${name}: expected shape ${fmt(e)}, got ${fmt(t.shape)}`);
  }
}

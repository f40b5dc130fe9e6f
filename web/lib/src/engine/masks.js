/**
 * Attention masks, as torch.nn.MultiheadAttention takes them: a boolean (or 0/1 Uint8Array) mask
 * is true = masked (may not attend); a float mask is added to the scores (-Infinity = masked).
 * A boolean attnMask becomes an additive one with -Infinity before it reaches the core; the key
 * padding mask goes to the core as it is, [B, Tk] uint8 (boolean) or float32 (additive).
 * @module masks
 */
import { MHAError } from './errors.js';
import { isTensorLike, nestedShape, checkShape, formatShape as fmt } from './tensor.js';

/** The error for a mask that mixes booleans and numbers: element `at` is `v`, unlike the first, `first`. */
function mixed(name, at, v, first) {
  return new MHAError('INVALID_ARGUMENT', `${name} mixes booleans and numbers: element ${at} is a ${typeof v}, ` +
    `element 0 a ${typeof first} (a mask holds booleans, true = masked, or numbers added to the scores)`);
}

/**
 * Normalizes one mask argument.
 * @param {any} x nested booleans (boolean mask), nested numbers (additive), `{data: Uint8Array,
 *   shape}` (boolean), `{data: Float32Array|number[], shape}` or a Tensor (additive)
 * @param {string} name argument name for errors
 * @returns {{bool: boolean, data: Uint8Array|Float32Array, shape: number[]}}
 * @throws {MHAError} SHAPE_MISMATCH: data not of the shape's size; INVALID_ARGUMENT: not a mask, an
 *   element neither boolean nor number, booleans mixed with numbers (naming the first element whose
 *   kind differs from element 0's)
 */
export function toMask(x, name) {
  if (isTensorLike(x)) {
    const { data, shape } = x;
    const n = checkShape(shape, name);
    if (!data || data.length !== n) {
      throw new MHAError('SHAPE_MISMATCH', `${name}: shape ${fmt(shape)} needs ${n} values, data has ${data ? data.length : 0}`);
    }
    if (data instanceof Uint8Array) return { bool: true, data, shape };
    if (Array.isArray(data) && data.length && data.every((v) => typeof v === 'boolean')) {
      return { bool: true, data: Uint8Array.from(data, Number), shape };
    }
    if (data instanceof Float32Array) return { bool: false, data, shape };
    if (ArrayBuffer.isView(data) || Array.isArray(data)) {
      const out = new Float32Array(n);
      let other = -1;   // the first element of another kind than element 0 (all booleans were read above)
      for (let i = 0; i < n; i++) {
        const t = typeof data[i];
        if (t !== 'number' && t !== 'boolean') throw new MHAError('INVALID_ARGUMENT', `${name}.data[${i}] must be a number or boolean, got ${t}`);
        if (other < 0 && t !== typeof data[0]) other = i;
        out[i] = data[i];
      }
      if (other >= 0) throw mixed(`${name}.data`, other, data[other], data[0]);
      return { bool: false, data: out, shape };
    }
    throw new MHAError('INVALID_ARGUMENT', `${name}.data must be a Uint8Array (boolean mask) or Float32Array (additive mask)`);
  }
  if (!Array.isArray(x)) {
    throw new MHAError('INVALID_ARGUMENT', `${name} must be nested arrays of booleans or numbers, or {data, shape}, got ${x === null ? 'null' : typeof x}`);
  }
  const shape = nestedShape(x, name);
  const flat = shape.length > 1 ? x.flat(shape.length - 1) : x;
  const bool = flat.length > 0 && typeof flat[0] === 'boolean';
  const data = bool ? new Uint8Array(flat.length) : new Float32Array(flat.length);
  for (let i = 0; i < flat.length; i++) {
    const v = flat[i];
    if (bool ? typeof v !== 'boolean' : typeof v !== 'number') {
      if (typeof v === 'number' || typeof v === 'boolean') throw mixed(name, `${i} (row-major)`, v, flat[0]);
      throw new MHAError('INVALID_ARGUMENT', `${name}: element ${i} (row-major) must be a ${bool ? 'boolean like the first' : 'number'}, got ${v === null ? 'null' : typeof v}`);
    }
    data[i] = bool ? (v ? 1 : 0) : v;
  }
  return { bool, data, shape };
}

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);

/** What prepareMasks returns for a call without masks (shared: the per-call path allocates nothing). */
const NO_MASKS = Object.freeze({ kpm: null, kpmAdd: null, attn: null, attnKind: 'none' });

/**
 * Turns the mask options of a forward into what the core takes.
 * @param {{keyPaddingMask?: any, attnMask?: any}} opts
 * @param {{B: number, Tq: number, Tk: number, h: number, batched: boolean}} dims
 * @returns {{kpm: Uint8Array|null, kpmAdd: Float32Array|null, attn: Float32Array|null, attnKind: 'none'|'shared'|'perHead'}}
 *   kpm: boolean key padding mask [B, Tk] (1 = padded); kpmAdd: additive one [B, Tk] (at most one
 *   of the two); attnKind as the core's maskKinds name it (enums(), mha::MaskKind): 'shared' =
 *   [Tq, Tk], 'perHead' = [B·h, Tq, Tk] (index b·h + head)
 * @throws {MHAError} SHAPE_MISMATCH naming the mask, the expected and the actual shape;
 *   INVALID_ARGUMENT when a mask is not nested arrays or {data, shape} of booleans or numbers (or
 *   mixes them). NaN/+Infinity in an additive mask is reported by the core (NON_FINITE, naming
 *   the element).
 */
export function prepareMasks(opts, { B, Tq, Tk, h, batched }) {
  if (opts.keyPaddingMask == null && opts.attnMask == null) return NO_MASKS;
  let kpm = null;
  let kpmAdd = null;
  if (opts.keyPaddingMask != null) {
    const m = toMask(opts.keyPaddingMask, 'keyPaddingMask');
    const ok = sameShape(m.shape, [B, Tk]) || (!batched && sameShape(m.shape, [Tk]));
    if (!ok) {
      throw new MHAError('SHAPE_MISMATCH', `keyPaddingMask: expected shape ${fmt(batched ? [B, Tk] : [Tk])} ([batch, keyLen]), got ${fmt(m.shape)}`);
    }
    if (m.bool) kpm = m.data; else kpmAdd = m.data;
  }
  let attn = null;
  let attnKind = 'none';
  if (opts.attnMask != null) {
    const m = toMask(opts.attnMask, 'attnMask');
    if (sameShape(m.shape, [Tq, Tk])) attnKind = 'shared';
    else if (sameShape(m.shape, [B * h, Tq, Tk]) || sameShape(m.shape, [B, h, Tq, Tk])) attnKind = 'perHead';
    else {
      throw new MHAError('SHAPE_MISMATCH', `attnMask: expected shape ${fmt([Tq, Tk])} or ${fmt([B * h, Tq, Tk])} ([batch·numHeads, queryLen, keyLen]), got ${fmt(m.shape)}`);
    }
    if (m.bool) {
      attn = new Float32Array(m.data.length);
      for (let i = 0; i < attn.length; i++) attn[i] = m.data[i] ? -Infinity : 0;
    } else {
      attn = m.data;
    }
  }
  return { kpm, kpmAdd, attn, attnKind };
}

/**
 * The options of Layer.forward, Layer.trace and KVCache.step that are not tensors: the options
 * object itself, boolean flags, the head mask and the caller-owned result arrays (`out`).
 * @module forward-options
 */
import { MHAError } from './errors.js';
import { readFloats as copyOut } from './memory.js';
import { formatShape as fmt } from './tensor.js';

/** Throws INVALID_ARGUMENT unless opts is an options object (forward, trace and step take one). */
export function checkOptions(opts, name) {
  if (opts === null || typeof opts !== 'object') throw new MHAError('INVALID_ARGUMENT', `${name}: options must be an object, got ${opts === null ? 'null' : typeof opts}`);
}

/**
 * A boolean option's value (callers read it with a literal name, `opts.causal`: a keyed read
 * `opts[key]` over several names is a megamorphic lookup on every call).
 */
export function boolOption(v, key, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw new MHAError('INVALID_ARGUMENT', `${key} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The headMask option: h finite multipliers of each head's output before W_O (0 switches a head
 * off), as a Float32Array, or null when absent. Non-finite values are refused by the core (with the index).
 * @throws {MHAError} SHAPE_MISMATCH (not h numbers), INVALID_ARGUMENT (not an array of numbers)
 */
export function headMaskOption(v, h, name) {
  if (v === undefined || v === null) return null;
  if (!(Array.isArray(v) || ArrayBuffer.isView(v)) || Array.prototype.some.call(v, (x) => typeof x !== 'number')) {
    throw new MHAError('INVALID_ARGUMENT', `${name}: headMask must be an array of ${h} numbers (one per head), got ${Array.isArray(v) ? JSON.stringify(v) : typeof v}`);
  }
  if (v.length !== h) throw new MHAError('SHAPE_MISMATCH', `${name}: headMask: expected shape [${h}] (numHeads), got [${v.length}]`);
  return Float32Array.from(v);
}

/**
 * Checks the `out` option of forward/step: caller-owned Float32Arrays the results are written
 * into instead of new arrays. nOut / nWeights: the float counts of the call's results (nWeights 0:
 * no weights); shapeOf(key) gives a result's shape, for the error message only.
 * @returns {{output: Float32Array|null, weights: Float32Array|null}}
 * @throws {MHAError} INVALID_ARGUMENT (not a plain object, an unknown key, not a Float32Array,
 *   weights without needWeights, output and weights sharing memory), SHAPE_MISMATCH (a length
 *   other than the result's, naming both)
 */
export function checkOut(out, nOut, nWeights, shapeOf, name) {
  if (typeof out !== 'object' || ArrayBuffer.isView(out) || Array.isArray(out)) {
    throw new MHAError('INVALID_ARGUMENT', `${name}: out must be an object {output?, weights?} of Float32Arrays, got ${ArrayBuffer.isView(out) ? out.constructor.name : Array.isArray(out) ? 'an array' : typeof out}`);
  }
  for (const key in out) {
    if (key !== 'output' && key !== 'weights') throw new MHAError('INVALID_ARGUMENT', `${name}: out.${key} is not a result (out takes output and weights)`);
  }
  const pick = (key, n) => {
    const a = out[key];
    if (a == null) return null;
    if (!(a instanceof Float32Array)) throw new MHAError('INVALID_ARGUMENT', `${name}: out.${key} must be a Float32Array, got ${a?.constructor?.name ?? typeof a}`);
    if (n === 0) throw new MHAError('INVALID_ARGUMENT', `${name}: out.${key} given, but this call returns no ${key} (needWeights: false)`);
    if (a.length !== n) throw new MHAError('SHAPE_MISMATCH', `${name}: out.${key} must hold ${n} floats (${fmt(shapeOf(key))}), got ${a.length}`);
    return a;
  };
  const o = pick('output', nOut), w = pick('weights', nWeights);
  if (o && w && o.buffer === w.buffer && o.byteOffset < w.byteOffset + w.byteLength && w.byteOffset < o.byteOffset + o.byteLength) {
    throw new MHAError('INVALID_ARGUMENT', `${name}: out.output and out.weights overlap (they must not share memory)`);
  }
  return { output: o, weights: w };
}

/** The result in `dst` (filled from the wasm view `src`) when given, else a new copy of `src`. */
export function intoOrCopy(src, dst) {
  if (!dst) return copyOut(src);
  dst.set(src);
  return dst;
}

/**
 * Errors of the mha-wasm API.
 * @module errors
 */
import { coreTables } from './core-tables.js';

/**
 * The codes an MHAError may carry, the public `ERROR_CODES`: the one JS copy of the core's list,
 * kept because it exists before any module loads. The core's numeric codes are mapped through the
 * core's own table (enums().codes, written once in cpp/include/mha/status.hpp), never through this
 * list; tests/contract.test.mjs checks it against that table and tests/errors-unit.test.mjs
 * against status.hpp.
 */
export const CODES = Object.freeze([
  'OK', 'INVALID_CONFIG', 'SHAPE_MISMATCH', 'NON_FINITE', 'OUT_OF_MEMORY', 'DISPOSED', 'INVALID_ARGUMENT',
]);

/**
 * The error createMHA rejects with when the engine cannot load or its options are wrong: a plain
 * Error named MHALoadError (no wasm module exists yet to report an MHAError code).
 * @param {string} message names the option or resource, the expected and the actual value
 * @param {unknown} [cause] the underlying error
 * @returns {Error}
 */
export function loadError(message, cause) {
  const err = new Error(`mha-wasm: ${message}`, cause === undefined ? undefined : { cause });
  err.name = 'MHALoadError';
  return err;
}

/**
 * The one error type the API throws. `code` is one of INVALID_CONFIG, SHAPE_MISMATCH, NON_FINITE,
 * OUT_OF_MEMORY, DISPOSED, INVALID_ARGUMENT; the message names the argument, the expected and the
 * actual value. After an MHAError the module keeps working.
 */
export class MHAError extends Error {
  /**
   * @param {string} code one of the codes above
   * @param {string} message names the argument, the expected and the actual value
   * @param {{bytes?: number, argument?: string, index?: number[]}} [details] fields copied onto the
   *   error (only those given, so an error has no `bytes` key unless it is OUT_OF_MEMORY)
   */
  constructor(code, message, details) {
    super(message);
    this.name = 'MHAError';
    this.code = code;
    const { bytes, argument, index } = details ?? {};
    /** @type {number|undefined} OUT_OF_MEMORY: the bytes the refused call would need. */
    if (bytes !== undefined) this.bytes = bytes;
    /** @type {string|undefined} an error the core raised: the argument at fault, in the API's names. */
    if (argument !== undefined) this.argument = argument;
    /** @type {number[]|undefined} NON_FINITE: the index of the first bad element in the caller's shape. */
    if (index !== undefined) this.index = index;
  }
}

/** A core argument name in the JS API's vocabulary: snake_case to camelCase (`key_padding_mask` →
 * `keyPaddingMask`, `weights.w_q` → `weights.wQ`). */
export function jsName(coreName) {
  return coreName.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

/**
 * The MHAError for the core's last failed call. The core reports a structured status (embind.cpp,
 * `lastError()`: {code, message, argument, index, batchFirst, bytes}); its message writes argument
 * names as `{snake_case}` tokens and the bad element's index as `{index}`, which this renders in
 * the API's vocabulary. An unbatched call ran as B = 1: the batch index of a batch-first argument
 * is dropped, so the index matches the caller's shape.
 * @param {object} core the wasm module
 * @param {string} [context] prefix naming the call, e.g. "forward"
 * @param {boolean} [batched=true] whether the caller's input had a batch dimension
 * @returns {MHAError} with `argument` (the API's name) and, where the core gives them, `index`
 *   (number[]) and `bytes` (OUT_OF_MEMORY)
 */
export function coreError(core, context, batched = true) {
  const e = core.lastError();
  const index = !batched && e.batchFirst && e.index[0] === 0 ? e.index.slice(1) : e.index;
  const message = e.message.replace(/\{([a-z_.]+)\}/g, (_, name) => (name === 'index' ? `[${index.join(', ')}]` : jsName(name)));
  const details = {};
  if (e.argument) details.argument = jsName(e.argument);
  if (index.length) details.index = index;
  if (e.bytes > 0) details.bytes = e.bytes;
  return new MHAError(coreTables(core).enums.codes[e.code] || 'INVALID_ARGUMENT', context ? `${context}: ${message}` : message, details);
}

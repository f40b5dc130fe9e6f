/**
 * Errors of the mha-wasm API.
 * @module errors
 */

/** Error codes, in the order of the C++ core's mha::Code (index = numeric code). */
export const CODES = Object.freeze([
  'OK', 'INVALID_CONFIG', 'SHAPE_MISMATCH', 'NON_FINITE', 'OUT_OF_MEMORY', 'DISPOSED', 'INVALID_ARGUMENT',
]);

/**
 * The one error type the API throws. `code` is one of INVALID_CONFIG, SHAPE_MISMATCH, NON_FINITE,
 * OUT_OF_MEMORY, DISPOSED, INVALID_ARGUMENT; the message names the argument, the expected and the
 * actual value. After an MHAError the module keeps working.
 */
export class MHAError extends Error {
  /**
   * @param {string} code one of the codes above
   * @param {string} message names the argument, the expected and the actual value
   * @param {object} [details] extra fields (e.g. `bytes` for OUT_OF_MEMORY)
   */
  constructor(code, message, details) {
    super(message);
    this.name = 'MHAError';
    this.code = code;
    if (details) Object.assign(this, details);
  }
}

/**
 * Throws the MHAError for a non-zero status returned by the wasm core.
 * @param {number} status numeric mha::Code
 * @param {string} message from the core's lastError()
 * @param {string} [context] prefix naming the call, e.g. "forward"
 */
export function throwStatus(status, message, context) {
  const code = CODES[status] || 'INVALID_ARGUMENT';
  const m = /needs (\d+) bytes/.exec(message);
  throw new MHAError(code, context ? `${context}: ${message}` : message, m ? { bytes: Number(m[1]) } : undefined);
}

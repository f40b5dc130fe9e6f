// Asserting an error exactly: the suites that pin every message of a module (mutation testing)
// share this. Imports only errors.js, so suites of the pure-JS modules run without a wasm build.
import assert from 'node:assert/strict';
import { MHAError } from '../../web/lib/src/engine/errors.js';

/** Asserts that fn() throws an MHAError with exactly this code and message. */
export function throwsExactly(fn, code, message) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, `code of "${e.message}"`);
    assert.equal(e.message, message);
    return true;
  });
}

/** throwsExactly with code INVALID_ARGUMENT. */
export const throwsInvalid = (fn, message) => throwsExactly(fn, 'INVALID_ARGUMENT', message);

// The error helpers (web/lib/src/engine/errors.js) value by value, without an engine: MHAError's
// fields, loadError, jsName, and coreError on a stand-in core whose lastError() returns what the
// real one reports (embind.cpp: {code, message, argument, index, batchFirst, bytes}). The engine's
// own errors are asserted end to end in tests/errors.test.mjs. Mutation testing (StrykerJS)
// measures errors.js with this suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CODES, MHAError, loadError, jsName, coreError } from '../web/lib/src/engine/errors.js';

test('CODES: the codes of the core\'s one list (MHA_STATUS_CODES in status.hpp), in its order of values, frozen', () => {
  const header = readFileSync(new URL('../cpp/include/mha/status.hpp', import.meta.url), 'utf8');
  const list = header.slice(header.indexOf('#define MHA_STATUS_CODES'), header.indexOf('enum class Code'));
  const core = [...list.matchAll(/X\(k\w+, (\d+), (\w+)\)/g)].sort((x, y) => x[1] - y[1]).map((m) => m[2]);
  assert.ok(core.length >= 7 && core[0] === 'OK', `status.hpp read: ${core}`);
  assert.deepEqual(CODES, core);
  assert.ok(Object.isFrozen(CODES));
});

test('MHAError: name, code, message, and only the details given', () => {
  const plain = new MHAError('DISPOSED', 'forward: this layer was disposed');
  assert.ok(plain instanceof Error);
  assert.equal(plain.name, 'MHAError');
  assert.equal(plain.code, 'DISPOSED');
  assert.equal(plain.message, 'forward: this layer was disposed');
  assert.deepEqual(Object.keys(plain).sort(), ['code', 'name']);
  const full = new MHAError('OUT_OF_MEMORY', 'm', { bytes: 1024, argument: 'query', index: [0, 2] });
  assert.equal(full.bytes, 1024);
  assert.equal(full.argument, 'query');
  assert.deepEqual(full.index, [0, 2]);
  const some = new MHAError('NON_FINITE', 'm', { index: [3] });
  assert.deepEqual(Object.keys(some).sort(), ['code', 'index', 'name']);
  // a 0 or an empty name is still given (only undefined leaves a field out)
  const zero = new MHAError('OUT_OF_MEMORY', 'm', { bytes: 0, argument: '' });
  assert.equal(zero.bytes, 0);
  assert.equal(zero.argument, '');
});

test('loadError: an Error named MHALoadError, its message prefixed, its cause kept only when given', () => {
  const cause = new TypeError('fetch failed');
  const e = loadError('wasm: could not fetch x.wasm', cause);
  assert.equal(e.name, 'MHALoadError');
  assert.equal(e.message, 'mha-wasm: wasm: could not fetch x.wasm');
  assert.equal(e.cause, cause);
  assert.ok(!(e instanceof MHAError));
  const bare = loadError('threads: expected a number');
  assert.equal(bare.message, 'mha-wasm: threads: expected a number');
  assert.equal('cause' in bare, false);
});

test('jsName: snake_case to camelCase, dotted paths too', () => {
  assert.equal(jsName('key_padding_mask'), 'keyPaddingMask');
  assert.equal(jsName('weights.w_q'), 'weights.wQ');
  assert.equal(jsName('attn_mask'), 'attnMask');
  assert.equal(jsName('query'), 'query');
  assert.equal(jsName('w_q_bias'), 'wQBias');
  assert.equal(jsName('a_1'), 'a_1', 'only a lower-case letter after _ is joined');
});

/** A stand-in for the wasm module: the enumerations coreTables reads, and a fixed last error. */
function fakeCore(last) {
  const layout = () => ({ bytes: 0, fields: {} });
  return {
    lastError: () => last,
    enums: () => ({ codes: [...CODES], maskKinds: {}, normKinds: {}, mlpKinds: {} }),
    layerLayout: layout, passportLayout: layout, forwardLayout: layout, kvStepLayout: layout, decoderLayout: layout,
  };
}
const status = (o) => ({ code: 6, message: '', argument: '', index: [], batchFirst: false, bytes: 0, ...o });

test('coreError renders the core\'s {names} and {index} in the API\'s words, with the details it gives', () => {
  const core = fakeCore(status({ code: 3, message: '{query}{index} is NaN; expected a finite number', argument: 'query', index: [1, 0, 2], batchFirst: true }));
  const e = coreError(core, 'forward');
  assert.ok(e instanceof MHAError);
  assert.equal(e.code, 'NON_FINITE');
  assert.equal(e.message, 'forward: query[1, 0, 2] is NaN; expected a finite number');
  assert.equal(e.argument, 'query');
  assert.deepEqual(e.index, [1, 0, 2]);
  assert.equal('bytes' in e, false);
  // unbatched: batch index 0 of a batch-first argument is dropped
  const u = coreError(fakeCore(status({ code: 3, message: '{key_padding_mask}{index} is NaN', argument: 'key_padding_mask', index: [0, 4], batchFirst: true })), 'forward', false);
  assert.equal(u.message, 'forward: keyPaddingMask[4] is NaN');
  assert.equal(u.argument, 'keyPaddingMask');
  assert.deepEqual(u.index, [4]);
  // not batch-first, or a batch index other than 0: the index stays whole
  assert.deepEqual(coreError(fakeCore(status({ code: 3, message: '{index}', index: [0, 4], batchFirst: false })), 'f', false).index, [0, 4]);
  assert.deepEqual(coreError(fakeCore(status({ code: 3, message: '{index}', index: [2, 4], batchFirst: true })), 'f', false).index, [2, 4]);
  // batched (the default): kept
  assert.deepEqual(coreError(fakeCore(status({ code: 3, message: '{index}', index: [0, 4], batchFirst: true })), 'f').index, [0, 4]);
});

test('coreError: bytes for OUT_OF_MEMORY, no context prefix when none is given, an unknown code is INVALID_ARGUMENT', () => {
  const oom = coreError(fakeCore(status({ code: 4, message: 'needs {weights.w_q} of 4096 bytes', argument: 'weights.w_q', bytes: 4096 })));
  assert.equal(oom.code, 'OUT_OF_MEMORY');
  assert.equal(oom.message, 'needs weights.wQ of 4096 bytes');
  assert.equal(oom.bytes, 4096);
  assert.equal(oom.argument, 'weights.wQ');
  assert.equal('index' in oom, false);
  const bare = coreError(fakeCore(status({ code: 1, message: 'bad' })), '');
  assert.equal(bare.code, 'INVALID_CONFIG');
  assert.equal(bare.message, 'bad');
  assert.deepEqual(Object.keys(bare).sort(), ['code', 'name']);
  assert.equal(coreError(fakeCore(status({ code: 99, message: 'x' })), 'f').code, 'INVALID_ARGUMENT');
  // tokens other than {snake_case} names stay as written
  assert.equal(coreError(fakeCore(status({ message: 'a {B} b {x_y}' })), 'f').message, 'f: a {B} b xY');
});

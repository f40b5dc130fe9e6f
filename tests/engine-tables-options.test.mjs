// engine/core-tables.js and engine/forward-options.js value by value: the core's self-description
// is read once per module and its enumerations looked up by name (an unknown entry is a plain Error:
// a bug of this package, not of a caller); the head mask and the `out` buffers are checked with the
// messages the API documents (the code, the argument and what was given).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { coreTables, enumValue } from '../web/lib/src/engine/core-tables.js';
import { headMaskOption, checkOut, checkOptions, boolOption, intoOrCopy } from '../web/lib/src/engine/forward-options.js';

const mha = await createMHA();
const core = mha._core;

/** Asserts that f throws an MHAError with this code and exactly this message. */
function throwsExactly(f, code, message) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof MHAError, `${e}`);
    assert.equal(e.code, code);
    assert.equal(e.message, message);
    return true;
  });
}

test('coreTables: read once per module (the same frozen object), every layout and the enumerations the core exports', () => {
  const t = coreTables(core);
  assert.equal(coreTables(core), t);
  assert.ok(Object.isFrozen(t));
  for (const k of ['layer', 'passport', 'forward', 'kvStep']) assert.ok(t[k].bytes > 0 && Object.keys(t[k].fields).length > 0, k);
  for (const k of ['init', 'block', 'call']) assert.ok(t.decoder[k].bytes > 0, `decoder.${k}`);
  assert.deepEqual(t.enums.codes, core.enums().codes);
  assert.equal(t.enums.codes[0], 'OK');
});

test('enumValue: the core value of a named entry; an unknown entry or enumeration is an Error naming it', () => {
  const e = core.enums();
  for (const kind of ['maskKinds', 'normKinds', 'mlpKinds']) {
    const names = Object.keys(e[kind]);
    assert.ok(names.length >= 2, kind);
    for (const n of names) assert.equal(enumValue(core, kind, n), e[kind][n], `${kind}.${n}`);
  }
  assert.throws(() => enumValue(core, 'normKinds', 'batchnorm'), { message: 'the core\'s normKinds has no entry "batchnorm"' });
  assert.throws(() => enumValue(core, 'colourKinds', 'red'), { message: 'the core\'s colourKinds has no entry "red"' });
  assert.throws(() => enumValue(core, 'normKinds', 'toString'), /has no entry "toString"/, 'own entries only');
});

test('headMaskOption: absent is null; h numbers become a Float32Array; anything else is named', () => {
  assert.equal(headMaskOption(undefined, 2, 'forward'), null);
  assert.equal(headMaskOption(null, 2, 'forward'), null);
  assert.deepEqual(headMaskOption([1, 0], 2, 'forward'), new Float32Array([1, 0]));
  assert.deepEqual(headMaskOption(new Float64Array([0.5, 2, 1]), 3, 'step'), new Float32Array([0.5, 2, 1]));
  throwsExactly(() => headMaskOption([1, 'x'], 2, 'forward'), 'INVALID_ARGUMENT', 'forward: headMask must be an array of 2 numbers (one per head), got [1,"x"]');
  throwsExactly(() => headMaskOption({ 0: 1, 1: 1, length: 2 }, 2, 'forward'), 'INVALID_ARGUMENT', 'forward: headMask must be an array of 2 numbers (one per head), got object');
  throwsExactly(() => headMaskOption('11', 2, 'step'), 'INVALID_ARGUMENT', 'step: headMask must be an array of 2 numbers (one per head), got string');
  throwsExactly(() => headMaskOption([1], 2, 'forward'), 'SHAPE_MISMATCH', 'forward: headMask: expected shape [2] (numHeads), got [1]');
  throwsExactly(() => headMaskOption([1, 1, 1], 2, 'forward'), 'SHAPE_MISMATCH', 'forward: headMask: expected shape [2] (numHeads), got [3]');
});

test('checkOut: caller-owned Float32Arrays of the right lengths, apart; every other value named', () => {
  const shapeOf = (k) => (k === 'output' ? [2, 3] : [1, 2, 2]);
  const output = new Float32Array(6), weights = new Float32Array(4);
  assert.deepEqual(checkOut({}, 6, 4, shapeOf, 'forward'), { output: null, weights: null });
  const got = checkOut({ output, weights }, 6, 4, shapeOf, 'forward');
  assert.equal(got.output, output);
  assert.equal(got.weights, weights);
  assert.equal(checkOut({ output: null }, 6, 0, shapeOf, 'forward').output, null);
  throwsExactly(() => checkOut(output, 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out must be an object {output?, weights?} of Float32Arrays, got Float32Array');
  throwsExactly(() => checkOut([output], 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out must be an object {output?, weights?} of Float32Arrays, got an array');
  throwsExactly(() => checkOut('x', 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out must be an object {output?, weights?} of Float32Arrays, got string');
  throwsExactly(() => checkOut({ scores: output }, 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out.scores is not a result (out takes output and weights)');
  throwsExactly(() => checkOut({ output: [0, 0, 0, 0, 0, 0] }, 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out.output must be a Float32Array, got Array');
  throwsExactly(() => checkOut({ output: Object.create(null) }, 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out.output must be a Float32Array, got object');
  throwsExactly(() => checkOut({ weights }, 6, 0, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out.weights given, but this call returns no weights (needWeights: false)');
  throwsExactly(() => checkOut({ output: new Float32Array(5) }, 6, 4, shapeOf, 'forward'), 'SHAPE_MISMATCH', 'forward: out.output must hold 6 floats ([2, 3]), got 5');
  const buf = new Float32Array(10);
  throwsExactly(() => checkOut({ output: buf.subarray(0, 6), weights: buf.subarray(5, 9) }, 6, 4, shapeOf, 'forward'), 'INVALID_ARGUMENT', 'forward: out.output and out.weights overlap (they must not share memory)');
  const apart = checkOut({ output: buf.subarray(0, 6), weights: buf.subarray(6, 10) }, 6, 4, shapeOf, 'forward');
  assert.equal(apart.weights.byteOffset, 24, 'adjacent views of one buffer do not overlap');
});

test('checkOptions, boolOption and intoOrCopy', () => {
  throwsExactly(() => checkOptions(null, 'trace'), 'INVALID_ARGUMENT', 'trace: options must be an object, got null');
  throwsExactly(() => checkOptions(3, 'trace'), 'INVALID_ARGUMENT', 'trace: options must be an object, got number');
  checkOptions({}, 'trace');
  assert.equal(boolOption(undefined, 'causal', false), false);
  assert.equal(boolOption(true, 'causal', false), true);
  throwsExactly(() => boolOption('yes', 'causal', false), 'INVALID_ARGUMENT', 'causal must be a boolean, got "yes"');
  const src = new Float32Array([1, 2, 3]);
  const copy = intoOrCopy(src, null);
  assert.deepEqual(copy, src);
  assert.notEqual(copy, src);
  const dst = new Float32Array(3);
  assert.equal(intoOrCopy(src, dst), dst);
  assert.deepEqual(dst, src);
});

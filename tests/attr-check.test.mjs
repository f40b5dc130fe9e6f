// The shared attribute parsers of the elements (web/lib/components/base/attr-check.js): each returns the
// value or an MHAError INVALID_ARGUMENT naming the attribute, what is allowed and the value written.
import test from 'node:test';
import assert from 'node:assert/strict';
import { intAttr, numberAttr, enumAttr, schemeAttr, SCHEMES, headListAttr, tokensAttr, attrError, AttrGuard } from '../web/lib/components/base/attr-check.js';

const err = (r) => { assert.ok(r.error, `expected an error, got ${JSON.stringify(r)}`); assert.equal(r.error.code, 'INVALID_ARGUMENT'); return r.error; };

test('intAttr: whole numbers in range; words, blanks, decimals, hex, huge numbers refused', () => {
  const o = { dflt: 2, min: 1, max: 8 };
  assert.deepEqual(intAttr('heads', null, o), { value: 2 });
  assert.deepEqual(intAttr('heads', ' 4 ', o), { value: 4 });
  assert.deepEqual(intAttr('heads', 8, o), { value: 8 });
  for (const bad of ['abc', '', ' ', '2.5', '0x4', '1e1', 'NaN', '9', '0', '-1', '99999999999999999999']) {
    const e = err(intAttr('heads', bad, o));
    assert.equal(e.argument, 'heads');
    assert.equal(e.message, `heads: expected a whole number from 1 to 8, got ${JSON.stringify(bad)}`);
  }
  assert.equal(intAttr('heads', 'abc', o).dflt, 2);
});

test('numberAttr: finite decimals in range, optionally above the minimum only', () => {
  assert.deepEqual(numberAttr('temperature', '0.7', { dflt: 1, min: 0, max: 5 }), { value: 0.7 });
  assert.deepEqual(numberAttr('temperature', '1e-2', { dflt: 1, min: 0, max: 5 }), { value: 0.01 });
  assert.equal(err(numberAttr('temperature', 'hot', { dflt: 0.7, min: 0, max: 5 })).message, 'temperature: expected a number from 0 to 5, got "hot"');
  for (const bad of ['', 'Infinity', 'NaN', '1e309', '-0.1', '5.01', '1,5']) err(numberAttr('t', bad, { dflt: 1, min: 0, max: 5 }));
  assert.equal(err(numberAttr('dtype-bytes', '0', { dflt: 2, min: 0, max: 8, minExclusive: true })).message, 'dtype-bytes: expected a number above 0, at most 8, got "0"');
});

test('enumAttr: exact words only', () => {
  assert.deepEqual(enumAttr('scheme', 'cividis', { dflt: 'viridis', values: ['viridis', 'cividis'] }), { value: 'cividis' });
  assert.equal(err(enumAttr('model', 'GPT-5', { dflt: 'a', values: ['a', 'b'] })).message, 'model: expected one of "a", "b", got "GPT-5"');
  err(enumAttr('scheme', 'VIRIDIS', { dflt: 'viridis', values: ['viridis', 'cividis'] }));
});

test('schemeAttr: the one parser of a heatmap\'s scheme, viridis by default', () => {
  assert.deepEqual(SCHEMES, ['viridis', 'cividis']);
  assert.deepEqual(schemeAttr(null), { value: 'viridis' });
  assert.deepEqual(schemeAttr('cividis'), { value: 'cividis' });
  const r = schemeAttr('magma');
  assert.equal(r.dflt, 'viridis');
  assert.equal(r.error.argument, 'scheme');
  assert.equal(r.error.message, 'scheme: expected one of "viridis", "cividis", got "magma"');
});

test('headListAttr: 1-based layer:head pairs inside the model; one bad entry refuses the whole value', () => {
  const o = { layers: 2, heads: 4 };
  assert.deepEqual(headListAttr('ablate', '2:1, 1:4 2:1', o), { value: [[1, 0], [0, 3]] });
  assert.deepEqual(headListAttr('ablate', '', o), { value: [] });
  assert.equal(err(headListAttr('ablate', '9:9 x', o)).message,
    'ablate: expected space-separated layer:head pairs with layer 1–2 and head 1–4 ("9:9" names layer 9), got "9:9 x"');
  assert.match(err(headListAttr('ablate', '1:1 x', o)).message, /\("x" is not a layer:head pair\)/);
  assert.match(err(headListAttr('ablate', '1:5', o)).message, /\("1:5" names head 5\)/);
});

test('tokensAttr and attrError', () => {
  assert.deepEqual(tokensAttr('text', 'a b', { dflt: ['x'], max: 3 }), { value: ['a', 'b'] });
  err(tokensAttr('text', 'a b c d', { dflt: ['x'], max: 3 }));
  assert.equal(attrError('for', 'the id of <mha-stepper>', 'x').argument, 'for');
});

test('AttrGuard: last valid value kept, one mha-error {error} per bad value, none again for the same value', () => {
  const events = [];
  const host = { dispatchEvent: (e) => { events.push(e); return true; } };
  globalThis.CustomEvent ??= class extends Event { constructor(t, o) { super(t, o); this.detail = o?.detail; } };
  const g = new AttrGuard(host);
  const pass = (raw) => { g.begin(); const v = g.take('step', intAttr('step', raw, { dflt: 0, min: 0, max: 7 })); g.end(); return v; };
  assert.equal(pass('3'), 3);
  assert.equal(pass('99'), 3);
  assert.equal(events.length, 1);
  assert.deepEqual(Object.keys(events[0].detail), ['error']);
  assert.equal(events[0].detail.error.argument, 'step');
  assert.equal(pass('99'), 3);
  assert.equal(events.length, 1, 'the same bad value again (a re-render): no second event');
  assert.equal(g.has('step'), true);
  assert.equal(pass('5'), 5);
  assert.equal(g.errors.length, 0);
  assert.equal(pass('99'), 5);
  assert.equal(events.length, 2, 'bad again after a good value: a new event');
});

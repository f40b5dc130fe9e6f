// Small pure helpers of the elements, in Node: number formatting (logic/format.js), TeX labels
// (logic/tex-text.js) and the colour range of <mha-heatmap> / <mha-heads> (views/heatmap/scale.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fmt, signed, int, thousandths } from '../web/lib/components/logic/format.js';
import { texText } from '../web/lib/components/logic/tex-text.js';
import { SCALES, SHARED_DOMAIN, CANVAS_ABOVE, parseScale, perMapDomain } from '../web/lib/components/views/heatmap/scale.js';
import { MHAError } from '../web/lib/src/index.js';

test('fmt: fixed decimals, a real minus sign, no sign on a value that rounds to zero', () => {
  assert.equal(fmt(0.41234), '0.412');
  assert.equal(fmt(2.5, 1), '2.5');
  assert.equal(fmt(-0.5, 2), '\u22120.50');
  assert.equal(fmt(-0.0004), '0.000');
  assert.equal(fmt(-0), '0.000');
  assert.equal(fmt(4.0496, 3), '4.050');
  assert.equal(fmt(NaN), 'NaN');
  assert.equal(fmt(-Infinity), '-Infinity');
  assert.equal(fmt(7, 0), '7');
});

test('thousandths: a value as it prints to three decimals, in whole thousandths', () => {
  assert.equal(thousandths(2.5186), 2519);
  assert.equal(thousandths(2.5185), 2518);   // the double is just below 2.5185, and toFixed(3) prints 2.518
  assert.equal(thousandths(2.5184), 2518);
  assert.equal(thousandths(0.0005), 1);
  assert.equal(thousandths(-0.0104), -10);
  assert.equal(thousandths(2.604) - thousandths(2.519), 85);
});

test('signed: "+" or a real minus sign before the magnitude; a difference that rounds to zero has neither', () => {
  assert.equal(signed(0.0883), '+0.088');
  assert.equal(signed(-0.0104), '\u22120.010');
  assert.equal(signed(-0.0002), '0.000');
  assert.equal(signed(0.0004), '0.000');
  assert.equal(signed(-0), '0.000');
  assert.equal(signed(0), '0.000');
  assert.equal(signed(-0.0006), '\u22120.001');
  assert.equal(signed(-0.004, 2), '0.00');
  assert.equal(signed(0.5, 1), '+0.5');
  assert.equal(signed(NaN), 'NaN');
});

test('int: thousands separators', () => {
  assert.equal(int(1234567), '1,234,567');
  assert.equal(int(999), '999');
  assert.equal(int('2048'), '2,048');
});

test('texText: a label inside \\text{}, TeX specials escaped', () => {
  assert.equal(texText('Alex'), '\\text{Alex}');
  assert.equal(texText('a_b & c%'), '\\text{a\\_b \\& c\\%}');
  assert.equal(texText('{$#}'), '\\text{\\{\\$\\#\\}}');
  assert.equal(texText(3), '\\text{3}');
});

test('parseScale: "shared" or "per-map", trimmed; absent gives the default; anything else an INVALID_ARGUMENT naming scale', () => {
  assert.deepEqual(SCALES, ['shared', 'per-map']);
  assert.deepEqual(SHARED_DOMAIN, [0, 1]);
  assert.equal(CANVAS_ABOVE, 256);
  assert.deepEqual(parseScale(null, 'per-map'), { value: 'per-map' });
  assert.deepEqual(parseScale(undefined, 'shared'), { value: 'shared' });
  assert.deepEqual(parseScale(' shared ', 'per-map'), { value: 'shared' });
  assert.deepEqual(parseScale('per-map', 'shared'), { value: 'per-map' });
  for (const bad of ['', 'Shared', 'global', 'per map']) {
    const r = parseScale(bad, 'per-map');
    assert.ok(r.error instanceof MHAError, bad);
    assert.equal(r.error.code, 'INVALID_ARGUMENT');
    assert.equal(r.error.argument, 'scale');
    assert.equal(r.error.message, `scale: expected "shared" or "per-map", got ${JSON.stringify(bad)}`);
  }
});

test('perMapDomain: 0 to the largest value; 0 to 1 when nothing is above 0', () => {
  assert.deepEqual(perMapDomain([[0.1, 0.7], [0.2, 0.05]]), [0, 0.7]);
  assert.deepEqual(perMapDomain([[0, 0], [0, 0]]), [0, 1]);
  assert.deepEqual(perMapDomain([[-2, -1]]), [0, 1]);
  assert.deepEqual(perMapDomain([[3]]), [0, 3]);
  assert.deepEqual(perMapDomain([]), [0, 1]);
});

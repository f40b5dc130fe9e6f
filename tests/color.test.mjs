// base/color.js, the one CSS-colour parser of the elements (d3-color): packed canvas pixels, WCAG
// luminance and the text colour on a cell, checked against values worked out by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packRGBA, luminance, textOn, colorFor, interpolatorFor } from '../web/lib/components/base/color.js';
import { interpolateViridis, interpolateCividis } from 'd3-scale-chromatic';

const LE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** The bytes of a packed pixel in memory order (what ImageData.data holds). */
const bytes = (v) => [...new Uint8Array(new Uint32Array([v]).buffer)];

test('packRGBA: R, G, B, 255 in memory order for #rrggbb, #rgb and rgb() alike', () => {
  assert.deepEqual(bytes(packRGBA('#440154')), [0x44, 0x01, 0x54, 255]);
  assert.deepEqual(bytes(packRGBA('#fa0')), [0xff, 0xaa, 0x00, 255]);
  assert.deepEqual(bytes(packRGBA('rgb(253, 231, 37)')), [253, 231, 37, 255]);
  assert.deepEqual(bytes(packRGBA('rgb(12, 0, 200)')), [12, 0, 200, 255]);
  assert.equal(packRGBA('#000000'), LE ? 0xff000000 : 0x000000ff);
  assert.deepEqual(bytes(packRGBA('not a colour')), [0, 0, 0, 255]);
});

test('luminance: WCAG 2 relative luminance', () => {
  assert.equal(luminance('#000'), 0);
  assert.equal(luminance('#ffffff'), 1);
  assert.equal(luminance('rgb(255, 255, 255)'), 1);
  // pure green: 0.7152; mid grey #777: ((0x77/255 + 0.055) / 1.055)^2.4
  assert.ok(Math.abs(luminance('#00ff00') - 0.7152) < 1e-12);
  const g = ((0x77 / 255 + 0.055) / 1.055) ** 2.4;
  assert.ok(Math.abs(luminance('#777777') - g) < 1e-12);
  // below the linear threshold 0.03928: c / 12.92
  assert.ok(Math.abs(luminance('rgb(0, 0, 10)') - 0.0722 * (10 / 255 / 12.92)) < 1e-15);
});

test('textOn: black on light colours, white on dark ones (the higher contrast ratio)', () => {
  assert.equal(textOn('#ffffff'), '#000');
  assert.equal(textOn('#000000'), '#fff');
  assert.equal(textOn('rgb(253, 231, 37)'), '#000');   // viridis at 1
  assert.equal(textOn('#440154'), '#fff');             // viridis at 0
  // the crossover: L = √(1.05 · 0.05) − 0.05 ≈ 0.1791; #757575 (L ≈ 0.1779) is just under, #767676 (≈ 0.1812) just over
  assert.equal(textOn('#757575'), '#fff');
  assert.equal(textOn('#767676'), '#000');
});

test('colorFor: values are clamped to [lo, hi] and mapped through the scheme', () => {
  const c = colorFor('viridis', 0, 2);
  assert.equal(c(-1), c(0));
  assert.equal(c(5), c(2));
  assert.notEqual(c(1), c(0));
  assert.equal(colorFor('cividis', 0, 1)(0.5), colorFor('cividis', 0, 2)(1));
  // the scheme by name (viridis starts dark purple, cividis dark blue); any other name is viridis
  assert.equal(interpolatorFor('cividis'), interpolateCividis);
  assert.equal(interpolatorFor('viridis'), interpolateViridis);
  assert.equal(interpolatorFor('nope'), interpolateViridis);
  assert.equal(colorFor('cividis', 0, 1)(0), interpolateCividis(0));
  // an offset range: v maps to (v − lo) / (hi − lo)
  assert.equal(colorFor('viridis', 1, 3)(2), interpolateViridis(0.5));
  assert.equal(colorFor('viridis', 2, 6)(3), interpolateViridis(0.25));
  assert.equal(colorFor('viridis', 5, 5)(5), interpolateViridis(0), 'an empty range maps onto its low end');
});

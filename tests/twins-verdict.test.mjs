// The sentence of <mha-twins> (twinsVerdict, web/lib/components/logic/twins-verdict.js) in Node: on
// the shipped manifest's h = 1 and h = 4 twins, every number recomputed here from index.json (means,
// gap, each seed's gap, largest seed spread) and the held-out set's size from a model's training
// record; on made-up rows, the noise branches, and the caveat that two seeds are suggestive, not a
// test (gone from five seeds per model on).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { twinsVerdict } from '../web/lib/components/logic/twins-verdict.js';
import { seedCaveat, TEST_SEEDS } from '../web/lib/components/logic/gqa-verdict.js';
import { createMHA } from '../web/lib/src/index.js';

const MODELS = new URL('../web/lib/models/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('index.json', MODELS), 'utf8'));

test('the shipped twins: held-out size, both means, each seed\'s gap, the seed spread, "suggestive, not a test"', async () => {
  const mha = await createMHA();
  const lm = await mha.loadModel(readFileSync(new URL('charlm-h4-s0.safetensors', MODELS)));
  const size = lm.training.heldout_chars;
  lm.dispose();
  assert.ok(Number.isInteger(size) && size > 100_000, `the training record states the held-out set's size (${size})`);
  // made-up page losses: the whole-set part is what is checked against index.json
  const rows = manifest.models.map((m, i) => ({ ...m, live: 2.7 + 0.01 * i }));
  const s = twinsVerdict(rows, 8, 768, size);
  console.log(`# ${s}`);
  // the sentence computes from the losses as the table prints them, in whole thousandths of a bit; each
  // mean rounded half up as printed before the gap is taken
  const v = (h, seed) => Math.round(manifest.models.find((m) => m.numHeads === h && m.seed === seed).heldoutBpc * 1000);
  const seeds = [...new Set(manifest.models.map((m) => m.seed))].sort();
  assert.deepEqual(seeds, [0, 1]);
  const one = Math.round((v(1, 0) + v(1, 1)) / 2), four = Math.round((v(4, 0) + v(4, 1)) / 2);
  const spread = Math.max(Math.abs(v(1, 0) - v(1, 1)), Math.abs(v(4, 0) - v(4, 1)));
  const f3 = (x) => (x / 1000).toFixed(3);
  const sgn = (d) => (d === 0 ? '0.000' : `${d > 0 ? '+' : '−'}${f3(Math.abs(d))}`);
  assert.ok(one - four > spread, 'the shipped gap exceeds the seed spread');
  assert.ok(s.includes(`On the whole held-out set (${size.toLocaleString('en-US')} characters), measured at training: h = 1 ${f3(one)}, h = 4 ${f3(four)}; ` +
    `4 heads are better by ${f3(one - four)} bits (seed 0: ${sgn(v(1, 0) - v(4, 0))}, seed 1: ${sgn(v(1, 1) - v(4, 1))}), ` +
    `more than the ${f3(spread)} bits that separate two seeds of the same model.`), s);
  assert.match(s, /^On these 8 held-out passages \(768 characters\), h = 1 scores /);
  assert.match(s, / With 2 seeds per model, this is suggestive, not a test\.$/);
  // without the size, the sentence says nothing about it
  assert.ok(twinsVerdict(rows, 8, 768).includes('On the whole held-out set, measured at training: h = 1'));
});

test('made-up rows: within the noise, worse, one seed, five seeds, one variant', () => {
  const row = (numHeads, seed, live, heldoutBpc) => ({ numHeads, seed, live, heldoutBpc });
  const noise = twinsVerdict([row(1, 0, 2.60, undefined), row(1, 1, 2.64, undefined), row(4, 0, 2.59, undefined), row(4, 1, 2.63, undefined)], 3, 1200);
  assert.equal(noise, 'On these 3 held-out passages (1,200 characters), h = 1 scores 2.620 and h = 4 scores 2.610 bits per character ' +
    '(mean of 2 seeds each): 4 heads are better by 0.010 bits (seed 0: +0.010, seed 1: +0.010), but two seeds of one model differ by up to 0.040, ' +
    'so this gap is within the noise. With 2 seeds per model, this is suggestive, not a test.');
  const worse = twinsVerdict([row(1, 0, 2.50), row(1, 1, 2.52), row(4, 0, 2.55), row(4, 1, 2.53)], 3, 1200);
  assert.match(worse, /4 heads are not better here: 0\.030 bits worse \(seed 0: −0\.050, seed 1: −0\.010\); seeds differ by up to 0\.020\./);
  const single = twinsVerdict([row(1, 0, 2.60), row(4, 0, 2.50)], 3, 1200);
  assert.match(single, /\(mean of 1 seed each\): 4 heads are better by 0\.100 bits, more than the 0\.000 bits/);
  assert.match(single, /With one seed per model, this is suggestive, not a test\.$/);
  const five = [0, 1, 2, 3, 4].flatMap((s) => [row(1, s, 2.6 + 0.001 * s, 2.6 + 0.001 * s), row(4, s, 2.5, 2.5)]);
  assert.doesNotMatch(twinsVerdict(five, 3, 1200), /suggestive/);
  assert.equal(twinsVerdict([row(4, 0, 2.5)], 3, 1200), 'Only models with h = 4 are listed: nothing to compare.');
});

test('the sentence computes from the printed losses: a reader\'s subtraction of two of them gives its gap', () => {
  const row = (numHeads, seed, live) => ({ numHeads, seed, live });
  // 2.5574 and 2.5576 print as 2.557 and 2.558: seed 1's gap is −0.001, not the measured −0.0002 printed as 0.000
  const s = twinsVerdict([row(1, 0, 2.6080), row(1, 1, 2.5574), row(4, 0, 2.4980), row(4, 1, 2.5576)], 3, 1200);
  assert.match(s, /\(seed 0: \+0\.110, seed 1: −0\.001\)/);
  assert.match(s, /differ by up to 0\.060/);   // 2.558 − 2.498, not 2.5576 − 2.4980 = 0.0596
  // the means as printed, (2.608 + 2.557) / 2 = 2.5825 up to 2.583, and their difference: 2.583 − 2.528
  assert.match(s, /h = 1 scores 2\.583 and h = 4 scores 2\.528 bits per character \(mean of 2 seeds each\): 4 heads are better by 0\.055 bits/);
});

test('a gap that rounds to zero at three decimals prints as 0.000, never −0.000, and is called no gap', () => {
  const row = (numHeads, seed, live, heldoutBpc) => ({ numHeads, seed, live, heldoutBpc });
  // seed 0's gap −0.0002, seed 1's +0.0201: the mean gap +0.00995 is a gap; seed 0's prints unsigned
  const tiny = twinsVerdict([row(1, 0, 2.6000), row(1, 1, 2.6401), row(4, 0, 2.6002), row(4, 1, 2.6200)], 3, 1200);
  assert.match(tiny, /4 heads are better by 0\.010 bits \(seed 0: 0\.000, seed 1: \+0\.020\)/);
  assert.doesNotMatch(tiny, /−0\.000|\+0\.000/);
  // both gaps tiny, of opposite signs, on the page and on the whole set: "the same to three decimals", not "0.000 bits worse"
  const same = twinsVerdict([row(1, 0, 2.6000, 2.5000), row(1, 1, 2.6100, 2.5100), row(4, 0, 2.6003, 2.5002), row(4, 1, 2.6099, 2.5099)], 3, 1200);
  assert.match(same, /: h = 1 and h = 4 score the same to three decimals \(seed 0: 0\.000, seed 1: 0\.000\); seeds differ by up to 0\.010\. On the whole/);
  assert.match(same, /h = 4 2\.505; h = 1 and h = 4 score the same to three decimals \(seed 0: 0\.000, seed 1: 0\.000\); seeds differ by up to 0\.010\./);
  assert.doesNotMatch(same, /−0\.000|bits worse|better by 0\.000/);
});

test('seedCaveat: below TEST_SEEDS a sentence, from it on nothing', () => {
  assert.equal(TEST_SEEDS, 5);
  assert.equal(seedCaveat(1), 'With one seed per model, this is suggestive, not a test.');
  assert.equal(seedCaveat(2), 'With 2 seeds per model, this is suggestive, not a test.');
  assert.equal(seedCaveat(4), 'With 4 seeds per model, this is suggestive, not a test.');
  assert.equal(seedCaveat(5), '');
});

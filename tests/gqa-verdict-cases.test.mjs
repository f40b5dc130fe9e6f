// gqaVerdict (web/lib/components/logic/gqa-verdict.js) on made-up twins whose numbers make every
// branch of the judgement show: both variants costing more than seed noise, one better and one the
// same, one seed only, no held-out figures (the page alone), one variant within noise, a single
// variant (scored on both figures, or only on the held-out set), no scores at all; rows given out
// of order (the figures sort K/V heads and seeds themselves). The expected sentences were checked
// number by number against the rows as a table prints them (each loss to three decimals, each mean
// of two rounded half up): means, gaps, the largest seed spread, multiples, cache ratios
// 1,536 / 768 / 384 / 192 bytes per token). tests/gqa-verdict.test.mjs covers the shipped manifest's
// numbers. Each gap is also given seed by seed (the twins of one seed saw the same batches), and
// two seeds end the summary with "suggestive, not a test". Mutation testing (StrykerJS) measures gqa-verdict.js with both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gqaVerdict, gqaFigures } from '../web/lib/components/logic/gqa-verdict.js';

const PER_TOKEN = { 8: 1536, 4: 768, 2: 384, 1: 192 };
/** Rows for 8 query heads: `bpc[g][seed]` the held-out bits per character, `live[g][seed]` the page's. */
// (object keys that are integers enumerate in ascending order: K/V heads come 1, 2, …, 8, each
// with its seeds from the last, so both need sorting)
const rows = (bpc, live = {}) => Object.entries(bpc).flatMap(([g, seeds]) => seeds.map((v, s) => ({
  kvHeads: Number(g), numHeads: 8, seed: s, perToken: PER_TOKEN[g], heldoutBpc: v, live: live[g]?.[s] ?? null,
})).reverse());

const CASES = {
  both: [{ 8: [2.500, 2.510], 2: [2.540, 2.546], 1: [2.600, 2.604] }, { 8: [2.7, 2.704], 2: [2.72, 2.7205], 1: [2.8, 2.8] }, 8, 768],
  mixed: [{ 8: [2.500, 2.510], 4: [2.500, 2.510], 2: [2.470, 2.476], 1: [2.530, 2.534] }, { 8: [2.7, 2.75], 2: [2.69, 2.7], 1: [2.8, 2.82] }, 5, 1234, 'here'],
  oneSeed: [{ 8: [2.500], 1: [2.600] }, { 8: [2.7], 1: [2.8] }, 8, 768],
  pageOnly: [{ 8: [NaN, NaN], 2: [NaN, NaN] }, { 8: [2.7, 2.71], 2: [2.75, 2.7605] }, 8, 768],
  oneFree: [{ 8: [2.500, 2.510], 2: [2.530, 2.531], 1: [2.505, 2.508] }, { 8: [2.7], 1: [2.8] }, 8, 768],
  single: [{ 8: [2.5, 2.51] }, { 8: [2.7, 2.71] }, 8, 768],
  // one variant on the held-out set and none scored in the page: the held-out one is named
  singleNoPage: [{ 4: [2.5, 2.51] }, {}, 8, 768],
  noScores: [{ 8: [NaN], 2: [NaN] }, {}, 8, 768],
};

const EXPECTED = {
  both: [
    "On the whole held-out set, measured at training (mean of seeds 0 and 1, the seeds’ range in brackets; lower is better): 8 K/V heads 2.505 (2.500–2.510), 2 K/V heads 2.543 (2.540–2.546), 1 K/V head 2.602 (2.600–2.604) bits per character.",
    "Grouped-query attention (2 K/V heads, 4 query heads each) cuts the KV cache 4× (1,536 → 384 bytes per token) and costs 0.038 bits per character more than multi-head attention (seed 0: +0.040, seed 1: +0.036), 3.8 times the 0.010 bits by which two seeds of one model differ at most, so a cost beyond seed noise.",
    "Multi-query attention (1 K/V head for all 8 query heads) cuts the KV cache 8× (1,536 → 192 bytes per token) and costs 0.097 bits per character more than multi-head attention (seed 0: +0.100, seed 1: +0.094), 9.7 times the 0.010 bits by which two seeds of one model differ at most, so a cost beyond seed noise.",
    "On the whole held-out set, both sharing schemes cost more than seed noise: grouped-query attention 0.038 bits per character (3.8 times the seed spread) for a cache 4× smaller and multi-query attention 0.097 bits per character (9.7 times) for a cache 8× smaller. Multi-query attention costs 2.6 times what grouped-query attention costs. With 2 seeds per model, this is suggestive, not a test.",
    "On this page’s text, the 8 held-out passages stored in the files (768 characters) scored here (mean of seeds 0 and 1): 2.702, 2.720, 2.800 bits per character for 8, 2, 1 K/V heads, a difference from multi-head attention of +0.018 with 2 K/V heads and +0.098 with 1 K/V head. On these characters two seeds of one model differ by up to 0.004 bits (40 % of the whole set’s 0.010), so those differences are 4.5 times and 25 times the seed spread here; the judgement above is made on the whole set.",
  ],
  mixed: [
    "On the whole held-out set, measured at training (mean of seeds 0 and 1, the seeds’ range in brackets; lower is better): 8 K/V heads 2.505 (2.500–2.510), 4 K/V heads 2.505 (2.500–2.510), 2 K/V heads 2.473 (2.470–2.476), 1 K/V head 2.532 (2.530–2.534) bits per character.",
    "Grouped-query attention (4 K/V heads, 2 query heads each) cuts the KV cache 2× (1,536 → 768 bytes per token) and scores the same as multi-head attention (seed 0: 0.000, seed 1: 0.000), within the 0.010 bits by which two seeds of one model differ at most: no cost this experiment can tell from seed noise.",
    "Grouped-query attention (2 K/V heads, 4 query heads each) cuts the KV cache 4× (1,536 → 384 bytes per token) and scores 0.032 bits per character better than multi-head attention (seed 0: −0.030, seed 1: −0.034), 3.2 times the 0.010 bits by which two seeds of one model differ at most: here sharing K and V did better.",
    "Multi-query attention (1 K/V head for all 8 query heads) cuts the KV cache 8× (1,536 → 192 bytes per token) and costs 0.027 bits per character more than multi-head attention (seed 0: +0.030, seed 1: +0.024), 2.7 times the 0.010 bits by which two seeds of one model differ at most, so a cost beyond seed noise.",
    "On the whole held-out set, multi-query attention cost more than seed noise: multi-query attention 0.027 bits per character (2.7 times the seed spread) for a cache 8× smaller. Grouped-query attention with 4 K/V heads and Grouped-query attention with 2 K/V heads stayed within seed noise. With 2 seeds per model, this is suggestive, not a test.",
    "On this page’s text, the 5 held-out passages stored here (1,234 characters) scored here (mean of seeds 0 and 1): 2.725, 2.695, 2.810 bits per character for 8, 2, 1 K/V heads, a difference from multi-head attention of −0.030 with 2 K/V heads and +0.085 with 1 K/V head. On these characters two seeds of one model differ by up to 0.050 bits (5.0 times the whole set’s 0.010), so those differences are 0.6 times and 1.7 times the seed spread here; the judgement above is made on the whole set.",
  ],
  oneSeed: [
    "On the whole held-out set, measured at training (seed 0; lower is better): 8 K/V heads 2.500, 1 K/V head 2.600 bits per character.",
    "Multi-query attention (1 K/V head for all 8 query heads) cuts the KV cache 8× (1,536 → 192 bytes per token) and costs 0.100 bits per character more than multi-head attention, on one seed: how much two seeds of one model differ is not measured here.",
    "On this page’s text, the 8 held-out passages stored in the files (768 characters) scored here (seed 0 only): 2.700, 2.800 bits per character for 8, 1 K/V heads, a difference from multi-head attention of +0.100 with 1 K/V head. Scored on one seed, these passages do not show how much two seeds differ; the judgement above is made on the whole set.",
  ],
  pageOnly: [
    "On the 8 held-out passages stored in the files (768 characters), measured here (mean of seeds 0 and 1, the seeds’ range in brackets; lower is better): 8 K/V heads 2.705 (2.700–2.710), 2 K/V heads 2.755 (2.750–2.760) bits per character.",
    "Grouped-query attention (2 K/V heads, 4 query heads each) cuts the KV cache 4× (1,536 → 384 bytes per token) and costs 0.050 bits per character more than multi-head attention (seed 0: +0.050, seed 1: +0.050), 5.0 times the 0.010 bits by which two seeds of one model differ at most, so a cost beyond seed noise.",
    "On these passages, grouped-query attention cost more than seed noise: grouped-query attention 0.050 bits per character (5.0 times the seed spread) for a cache 4× smaller. With 2 seeds per model, this is suggestive, not a test.",
  ],
  oneFree: [
    "On the whole held-out set, measured at training (mean of seeds 0 and 1, the seeds’ range in brackets; lower is better): 8 K/V heads 2.505 (2.500–2.510), 2 K/V heads 2.531 (2.530–2.531), 1 K/V head 2.507 (2.505–2.508) bits per character.",
    "Grouped-query attention (2 K/V heads, 4 query heads each) cuts the KV cache 4× (1,536 → 384 bytes per token) and costs 0.026 bits per character more than multi-head attention (seed 0: +0.030, seed 1: +0.021), 2.6 times the 0.010 bits by which two seeds of one model differ at most, so a cost beyond seed noise.",
    "Multi-query attention (1 K/V head for all 8 query heads) cuts the KV cache 8× (1,536 → 192 bytes per token) and costs 0.002 bits per character more than multi-head attention (seed 0: +0.005, seed 1: −0.002), within the 0.010 bits by which two seeds of one model differ at most: no cost this experiment can tell from seed noise.",
    "On the whole held-out set, grouped-query attention cost more than seed noise: grouped-query attention 0.026 bits per character (2.6 times the seed spread) for a cache 4× smaller. Multi-query attention stayed within seed noise. With 2 seeds per model, this is suggestive, not a test.",
    "On this page’s text, the 8 held-out passages stored in the files (768 characters) scored here (seed 0 only): 2.700, 2.800 bits per character for 8, 1 K/V heads, a difference from multi-head attention of +0.100 with 1 K/V head. Scored on one seed, these passages do not show how much two seeds differ; the judgement above is made on the whole set.",
  ],
  single: [
    "Only models with 8 K/V heads are listed: nothing to compare.",
  ],
  singleNoPage: [
    "Only models with 4 K/V heads are listed: nothing to compare.",
  ],
  noScores: [
    "No model has a score, on the held-out set or on this page: nothing to compare.",
  ],
};

for (const [name, [bpc, live, ...rest]] of Object.entries(CASES)) {
  test(`gqaVerdict, ${name}`, () => {
    assert.deepEqual(gqaVerdict(rows(bpc, live), ...rest), EXPECTED[name]);
  });
}

test('gqaFigures: K/V heads descending, seeds ascending, no spread unless every variant has every seed', () => {
  const f = gqaFigures(rows({ 8: [2.5, 2.51], 2: [2.6] }), 'heldoutBpc');
  assert.deepEqual(f.gs, [8, 2]);
  assert.deepEqual(f.seeds, [0, 1]);
  assert.equal(f.h, 8);
  assert.equal(f.both, false);
  assert.equal(f.spread, null);
  assert.deepEqual(f.by.get(2), { mean: 2.6, lo: 2.6, hi: 2.6, n: 1, perToken: 384, bySeed: new Map([[0, 2.6]]) });
  assert.deepEqual([...f.by.get(8).bySeed].sort((a, b) => a[0] - b[0]), [[0, 2.5], [1, 2.51]]);
  const g = gqaFigures(rows({ 8: [2.5, 2.51], 2: [2.6, 2.62] }), 'heldoutBpc');
  assert.equal(g.both, true);
  assert.ok(Math.abs(g.spread - 0.02) < 1e-12);
  const none = gqaFigures([], 'live');
  assert.deepEqual([none.gs, none.h, none.seeds, none.both, none.spread], [[], null, [], false, null]);
});

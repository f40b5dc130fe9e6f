// The sentences of <mha-gqa-twins> that judge what sharing keys and values costs (gqaVerdict,
// web/lib/components/logic/gqa-verdict.js), in Node on the shipped manifest's numbers: judged on the
// whole held-out set (index.json's heldoutBpc, both seeds) against the largest spread between two
// seeds of one variant, sized as a multiple of it, with no fixed cutoff in percent; the page's
// passages reported as the smaller sample they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gqaVerdict, gqaFigures, verdictLead } from '../web/lib/components/logic/gqa-verdict.js';
import { createMHA } from '../web/lib/src/index.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'web', 'lib', 'models', 'index.json'), 'utf8'));
const perToken = (m) => 2 * m.numLayers * m.kvHeads * m.dK * 4;
/** The manifest's twins as the element passes them, with made-up page losses (`live`) where given. */
const rowsOf = (live = {}, heldoutChars = null) => manifest.gqa.map((m) => ({
  file: m.file, kvHeads: m.kvHeads, numHeads: m.numHeads, seed: m.seed, heldoutBpc: m.heldoutBpc, perToken: perToken(m),
  live: live[m.file] ?? null, heldoutChars,
}));
/** The held-out set's size as a shipped twin's training record states it. */
const HELDOUT_CHARS = await (async () => {
  const mha = await createMHA();
  const lm = await mha.loadModel(readFileSync(path.join(ROOT, 'web', 'lib', 'models', manifest.gqa[0].file)));
  try { return lm.training.heldout_chars; } finally { lm.dispose(); }
})();
const sgn = (d) => `${d >= 0 ? '+' : '−'}${f3(Math.abs(d))}`;
const f3 = (v) => v.toFixed(3);

test('the shipped twins: means, seed intervals, each gap as a multiple of the largest seed spread, computed from index.json', () => {
  assert.ok(Number.isInteger(HELDOUT_CHARS) && HELDOUT_CHARS > 100_000, `the held-out set's size (${HELDOUT_CHARS})`);
  const rows = rowsOf({}, HELDOUT_CHARS);
  const fig = gqaFigures(rows, 'heldoutBpc');
  assert.deepEqual(fig.gs, [8, 2, 1]);
  assert.equal(fig.both, true);
  // the arithmetic a reader does on the table: each loss in thousandths as printed, each mean of two
  // rounded half up as printed, gaps and spreads from those
  const milli = (x) => Math.round(Number(x.toFixed(3)) * 1000);
  const v = (g, s) => milli(manifest.gqa.find((m) => m.kvHeads === g && m.seed === s).heldoutBpc) / 1000;
  const spread = Math.max(...[8, 2, 1].map((g) => Math.abs(milli(v(g, 0)) - milli(v(g, 1))))) / 1000;
  assert.ok(Math.abs(fig.spread - spread) < 1e-12);
  const out = gqaVerdict(rows, 8, 768);
  for (const s of out) console.log(`# ${s}`);
  const m = (g) => Math.round((milli(v(g, 0)) + milli(v(g, 1))) / 2) / 1000;
  const lo = (g) => Math.min(v(g, 0), v(g, 1));
  const hi = (g) => Math.max(v(g, 0), v(g, 1));
  assert.equal(out[0], `On the whole held-out set (${HELDOUT_CHARS.toLocaleString('en-US')} characters), measured at training (mean of seeds 0 and 1, the seeds’ range in brackets; lower is better): ` +
    [8, 2, 1].map((g) => `${g} K/V head${g > 1 ? 's' : ''} ${f3(m(g))} (${f3(lo(g))}–${f3(hi(g))})`).join(', ') + ' bits per character.');
  // the shipped numbers: 2.571 / 2.594 / 2.625, the largest seed range 0.016 (2 K/V heads)
  assert.match(out[0], /8 K\/V heads 2\.571 \(2\.570–2\.572\), 2 K\/V heads 2\.594 \(2\.586–2\.602\), 1 K\/V head 2\.625 \(2\.623–2\.627\)/);
  for (const [i, g] of [2, 1].entries()) {
    const d = (milli(m(g)) - milli(m(8))) / 1000;
    const k = d / spread;
    // the gap seed by seed (the twins of one seed saw the same batches)
    const bySeed = `(seed 0: ${sgn(v(g, 0) - v(8, 0))}, seed 1: ${sgn(v(g, 1) - v(8, 1))})`;
    assert.ok(out[i + 1].includes(`costs ${f3(d)} bits per character more than multi-head attention ${bySeed}, ${k.toFixed(1)} times the ${f3(spread)} bits`), out[i + 1]);
    assert.ok(out[i + 1].includes(`cuts the KV cache ${8 / g}×`), out[i + 1]);
    assert.match(out[i + 1], k > 1 ? /so a cost beyond seed noise\.$/ : /no cost this experiment can tell from seed noise\.$/);
  }
  assert.match(out[1], /0\.023 bits per character more than multi-head attention \(seed 0: \+0\.014, seed 1: \+0\.032\), 1\.4 times the 0\.016 bits/);
  assert.match(out[2], /0\.054 bits per character more than multi-head attention \(seed 0: \+0\.051, seed 1: \+0\.057\), 3\.4 times the 0\.016 bits/);
  assert.equal(out[3], 'On the whole held-out set, both sharing schemes cost more than seed noise: grouped-query attention 0.023 bits per ' +
    'character (1.4 times the seed spread) for a cache 4× smaller and multi-query attention 0.054 bits per character (3.4 times) ' +
    'for a cache 8× smaller. Multi-query attention costs 2.3 times what grouped-query attention costs. ' +
    'With 2 seeds per model, this is suggestive, not a test.');
  // without the size in the rows, the first sentence does not state one
  assert.match(gqaVerdict(rowsOf(), 8, 768)[0], /^On the whole held-out set, measured at training \(mean of seeds 0 and 1/);
  // no page passages scored: no page sentence; no percent cutoff, no "little"/"much", anywhere
  assert.equal(out.length, 4);
  for (const s of out) assert.doesNotMatch(s, /%|cost little|cost much|large one|small one/);
});

test('the page\'s 768 characters: stated as a smaller sample, with their own seed spread against the whole set\'s', () => {
  // the reviewer's case: +0.051 and +0.059 (means of two rounded half up as printed) against a page seed spread of 0.049 (values of this shape)
  const live = {
    'gqa-kv8-s0.safetensors': 2.600, 'gqa-kv8-s1.safetensors': 2.578,
    'gqa-kv2-s0.safetensors': 2.618, 'gqa-kv2-s1.safetensors': 2.661,
    'gqa-kv1-s0.safetensors': 2.623, 'gqa-kv1-s1.safetensors': 2.672,
  };
  const out = gqaVerdict(rowsOf(live), 8, 768);
  const page = out.at(-1);
  assert.match(page, /^On this page’s text, the 8 held-out passages stored in the files \(768 characters\) scored here \(mean of seeds 0 and 1\): 2\.589, 2\.640, 2\.648 bits per character for 8, 2, 1 K\/V heads, a difference from multi-head attention of \+0\.051 with 2 K\/V heads and \+0\.059 with 1 K\/V head\./);
  // page spread 0.049 (1 K/V head), 3.1 times the whole set's 0.016; the gaps are 1.0 and 1.2 times it: no 2 % split
  assert.match(page, /two seeds of one model differ by up to 0\.049 bits \(3\.1 times the whole set’s 0\.016\), so those differences are 1\.0 times and 1\.2 times the seed spread here; the judgement above is made on the whole set\.$/);
  // the judgement itself is the whole set's, whatever the page's numbers
  assert.deepEqual(out.slice(0, 4), gqaVerdict(rowsOf(), 8, 768));
  // one seed scored on the page
  const one = gqaVerdict(rowsOf(Object.fromEntries(Object.entries(live).filter(([f]) => f.endsWith('s0.safetensors')))), 8, 768).at(-1);
  assert.match(one, /\(seed 0 only\): 2\.600, 2\.618, 2\.623 bits per character.*Scored on one seed, these passages do not show how much two seeds differ/);
});

test('made-up rows: within the spread is no cost; a gain is stated; without heldoutBpc the page\'s passages are judged the same way; one seed states only gaps', () => {
  const row = (kvHeads, seed, v) => ({ kvHeads, numHeads: 8, seed, heldoutBpc: v, live: null, perToken: 2 * 2 * kvHeads * 12 * 4 });
  const rows = (a, b, c) => [row(8, 0, a[0]), row(8, 1, a[1]), row(2, 0, b[0]), row(2, 1, b[1]), row(1, 0, c[0]), row(1, 1, c[1])];
  const noise = gqaVerdict(rows([2.60, 2.70], [2.62, 2.66], [2.63, 2.65]), 8, 768);
  assert.match(noise[1], /scores 0\.010 bits per character better than multi-head attention \(seed 0: \+0\.020, seed 1: −0\.040\), within the 0\.100 bits by which two seeds of one model differ at most: no cost this experiment can tell from seed noise\./);
  assert.match(noise[3], /^On the whole held-out set, no sharing cost more than seed noise: a cache up to 8× smaller/);
  const one = gqaVerdict(rows([2.50, 2.52], [2.51, 2.53], [2.70, 2.72]), 8, 768);
  assert.match(one[1], /costs 0\.010 bits per character more than multi-head attention \(seed 0: \+0\.010, seed 1: \+0\.010\), within the 0\.020 bits/);
  assert.match(one[3], /^On the whole held-out set, multi-query attention cost more than seed noise: multi-query attention 0\.200 bits per character \(10 times the seed spread\) for a cache 8× smaller\. Grouped-query attention stayed within seed noise\. With 2 seeds per model, this is suggestive, not a test\.$/);
  const better = gqaVerdict(rows([2.60, 2.61], [2.50, 2.51], [2.60, 2.61]), 8, 768);
  assert.match(better[1], /scores 0\.100 bits per character better than multi-head attention \(seed 0: −0\.100, seed 1: −0\.100\), 10 times the 0\.010 bits by which two seeds of one model differ at most: here sharing K and V did better\./);
  // no heldoutBpc: the page's passages carry the judgement
  const live = rows([2.60, 2.61], [2.63, 2.64], [2.70, 2.71]).map((r) => ({ ...r, live: r.heldoutBpc, heldoutBpc: null }));
  const onPage = gqaVerdict(live, 8, 768);
  assert.match(onPage[0], /^On the 8 held-out passages stored in the files \(768 characters\), measured here \(mean of seeds 0 and 1/);
  assert.match(onPage[1], /costs 0\.030 bits per character more than multi-head attention \(seed 0: \+0\.030, seed 1: \+0\.030\), 3\.0 times the 0\.010 bits/);
  assert.match(onPage[3], /^On these passages, both sharing schemes cost more than seed noise/);
  assert.equal(onPage.length, 4);
  const single = gqaVerdict(live.filter((r) => r.seed === 0), 8, 768);
  assert.equal(single.length, 3);
  assert.match(single[1], /costs 0\.030 bits per character more than multi-head attention, on one seed: how much two seeds of one model differ is not measured here\./);
  assert.deepEqual(gqaVerdict(live.filter((r) => r.kvHeads === 8), 8, 768), ['Only models with 8 K/V heads are listed: nothing to compare.']);
  // the sentence the element shows first: the judgement against seed noise, else the first
  assert.match(noise[verdictLead(rows([2.60, 2.70], [2.62, 2.66], [2.63, 2.65]))], /^On the whole held-out set, no sharing cost more than seed noise/);
  assert.equal(verdictLead(rows([2.60, 2.70], [2.62, 2.66], [2.63, 2.65])), 3);
  assert.equal(verdictLead(live), 3);
  assert.equal(verdictLead(live.filter((r) => r.seed === 0)), 0);
  assert.equal(verdictLead(live.filter((r) => r.kvHeads === 8)), 0);
});

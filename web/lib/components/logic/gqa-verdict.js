// The sentences of <mha-gqa-twins> that judge what sharing keys and values cost, as pure functions
// of the models' numbers (no DOM, no engine): importable in Node and tested there
// (tests/gqa-verdict.test.mjs) on the shipped manifest's figures.

import { signed, int, thousandths } from './format.js';

const f3 = (v) => v.toFixed(3);
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
/** "1.5 times", "14 times": one decimal under 10. */
const times = (m) => `${m < 9.95 ? m.toFixed(1) : Math.round(m)} times`;
const ratioText = (r) => (Number.isInteger(r) ? `${r}` : r.toFixed(1));

/**
 * Seeds per model from which a gap could be tested (a spread estimated from fewer is too rough to
 * set a threshold with). Below it the sentences call a verdict suggestive, not a test.
 */
export const TEST_SEEDS = 5;

/**
 * The caveat of a comparison on few seeds, or '' from TEST_SEEDS on.
 * @param {number} n seeds per model (the fewest any model has)
 * @returns {string} a sentence, or ''
 */
export function seedCaveat(n) {
  if (n >= TEST_SEEDS) return '';
  return `With ${n === 1 ? 'one seed' : `${n} seeds`} per model, this is suggestive, not a test.`;
}

/**
 * The held-out set's size in characters, when every row that carries one agrees (else null).
 * @param {Array<{heldoutChars?: number|null}>} rows
 * @returns {number|null}
 */
export function heldoutSize(rows) {
  const sizes = [...new Set(rows.map((r) => r.heldoutChars).filter((v) => Number.isFinite(v)))];
  return sizes.length === 1 ? sizes[0] : null;
}

/**
 * One figure of the twins (`heldoutBpc`: the whole held-out set, measured at training, as the
 * models' index.json records it; `live`: the passages scored in the page) summarised per number of
 * K/V heads: the mean over the seeds that have it, the seed interval (smallest and largest), and
 * the yardstick of seed noise: the largest difference between two seeds of any one variant.
 * Two seeds are a thin sample of that noise, so the largest range of all the variants is used for
 * every comparison, not each variant's own (a lucky small range must not make a gap look big).
 * @param {Array<{kvHeads: number, numHeads: number, seed: number, perToken: number}>} rows one per model
 * @param {'heldoutBpc'|'live'} key the figure, bits per character (rows without a finite value are left out)
 * @returns {{gs: number[], h: number, seeds: number[], both: boolean, by: Map<number, {mean: number, lo: number,
 *   hi: number, n: number, perToken: number, bySeed: Map<number, number>}>, spread: number|null}} gs in descending order (gs[0]: the
 *   multi-head reference); `both` when every variant has every seed (≥ 2); spread null unless `both`
 */
export function gqaFigures(rows, key) {
  const have = rows.filter((r) => Number.isFinite(r[key]));
  const gs = [...new Set(have.map((r) => r.kvHeads))].sort((a, b) => b - a);
  const seeds = [...new Set(have.map((r) => r.seed))].sort((a, b) => a - b);
  // in thousandths as printed, each mean rounded as printed (half up): every gap, spread and multiple
  // in the sentences is then the arithmetic a reader does on the table's numbers
  const by = new Map(gs.map((g) => {
    const of = have.filter((r) => r.kvHeads === g);
    const v = of.map((r) => thousandths(r[key]));
    return [g, { mean: Math.round(mean(v)) / 1000, lo: Math.min(...v) / 1000, hi: Math.max(...v) / 1000, n: v.length,
      perToken: of[0].perToken, bySeed: new Map(of.map((r) => [r.seed, thousandths(r[key]) / 1000])) }];
  }));
  const both = seeds.length > 1 && gs.every((g) => by.get(g).n === seeds.length);
  const spread = both ? Math.max(...gs.map((g) => Math.round((by.get(g).hi - by.get(g).lo) * 1000))) / 1000 : null;
  return { gs, h: have[0]?.numHeads ?? null, seeds, both, by, spread };
}

/** A variant's mean minus the multi-head mean, in whole thousandths (both means as printed). */
const gapOf = (fig, g) => Math.round((fig.by.get(g).mean - fig.by.get(fig.gs[0]).mean) * 1000) / 1000;

/**
 * The judgement of one variant against multi-head attention on one figure: the gap d (its mean
 * minus the multi-head mean, bits per character; positive = worse) and how many times the seed
 * spread it is. A gap is called a cost only when it exceeds the spread; the size is stated as the
 * multiple, with no fixed cutoff in percent or bits.
 * @returns {{g: number, d: number, multiple: number|null, cost: boolean, ratio: number}}
 */
function judge(fig, g) {
  const ref = fig.by.get(fig.gs[0]);
  const it = fig.by.get(g);
  const d = gapOf(fig, g);
  const multiple = fig.spread ? Math.abs(d) / fig.spread : fig.spread === 0 ? Infinity : null;
  // the gap seed by seed: twins of one seed saw the same training batches (the seed draws the data too)
  const paired = [...it.bySeed.keys()].filter((s) => ref.bySeed.has(s)).sort((a, b) => a - b)
    .map((s) => [s, Math.round((it.bySeed.get(s) - ref.bySeed.get(s)) * 1000) / 1000]);
  return { g, d, multiple, cost: fig.spread !== null && d > fig.spread, ratio: ref.perToken / it.perToken, paired };
}

/** " (seed 0: +0.015, seed 1: +0.032)": a gap seed by seed, when two or more seeds pair up. */
const pairedText = (j) => (j.paired.length > 1 ? ` (${j.paired.map(([s, d]) => `seed ${s}: ${signed(d)}`).join(', ')})` : '');

const variantName = (g, h) => (g === 1 ? `Multi-query attention (1 K/V head for all ${h} query heads)`
  : `Grouped-query attention (${g} K/V heads, ${h / g} query heads each)`);

/** The two figures of the twins and the one the verdict judges (the whole held-out set's when it lists two variants). */
function judgedFigures(rows) {
  const whole = gqaFigures(rows, 'heldoutBpc');
  const page = gqaFigures(rows, 'live');
  return { whole, page, main: whole.gs.length >= 2 ? whole : page };
}

/**
 * Which of gqaVerdict's sentences carries the judgement: the one that weighs every sharing scheme
 * against seed noise when the seeds' spread is known (after the means and one sentence per scheme),
 * else the first.
 * @param {Array<object>} rows the rows gqaVerdict is given
 * @returns {number} an index into gqaVerdict(rows, …)
 */
export function verdictLead(rows) {
  const { main } = judgedFigures(rows);
  return main.gs.length >= 2 && main.spread !== null ? main.gs.length : 0;
}

/**
 * The sentences that say what sharing keys and values cost in the grouped-query twins, made from
 * the numbers:
 * 1. the whole held-out set (`heldoutBpc`, every seed in the manifest; its size in characters when the
 *    rows carry `heldoutChars`): each variant's mean and seed interval; then, for each variant with
 *    fewer K/V heads, how many times smaller its KV cache is, the gap to multi-head attention with
 *    the gap of each seed (twins of one seed saw the same batches) and the gap as a multiple of the
 *    seed spread (called a cost only beyond the spread); then one summary line comparing the
 *    variants, ending, below TEST_SEEDS seeds per model, with "suggestive, not a test";
 * 2. this page's text (`live`: the passages scored in the page, `chars` characters), stated as the
 *    smaller sample it is: its means, gaps and seed spread, and how that spread compares with the
 *    whole set's.
 * When the rows carry no `heldoutBpc` (a manifest without it), the judgement is made on `live`
 * alone, the same way. With one seed of a figure, only the gaps are stated: the seed noise is unknown.
 * With fewer than two variants on either figure, one sentence says there is nothing to compare.
 * @param {Array<{kvHeads: number, numHeads: number, seed: number, perToken: number, heldoutBpc?: number,
 *   live?: number|null, heldoutChars?: number|null}>} rows every model of the manifest's `gqa` list (`live`
 *   where scored in the page; `heldoutChars`: the held-out set's characters, from the model's training record)
 * @param {number} passages passages scored in the page
 * @param {number} chars their characters
 * @param {string} [where] where the passages are stored ("in the files")
 * @returns {string[]} sentences
 */
export function gqaVerdict(rows, passages, chars, where = 'in the files') {
  const { whole, page, main } = judgedFigures(rows);
  if (main.gs.length < 2) return [nothingToCompare(whole.gs.length ? whole : page)];
  const onWhole = main === whole;
  const h = main.h;
  const out = [];
  const kv = (g) => `${g} K/V head${g > 1 ? 's' : ''}`;
  const seedsText = (fig) => (fig.seeds.length > 1 ? `mean of seeds ${fig.seeds.join(' and ')}` : `seed ${fig.seeds[0]}`);
  const interval = (fig, g) => (fig.by.get(g).n > 1 ? ` (${f3(fig.by.get(g).lo)}–${f3(fig.by.get(g).hi)})` : '');
  const size = heldoutSize(rows);
  const scope = onWhole ? `On the whole held-out set${size ? ` (${int(size)} characters)` : ''}, measured at training`
    : `On the ${passages} held-out passages stored ${where} (${int(chars)} characters), measured here`;
  out.push(`${scope} (${seedsText(main)}${main.seeds.length > 1 ? ', the seeds’ range in brackets' : ''}; lower is better): ` +
    main.gs.map((g) => `${kv(g)} ${f3(main.by.get(g).mean)}${interval(main, g)}`).join(', ') + ' bits per character.');
  const js = main.gs.slice(1).map((g) => judge(main, g));
  for (const j of js) {
    const it = main.by.get(j.g);
    const cache = `cuts the KV cache ${ratioText(j.ratio)}× (${int(main.by.get(main.gs[0]).perToken)} → ${int(it.perToken)} bytes per token)`;
    const diff = j.d > 0 ? `costs ${f3(j.d)} bits per character more than multi-head attention`
      : j.d < 0 ? `scores ${f3(-j.d)} bits per character better than multi-head attention` : 'scores the same as multi-head attention';
    let judged;
    if (main.spread === null) judged = 'on one seed: how much two seeds of one model differ is not measured here.';
    else if (Math.abs(j.d) <= main.spread) {
      judged = `within the ${f3(main.spread)} bits by which two seeds of one model differ at most: no cost this experiment can tell from seed noise.`;
    } else if (j.d > 0) {
      judged = `${times(j.multiple)} the ${f3(main.spread)} bits by which two seeds of one model differ at most, so a cost beyond seed noise.`;
    } else {
      judged = `${times(j.multiple)} the ${f3(main.spread)} bits by which two seeds of one model differ at most: here sharing K and V did better.`;
    }
    out.push(`${variantName(j.g, h)} ${cache} and ${diff}${pairedText(j)}, ${judged}`);
  }
  if (main.spread !== null) {
    const caveat = seedCaveat(Math.min(...main.gs.map((g) => main.by.get(g).n)));
    out.push(`${summary(js, main, onWhole)}${caveat ? ` ${caveat}` : ''}`);
  }
  if (onWhole) {
    const p = pageSentence(page, whole, passages, chars, where);
    if (p) out.push(p);
  }
  return out;
}

/**
 * The sentence for fewer than two variants with a figure: the one variant scored (on the whole
 * held-out set when it has one there, else on this page), or that no model has a score.
 */
function nothingToCompare(fig) {
  if (!fig.gs.length) return 'No model has a score, on the held-out set or on this page: nothing to compare.';
  return `Only models with ${fig.gs.join(', ')} K/V heads are listed: nothing to compare.`;
}

/** The one-line comparison of the variants (no adjective beyond the numbers). */
function summary(js, fig, onWhole) {
  const where = onWhole ? 'On the whole held-out set' : 'On these passages';
  const named = (j) => (j.g === 1 ? 'multi-query attention' : js.filter((x) => x.g > 1).length > 1
    ? `grouped-query attention with ${j.g} K/V heads` : 'grouped-query attention');
  const costs = js.filter((j) => j.cost);
  const free = js.filter((j) => !j.cost);
  const part = (j, first) => `${named(j)} ${f3(j.d)} bits per character (${first ? `${times(j.multiple)} the seed spread` : times(j.multiple)}) for a cache ${ratioText(j.ratio)}× smaller`;
  let s;
  if (!costs.length) {
    s = `${where}, no sharing cost more than seed noise: a cache up to ${ratioText(Math.max(...js.map((j) => j.ratio)))}× smaller for a loss that two seeds of one model cannot tell apart from the multi-head model’s.`;
  } else {
    const list = costs.map((j, i) => part(j, i === 0));
    s = `${where}, ${costs.length > 1 ? `${costs.length === js.length ? (js.length === 2 ? 'both' : 'all') : costs.length} sharing schemes cost more than seed noise` : `${named(costs[0])} cost more than seed noise`}: ` +
      `${costs.length > 1 ? `${list.slice(0, -1).join(', ')} and ${list.at(-1)}` : list[0]}.`;
    if (costs.length > 1 && costs.at(-1).d > 0 && costs[0].d > 0) {
      const a = costs.reduce((x, y) => (y.d > x.d ? y : x));
      const b = costs.reduce((x, y) => (y.d < x.d ? y : x));
      s += ` ${named(a)[0].toUpperCase()}${named(a).slice(1)} costs ${(a.d / b.d).toFixed(1)} times what ${named(b)} costs.`;
    }
    if (free.length) s += ` ${free.map((j) => named(j)[0].toUpperCase() + named(j).slice(1)).join(' and ')} stayed within seed noise.`;
  }
  return s;
}

/** The page's passages as the smaller sample they are: means, gaps, their seed spread against the whole set's. */
function pageSentence(page, whole, passages, chars, where) {
  if (page.gs.length < 2) return null;
  const gaps = page.gs.slice(1).map((g) => {
    const d = gapOf(page, g);
    return `${signed(d)} with ${g} K/V head${g > 1 ? 's' : ''}`;
  });
  let s = `On this page’s text, the ${passages} held-out passages stored ${where} (${int(chars)} characters) scored here ` +
    `(${page.seeds.length > 1 ? `mean of seeds ${page.seeds.join(' and ')}` : `seed ${page.seeds[0]} only`}): ` +
    page.gs.map((g) => `${f3(page.by.get(g).mean)}`).join(', ') + ` bits per character for ${page.gs.join(', ')} K/V heads, ` +
    `a difference from multi-head attention of ${gaps.join(' and ')}.`;
  if (page.spread !== null && whole.spread) {
    const r = page.spread / whole.spread;
    const ms = page.gs.slice(1).map((g) => times(Math.abs(gapOf(page, g)) / page.spread));
    s += ` On these characters two seeds of one model differ by up to ${f3(page.spread)} bits (${r >= 1 ? `${r.toFixed(1)} times` : `${(100 * r).toFixed(0)} % of`} ` +
      `the whole set’s ${f3(whole.spread)}), so those differences are ${ms.join(' and ')} the seed spread here; the judgement above is made on the whole set.`;
  } else if (page.spread === null) {
    s += ' Scored on one seed, these passages do not show how much two seeds differ; the judgement above is made on the whole set.';
  }
  return s;
}

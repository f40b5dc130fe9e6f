// The sentence of <mha-twins> that compares one head with several, as a pure function of the
// models' numbers (no DOM, no engine): importable in Node and tested there (tests/twins-verdict.test.mjs).
import { f3, mean, range } from './trained-text.js';
import { seedCaveat } from './gqa-verdict.js';
import { signed, int, thousandths } from './format.js';

/**
 * How h = lo and h = hi compare on one figure of the rows (`live`: the page's passages; `heldoutBpc`:
 * the whole held-out set at training): the mean of each over its seeds, the gap (h = lo minus h = hi,
 * positive when more heads are better), the gap seed by seed (twins of one seed saw the same
 * training batches) and the largest difference between two seeds of one model. Computed in whole
 * thousandths from the losses as printed, each mean rounded as printed (half up) before the gap is
 * taken: a reader's arithmetic on the printed numbers gives the sentence's.
 * @param {Array<object>} rows
 * @param {number} lo
 * @param {number} hi
 * @param {'live'|'heldoutBpc'} key
 */
function compare(rows, lo, hi, key) {
  const of = (h) => rows.filter((m) => m.numHeads === h);
  const one = of(lo).map((m) => thousandths(m[key]));
  const many = of(hi).map((m) => thousandths(m[key]));
  const paired = of(lo).flatMap((a) => {
    const b = of(hi).find((m) => m.seed === a.seed);
    return b ? [[a.seed, (thousandths(a[key]) - thousandths(b[key])) / 1000]] : [];
  }).sort((x, y) => x[0] - y[0]);
  const [m1, m2] = [Math.round(mean(one)), Math.round(mean(many))];
  return { one: m1 / 1000, many: m2 / 1000, gap: (m1 - m2) / 1000, spread: Math.max(range(one), range(many)) / 1000, paired,
    n: Math.min(one.length, many.length),
    seeds: one.length === many.length ? `${one.length} seed${one.length > 1 ? 's' : ''} each` : `${one.length} and ${many.length} seeds` };
}

/** " (seed 0: +0.088, seed 1: +0.083)" when two or more seeds pair up. */
const pairedText = ({ paired }) => (paired.length > 1 ? ` (${paired.map(([s, d]) => `seed ${s}: ${signed(d)}`).join(', ')})` : '');

/** The judgement of one comparison: a gap smaller than the seed spread is called noise; one that
 * rounds to zero at the shown precision is called no gap. */
function judge(c, lo, hi) {
  const { gap, spread } = c;
  if (Number(f3(Math.abs(gap))) === 0) {
    return `h = ${lo} and h = ${hi} score the same to three decimals${pairedText(c)}; seeds differ by up to ${f3(spread)}.`;
  }
  return gap > spread
    ? `${hi} heads are better by ${f3(gap)} bits${pairedText(c)}, more than the ${f3(spread)} bits that separate two seeds of the same model.`
    : gap > 0
      ? `${hi} heads are better by ${f3(gap)} bits${pairedText(c)}, but two seeds of one model differ by up to ${f3(spread)}, so this gap is within the noise.`
      : `${hi} heads are not better here: ${f3(-gap)} bits worse${pairedText(c)}; seeds differ by up to ${f3(spread)}.`;
}

/**
 * The sentences that compare the mean loss of the h = 1 and h = 4 models, honest about seeds:
 * a gap smaller than the spread between two seeds of one model is called noise, each gap is given
 * seed by seed too, and below TEST_SEEDS seeds per model the comparison is called suggestive, not a
 * test. First on the passages scored in the page; then, when every row has it, on the whole held-out
 * set as measured at training (`heldoutBpc` of the manifest), which has far more characters
 * (`heldoutChars`, when known) and so less noise. Every number is computed from the losses as the
 * table prints them (three decimals), so that a reader who subtracts two printed losses gets the
 * sentence's gap.
 * @param {Array<{numHeads: number, seed: number, live: number, heldoutBpc?: number}>} rows
 * @param {number} passages how many texts were scored, and `chars` their characters
 * @param {number} chars
 * @param {number|null} [heldoutChars] the whole held-out set's characters (the models' training record)
 * @returns {string}
 */
export function twinsVerdict(rows, passages, chars, heldoutChars = null) {
  const hs = [...new Set(rows.map((r) => r.numHeads))].sort((a, b) => a - b);
  if (hs.length < 2) return `Only models with h = ${hs.join(', ')} are listed: nothing to compare.`;
  const [lo, hi] = [hs[0], hs[hs.length - 1]];
  const page = compare(rows, lo, hi, 'live');
  let text = `On these ${passages} held-out passages (${int(chars)} characters), h = ${lo} scores ${f3(page.one)} and h = ${hi} ` +
    `scores ${f3(page.many)} bits per character (mean of ${page.seeds}): ${judge(page, lo, hi)}`;
  let n = page.n;
  if (rows.every((m) => typeof m.heldoutBpc === 'number')) {
    const whole = compare(rows, lo, hi, 'heldoutBpc');
    const size = Number.isFinite(heldoutChars) ? ` (${int(heldoutChars)} characters)` : '';
    text += ` On the whole held-out set${size}, measured at training: h = ${lo} ${f3(whole.one)}, h = ${hi} ${f3(whole.many)}; ` +
      judge(whole, lo, hi);
    n = whole.n;
  }
  const caveat = seedCaveat(n);
  return caveat ? `${text} ${caveat}` : text;
}

/**
 * Head analysis: what each attention head of a trained model attends to, measured on probe texts
 * (docs/trained-models.md, "Head analysis"). The scores are those of Olsson et al. 2022 ("In-context
 * Learning and Induction Heads": previous-token and induction scores on repeated random spans),
 * plus the position patterns and the normalised entropy of each head's attention.
 * @module heads
 */
import { mulberry32 } from '../engine/weights.js';

/** A score of at least this labels the head with its strongest type. */
export const TYPE_THRESHOLD = 0.4;
/** Without a type, a normalised entropy of at least this labels the head "broad". */
export const BROAD_THRESHOLD = 0.7;

/** Score key → head type name, in the order ties are broken (the first wins). */
export const HEAD_TYPES = Object.freeze([
  ['previous', 'previous-token'], ['twoBack', 'two-back'], ['current', 'current-token'],
  ['first', 'first-token'], ['induction', 'induction'],
]);

/**
 * The type of a head from its scores: the strongest of the five position/induction scores when
 * it reaches TYPE_THRESHOLD, else "broad" when the entropy reaches BROAD_THRESHOLD, else "mixed".
 * @param {{previous: number, twoBack: number, current: number, first: number, induction: number, entropy: number}} scores
 * @returns {string}
 */
export function headType(scores) {
  let best = HEAD_TYPES[0];
  for (const t of HEAD_TYPES) if (scores[t[0]] > scores[best[0]]) best = t;
  if (scores[best[0]] >= TYPE_THRESHOLD) return best[1];
  return scores.entropy >= BROAD_THRESHOLD ? 'broad' : 'mixed';
}

/**
 * The position scores of one head on one text, query by query (t = 1 … T−1): the attention on the
 * previous character, the character two back (t ≥ 2), the query itself and the first character,
 * and the normalised entropy of the row; each value goes to `add(key, value)`.
 * @param {Float32Array} data the layer's attention [h, T, T]
 * @param {number} base offset of the head's [T, T] matrix
 * @param {number} T text length
 * @param {(key: string, value: number) => void} add
 */
function positionScores(data, base, T, add) {
  for (let t = 1; t < T; t++) {
    const r = base + t * T;
    add('previous', data[r + t - 1]);
    add('current', data[r + t]);
    add('first', data[r]);
    if (t >= 2) add('twoBack', data[r + t - 2]);
    let e = 0;
    for (let k = 0; k <= t; k++) { const a = data[r + k]; if (a > 0) e -= a * Math.log2(a); }
    add('entropy', e / Math.log2(t + 1));
  }
}

/**
 * Scores every head.
 * @param {{text: string[], repeat: string[], repeat_span: number, prose_repeat?: string[],
 *   prose_repeat_span?: number}} probes held-out texts, strings made of a span of `repeat_span`
 *   random characters written twice, and (in files that have them) held-out prose spans of
 *   `prose_repeat_span` characters written twice
 * @param {(text: string) => Array<{data: Float32Array, shape: number[]}>} attend the per-layer
 *   attention weights [h, T, T] of a text
 * @param {{numLayers: number, numHeads: number}} config
 * @returns {Array<{layer: number, head: number, type: string, scores: object}>} in (layer, head)
 *   order; `scores.inductionProse` (the induction score on the prose probes) only when the probes
 *   have `prose_repeat`; it does not take part in the label
 */
export function analyzeHeads(probes, attend, config) {
  const { numLayers: L, numHeads: h } = config;
  const keys = ['previous', 'twoBack', 'current', 'first', 'induction', 'entropy'];
  const repeats = [['induction', probes.repeat, probes.repeat_span]];
  if (probes.prose_repeat) {
    keys.push('inductionProse');
    repeats.push(['inductionProse', probes.prose_repeat, probes.prose_repeat_span]);
  }
  const sum = Array.from({ length: L * h }, () => Object.fromEntries(keys.map((k) => [k, 0])));
  const cnt = Array.from({ length: L * h }, () => Object.fromEntries(keys.map((k) => [k, 0])));
  const add = (i, k, v) => { sum[i][k] += v; cnt[i][k] += 1; };
  for (const text of probes.text) {
    const att = attend(text);
    for (let l = 0; l < L; l++) {
      const { data, shape } = att[l];
      const T = shape[2];
      for (let j = 0; j < h; j++) {
        const i = l * h + j;
        positionScores(data, j * T * T, T, (k, v) => add(i, k, v));
      }
    }
  }
  for (const [key, texts, n] of repeats) {
    for (const text of texts) {
      const att = attend(text);
      for (let l = 0; l < L; l++) {
        const { data, shape } = att[l];
        const T = shape[2];
        for (let j = 0; j < h; j++) {
          for (let t = n; t <= 2 * n - 2 && t < T; t++) add(l * h + j, key, data[j * T * T + t * T + t - n + 1]);
        }
      }
    }
  }
  const out = [];
  for (let l = 0; l < L; l++) {
    for (let j = 0; j < h; j++) {
      const i = l * h + j;
      const scores = Object.fromEntries(keys.map((k) => [k, cnt[i][k] ? sum[i][k] / cnt[i][k] : 0]));
      out.push({ layer: l, head: j, type: headType(scores), scores });
    }
  }
  return out;
}

/** Seed of tokenProbes' random token ids. */
export const TOKEN_PROBES_SEED = 42;

/**
 * Probes for a model whose file stores none (a Hugging Face folder, a llama2.c checkpoint), in
 * token ids, as Olsson et al. 2022 measure induction heads: 4 texts of 2n random token ids (for
 * the position scores and the entropy) and 4 spans of n random token ids written twice (for the
 * induction score), n = min(24, ⌊context/2⌋), ids drawn uniformly from [0, vocabSize) by
 * mulberry32(TOKEN_PROBES_SEED). The same model gets the same probes on every run.
 * @param {{vocabSize: number, context: number}} config
 * @returns {{text: Int32Array[], repeat: Int32Array[], repeat_span: number}} analyzeHeads' probes
 */
export function tokenProbes({ vocabSize, context }) {
  const n = Math.max(1, Math.min(24, Math.floor(context / 2)));
  const rand = mulberry32(TOKEN_PROBES_SEED);
  const ids = (k) => Int32Array.from({ length: k }, () => Math.floor(rand() * vocabSize));
  const text = Array.from({ length: 4 }, () => ids(2 * n));
  const repeat = Array.from({ length: 4 }, () => { const s = ids(n); const t = new Int32Array(2 * n); t.set(s); t.set(s, n); return t; });
  return { text, repeat, repeat_span: n };
}

/** Characters a span must share with an earlier span before its next character counts as an
 * induction target on a free text (see scoreText). */
export const INDUCTION_MIN_SPAN = 4;

/**
 * The induction targets of a text: for a query at position t, every position j + 1 < t such that
 * the `minSpan` characters ending at j equal the `minSpan` characters ending at t. An induction head
 * (Olsson et al. 2022) attends from t to those positions: the character that followed the earlier
 * copy of what it has just read. On a span of n characters written twice this gives t − n + 1 for
 * every t of the second copy from its minSpan-th character on, the target analyzeHeads uses.
 * @param {ArrayLike<number>} ids the text's token ids [T] (one per character in a character model)
 * @param {number} [minSpan] INDUCTION_MIN_SPAN by default; an integer ≥ 1
 * @returns {Map<number, number[]>} query position → its targets (only queries that have any)
 */
export function inductionTargets(ids, minSpan = INDUCTION_MIN_SPAN) {
  const targets = new Map();
  const T = ids.length;
  for (let t = minSpan - 1; t < T; t++) {
    const found = [];
    for (let j = minSpan - 1; j + 1 < t; j++) {
      let k = 0;
      while (k < minSpan && ids[j - k] === ids[t - k]) k++;
      if (k === minSpan) found.push(j + 1);
    }
    if (found.length) targets.set(t, found);
  }
  return targets;
}

/**
 * Every head's scores on one text, for showing what the heads do on the text a reader typed
 * rather than on the held-out probes: the position scores and the entropy as analyzeHeads
 * measures them (over queries 1 … T−1), and the induction score as the mean, over the queries that
 * have induction targets (inductionTargets), of the attention on those targets. A text that repeats
 * no span of INDUCTION_MIN_SPAN characters has no induction score (null).
 * @param {Array<{data: Float32Array, shape: number[]}>} attention per layer [h, T, T], as run() returns
 * @param {ArrayLike<number>} ids the text's token ids [T] (one per character in a character model)
 * @returns {Array<{layer: number, head: number, scores: {previous: number|null, twoBack: number|null,
 *   current: number|null, first: number|null, induction: number|null, entropy: number|null},
 *   inductionQueries: number}>} in (layer, head) order; a score is null where the text is too
 *   short to define it (previous, current, first and entropy need T ≥ 2, twoBack T ≥ 3)
 */
export function scoreText(attention, ids) {
  const targets = inductionTargets(ids);
  const out = [];
  for (let l = 0; l < attention.length; l++) {
    const { data, shape } = attention[l];
    const [h, T] = shape;
    for (let j = 0; j < h; j++) {
      const base = j * T * T;
      const sum = { previous: 0, twoBack: 0, current: 0, first: 0, induction: 0, entropy: 0 };
      const cnt = { previous: 0, twoBack: 0, current: 0, first: 0, induction: 0, entropy: 0 };
      positionScores(data, base, T, (k, v) => { sum[k] += v; cnt[k] += 1; });
      for (const [t, ks] of targets) {
        for (const k of ks) sum.induction += data[base + t * T + k];
        cnt.induction += 1;
      }
      const scores = Object.fromEntries(Object.keys(sum).map((k) => [k, cnt[k] > 0 ? sum[k] / cnt[k] : null]));
      out.push({ layer: l, head: j, inductionQueries: targets.size, scores });
    }
  }
  return out;
}

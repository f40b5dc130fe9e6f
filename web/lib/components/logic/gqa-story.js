// The teaching logic of <mha-gqa-story>, pure (no DOM, no Lit; tested in Node by
// tests/gqa-story.test.mjs against the shipped stories260K): the sentence to write twice, the bits
// per token of each copy, the list test, every head labelled, the sentences that describe the heads
// and explain the search for an induction head, a Llama model's weights counted from its config.
import {
  TYPE_THRESHOLD, BROAD_THRESHOLD, INDUCTION_MIN_SPAN, headType, scoreText, inductionTargets,
} from '../../src/index.js';
import { SCORE_OF, f2 } from './trained-text.js';

const int = (v) => Number(v).toLocaleString('en-US');

/** Short names of the head types for the table of <mha-gqa-story> (the legend under it spells them out). */
export const SHORT = Object.freeze({
  'previous-token': 'previous', 'two-back': 'two-back', 'current-token': 'current', 'first-token': 'first',
  induction: 'induction', broad: 'broad', mixed: 'mixed',
});

/** What each score measures, in tokens. */
export const MEANS = Object.freeze({
  previous: 'on the token just before the query',
  twoBack: 'on the token two before the query',
  current: 'on the query token itself',
  first: 'on the first token, the start marker <s>',
  induction: 'on the token that followed an earlier copy of what it just read',
});

/** A byte-pair piece as a heatmap label: a word-initial space as ␣, a newline as ↵. */
export const showPiece = (p) => (p === '<0x0A>' ? '↵' : p.replace(/^ /, '␣'));

/**
 * The sentence to write twice: the first whole sentence (ending in . ! or ?) that starts after
 * the prompt, so that the model wrote all of it; else the first sentence of the text; else the
 * whole trimmed text.
 * @param {string} text the prompt and what was written after it
 * @param {number} [promptLength] characters of the prompt
 */
export function storySentence(text, promptLength = 0) {
  const re = /[^.!?]*[.!?]/g;
  let m, first = null;
  while ((m = re.exec(text))) {
    const lead = m[0].length - m[0].trimStart().length;
    const sentence = m[0].trim();
    if (!sentence) continue;
    first ??= sentence;
    if (m.index + lead >= promptLength && /^[A-Z"]/.test(sentence)) return sentence;
  }
  return first ?? text.trim();
}

/**
 * Bits per token the model spends on each copy of a sentence written twice (`${s} ${s}`): each
 * copy is scored on its tokens after the first, each predicted from everything before it.
 * @param {{logProbs: {data: Float32Array}, ids: Int32Array}} r CharModel.run's result on the doubled text
 * @param {number} n tokens of one copy (encode(s) without the start marker)
 * @param {number} V vocabulary size
 * @returns {{first: number, second: number, tokens: number}}
 */
export function copyBitsPerToken(r, n, V) {
  const T = r.ids.length;
  const bits = (from, to) => {
    let s = 0;
    for (let t = from; t < to; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
    return s / (to - from) / Math.LN2;
  };
  // ids: <s>, copy 1 (1 … n), copy 2 (n+1 … T−1); copy 1's tokens 2…n are predicted at 1…n−1
  return { first: bits(1, n), second: bits(n + 1, T - 1), tokens: n };
}

/**
 * The measured heads in words: how many of each type, the strongest of each labelled type,
 * whether any head qualifies as an induction head on the repeated sentence and what the copies
 * cost, and how often the two query heads of a K/V group got the same label.
 * @param {Array<{layer: number, head: number, kvHead: number, type: string, scores: object}>} heads
 * @param {{sentence: string, first: number, second: number}} repeat
 * @param {number} groupSize query heads per K/V head
 * @returns {string[]} sentences
 */
export function describeHeads(heads, repeat, groupSize) {
  const name = (h) => `L${h.layer + 1} · head ${h.head + 1}`;
  const out = [];
  const counts = new Map();
  for (const h of heads) counts.set(h.type, (counts.get(h.type) ?? 0) + 1);
  const order = ['previous-token', 'two-back', 'current-token', 'first-token', 'induction', 'broad', 'mixed'];
  const list = order.filter((t) => counts.has(t)).map((t) => `${counts.get(t)} ${t}`);
  out.push(`Measured on this story and sentence, the ${heads.length} heads are ${list.length > 1
    ? `${list.slice(0, -1).join(', ')} and ${list.at(-1)}` : list[0]}.`);
  for (const t of ['previous-token', 'two-back', 'current-token', 'first-token']) {
    const key = SCORE_OF[t];
    const of = heads.filter((h) => h.type === t).sort((a, b) => b.scores[key] - a.scores[key]);
    if (of.length) {
      out.push(`The strongest ${t} head is ${name(of[0])}: ${f2(of[0].scores[key])} of its attention is ${MEANS[key]}.`);
    }
  }
  const withInd = heads.filter((h) => h.scores.induction !== null);
  if (!withInd.length) {
    out.push(`The repeated sentence has no span of ${INDUCTION_MIN_SPAN} tokens written twice, so no induction score could be measured.`);
  } else {
    const best = withInd.reduce((a, b) => (b.scores.induction > a.scores.induction ? b : a));
    const ind = heads.filter((h) => h.type === 'induction');
    out.push(ind.length
      ? `${ind.length} head${ind.length > 1 ? 's qualify' : ' qualifies'} as induction head${ind.length > 1 ? 's' : ''} ` +
        `(${ind.map(name).join(', ')}); the strongest, ${name(best)}, puts ${f2(best.scores.induction)} of its attention ${MEANS.induction}.`
      : `No head qualifies as an induction head: on the repeated sentence the highest induction score is ` +
        `${f2(best.scores.induction)} (${name(best)}), below the ${TYPE_THRESHOLD} that earns the label.`);
  }
  if (repeat && Number.isFinite(repeat.first) && Number.isFinite(repeat.second)) {
    const ratio = repeat.first / repeat.second;
    const anyInduction = heads.some((h) => h.type === 'induction');
    const helps = repeat.second < repeat.first
      ? `the first copy makes the second ${ratio >= 1.995 ? `${ratio.toFixed(1)}× ` : ''}cheaper to predict` +
        (anyInduction ? '' : ', although no single head passes the induction threshold')
      : 'the first copy does not help it predict the second';
    out.push(`Written twice, the sentence costs the model ${f2(repeat.first)} bits per token the first time and ` +
      `${f2(repeat.second)} the second time: ${helps}.`);
  }
  if (groupSize > 1) {
    let same = 0, groups = 0;
    const byKey = new Map();
    for (const h of heads) {
      const k = `${h.layer}:${h.kvHead}`;
      if (!byKey.has(k)) byKey.set(k, []);
      byKey.get(k).push(h.type);
    }
    for (const types of byKey.values()) { groups++; if (types.every((t) => t === types[0])) same++; }
    out.push(`In ${same} of the ${groups} groups, the ${groupSize} query heads that share one K/V head got the same label; ` +
      'they read the same keys and values, but each asks with its own queries.');
  }
  return out;
}

/**
 * The second copying test: a list of names written twice. Unlike a sentence of the story, the list
 * can hardly be guessed from what stories say, so only copying the first copy can make the second
 * cheaper; a model with an induction head would show it here if anywhere. Names a story model knows.
 */
export const COPY_LIST = 'Tom, Sue, Ben, Max, Amy, Sam, Jill, Kate.';

/**
 * The induction score that attention spread evenly over the keys would get on a text: the mean,
 * over the queries t that have induction targets (inductionTargets), of (targets of t) / (t + 1).
 * The yardstick an induction score is read against (a head that ignores the earlier copy).
 * @param {ArrayLike<number>} ids the text's token ids [T]
 * @returns {number|null} null when the text repeats no span of INDUCTION_MIN_SPAN tokens
 */
export function evenInduction(ids) {
  const targets = inductionTargets(ids);
  if (!targets.size) return null;
  let s = 0;
  for (const [t, ks] of targets) s += ks.length / (t + 1);
  return s / targets.size;
}

/**
 * Weights of a Llama-style model (llama2.c) counted from its config: the token embedding (V · d_model,
 * shared with the output layer when `tied`), per layer two RMSNorm gains (2 · d_model), W_Q and W_O
 * (d_model · h · d_k each), W_K and W_V (d_model · g · d_k each, g K/V heads) and the SwiGLU MLP
 * (3 · d_model · d_ff), and the final norm (d_model). stories260K: 260,032.
 * @param {{vocabSize: number, dModel: number, numLayers: number, numHeads: number, kvHeads?: number, dK: number,
 *   dFF: number, tied?: boolean}} c
 * @returns {number}
 */
export function llamaParameters(c) {
  const d = c.dModel;
  const g = c.kvHeads ?? c.numHeads;
  const layer = 2 * d + 2 * d * c.numHeads * c.dK + 2 * d * g * c.dK + 3 * d * c.dFF;
  return c.vocabSize * d * (c.tied === false ? 2 : 1) + c.numLayers * layer + d;
}

/**
 * Why the story model shows no induction head, in sentences made from what the page measured:
 * the list-copying test (bits per token of each copy, the best induction score against evenly
 * spread attention), what the heads do instead (previous-token heads, start-marker attention), and
 * the model's size from its config. When a head does qualify as an induction head (on the story's
 * sentence or on the list), says so instead. The reason for a missing head is not measured here: the
 * last sentence only states facts that fit (size, training text).
 * @param {Array<{layer: number, head: number, type: string, scores: object}>} heads measured on the story
 *   (induction on the sentence written twice)
 * @param {{list: string, first: number, second: number, tokens: number, best: {layer: number, head: number,
 *   induction: number}|null, even: number|null, induction: string[]}} copy the list test
 * @param {object} c the model's config
 * @param {{first: number}|null} [repeat] the story's sentence test (its first copy's bits per token, for comparison)
 * @returns {string[]}
 */
export function explainCopying(heads, copy, c, repeat = null) {
  const name = (h) => `L${h.layer + 1} · head ${h.head + 1}`;
  const out = [];
  const fewer = copy.second < copy.first;
  const change = Math.abs(1 - copy.second / copy.first) * 100;
  const guess = repeat && Number.isFinite(repeat.first)
    ? ` (its first copy costs ${f2(copy.first)} bits per token, against ${f2(repeat.first)} for the story’s sentence)` : '';
  out.push(`A second test, where only copying can help: the list “${copy.list}” written twice. The model cannot guess ` +
    `the list from what stories say${guess}, so a head that copies would make the second copy cheaper. It costs ` +
    `${f2(copy.second)} bits per token (${change.toFixed(0)} % ${fewer ? 'less' : 'more'} than the first)${copy.best
      ? `; the highest induction score there is ${f2(copy.best.induction)} (${name(copy.best)})${copy.even !== null
        ? `, against ${f2(copy.even)} for attention spread evenly over the earlier tokens` : ''}` : ''}.`);
  const onStory = heads.filter((h) => h.type === 'induction');
  if (onStory.length || copy.induction.length) {
    const names = [...new Set([...onStory.map(name), ...copy.induction])];
    out.push(`${names.join(', ')} ${names.length > 1 ? 'qualify' : 'qualifies'} as induction head${names.length > 1 ? 's' : ''} ` +
      `(a score of ${TYPE_THRESHOLD} or more) on ${onStory.length && copy.induction.length ? 'both tests' : onStory.length ? 'the story’s sentence' : 'the list'}.`);
    return out;
  }
  const count = (t) => heads.filter((h) => h.type === t).length;
  const prev = heads.filter((h) => h.type === 'previous-token');
  const parts = [];
  if (prev.length) {
    const top = prev.reduce((a, b) => (b.scores.previous > a.scores.previous ? b : a));
    parts.push(`${prev.length} attend mostly to the previous token (the strongest, ${name(top)}, ${f2(top.scores.previous)})`);
  }
  for (const t of ['two-back', 'current-token', 'first-token']) if (count(t)) parts.push(`${count(t)} ${t}`);
  if (count('broad')) parts.push(`${count('broad')} spread their attention broadly (normalised entropy ${BROAD_THRESHOLD} or more)`);
  if (count('mixed')) parts.push(`${count('mixed')} mix patterns, none reaching ${TYPE_THRESHOLD}`);
  const first = heads.reduce((a, b) => ((b.scores.first ?? 0) > (a.scores.first ?? 0) ? b : a));
  const sinks = count('first-token');
  out.push('So on neither test does any head attend to what followed the earlier copy: no head here is an induction head. ' +
    `What its ${heads.length} heads do instead, on the story: ${parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0]}. ` +
    (sinks ? `${sinks} put most of their attention on the start marker <s>.`
      : `None parks its attention on the start marker <s>: the most any head puts there is ${f2(first.scores.first ?? 0)} (${name(first)}).`));
  out.push(`Why, this page cannot measure. Two facts fit: the model is tiny (${c.numLayers} layers, d_model = ${c.dModel}, ` +
    `${c.numHeads} query heads of d_k = ${c.dK}, ${int(llamaParameters(c))} parameters counted from its config, a vocabulary of ` +
    `${int(c.vocabSize)} tokens), and it learned from TinyStories, short simple stories that seldom repeat a passage word for ` +
    'word.');
  return out;
}

/**
 * The sentence of a story written twice, measured: bits per token of each copy (copyBitsPerToken)
 * and every head's scores on the doubled text (scoreText), whose induction scores are those of the
 * repeated span. A sentence of fewer than 2 tokens, or too long for the context written twice,
 * gives NaN bits and no scores.
 * @param {object} lm a CharModel with a tokenizer
 * @param {string} sentence
 * @param {Array<[number, number]>} [ablate] heads switched off (0-based [layer, head])
 * @returns {{sentence: string, first: number, second: number, tokens: number, scores: Array<object>|null}}
 */
export function measureRepeat(lm, sentence, ablate = []) {
  const { vocabSize: V, context } = lm.config;
  const n = lm.encode(sentence).length - 1;
  if (n < 2 || 2 * n + 1 > context) return { sentence, first: NaN, second: NaN, tokens: n, scores: null };
  const r = lm.run(`${sentence} ${sentence}`, { ablate });
  return { sentence, ...copyBitsPerToken(r, n, V), scores: scoreText(r.attention, r.ids) };
}

/**
 * The list test: COPY_LIST (or `list`) written twice, measured: bits per token of each copy, the
 * head with the highest induction score, the score of evenly spread attention (evenInduction), and
 * the heads that qualify as induction heads on it ("L2 · head 3", a score ≥ TYPE_THRESHOLD).
 * @param {object} lm a CharModel with a tokenizer
 * @param {Array<[number, number]>} [ablate] heads switched off
 * @param {string} [list]
 * @returns {{list: string, first: number, second: number, tokens: number, even: number|null,
 *   best: {layer: number, head: number, induction: number}|null, induction: string[], scores: Array<object>}}
 */
export function measureCopyList(lm, ablate = [], list = COPY_LIST) {
  const n = lm.encode(list).length - 1;
  const r = lm.run(`${list} ${list}`, { ablate });
  const sc = scoreText(r.attention, r.ids);
  const best = sc.reduce((a, b) => ((b.scores.induction ?? -1) > (a.scores.induction ?? -1) ? b : a));
  return {
    list, ...copyBitsPerToken(r, n, lm.config.vocabSize), even: evenInduction(r.ids),
    best: best.scores.induction === null ? null : { layer: best.layer, head: best.head, induction: best.scores.induction },
    induction: sc.filter((x) => (x.scores.induction ?? 0) >= TYPE_THRESHOLD).map((x) => `L${x.layer + 1} · head ${x.head + 1}`),
    scores: sc,
  };
}

/**
 * Every head labelled: its position scores and entropy on the story (scoreText of the story), its
 * induction score from the repeated sentence (null when unmeasured), its K/V head (⌊head / group⌋),
 * and its type (headType, unmeasured scores counted as 0).
 * @param {Array<{layer: number, head: number, scores: object}>} onStory scoreText on the story
 * @param {Array<{layer: number, head: number, scores: object}>|null} repeatScores scoreText on the sentence written twice
 * @param {number} group query heads per K/V head
 * @returns {Array<{layer: number, head: number, kvHead: number, type: string, scores: object}>}
 */
export function labelHeads(onStory, repeatScores, group) {
  return onStory.map((s) => {
    const induction = repeatScores?.find((x) => x.layer === s.layer && x.head === s.head)?.scores.induction ?? null;
    const scores = { ...s.scores, induction };
    const zeroed = Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, v ?? 0]));
    return { layer: s.layer, head: s.head, kvHead: Math.floor(s.head / group), type: headType(zeroed), scores };
  });
}

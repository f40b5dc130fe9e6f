import { html, css, nothing } from 'lit';
import { TYPE_THRESHOLD, BROAD_THRESHOLD, INDUCTION_MIN_SPAN, headType, scoreText, inductionTargets } from '../../src/index.js';
import {
  AblatableModelElement, trainedStyles, formatAblate, SCORE_OF, f2, kvCacheBytes, bytesFormula, kvGroups, kvGroupStyles,
} from './trained-shared.js';
import { DEFAULT_STORIES_URL } from '../models.js';
import { int } from '../base/shared.js';
import { scrollCueStyles, watchOverflow, unwatchOverflow } from '../base/scroll-cue.js';
import { numberAttr, intAttr, enumAttr, headListAttr, rawAttr } from '../base/attr-check.js';
import '../views/mha-heatmap.js';

const DEFAULT_PROMPT = 'Once upon a time';
const TEMPERATURES = [0, 0.8, 1];
/** The element stops generating when the cache holds this many tokens (its heatmaps are T × T). */
export const MAX_STORY_TOKENS = 256;

/** Short names of the head types for the table (the legend under it spells them out). */
const SHORT = Object.freeze({
  'previous-token': 'previous', 'two-back': 'two-back', 'current-token': 'current', 'first-token': 'first',
  induction: 'induction', broad: 'broad', mixed: 'mixed',
});

/** What each score measures, in tokens. */
const MEANS = Object.freeze({
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
 * `<mha-gqa-story>` — grouped-query attention in a real model: Andrej Karpathy's stories260K
 * (llama2.c's smallest "tinyllamas" model, trained on TinyStories by Eldan & Li 2023; MIT licence)
 * writes a story token by token through the engine's KV cache. The element shows
 * - the story and the cache growing: tokens cached, the cache's bytes per token for this model
 *   (2 · layers · K/V heads · d_k · 4 bytes, float32, read from the loaded model's config) and in
 *   total, against what full multi-head attention (as many K/V heads as query heads) would need;
 * - one layer's attention over the cached tokens, its query heads drawn in groups framed by the
 *   K/V head they share (query head j reads K/V head ⌊j / (h/g)⌋);
 * - every head measured with the analysis of the character models (docs/trained-models.md, "Head
 *   analysis"): the position scores and entropy on the story the model wrote (scoreText), the
 *   induction score on a sentence of the story written twice (inductionTargets), the type named
 *   by headType; a switch per head ablates it (its output zeroed before W_O) and the story is
 *   written again with the same number of tokens;
 * - the search for an induction head, explained from measurements (explainCopying): a list of names
 *   written twice (COPY_LIST), where only copying can help, scored like the sentence; what the heads
 *   do instead; the model's size from its config.
 * Every number comes from the engine (`mha.loadModel`, CharModel.run and CharModel.generator);
 * the sentences around them are made from them.
 *
 * @element mha-gqa-story
 *
 * @attr {string} model - URL of a model file with grouped-query attention (`.safetensors`, format
 *   mha-wasm.charlm/1); default: the shipped stories260K, found relative to this module.
 * @attr {string} prompt - The start of the story (default "Once upon a time"); reflects what the
 *   reader types. Setting it starts again.
 * @attr {number} temperature - Sampling temperature, 0–10; 0 (default) takes the most likely token.
 * @attr {number} seed - Seed of the sampler, 0–2147483647 (default 7).
 * @attr {number} steps - Tokens written when the story (re)starts, 0–256 (default 40; 0 shows the prompt alone).
 * @attr {number} layer - The layer whose heads are drawn, 1 to the model's layers (default 1); reflects the reader's choice.
 * @attr {string} ablate - Heads switched off, 1-based `layer:head` pairs ("2:4 3:1") within the model; reflects the switches.
 *
 * A bad attribute value keeps the last valid value (or the default), shows one message naming the
 * attribute, the value and what is allowed, and fires `mha-error`; the attribute stays as written.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {object|null} lm - Read-only: the loaded model (null while loading).
 * @prop {string} text - Read-only: the prompt and everything written so far.
 * @prop {number} cacheLength - Read-only: tokens in each layer's KV cache.
 * @prop {string[]} tokens - Read-only: the pieces of the cached tokens (the heatmaps' labels).
 * @prop {{layers: number, kvHeads: number, heads: number, dK: number, bytesPerValue: number, perToken: number,
 *   fullPerToken: number, tokens: number, total: number, fullTotal: number, reserved: number}|null} kvBytes -
 *   Read-only: the KV cache's bytes for this model (per token, now, with h K/V heads, reserved for the context).
 * @prop {Array<{layer: number, head: number, kvHead: number, type: string, scores: object}>|null} measured -
 *   Read-only: every head's type and scores (position scores and entropy on the story, induction on the repeated sentence).
 * @prop {{sentence: string, first: number, second: number, tokens: number}|null} repeat - Read-only: the
 *   repeated sentence and the bits per token of each copy.
 * @prop {{list: string, first: number, second: number, tokens: number, even: number|null, best: {layer: number, head: number,
 *   induction: number}|null, induction: string[], scores: Array<object>}|null} copy - Read-only: the list test (COPY_LIST
 *   written twice): bits per token of each copy, the best induction score, that of evenly spread attention, the heads
 *   that qualify as induction heads on it.
 * @prop {Array<[number, number]>} ablation - Read-only: the switched-off heads, 0-based.
 * @prop {Error|null} error - Read-only: why the model could not be loaded or run.
 *
 * @fires mha-step - `{detail: {text, piece, id, p, cacheLength}}` after every generated token.
 * @fires mha-computed - `{detail: {text, cacheLength, kvBytes, measured, repeat, ablate}}` after the heads are measured.
 * @fires change - `{detail: {prompt, temperature, layer, ablate}}` when the reader changes one of them.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute) or a model that cannot be loaded (shown in place).
 *
 * @csspart about - The line describing the model.
 * @csspart credit - The model's credit and licence.
 * @csspart controls - The prompt field and the buttons.
 * @csspart prompt - The prompt field.
 * @csspart step - The "Write 1 token" and "Write 16" buttons.
 * @csspart reset - The "Start again" button.
 * @csspart temperature - The temperature select.
 * @csspart text - The story (generated part in a `<mark>`).
 * @csspart cache - The KV-cache box (with `data-*` numbers).
 * @csspart formula - The bytes-per-token formulas.
 * @csspart layers - The layer buttons.
 * @csspart groups - The K/V groups of the shown layer.
 * @csspart group - One K/V head's frame with its query heads.
 * @csspart head - One query head's box (class `off` when switched off).
 * @csspart switch - A head's on/off switch (role="switch").
 * @csspart heatmap - A head's `<mha-heatmap>`.
 * @csspart table - The table of every head's measured type.
 * @csspart summary - The sentences about the measured heads.
 * @csspart copying - The induction-head search: the list test and what the heads do instead (with `data-*` numbers).
 * @csspart error - The error message.
 *
 * @cssprop --mha-accent, --mha-fg, --mha-bg, --mha-surface, --mha-border, --mha-muted, --mha-mono - Theme.
 */
export class MhaGqaStory extends AblatableModelElement {
  static _defaultModel = DEFAULT_STORIES_URL;

  static properties = {
    ...AblatableModelElement.properties,
    prompt: { type: String, reflect: true },
    temperature: { reflect: true, converter: rawAttr },
    seed: { converter: rawAttr },
    steps: { converter: rawAttr },
    layer: { reflect: true, converter: rawAttr },
    ablate: { type: String, reflect: true },
    scheme: { type: String },
    measured: { state: true },
    repeat: { state: true },
    copy: { state: true },
    _version: { state: true },
  };

  static styles = [trainedStyles, kvGroupStyles, scrollCueStyles, css`
    :host { container-type: inline-size; }
    .controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: end; margin: 0.6rem 0; }
    .controls .prompt { flex: 1 1 14rem; display: flex; flex-direction: column; gap: 0.2em; }
    .text { font-family: var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; background: var(--_surface);
      padding: 0.5em 0.8em; border-radius: var(--_radius); margin: 0.5rem 0; }
    mark { background: var(--_accent); color: var(--_accent-fg); border-radius: 3px; }
    .cache { border: 1px solid var(--_border); border-radius: calc(var(--_radius) * 1.4); padding: 0.4em 0.9em; margin: 0.6rem 0; }
    .cache p { margin: 0.35em 0; }
    .cache .formula { overflow-x: auto; overflow-y: hidden; }
    .big { font-weight: 700; font-variant-numeric: tabular-nums; }
    .layers { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; margin: 0.8rem 0 0.4rem; }
    .layers button[aria-pressed='true'] { background: var(--_accent); color: var(--_accent-fg); border-color: var(--_accent); }
    @container (max-width: 520px) {
      .groups { --mha-cell-size: var(--_narrow); }
      .group { padding: 0.2rem 0.25rem 0.3rem; }
      .pair { gap: 0.3rem; flex-wrap: nowrap; }
      .head { padding: 0.15rem; flex: 1 1 0; min-width: 0; }
      .head mha-heatmap::part(legend) { font-size: 0.65rem; }
    }
    button[role='switch'] { display: flex; flex-wrap: wrap; gap: 0.2rem 0.5rem; align-items: baseline; font-size: 0.82rem; text-align: left; }
    button[role='switch'][aria-checked='false'] { text-decoration: line-through; }
    .name { font-weight: 600; }
    .badge { padding: 0 0.4em; border-radius: 999px; background: var(--_bg); border: 1px solid var(--_border); }
    .scores { margin: 0.2rem 0; font-size: 0.75rem; color: var(--_muted); font-variant-numeric: tabular-nums; }
    mha-heatmap::part(label) { font-size: 7px; line-height: 1; }
    table { border-collapse: collapse; font-size: 0.8rem; font-variant-numeric: tabular-nums; margin: 0.8rem 0 0.3rem; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { border: 1px solid var(--_border); padding: 0.2em 0.45em; text-align: center; white-space: nowrap; }
    thead th.kv { border-bottom: 2px solid var(--_accent); }
    td.first-of-group, th.first-of-group { border-left: 2px solid var(--_accent); }
    td .t { display: block; font-weight: 600; }
    td .s { display: block; color: var(--_muted); }
    td.off { text-decoration: line-through; opacity: 0.6; }
    td.t-previous-token, td.t-induction, td.t-first-token, td.t-current-token, td.t-two-back { background: var(--_surface); }
    .summary ul { padding-left: 1.2em; margin: 0.3em 0; }
    .summary li { margin: 0.15em 0; }
    .credit a { color: var(--_accent); }
    .copying h4 { margin: 0.8rem 0 0.2rem; font-size: 0.95rem; }
    .copying p { margin: 0.35em 0; }
  `];

  constructor() {
    super();
    this.prompt = DEFAULT_PROMPT;
    this.temperature = 0;
    this.seed = 7;
    this.steps = 40;
    this.layer = 1;
    this.ablate = '';
    this.scheme = 'viridis';
    this.measured = null;
    this.repeat = null;
    this.copy = null;
    this._copyKey = '';
    this._version = 0;
    this._gen = null;
    this._genKey = '';
    this._ids = [];
    this._pieces = [];
    this._rows = [];     // per layer: rows[t] = the attention of query t over keys 0…t, [h, t + 1]
    this._promptLen = 0;
    this._written = 0;
    this._last = null;
    this._repeatKey = '';
    this._c = { temperature: 0, seed: 7, steps: 40, layer: 1, scheme: 'viridis', ablate: [] };
  }

  /** The switched-off heads as 0-based [layer, head] pairs: the last valid `ablate`. */
  get ablation() {
    const cfg = this.lm?.config;
    const r = cfg ? headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }) : { error: true };
    return (r.error ? this._c.ablate : r.value).map((p) => p.slice());
  }

  /** The prompt and everything written so far. */
  get text() {
    return this._gen?.text ?? this.prompt ?? '';
  }

  /** Tokens in each layer's KV cache. */
  get cacheLength() {
    return this._gen?.cacheLength ?? 0;
  }

  /** The pieces of the tokens whose attention rows are known (the prompt's, then the cache's). */
  get tokens() {
    return this._pieces.slice(0, this._rows[0]?.length ?? 0);
  }

  /** The switched-off heads as 0-based [layer, head] pairs. */
  /** The KV cache's bytes for this model (float32 keys and values of every layer's K/V heads). */
  get kvBytes() {
    const c = this.lm?.config;
    return c ? kvCacheBytes(c, this.cacheLength) : null;
  }

  get _maxTokens() {
    return Math.min(MAX_STORY_TOKENS, this.lm?.config.context ?? MAX_STORY_TOKENS);
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    const g = this._attrs;
    const old = this._c;
    g.begin();
    const c = {
      temperature: g.take('temperature', numberAttr('temperature', this.temperature, { dflt: 0, min: 0, max: 10 })),
      seed: g.take('seed', intAttr('seed', this.seed, { dflt: 7, min: 0, max: 2147483647 })),
      steps: g.take('steps', intAttr('steps', this.steps, { dflt: 40, min: 0, max: MAX_STORY_TOKENS })),
      scheme: g.take('scheme', enumAttr('scheme', this.scheme, { dflt: 'viridis', values: ['viridis', 'cividis'] })),
      layer: old.layer,
      ablate: old.ablate,
    };
    const cfg = this.lm?.config;
    if (cfg) {
      c.layer = g.take('layer', intAttr('layer', this.layer, { dflt: 1, min: 1, max: cfg.numLayers }));
      c.ablate = g.take('ablate', headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }));
    }
    g.end();
    this._c = c;
    if (!this.lm) return;
    const key = JSON.stringify([this.prompt, c.temperature, c.seed, formatAblate(this.ablation)]);
    if (changed.has('lm') || key !== this._genKey) {
      // a new prompt or sampler writes `steps` tokens; a new ablation rewrites as many as there were
      const keep = changed.has('lm') || changed.has('prompt') || changed.has('temperature') || changed.has('seed') || !this._genKey;
      this._start(key, keep ? c.steps : this._written);
    }
  }

  updated(changed) {
    super.updated?.(changed);
    watchOverflow(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    unwatchOverflow(this);
  }

  modelReleasing() {
    this._gen?.dispose();
    this._gen = null;
    this._genKey = '';
  }

  _promptText() {
    return this.prompt || DEFAULT_PROMPT;
  }

  _start(key, count) {
    this._gen?.dispose();
    this._gen = null;
    this._genKey = key;
    this._last = null;
    this._written = 0;
    const lm = this.lm;
    const { numLayers: L, numHeads: h } = lm.config;
    try {
      const ablate = this.ablation;
      const prompt = this._promptText();
      const r = lm.run(prompt, { ablate });
      const P = r.ids.length;
      if (P >= this._maxTokens) throw new RangeError(`The prompt is ${P} tokens long; this element writes stories of at most ${this._maxTokens} tokens: shorten it.`);
      this._ids = Array.from(r.ids);
      this._pieces = r.tokens.slice();
      this._promptLen = P;
      // the prompt's rows come from reading it whole; every later row is a cache step's newest query
      this._rows = Array.from({ length: L }, (_, l) => Array.from({ length: P }, (_, t) => {
        const row = new Float32Array(h * (t + 1));
        for (let j = 0; j < h; j++) row.set(r.attention[l].data.subarray((j * P + t) * P, (j * P + t) * P + t + 1), j * (t + 1));
        return row;
      }));
      this._gen = lm.generator(prompt, { temperature: this._c.temperature, seed: this._c.seed, ablate });
      this.error = null;
      this._advance(count, false);
    } catch (e) {
      this.error = e;
      this._analyze();
    }
  }

  /** Writes up to n tokens (stopping at the element's limit); events unless quiet. */
  _advance(n, loud = true) {
    const g = this._gen;
    if (!g) return;
    for (let i = 0; i < n && this._ids.length < this._maxTokens; i++) {
      const s = g.step();
      const len = s.cacheLength;
      for (let l = 0; l < this._rows.length; l++) this._rows[l][len - 1] = s.attention[l].data;
      this._ids.push(s.id);
      this._pieces.push(s.char);
      this._written++;
      this._last = s;
      if (loud) {
        this.dispatchEvent(new CustomEvent('mha-step', {
          detail: { text: g.text, piece: s.char, id: s.id, p: s.p, cacheLength: len }, bubbles: true, composed: true,
        }));
      }
    }
    this._analyze();
  }

  /**
   * Writes n more tokens through the KV cache (stops at the element's limit of 256 tokens).
   * @param {number} n
   */
  step(n = 1) {
    if (!this._gen) return;
    this._advance(n);
  }

  /** Back to the prompt alone (the sampler's seed from the start). */
  restart() {
    if (!this.lm) return;
    this._start(this._genKey, 0);
  }

  /** The per-layer attention [h, T, T] of the T tokens whose rows are known. */
  _attention() {
    const h = this.lm.config.numHeads;
    return this._rows.map((rows) => {
      const T = rows.length;
      const data = new Float32Array(h * T * T);
      for (let t = 0; t < T; t++) {
        const row = rows[t];
        for (let j = 0; j < h; j++) data.set(row.subarray(j * (t + 1), (j + 1) * (t + 1)), (j * T + t) * T);
      }
      return { data, shape: [h, T, T] };
    });
  }

  _analyze() {
    this._version++;
    const lm = this.lm;
    if (!lm || this.error || !this._rows.length) {
      this.measured = null;
      this.repeat = null;
      this.copy = null;
      this._att = null;
      return;
    }
    const { numHeads: h, kvHeads, vocabSize: V, context } = lm.config;
    const group = h / (kvHeads ?? h);
    const ablate = this.ablation;
    this._att = this._attention();
    const T = this._att[0].shape[1];
    const onStory = scoreText(this._att, this._ids.slice(0, T));
    // a sentence the model wrote, written twice: the repeated span of the induction score
    const sentence = storySentence(this.text, this._promptText().length);
    const rkey = JSON.stringify([sentence, formatAblate(ablate)]);
    if (rkey !== this._repeatKey || !this.repeat) {
      const n = lm.encode(sentence).length - 1;
      if (n >= 2 && 2 * n + 1 <= context) {
        const r = lm.run(`${sentence} ${sentence}`, { ablate });
        this.repeat = { sentence, ...copyBitsPerToken(r, n, V), scores: scoreText(r.attention, r.ids) };
      } else {
        this.repeat = { sentence, first: NaN, second: NaN, tokens: n, scores: null };
      }
      this._repeatKey = rkey;
    }
    // the list written twice: the same for every story, measured again only when the ablation changes
    const ckey = formatAblate(ablate);
    if (ckey !== this._copyKey || !this.copy) {
      const n = lm.encode(COPY_LIST).length - 1;
      const r = lm.run(`${COPY_LIST} ${COPY_LIST}`, { ablate });
      const sc = scoreText(r.attention, r.ids);
      const best = sc.reduce((a, b) => ((b.scores.induction ?? -1) > (a.scores.induction ?? -1) ? b : a));
      this.copy = {
        list: COPY_LIST, ...copyBitsPerToken(r, n, V), even: evenInduction(r.ids),
        best: best.scores.induction === null ? null : { layer: best.layer, head: best.head, induction: best.scores.induction },
        induction: sc.filter((x) => (x.scores.induction ?? 0) >= TYPE_THRESHOLD).map((x) => `L${x.layer + 1} · head ${x.head + 1}`),
        scores: sc,
      };
      this._copyKey = ckey;
    }
    this.measured = onStory.map((s) => {
      const induction = this.repeat.scores?.find((x) => x.layer === s.layer && x.head === s.head)?.scores.induction ?? null;
      const scores = { ...s.scores, induction };
      const zeroed = Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, v ?? 0]));
      return { layer: s.layer, head: s.head, kvHead: Math.floor(s.head / group), type: headType(zeroed), scores };
    });
    this.dispatchEvent(new CustomEvent('mha-computed', {
      detail: { text: this.text, cacheLength: this.cacheLength, kvBytes: this.kvBytes, measured: this.measured, repeat: this.repeat, copy: this.copy, ablate },
      bubbles: true, composed: true,
    }));
  }

  _changed() {
    this.dispatchEvent(new CustomEvent('change', {
      detail: { prompt: this.prompt, temperature: this._c.temperature, layer: this._layer(), ablate: this.ablation },
      bubbles: true, composed: true,
    }));
  }

  _layer() {
    const L = this.lm?.config.numLayers ?? 1;
    return Math.min(L, this._c.layer);
  }

  _onPrompt(e) {
    this.prompt = e.target.value;
    this._changed();
  }

  _onTemperature(e) {
    this.temperature = Number(e.target.value);
    this._changed();
  }

  _about(c) {
    const tr = this.lm.training ?? {};
    const g = c.kvHeads ?? c.numHeads;
    const per = c.numHeads / g;
    return `${tr.model ? `${tr.model}: ` : ''}${c.numLayers} layers, d_model = ${c.dModel}, ${c.numHeads} query heads of d_k = ${c.dK} ` +
      `sharing ${g} K/V heads (${per} query heads per K/V head), a vocabulary of ${c.vocabSize} tokens, a context of ${c.context} tokens.`;
  }

  _credit() {
    const tr = this.lm.training ?? {};
    if (!tr.author) return nothing;
    const lic = String(tr.license ?? '');
    const file = /see ([^\s;)]+)/.exec(lic)?.[1];
    let href = null;
    try { href = file ? new URL(file, this.modelHref).href : null; } catch { href = null; }
    const licName = lic.split(' (')[0];
    const corpus = tr.corpus ? String(tr.corpus).replace(/, arXiv:[\d.]+/, '').replace(/,\s*(\d{4})\)/, ' $1)') : null;
    const model = String(tr.model ?? 'This model').replace(/ \((.*)\)$/, '');
    const family = /\((.*)\)$/.exec(String(tr.model ?? ''))?.[1];
    const made = [tr.trainedWith, family].filter(Boolean).join(', ');
    return html`<p class="hint credit" part="credit">${model} by ${tr.author}${made ? ` (${made})` : ''}${corpus ? `, trained on ${corpus}` : ''}, ${
      href ? html`<a href=${href} target="_blank" rel="noopener">${licName} licence</a>` : `${licName} licence`}.</p>`;
  }

  render() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    const lm = this.lm;
    if (!lm) return html`<p class="loading" role="status">Loading the model…</p>`;
    const c = lm.config;
    const text = this.text;
    const prompt = this._promptText();
    const t = this._c.temperature;
    const temps = TEMPERATURES.includes(t) ? TEMPERATURES : [...TEMPERATURES, t].sort((a, b) => a - b);
    const full = this._ids.length >= this._maxTokens;
    const s = this._last;
    return html`
      <p class="hint" part="about">${this._about(c)}</p>
      ${this._credit()}
      <div class="controls" part="controls">
        <label class="prompt">Prompt <input type="text" part="prompt" maxlength="200" spellcheck="false"
          .value=${this.prompt ?? ''} @change=${this._onPrompt}></label>
        <button type="button" part="step" class="step1" @click=${() => this.step(1)} ?disabled=${!this._gen || full}>Write 1 token</button>
        <button type="button" part="step" class="step16" @click=${() => this.step(16)} ?disabled=${!this._gen || full}>Write 16</button>
        <button type="button" part="reset" class="reset" @click=${() => this.restart()}>Start again</button>
        <label>temperature <select part="temperature" @change=${this._onTemperature}>
          ${temps.map((v) => html`<option value=${v} ?selected=${v === t}>${v === 0 ? '0 (most likely)' : v}</option>`)}
        </select></label>
      </div>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      <p class="text" part="text" aria-live="polite"><span class="prompt-text">${prompt}</span>${text.length > prompt.length
        ? html`<mark>${text.slice(prompt.length)}</mark>` : nothing}</p>
      <p class="hint last">${s ? `Last token written: “${showPiece(s.char)}” (p = ${f2(s.p)}); ${this._written} token${this._written === 1 ? '' : 's'} written` : 'Nothing written yet'}${
        full ? `; the element stops at ${this._maxTokens} tokens` : ''}.</p>
      ${this._cacheView()}
      ${this._layersView()}
      ${this._tableView()}`;
  }

  _cacheView() {
    const b = this.kvBytes;
    const ratio = b.fullPerToken / b.perToken;
    return html`
      <div class="cache" part="cache" aria-live="polite" data-tokens=${b.tokens} data-per-token=${b.perToken}
        data-full-per-token=${b.fullPerToken} data-total=${b.total} data-full-total=${b.fullTotal}>
        <p>KV cache: <span class="big tokens">${int(b.tokens)}</span> token${b.tokens === 1 ? '' : 's'} cached in each of the
          ${b.layers} layers${b.tokens ? '' : ' (the prompt goes in at the first step)'}. Each token's keys and values, in float32:</p>
        <div class="formula" part="formula" tabindex="0" role="region" aria-label="Bytes per token, grouped-query and full multi-head attention">
          <p>grouped, ${b.kvHeads} K/V heads: ${bytesFormula([2, b.layers, b.kvHeads, b.dK, b.bytesPerValue], b.perToken)}</p>
          <p>full multi-head, ${b.heads} K/V heads: ${bytesFormula([2, b.layers, b.heads, b.dK, b.bytesPerValue], b.fullPerToken)}</p>
        </div>
        <p>Now: <span class="big total">${int(b.total)} bytes</span> for ${int(b.tokens)} tokens, against ${int(b.fullTotal)} bytes
          with one K/V head per query head: ${ratio === 1 ? 'the same, this model does not share K/V heads' : `${ratio}× less`}.
          The engine reserves room for the model's whole context of ${int(this.lm.config.context)} tokens when a story starts:
          ${int(b.reserved)} bytes.</p>
      </div>`;
  }

  _layersView() {
    const c = this.lm.config;
    const g = c.kvHeads ?? c.numHeads;
    const per = c.numHeads / g;
    const L = this._layer();
    const l = L - 1;
    const att = this._att?.[l];
    const T = att ? att.shape[1] : 0;
    const labels = this.tokens.map(showPiece);
    const off = this.ablation;
    const isOff = (j) => off.some(([a, b]) => a === l && b === j);
    const m = this.measured;
    const prompt = this._promptLen;
    // the maps keep one size as the story grows: about 170 px a side (110 px in a narrow element, so
    // that a K/V head's pair stays side by side), cells of 1 to 8 px
    const side = (px) => Math.max(1, Math.min(8, Math.floor(px / Math.max(T, 1))));
    const cell = side(170);
    return html`
      <div class="layers" part="layers" role="group" aria-label="Layer shown">
        <span>Layer</span>
        ${Array.from({ length: c.numLayers }, (_, i) => html`<button type="button" class="layer" data-layer=${i + 1}
          aria-pressed=${String(i === l)} @click=${() => { this.layer = i + 1; this._changed(); }}>${i + 1}</button>`)}
      </div>
      <p class="hint">Layer ${L}: each map is one query head's attention over the ${T} cached tokens (queries down, keys
        across). ${prompt > 1 ? `Rows 1–${Math.min(prompt, T)} come from reading the prompt, each` : 'Each'} later row from one
        generation step's query over the cache. The frames are the ${g} K/V heads: the ${per} query heads in a frame
        score their queries against the same keys and mix the same values.</p>
      <div class=${cell >= 6 ? 'groups labels' : 'groups'} part="groups" style=${`--_wide: ${cell}px; --_narrow: ${side(110)}px`}>
        ${kvGroups(c.numHeads, g, (j, k) => {
          const h = m?.find((x) => x.layer === l && x.head === j);
          return html`
            <div class=${isOff(j) ? 'head off' : 'head'} part="head" data-layer=${l} data-head=${j}>
              <button type="button" role="switch" part="switch" aria-checked=${String(!isOff(j))} data-layer=${l} data-head=${j}
                @click=${() => this._toggle(l, j)}>
                <span class="name">head ${j + 1}</span>
                ${h ? html`<span class=${`badge t-${h.type}`}>${h.type}</span>` : nothing}
              </button>
              ${h ? html`<p class="scores">${this._scoreLine(h)}</p>` : nothing}
              <mha-heatmap part="heatmap" compact no-save scheme=${this._c.scheme} data-layer=${l} data-head=${j}
                label=${`Layer ${L}, query head ${j + 1} (K/V head ${k + 1})${h ? `: ${h.type}` : ''}`}
                .tokens=${labels} .weights=${att ? { data: att.data.subarray(j * T * T, (j + 1) * T * T), shape: [T, T] } : null}></mha-heatmap>
            </div>`;
        })}
      </div>`;
  }

  _scoreLine(h) {
    const key = SCORE_OF[h.type];
    const main = key ? `${SHORT[h.type]} ${f2(h.scores[key])}` : `entropy ${f2(h.scores.entropy)}`;
    return `${main} · induction ${h.scores.induction === null ? '—' : f2(h.scores.induction)}`;
  }

  _tableView() {
    const m = this.measured;
    if (!m) return nothing;
    const c = this.lm.config;
    const g = c.kvHeads ?? c.numHeads;
    const per = c.numHeads / g;
    const off = this.ablation;
    const T = this._att?.[0].shape[1] ?? 0;
    const lines = describeHeads(m, this.repeat, per);
    return html`
      <div class="scroll" tabindex="0" role="region" aria-label="Table of every head's measured type">
        <table part="table">
          <caption>What each head does: position scores on the story (${T} tokens), induction on a sentence of it written twice</caption>
          <thead>
            <tr><th rowspan="2" scope="col">layer</th>
              ${Array.from({ length: g }, (_, k) => html`<th colspan=${per} scope="colgroup" class="kv first-of-group">K/V head ${k + 1}</th>`)}</tr>
            <tr>${Array.from({ length: c.numHeads }, (_, j) => html`<th scope="col" class=${j % per ? '' : 'first-of-group'}>head ${j + 1}</th>`)}</tr>
          </thead>
          <tbody>
            ${Array.from({ length: c.numLayers }, (_, l) => html`<tr>
              <th scope="row">${l + 1}</th>
              ${m.filter((h) => h.layer === l).map((h) => {
                const key = SCORE_OF[h.type];
                const v = key ? h.scores[key] : h.scores.entropy;
                const o = off.some(([a, b]) => a === l && b === h.head);
                return html`<td class=${`t-${h.type}${h.head % per ? '' : ' first-of-group'}${o ? ' off' : ''}`}
                  data-layer=${l} data-head=${h.head} data-type=${h.type} data-score=${v}
                  data-induction=${h.scores.induction ?? ''}>
                  <span class="t">${SHORT[h.type]}</span><span class="s">${key ? f2(v) : `e ${f2(v)}`}</span><span class="s">ind ${
                    h.scores.induction === null ? '—' : f2(h.scores.induction)}</span>${o ? html`<span class="sr-only"> (switched off)</span>` : nothing}</td>`;
              })}
            </tr>`)}
          </tbody>
        </table>
      </div>
      <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
      <p class="hint">A head gets the name of its strongest pattern when that score reaches ${TYPE_THRESHOLD} (previous, two-back,
        current: attention on the token one or two before the query or on the query itself; first: on the start marker
        &lt;s&gt;; induction: on the token after an earlier copy of the last ${INDUCTION_MIN_SPAN} tokens), else “broad” when its
        attention is spread out (normalised entropy e ≥ ${BROAD_THRESHOLD}), else “mixed”. “ind” is the induction score on the
        repeated sentence${this.repeat?.sentence ? html`: “${this.repeat.sentence}”` : '.'}</p>
      <div class="summary" part="summary" aria-live="polite">
        <ul>${lines.map((s) => html`<li>${s}</li>`)}</ul>
      </div>
      ${this.copy ? html`<div class="copying" part="copying" aria-live="polite"
        data-first=${this.copy.first} data-second=${this.copy.second} data-best=${this.copy.best?.induction ?? ''} data-even=${this.copy.even ?? ''}>
        <h4>Looking for an induction head</h4>
        ${explainCopying(m, this.copy, c, this.repeat).map((s) => html`<p>${s}</p>`)}
      </div>` : nothing}`;
  }
}

customElements.get('mha-gqa-story') || customElements.define('mha-gqa-story', MhaGqaStory);

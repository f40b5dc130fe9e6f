// The numbers of <mha-surprisal>, pure (no DOM, no Lit; tested in Node by tests/surprisal-logic.test.mjs):
// a strict `ablate` list, a phrase written twice found in a text, each position's surprisal in bits,
// and the whole measurement of a text (per-position bits, the mean per copy, the uniform and
// unigram baselines, the same with heads switched off).
import { MHAError } from '../../src/index.js';
import { modelInput, unitOf, runSteps, awaitSteps } from './trained-text.js';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg, { argument: msg.split(':')[0] });

/**
 * Reads an `ablate` attribute strictly: space- or comma-separated 1-based `layer:head` pairs
 * ("2:1 2:2" = layer 2's heads 1 and 2), the syntax of `<mha-trained-heads>`; an empty or missing
 * attribute switches no head off. Unlike the explorer's lenient reader, every entry must be a
 * pair inside the model.
 * @param {string|null|undefined} s the attribute as written
 * @param {{numLayers: number, numHeads: number}} config the model's sizes
 * @returns {Array<[number, number]>} 0-based [layer, head] pairs, sorted, without repeats
 * @throws {MHAError} INVALID_ARGUMENT naming the attribute, the expected form and the entry given
 */
export function parseAblateStrict(s, config) {
  const { numLayers: L, numHeads: h } = config;
  const raw = String(s ?? '').trim();
  const out = [];
  if (!raw) return out;
  const expected = `1-based layer:head pairs separated by spaces, such as "2:1 2:2" (layer 1–${L}, head 1–${h})`;
  for (const part of raw.split(/[\s,]+/)) {
    const m = /^(\d+):(\d+)$/.exec(part);
    if (!m) throw invalid(`ablate: expected ${expected}; "${part}" in ${JSON.stringify(raw)} is not a layer:head pair`);
    const [l, j] = [Number(m[1]), Number(m[2])];
    if (l < 1 || l > L) throw invalid(`ablate: expected ${expected}; "${part}" in ${JSON.stringify(raw)} names layer ${l}, and this model has layers 1–${L}`);
    if (j < 1 || j > h) throw invalid(`ablate: expected ${expected}; "${part}" in ${JSON.stringify(raw)} names head ${j}, and this model has heads 1–${h}`);
    if (!out.some(([a, b]) => a === l - 1 && b === j - 1)) out.push([l - 1, j - 1]);
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/**
 * Whether a text is one phrase written twice, the copies separated by nothing or by white space
 * only ("The cat sat. The cat sat."): the longest such phrase of at least 2 characters (or tokens:
 * given a byte-pair model's pieces, the copies must be the same pieces and the separator pieces
 * white space only).
 * @param {string[]} chars the text's characters (or tokens)
 * @returns {{n: number, start2: number}|null} n characters per copy; the second copy starts at
 *   start2 (= n + the separator's length); null when the text is not a repeat
 */
export function findRepeat(chars) {
  const T = chars.length;
  for (let n = Math.floor(T / 2); n >= 2; n--) {
    const start2 = T - n;
    let ok = true;
    for (let i = n; i < start2 && ok; i++) ok = /^\s+$/.test(chars[i]);
    for (let i = 0; i < n && ok; i++) ok = chars[i] === chars[start2 + i];
    if (ok) return { n, start2 };
  }
  return null;
}

/**
 * Surprisal of each character in bits: −log₂ p(character t | characters 0 … t−1), read from
 * CharModel.run's natural-log probabilities (row t−1 predicts character t). Character 0 has no
 * text before it: null.
 * @param {{logProbs: {data: Float32Array}, ids: Int32Array}} r CharModel.run's result
 * @param {number} V vocabulary size
 * @returns {Array<number|null>} [T]
 */
export function surprisalBits(r, V) {
  const T = r.ids.length;
  const out = [null];
  for (let t = 1; t < T; t++) out.push(-r.logProbs.data[(t - 1) * V + r.ids[t]] / Math.LN2);
  return out;
}

/**
 * Where position t stands in a phrase written twice, by the rule of the per-copy means: each copy's
 * mean covers its characters 2 … n (the n − 1 predictions `<mha-induction>`'s copyBits scores), so a
 * copy's first character belongs to the copy but is counted in neither mean. For copy 1 it has no
 * text before it; for copy 2 nothing before it says that the phrase starts again.
 * @param {{n: number, start2: number}|null} copies measureSurprisal's `copies` (null: no repeat)
 * @param {number} t 0-based position
 * @returns {{copy: 0|1|2, counted: boolean}} copy 0: the separator, or no repeat
 */
export function copyPart(copies, t) {
  if (!copies) return { copy: 0, counted: false };
  if (t >= 0 && t < copies.n) return { copy: 1, counted: t > 0 };
  if (t >= copies.start2 && t < copies.start2 + copies.n) return { copy: 2, counted: t > copies.start2 };
  return { copy: 0, counted: false };
}

/** The mean of bits[from … to−1]. */
const meanOf = (bits, from, to) => {
  let s = 0;
  for (let t = from; t < to; t++) s += bits[t];
  return s / (to - from);
};

/**
 * Bits per character of a text under a trained model, per character and on average, with two
 * baselines and, for a phrase written twice, per copy; optionally with heads switched off.
 *
 * - mean: the average over characters 2 … T of −log₂ p(character | the text before it), which is
 *   CharModel.run's `loss`.
 * - uniform: log₂ V, what a guess that gives every one of the V tokens the same probability pays
 *   on every character.
 * - unigram: a guess that knows only how often each character occurs, with the frequencies
 *   counted on this text's scored characters (2 … T; the model file carries no counts of its
 *   training data): `whole` is the entropy of those frequencies, −Σ q(c) log₂ q(c), which is what
 *   that guess pays per character on this text; `first` / `second` are its mean −log₂ q(c) over
 *   each copy.
 * - copies (a phrase of n characters written twice, found by findRepeat): each copy scored on its
 *   characters 2 … n (the same n − 1 predictions as `<mha-induction>`'s copyBits), the separator
 *   and each copy's first character in neither.
 * @param {object} lm a CharModel
 * @param {string} text the text as given
 * @param {{ablate?: Array<[number, number]>, repeat?: boolean}} [opts] ablate: 0-based [layer,
 *   head] pairs switched off for a second run; repeat: read `${text} ${text}`
 * @returns {{text: string, tokens: string[], ids: Int32Array, vocabSize: number, unknown: number,
 *   bits: Array<number|null>, mean: number, copies: {n: number, start2: number, first: number,
 *   second: number}|null, uniform: number, unigram: {whole: number, first: number|null,
 *   second: number|null}, ablate: Array<[number, number]>, ablated: {bits: Array<number|null>,
 *   mean: number, first: number|null, second: number|null}|null}}
 * @throws {MHAError} INVALID_ARGUMENT naming `text` (fewer than 2 characters, longer than the
 *   model's context)
 */
export function measureSurprisal(lm, text, opts = {}) {
  return runSteps(measure(lm, text, opts));
}

/**
 * measureSurprisal over a model whose `run` and `encode` return promises (a RemoteModel of the
 * engine worker, or that surface on the main thread): the same result, resolved once its runs are
 * answered.
 * @param {object} lm the model
 * @param {string} text
 * @param {{ablate?: Array<[number, number]>, repeat?: boolean}} [opts]
 * @returns {Promise<object>} measureSurprisal's result
 * @throws {MHAError} as measureSurprisal (the promise rejects)
 */
export function measureSurprisalAsync(lm, text, opts = {}) {
  return awaitSteps(measure(lm, text, opts));
}

/** The measurement as steps: each `yield` hands out a call of the model (run, encode) and takes back its answer. */
function* measure(lm, text, opts) {
  const { context, vocabSize: V } = lm.config;
  if (typeof text !== 'string') throw invalid(`text: expected a string, got ${typeof text}`);
  if (unitOf(lm.config) === 'token') return yield* measureTokens(lm, text, opts);
  const given = Array.from(text);
  if (opts.repeat) {
    const most = Math.floor((context - 1) / 2);
    if (given.length < 2 || given.length > most) {
      throw invalid(`text: with repeat, the phrase is read twice with a space between, so it must have 2 to ${most} characters ` +
        `(the model's context is ${context}); got ${given.length}`);
    }
  } else if (given.length < 2 || given.length > context) {
    throw invalid(`text: expected 2 to ${context} characters (a character is scored from the text before it; the model's context is ${context}); got ${given.length}`);
  }
  const full = opts.repeat ? `${text} ${text}` : text;
  const chars = Array.from(full);
  const T = chars.length;
  const r = yield lm.run(full);
  const bits = surprisalBits(r, V);
  const rep = opts.repeat ? { n: given.length, start2: given.length + 1 } : findRepeat(chars);
  const split = (b) => (rep ? { first: meanOf(b, 1, rep.n), second: meanOf(b, rep.start2 + 1, rep.start2 + rep.n) } : { first: null, second: null });
  // unigram frequencies of the scored characters 2 … T
  const counts = new Map();
  for (let t = 1; t < T; t++) counts.set(r.ids[t], (counts.get(r.ids[t]) ?? 0) + 1);
  const q = (id) => counts.get(id) / (T - 1);
  let H = 0;
  for (const c of counts.values()) H -= (c / (T - 1)) * Math.log2(c / (T - 1));
  const uni = Array.from({ length: T }, (_, t) => (t === 0 ? null : -Math.log2(q(r.ids[t]))));
  const ablate = opts.ablate ?? [];
  let ablated = null;
  if (ablate.length) {
    const ra = yield lm.run(full, { ablate });
    const b = surprisalBits(ra, V);
    ablated = { bits: b, mean: ra.loss, ...split(b) };
  }
  const unk = lm.config.unk;
  return {
    unit: 'character', text: full, tokens: r.tokens, ids: r.ids, vocabSize: V,
    unknown: chars.filter((ch, t) => r.ids[t] === unk && lm.vocab[unk] !== ch).length,
    bits, mean: r.loss, copies: rep ? { ...rep, ...split(bits) } : null,
    uniform: Math.log2(V), unigram: { whole: H, ...split(uni) }, ablate, ablated,
  };
}

/**
 * measureSurprisal for a byte-pair model (llama2.c, a Hugging Face folder; `unit: 'token'`): the
 * text is encoded by the model's tokenizer (a folder without one reads it as token ids separated by
 * spaces) and every number is per token: bits[t] = −log₂ p(token t | tokens 0 … t−1), mean = the
 * model's loss in bits per token, uniform = log₂ V over the V tokens of the vocabulary, unigram over
 * this text's token frequencies. The copies of a repeated phrase are found on the pieces (findRepeat);
 * with `repeat` the phrase's token ids are read twice, `${text} ${text}` encoded as one text, and the
 * copies are those findRepeat finds in its pieces (none when the tokenizer splits the two copies
 * differently, as GPT-2 does a word after a space).
 * @throws {MHAError} INVALID_ARGUMENT naming `text` (fewer than 2 tokens, more than the context)
 */
function* measureTokens(lm, text, opts) {
  const { context, vocabSize: V } = lm.config;
  const full = opts.repeat ? `${text} ${text}` : text;
  const ids = lm.config.tokenizer === 'none' ? modelInput(lm, full, Infinity) : yield lm.encode(full);
  const T = ids.length;
  if (T < 2 || T > context) {
    throw invalid(`text: expected 2 to ${context} tokens (a token is scored from the tokens before it; the model's context is ${context} tokens)` +
      `${opts.repeat ? ', the phrase read twice' : ''}; got ${T}`);
  }
  const r = yield lm.run(ids);
  const bits = surprisalBits(r, V);
  const rep = findRepeat(r.tokens);
  const split = (b) => (rep ? { first: meanOf(b, 1, rep.n), second: meanOf(b, rep.start2 + 1, rep.start2 + rep.n) } : { first: null, second: null });
  const counts = new Map();
  for (let t = 1; t < T; t++) counts.set(r.ids[t], (counts.get(r.ids[t]) ?? 0) + 1);
  let H = 0;
  for (const c of counts.values()) H -= (c / (T - 1)) * Math.log2(c / (T - 1));
  const uni = Array.from({ length: T }, (_, t) => (t === 0 ? null : -Math.log2(counts.get(r.ids[t]) / (T - 1))));
  const ablate = opts.ablate ?? [];
  let ablated = null;
  if (ablate.length) {
    const ra = yield lm.run(ids, { ablate });
    const b = surprisalBits(ra, V);
    ablated = { bits: b, mean: ra.loss, ...split(b) };
  }
  return {
    unit: 'token', text: full, tokens: r.tokens, ids: r.ids, vocabSize: V, unknown: 0,
    bits, mean: r.loss, copies: rep ? { ...rep, ...split(bits) } : null,
    uniform: Math.log2(V), unigram: { whole: H, ...split(uni) }, ablate, ablated,
  };
}


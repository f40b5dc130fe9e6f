// The composition experiment of <mha-composition>: switch off a trained model's first-layer
// previous-token heads and measure what happens to its later induction heads, on a phrase written
// twice. K-composition (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"):
// an induction head's keys read what a previous-token head of an earlier layer wrote into the
// residual stream ("the character before me"), so without that head the keys no longer say where
// the earlier copy continues. Pure: the model calls are the JS API's (run, heads, copyingScores).
import { scoreText, copyingScores, inductionVerdict } from '../../src/index.js';
import { runSteps, awaitSteps } from './trained-text.js';

/**
 * The heads the experiment uses: the writers, layer 1's previous-token heads (by their label on
 * the model's probes; when layer 1 has none, its head with the highest previous-token score), the
 * control, layer 1's other heads, and the readers, the heads of later layers that pass both of
 * Olsson et al.'s tests (inductionVerdict: attention and copying).
 * @param {object} lm a loaded character model (LanguageModel) whose file carries probes, or a
 *   RemoteModel of the engine worker (its `copying`, measured there, is used)
 * @returns {{writers: Array<[number, number]>, control: Array<[number, number]>,
 *   readers: Array<[number, number]>, labelled: boolean}} 0-based [layer, head] pairs; labelled:
 *   false when no layer-1 head is labelled previous-token (the writer is then the best by score)
 */
export function compositionHeads(lm) {
  const heads = lm.heads;
  const copying = lm.remote !== undefined && lm.copying ? lm.copying : copyingScores(lm);
  const first = heads.filter((h) => h.layer === 0);
  let writers = first.filter((h) => h.type === 'previous-token');
  const labelled = writers.length > 0;
  if (!labelled) writers = [first.reduce((a, b) => (b.scores.previous > a.scores.previous ? b : a))];
  const pair = (h) => [h.layer, h.head];
  const isWriter = (h) => writers.includes(h);
  const readers = heads.filter((h, i) => h.layer > 0 && inductionVerdict(h, copying[i]) === 'induction');
  return { writers: writers.map(pair), control: first.filter((h) => !isWriter(h)).map(pair), readers: readers.map(pair), labelled };
}

/**
 * Bits per character of the second copy of `p p` (a phrase, a space, the phrase again): the mean
 * surprise of the copy's characters after its first, each predicted from everything before it
 * (the count and rule of <mha-induction>'s second copy).
 * @param {{logProbs: {data: Float32Array}, ids: Int32Array}} r the model's run on `p p`
 * @param {number} n characters of the phrase
 * @param {number} V vocabulary size
 * @returns {number}
 */
export function secondCopyBits(r, n, V) {
  let s = 0;
  for (let t = n + 1; t < 2 * n; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
  return s / (n - 1) / Math.LN2;
}

/**
 * One arm of the experiment: the model run on `p p` with `ablate` switched off; the readers' mean
 * induction score on this text (scoreText: attention on the character after the earlier copy of
 * the current 4 characters) and the second copy's bits per character.
 * @returns {{induction: number|null, bits: number, attention: object[], tokens: string[]}}
 */
function* arm(lm, text, n, readers, ablate) {
  const r = yield lm.run(text, { ablate, scores: true });
  const scores = r.textScores ?? scoreText(r.attention, r.ids);
  const h = lm.config.numHeads;
  const vals = readers.map(([l, j]) => scores[l * h + j].scores.induction);
  const induction = vals.length && vals.every((v) => v !== null) ? vals.reduce((a, b) => a + b, 0) / vals.length : null;
  return { induction, bits: secondCopyBits(r, n, lm.config.vocabSize), attention: r.attention, tokens: r.tokens };
}

/**
 * The experiment on one phrase: the model whole, with the writers switched off, and with the
 * control switched off instead (as many heads of the same layer, so that "any head of layer 1"
 * can be told from "the previous-token heads").
 * @param {object} lm a loaded character model with probes
 * @param {string} phrase at least 5 characters (the induction score needs a repeated span of 4),
 *   cut to ⌊(context − 1) / 2⌋ so that both copies fit the context
 * @returns {{phrase: string, heads: ReturnType<typeof compositionHeads>, whole: object,
 *   writersOff: object, controlOff: object|null}|null} null when the phrase is too short; each arm
 *   `{induction, bits, attention, tokens}`; controlOff null when layer 1 has no other head
 */
export function compositionExperiment(lm, phrase) {
  return runSteps(experiment(lm, phrase));
}

/**
 * compositionExperiment over a model whose `run` returns a promise (a RemoteModel of the engine
 * worker, or that surface on the main thread).
 * @param {object} lm
 * @param {string} phrase
 * @returns {Promise<ReturnType<typeof compositionExperiment>>}
 */
export function compositionExperimentAsync(lm, phrase) {
  return awaitSteps(experiment(lm, phrase));
}

/** The experiment as steps: each `yield` hands out a run of the model and takes back its result. */
function* experiment(lm, phrase) {
  const p = Array.from(phrase ?? '').slice(0, Math.floor((lm.config.context - 1) / 2)).join('');
  const n = Array.from(p).length;
  if (n < 5) return null;
  const text = `${p} ${p}`;
  const heads = compositionHeads(lm);
  return {
    phrase: p, heads,
    whole: yield* arm(lm, text, n, heads.readers, []),
    writersOff: yield* arm(lm, text, n, heads.readers, heads.writers),
    controlOff: heads.control.length ? yield* arm(lm, text, n, heads.readers, heads.control) : null,
  };
}

/** The predictions the reader chooses from, and which one the measurement supports. */
export const PREDICTIONS = Object.freeze([
  ['same', 'Nothing much: the induction heads find the earlier copy on their own'],
  ['collapse', 'Their attention on the earlier copy collapses, and the second copy gets expensive'],
  ['stronger', 'They attend even more sharply, with less competition'],
]);

/**
 * Which prediction the measurement supports: "collapse" when switching the writers off at least
 * halves the readers' induction score and raises the second copy's bits per character, "stronger"
 * when the score rises, else "same".
 * @param {{whole: {induction: number|null, bits: number}, writersOff: {induction: number|null, bits: number}}} m
 * @returns {'collapse'|'stronger'|'same'|null} null when the text gives no induction score
 */
export function supportedPrediction(m) {
  const a = m.whole.induction, b = m.writersOff.induction;
  if (a === null || b === null) return null;
  if (b <= a / 2 && m.writersOff.bits > m.whole.bits) return 'collapse';
  return b > a ? 'stronger' : 'same';
}

// Pure helpers of the trained-model elements (no DOM, no Lit; tested in Node by
// tests/trained-logic.test.mjs): how a token or character is shown, what one input position is,
// the text typed into an element as a model's input, the score names of the head types, `ablate`
// lists, number formatting, a model's mean loss on held-out texts, a URL's file name.
import { MHAError } from '../../src/index.js';

/** A character as the heatmaps and lists show it: space and newline made visible. */
export const showChar = (ch) => (ch === ' ' ? '␣' : ch === '\n' ? '↵' : ch);

/**
 * A token as the heatmaps and lists show it: a character (showChar) or a byte-pair piece, its
 * spaces, newlines and tabs made visible (" cat" → "␣cat"); an empty piece as "∅".
 * @param {string} t
 */
export const showToken = (t) => (t === '' ? '∅' : String(t).replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥'));

/**
 * What one position of a model's input is: 'character' for this project's character models,
 * 'token' for byte-pair ones (llama2.c, Hugging Face folders) and folders without a tokenizer.
 * @param {{tokenizer?: string}} config a CharModel's config
 * @returns {'character'|'token'}
 */
export const unitOf = (config) => (!config?.tokenizer || config.tokenizer === 'characters' ? 'character' : 'token');

/**
 * The input of CharModel.run for a text typed into an element, cut to the model's context: a
 * character model's text (its first `context` characters); a byte-pair model's token ids (the text
 * encoded, the first `context` kept); for a model without a tokenizer (config.tokenizer 'none', a
 * Hugging Face folder with no tokenizer files), the text read as token ids separated by spaces or
 * commas ("464 3797 3332").
 * @param {object} lm a CharModel
 * @param {string} text
 * @param {number} [most] keep at most this many positions (default: the model's context)
 * @returns {string|Int32Array}
 * @throws {MHAError} INVALID_ARGUMENT (argument 'text') when a model without a tokenizer gets
 *   something other than token ids of its vocabulary
 */
export function modelInput(lm, text, most = lm.config.context) {
  const c = lm.config;
  const s = String(text ?? '');
  if (c.tokenizer === 'none') {
    const parts = s.trim() ? s.trim().split(/[\s,]+/) : [];
    const bad = parts.find((p) => !/^\d+$/.test(p) || Number(p) >= c.vocabSize);
    if (bad !== undefined) {
      throw new MHAError('INVALID_ARGUMENT', `text: this model has no tokenizer, so the text must be token ids 0–${c.vocabSize - 1} ` +
        `separated by spaces ("1 5 2"); got ${JSON.stringify(bad)} in ${JSON.stringify(s.slice(0, 60))}`, { argument: 'text' });
    }
    return Int32Array.from(parts.slice(0, most), Number);
  }
  if (unitOf(c) === 'character') return Array.from(s).slice(0, most).join('');
  return lm.encode(s).slice(0, most);
}

/** Score key of the type a head was labelled with (entropy for broad and mixed heads). */
export const SCORE_OF = Object.freeze({
  'previous-token': 'previous', 'two-back': 'twoBack', 'current-token': 'current', 'first-token': 'first', induction: 'induction',
});

/** What each score measures, for captions and explanations. */
export const SCORE_MEANS = Object.freeze({
  previous: 'on the character just before the query',
  twoBack: 'on the character two before the query',
  current: 'on the query character itself',
  first: 'on the first character of the text',
  induction: 'on the character after an earlier copy of the span just read',
  entropy: 'spread out (normalised entropy)',
});

const headViews = new WeakMap();   // tensor → its heads' views, so that a view is the same object on every render

/**
 * Head j of a per-layer attention tensor [h, T, K] as a `{data, shape: [T, K]}` view (no copy); the
 * same object for the same tensor and head, so that a heatmap given it again does not redraw.
 */
export function headView(t, j) {
  let views = headViews.get(t);
  if (!views) headViews.set(t, (views = []));
  if (!views[j]) {
    const [, T, K] = t.shape;
    views[j] = { data: t.data.subarray(j * T * K, (j + 1) * T * K), shape: [T, K] };
  }
  return views[j];
}

/**
 * Parses an `ablate` attribute: space- or comma-separated `layer:head` pairs, 1-based as the page
 * shows them ("2:1 2:3" = layer 2's heads 1 and 3), into the 0-based `[layer, head]` pairs of
 * CharModel.run. Entries that are not of that form are ignored.
 * @param {string|null} s
 * @returns {Array<[number, number]>}
 */
export function parseAblate(s) {
  const out = [];
  for (const part of String(s ?? '').split(/[\s,]+/)) {
    const m = /^(\d+):(\d+)$/.exec(part);
    if (m && Number(m[1]) >= 1 && Number(m[2]) >= 1) out.push([Number(m[1]) - 1, Number(m[2]) - 1]);
  }
  return out;
}

/** The inverse of parseAblate. */
export function formatAblate(pairs) {
  return pairs.map(([l, j]) => `${l + 1}:${j + 1}`).join(' ');
}

/** Fixed decimals. */
export const f2 = (v) => (v === null || v === undefined ? '—' : v.toFixed(2));
export const f3 = (v) => (v === null || v === undefined ? '—' : v.toFixed(3));

/** The mean of a non-empty array of numbers (seed means of the twins' losses). */
export const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
/** The largest minus the smallest of a non-empty array (how far two seeds of one model differ). */
export const range = (a) => Math.max(...a) - Math.min(...a);

/**
 * Mean loss of a model over texts, in bits per character, each text scored as CharModel.run
 * scores it (weighted by its T − 1 predictions).
 * @param {{run(text: string): {loss: number|null}}} lm
 * @param {string[]} texts
 * @returns {number}
 */
export function heldoutLoss(lm, texts) {
  let sum = 0;
  let n = 0;
  for (const t of texts) {
    const k = Array.from(t).length - 1;
    if (k < 1) continue;
    sum += lm.run(t).loss * k;
    n += k;
  }
  return sum / n;
}

/**
 * heldoutLoss over a model whose `run` returns a promise (a RemoteModel of the engine worker, or
 * that surface on the main thread): the texts run one after another, only their losses cross.
 * @param {{run(text: string, opts?: object): Promise<{loss: number|null}>}} lm
 * @param {string[]} texts
 * @returns {Promise<number>} bits per character
 */
export async function heldoutLossAsync(lm, texts) {
  let sum = 0;
  let n = 0;
  for (const t of texts) {
    const k = Array.from(t).length - 1;
    if (k < 1) continue;
    sum += (await lm.run(t, { logProbs: false, layers: [] })).loss * k;
    n += k;
  }
  return sum / n;
}

/** The file name at the end of a URL or path ("…/models/charlm-h4-s0.safetensors" → "charlm-h4-s0.safetensors"). */
export const baseName = (s) => {
  let path = String(s).split(/[?#]/)[0];
  // a model folder ("…/gpt2/") by its own name, with the slash
  if (path.endsWith('/') && path.length > 1) return `${baseName(path.slice(0, -1))}/`;
  try { return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)); } catch { return path.slice(path.lastIndexOf('/') + 1); }
};


/**
 * A download's progress in words, both numbers in the unit of the larger (decimal kB, MB or GB, one
 * decimal): "12.3 of 250.0 MB (4 %)"; without a known total, "12.3 MB". The percent is rounded down,
 * so that 100 % means every byte has arrived.
 * @param {number} loaded bytes arrived
 * @param {number|null} total bytes expected (null or undefined: unknown)
 * @returns {{text: string, percent: number|null}}
 */
export function progressText(loaded, total) {
  const known = Number.isFinite(total) && total > 0;
  const top = known ? Math.max(total, loaded) : loaded;
  const [unit, div] = top >= 1e9 ? ['GB', 1e9] : top >= 1e6 ? ['MB', 1e6] : ['kB', 1e3];
  const v = (b) => (b / div).toFixed(1);
  if (!known) return { text: `${v(loaded)} ${unit}`, percent: null };
  const percent = Math.floor((100 * Math.min(loaded, total)) / total);
  return { text: `${v(loaded)} of ${v(total)} ${unit} (${percent} %)`, percent };
}

/**
 * The sentence of `<mha-induction>` on the two copies of a phrase: each copy's bits per unit at two
 * decimals, and how many times less surprise the second copy costs, computed from those two printed
 * numbers (so that a reader who divides them gets the ratio shown). A second copy that rounds to
 * 0.00 gets no ratio.
 * @param {number} first bits per unit on copy 1
 * @param {number} second bits per unit on copy 2
 * @param {string} unit 'character' or 'token'
 * @returns {string}
 */
export function copiesSentence(first, second, unit) {
  const a = f2(first), b = f2(second);
  const head = `First copy: ${a} bits per ${unit}. Second copy: ${b} bits per ${unit}`;
  if (!(second < first)) return `${head} — no easier the second time for this phrase.`;
  if (Number(b) <= 0) return `${head} — under 0.005 bits per ${unit} the second time: almost nothing is left to guess.`;
  const r = Number(a) / Number(b);
  return `${head} — ${a} / ${b} = ${r >= 100 ? Math.round(r).toLocaleString('en-US') : r.toFixed(1)} times less surprise the second time.`;
}

/**
 * Runs a measurement written as steps (a generator that yields each call of the model, `run` or
 * `encode`, and takes back its answer) over a model whose calls answer at once (a LanguageModel).
 * @param {Generator} steps
 * @returns {any} the measurement
 */
export function runSteps(steps) {
  for (let s = steps.next(); ; s = steps.next(s.value)) if (s.done) return s.value;
}

/**
 * The same over a model whose calls return promises (a RemoteModel of the engine worker, or that
 * surface on the main thread): each answer is awaited before the next step.
 * @param {Generator} steps
 * @returns {Promise<any>} the measurement
 */
export async function awaitSteps(steps) {
  for (let s = steps.next(); ; s = steps.next(await s.value)) if (s.done) return s.value;
}

/**
 * The line that describes a loaded model above its heads: its shape (layers, h, d_k, grouped-query
 * K/V heads, d_model, rotary positions, the vocabulary of a byte-pair model, the context) and, where
 * the file records its training, the steps, time, corpus and curriculum and the held-out loss.
 * @param {object} c the model's config (`lm.config`)
 * @param {object|null} [training] the file's training record (`lm.training`), if any
 * @returns {string}
 */
export function aboutModel(c, training) {
  const tr = training ?? {};
  // grouped-query K/V heads and rotary positions, where a file has them (the twins, stories260K)
  const kv = c.kvHeads && c.kvHeads < c.numHeads ? ` sharing ${c.kvHeads} K/V head${c.kvHeads > 1 ? 's' : ''} (grouped-query attention)` : '';
  const rope = c.positions === 'rope' ? ', rotary positions (RoPE)' : '';
  const family = c.family === 'gpt2' ? 'GPT-2 (Hugging Face folder)' : c.family === 'llama' ? 'Llama (Hugging Face folder)' : '';
  const vocab = unitOf(c) === 'token' ? `, a byte-pair vocabulary of ${c.vocabSize.toLocaleString('en-US')} tokens` : '';
  const parts = [`This model${family ? `, ${family}` : ''}: ${c.numLayers} layers, h = ${c.numHeads} heads of d_k = ${c.dK}${kv}, d_model = ${c.dModel}${rope}${vocab}, ` +
    `a context of ${c.context} ${unitOf(c)}s.`];
  if (tr.steps) {
    // the file records the threads it trained on (1 or 2); older files do not: then no count
    const on = tr.threads ? ` on ${tr.threads} CPU thread${tr.threads > 1 ? 's' : ''}` : ' on a CPU';
    parts.push(`Trained for ${tr.steps.toLocaleString('en-US')} steps${tr.seconds ? ` (${Math.round(tr.seconds / 60)} minutes${on})` : ''}` +
      `${tr.corpus ? ` on ${String(tr.corpus).split(' (')[0]} text` : ''}${tr.curriculum ? `; ${tr.curriculum}` : ''}.`);
  }
  if (typeof tr.heldout_bpc === 'number') parts.push(`Held-out loss: ${f2(tr.heldout_bpc)} bits per character.`);
  return parts.join(' ');
}

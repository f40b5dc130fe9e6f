// Views from HTML alone: the data of <mha-heatmap> and <mha-heads> from attributes, so that a page
// with no script of its own (a strict Content-Security-Policy with no inline script) can show one.
// Two sources:
//   src="weights.json"                      a JSON file: {weights, tokens?, keyTokens?, headNames?, dK?}
//   model="charlm-h4-s0" text="…" layer="2" [head="1"]
//                                           a shipped model (or a .safetensors URL) run on the text
//                                           through the shared engine and model cache (models.js)
// The host's `weights`, `tokens` (and `keyTokens`, `dK`, `headNames`) properties are set when the
// data arrives, as a script would set them. A bad attribute or a source that cannot be read shows
// one message in place and fires `mha-error` with `detail: {error}` (an MHAError INVALID_ARGUMENT
// whose `argument` is the attribute at fault); the last good data stays.
import { html, nothing } from 'lit';
import { MHAError } from '../../src/index.js';
import { getEngine, errorText } from './shared.js';
// The model cache (models.js, with the shipped manifest) loads only when a `model` attribute is used:
// a heatmap filled from `weights` or `src` does not download it.
const modelCache = () => import('../models.js');
import { AttrGuard, intAttr, attrError } from './attr-check.js';

/** The attributes that fill a view. */
export const SOURCE_ATTRIBUTES = Object.freeze(['src', 'model', 'text', 'layer', 'head']);

/** Longest text a `text` attribute may give (a model's own context also bounds it). */
const MAX_TEXT = 4096;

/** A character as the heatmaps label it: space and newline made visible. */
const showChar = (ch) => (ch === ' ' ? '␣' : ch === '\n' ? '↵' : ch);

const srcError = (href, what) => new MHAError('INVALID_ARGUMENT', `src: ${href} ${what}`, { argument: 'src' });

/** A `[Tq, Tk]` matrix of finite numbers, or a message saying what is wrong. */
function matrixProblem(m, where) {
  if (!Array.isArray(m) || !m.length) return `${where} is not a non-empty array of rows`;
  const tk = Array.isArray(m[0]) ? m[0].length : 0;
  if (!tk) return `${where}[0] is not a non-empty array of numbers`;
  for (let r = 0; r < m.length; r++) {
    if (!Array.isArray(m[r]) || m[r].length !== tk) return `${where}[${r}] has ${Array.isArray(m[r]) ? m[r].length : 'no'} values, not ${tk} like row 0`;
    const c = m[r].findIndex((v) => typeof v !== 'number' || !Number.isFinite(v));
    if (c >= 0) return `${where}[${r}][${c}] is ${JSON.stringify(m[r][c])}, not a finite number`;
  }
  return null;
}

function labelsProblem(a, n, key) {
  if (a === undefined || a === null) return null;
  if (!Array.isArray(a) || a.some((t) => typeof t !== 'string')) return `"${key}" is not an array of strings`;
  if (a.length !== n) return `"${key}" has ${a.length} labels for ${n} ${key === 'keyTokens' ? 'keys' : key === 'headNames' ? 'heads' : 'queries'}`;
  return null;
}

/**
 * Checks the JSON of a `src` file.
 * @param {unknown} j the parsed JSON
 * @param {2|3} rank 2: one head `[Tq][Tk]` (`<mha-heatmap>`); 3: heads `[h][Tq][Tk]` (`<mha-heads>`)
 * @param {string} href for the message
 * @returns {{weights: number[][]|number[][][], tokens?: string[], keyTokens?: string[], headNames?: string[], dK?: number|number[]}}
 * @throws {MHAError} INVALID_ARGUMENT, `argument` "src", naming the field and what is wrong
 */
export function checkWeightsJSON(j, rank, href) {
  const shape = rank === 2 ? '{"weights": [[…], …] (Tq rows of Tk numbers), "tokens"?: […], "keyTokens"?: […]}'
    : '{"weights": [[[…], …], …] (h maps of Tq rows of Tk numbers), "tokens"?: […], "keyTokens"?: […], "headNames"?: […], "dK"?: n}';
  if (!j || typeof j !== 'object' || Array.isArray(j) || !('weights' in j)) throw srcError(href, `is not ${shape}`);
  const maps = rank === 2 ? [j.weights] : j.weights;
  if (rank === 3 && (!Array.isArray(maps) || !maps.length)) throw srcError(href, `: "weights" is not a non-empty array of maps; expected ${shape}`);
  for (let i = 0; i < maps.length; i++) {
    const p = matrixProblem(maps[i], rank === 2 ? 'weights' : `weights[${i}]`);
    if (p) throw srcError(href, `: ${p}; expected ${shape}`);
    if (i && (maps[i].length !== maps[0].length || maps[i][0].length !== maps[0][0].length)) {
      throw srcError(href, `: weights[${i}] is ${maps[i].length} × ${maps[i][0].length}, not ${maps[0].length} × ${maps[0][0].length} like weights[0]`);
    }
  }
  const tq = maps[0].length, tk = maps[0][0].length;
  const p = labelsProblem(j.tokens, tq, 'tokens') ?? labelsProblem(j.keyTokens, tk, 'keyTokens')
    ?? (rank === 3 ? labelsProblem(j.headNames, maps.length, 'headNames') : null);
  if (p) throw srcError(href, `: ${p}`);
  const out = { weights: j.weights };
  for (const k of ['tokens', 'keyTokens', ...(rank === 3 ? ['headNames', 'dK'] : [])]) if (j[k] !== undefined) out[k] = j[k];
  return out;
}

/**
 * Fetches and checks a `src` JSON file.
 * @param {string} src the attribute (a URL relative to the page)
 * @param {2|3} rank see checkWeightsJSON
 * @throws {MHAError} INVALID_ARGUMENT, `argument` "src": the URL, and the HTTP status, the JSON error
 *   or what is wrong with the data
 */
export async function fetchWeightsJSON(src, rank) {
  let href;
  try { href = new URL(src, document.baseURI).href; } catch { throw srcError(JSON.stringify(src), 'is not a URL'); }
  let res;
  try { res = await fetch(href); } catch (e) { throw srcError(href, `cannot be fetched (${e.message})`); }
  if (!res.ok) throw srcError(href, `gave HTTP ${res.status}`);
  const body = await res.text();
  let j;
  try { j = JSON.parse(body); } catch (e) { throw srcError(href, `is not JSON (${e.message}; it starts with ${JSON.stringify(body.slice(0, 20))})`); }
  return checkWeightsJSON(j, rank, href);
}

/**
 * The URL of a `model` attribute: a shipped model's name ("charlm-h4-s0", a file of the models'
 * manifest without its extension) or the URL of a .safetensors file (relative to the page).
 * @param {string} model
 * @returns {Promise<string>} absolute URL
 * @throws {MHAError} INVALID_ARGUMENT, `argument` "model", listing the shipped names
 */
export async function modelAttrURL(model) {
  const name = String(model).trim();
  if (/[/.:]/.test(name)) return new URL(name, document.baseURI).href;
  const { modelIndex, modelFileURL, MODEL_INDEX_URL } = await modelCache();
  let files = [];
  try {
    const m = await modelIndex(MODEL_INDEX_URL);
    files = Object.values(m).filter(Array.isArray).flat().map((e) => e?.file).filter((f) => typeof f === 'string');
  } catch { /* no manifest: no shipped names */ }
  const file = files.find((f) => f === `${name}.safetensors`);
  if (!file) {
    const names = files.map((f) => f.replace(/\.safetensors$/, ''));
    throw attrError('model', names.length ? `a shipped model (${names.join(', ')}) or the URL of a .safetensors file` : 'the URL of a .safetensors file', model);
  }
  return modelFileURL(file, MODEL_INDEX_URL);   // the shipped file's own URL (kept by bundlers)
}

/**
 * Runs a model on a text and returns one layer's attention (copied out of the model's result).
 * @param {{model: string, text: string, layer: string|number|null, head?: string|number|null, rank: 2|3}} o
 *   layer and head 1-based, as pages show them; head only for rank 2
 * @returns {Promise<{weights: {data: Float32Array, shape: number[]}, tokens: string[], dK: number}>}
 *   rank 2: `[T, T]` of that head; rank 3: `[h, T, T]`
 * @throws {MHAError} INVALID_ARGUMENT naming `model`, `text`, `layer` or `head`; the model cache's errors
 */
export async function modelAttention({ model, text, layer, head, rank }) {
  const href = await modelAttrURL(model);
  const { acquireModel, releaseModel } = await modelCache();
  const mha = await getEngine();
  const lm = await acquireModel(mha, href);
  try {
    const c = lm.config;
    const L = intAttr('layer', layer, { dflt: 1, min: 1, max: c.numLayers });
    if (L.error) throw L.error;
    const H = rank === 2 ? intAttr('head', head, { dflt: 1, min: 1, max: c.numHeads }) : { value: 1 };
    if (H.error) throw H.error;
    const chars = Array.from(text ?? '');
    const most = Math.min(c.context ?? MAX_TEXT, MAX_TEXT);
    if (chars.length < 1 || chars.length > most) throw attrError('text', `1 to ${most} characters (the model's context)`, text ?? '');
    const r = lm.run(chars.join(''));
    const att = r.attention[L.value - 1];
    const [h, T, K] = att.shape;
    const weights = rank === 2
      ? { data: att.data.slice((H.value - 1) * T * K, H.value * T * K), shape: [T, K] }
      : { data: att.data.slice(), shape: [h, T, K] };
    return { weights, tokens: r.tokens.map(showChar), dK: c.dK ?? c.dModel / c.numHeads };
  } finally {
    releaseModel(mha, href);
  }
}

/**
 * The attribute source of one `<mha-heatmap>` or `<mha-heads>`: call `update(changed)` from the
 * host's `willUpdate`, and render `view()` (a status line while loading, one message per error).
 * The host declares the SOURCE_ATTRIBUTES as String properties.
 */
export class AttrSource {
  /**
   * @param {HTMLElement & {src?: string, model?: string, text?: string, layer?: string, head?: string}} host
   * @param {2|3} rank 2 for `<mha-heatmap>`, 3 for `<mha-heads>`
   */
  constructor(host, rank) {
    this.host = host;
    this.rank = rank;
    this.guard = new AttrGuard(host);
    this.loading = null;   // what is being read, for the status line
    this._gen = 0;
  }

  /** Starts reading the source when one of its attributes changed. */
  update(changed) {
    if (!SOURCE_ATTRIBUTES.some((a) => changed.has(a))) return;
    const h = this.host;
    const gen = ++this._gen;
    const g = this.guard;
    g.begin();
    // the numbers that can be checked before the model is known
    if (!h.src && h.model) {
      g.take('layer', intAttr('layer', h.layer, { dflt: 1, min: 1, max: 1e6 }));
      if (this.rank === 2) g.take('head', intAttr('head', h.head, { dflt: 1, min: 1, max: 1e6 }));
      if (h.text === null || h.text === undefined) g.add(attrError('text', 'the text the model reads (with model)', ''));
    }
    g.end();
    if (g.errors.length || (!h.src && !h.model)) { this.loading = null; return; }
    this.loading = h.src ? `Loading ${h.src}…` : `Running ${h.model} on the text…`;
    const job = h.src ? fetchWeightsJSON(h.src, this.rank)
      : modelAttention({ model: h.model, text: h.text, layer: h.layer, head: h.head, rank: this.rank });
    job.then((d) => {
      if (gen !== this._gen) return;
      this.loading = null;
      h.weights = d.weights;
      h.tokens = d.tokens ?? null;
      if ('keyTokens' in h) h.keyTokens = d.keyTokens ?? null;
      if (this.rank === 3) {
        h.dK = d.dK ?? null;
        h.headNames = d.headNames ?? null;
      }
      h.requestUpdate();
      h.dispatchEvent(new CustomEvent('mha-data', { detail: { source: h.src ? 'src' : 'model' }, bubbles: true, composed: true }));
    }, (e) => {
      if (gen !== this._gen) return;
      this.loading = null;
      // every error names the attribute at fault (a model file's errors come from the model cache)
      const arg = h.src ? 'src' : 'model';
      // the message once, led by the attribute (the code stays the error's `code`)
      const msg = e?.message ?? errorText(e);
      const error = e instanceof MHAError && e.argument !== undefined ? e
        : new MHAError(e?.code ?? 'INVALID_ARGUMENT', msg.startsWith(`${arg}:`) ? msg : `${arg}: ${msg}`, { argument: arg });
      g.begin();
      g.add(error);
      g.end();
      h.requestUpdate();
    });
  }

  /** The status line while loading and one message per bad attribute or unreadable source. */
  view() {
    return html`${this.loading ? html`<p class="loading" part="loading" role="status">${this.loading}</p>` : nothing}${this.guard.view()}`;
  }
}


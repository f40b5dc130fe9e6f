// What the trained-model elements (<mha-trained-heads>, <mha-induction>, <mha-generate>,
// <mha-twins>, <mha-gqa-story>, <mha-gqa-twins>) share: loading one model through the page's shared
// cache (models.js), releasing it when the element leaves the page, the inline error of a bad model,
// small formatting helpers, a model's mean loss on held-out texts, and the pieces of the
// grouped-query views: the KV cache's bytes of a model, its formula, query heads framed by the K/V
// head they share.
import { LitElement, html, mathml, css, nothing } from 'lit';
import { baseStyles, getEngine, errorText, int } from '../base/shared.js';
import { acquireModel, releaseModel, modelURL, modelIndex, DEFAULT_MODEL_URL, MODEL_INDEX_URL } from '../models.js';
import { bytesText } from '../logic/cost-ledger.js';
import { enumAttr, AttrGuard } from '../base/attr-check.js';
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

/** Head j of a per-layer attention tensor [h, T, K] as a `{data, shape: [T, K]}` view (no copy). */
export function headView(t, j) {
  const [, T, K] = t.shape;
  return { data: t.data.subarray(j * T * K, (j + 1) * T * K), shape: [T, K] };
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

/** Bytes of one cached value: the engine's KV cache stores float32. */
export const KV_BYTES_PER_VALUE = 4;

/**
 * The KV cache's bytes for a model's config: per token, 2 (K and V) · layers · K/V heads · d_k ·
 * 4 bytes (float32); the same with one K/V head per query head (full multi-head attention); for
 * `tokens` cached tokens; and for the model's whole context.
 * @param {{numLayers: number, numHeads: number, kvHeads?: number, dK: number, context: number}} c
 * @param {number} [tokens] tokens in the cache
 * @returns {{layers: number, kvHeads: number, heads: number, dK: number, bytesPerValue: number, perToken: number,
 *   fullPerToken: number, tokens: number, total: number, fullTotal: number, reserved: number}}
 */
export function kvCacheBytes(c, tokens = 0) {
  const g = c.kvHeads ?? c.numHeads;
  const perToken = 2 * c.numLayers * g * c.dK * KV_BYTES_PER_VALUE;
  const fullPerToken = 2 * c.numLayers * c.numHeads * c.dK * KV_BYTES_PER_VALUE;
  return {
    layers: c.numLayers, kvHeads: g, heads: c.numHeads, dK: c.dK, bytesPerValue: KV_BYTES_PER_VALUE,
    perToken, fullPerToken, tokens, total: tokens * perToken, fullTotal: tokens * fullPerToken, reserved: c.context * perToken,
  };
}

/** A product of integers and its result in bytes, as MathML ("2 × 2 × 8 × 12 × 4 = 1,536 bytes"). */
export function bytesFormula(factors, result) {
  return html`<math><mrow>${factors.map((f, i) => mathml`${i ? mathml`<mo>×</mo>` : nothing}<mn>${int(f)}</mn>`)}<mo>=</mo><mn>${int(result)}</mn><mtext>\u00a0bytes</mtext></mrow></math>`;
}

/** The 1-based query heads of K/V head k as a legend names them: "3 & 4", or "1–4" for longer groups. */
export function groupHeads(k, per) {
  return per <= 2 ? Array.from({ length: per }, (_, i) => k * per + i + 1).join(' & ') : `${k * per + 1}–${k * per + per}`;
}

/**
 * Query heads framed by the K/V head they share (query head j reads K/V head ⌊j / (h/g)⌋): one
 * `<fieldset class="group" part="group">` per K/V head, its legend naming the query heads, and inside
 * a `.pair` of what `head(j, k)` renders for each of its query heads. Style with `kvGroupStyles`.
 * @param {number} h query heads
 * @param {number} g K/V heads
 * @param {(j: number, k: number) => unknown} head renders query head j (0-based) of K/V head k
 */
export function kvGroups(h, g, head) {
  const per = h / g;
  return Array.from({ length: g }, (_, k) => html`
    <fieldset class="group" part="group" data-kv-head=${k}>
      <legend>K/V head ${k + 1} <span class="kv">· query heads ${groupHeads(k, per)}</span></legend>
      <div class="pair">${Array.from({ length: per }, (_, i) => head(k * per + i, k))}</div>
    </fieldset>`);
}

/** Styles of kvGroups' frames inside a `.groups` box (cell size from --_wide). */
export const kvGroupStyles = css`
  .groups { display: flex; flex-wrap: wrap; gap: 0.7rem; align-items: flex-start; --mha-cell-size: var(--_wide); }
  .groups:not(.labels) mha-heatmap::part(label) { display: none; }
  .group { border: 2px solid var(--_accent); border-radius: 10px; padding: 0.3rem 0.5rem 0.5rem; margin: 0; min-width: 0;
    max-width: 100%; box-sizing: border-box; }
  .group legend { font-size: 0.85rem; font-weight: 700; padding: 0 0.3em; }
  .group .kv { color: var(--_muted); font-weight: 400; }
  .pair { display: flex; flex-wrap: wrap; gap: 0.5rem; }
  .head { border: 1px solid var(--_border); border-radius: 8px; padding: 0.3rem; overflow-x: auto; max-width: 100%; box-sizing: border-box; }
  .head.off { opacity: 0.5; border-style: dashed; }
`;

/**
 * How far outside the visible part of the page a lazy element starts fetching: one viewport above
 * and below (an IntersectionObserver `rootMargin`), so that a reader scrolling at reading speed finds
 * it computed.
 */
export const NEAR_VIEWPORT = '100% 0px';

/**
 * Calls `onNear` once, when `el` comes within one viewport of the visible part of the page
 * (IntersectionObserver with NEAR_VIEWPORT); at once where there is no IntersectionObserver.
 * An element that is never rendered (display: none) never comes near.
 * @param {Element} el
 * @param {() => void} onNear
 * @returns {() => void} stops watching (onNear is then not called)
 */
export function whenNear(el, onNear) {
  if (typeof IntersectionObserver === 'undefined') {
    onNear();
    return () => {};
  }
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) {
      io.disconnect();
      onNear();
    }
  }, { rootMargin: NEAR_VIEWPORT });
  io.observe(el);
  return () => io.disconnect();
}

/** The values of a trained-model element's `loading` attribute, as `<img loading>`'s. */
export const LOADING_VALUES = Object.freeze(['lazy', 'eager']);

/** The file name at the end of a URL or path ("…/models/charlm-h4-s0.safetensors" → "charlm-h4-s0.safetensors"). */
const baseName = (s) => {
  let path = String(s).split(/[?#]/)[0];
  // a model folder ("…/gpt2/") by its own name, with the slash
  if (path.endsWith('/') && path.length > 1) return `${baseName(path.slice(0, -1))}/`;
  try { return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)); } catch { return path.slice(path.lastIndexOf('/') + 1); }
};

/**
 * The download size of files as a models manifest (`index.json`) records them: the `bytes` of the
 * entry of its lists (`models`, `gqa`, `other`) with the same file name. Matched by name, so that
 * a manifest a bundler has inlined or renamed still gives the sizes. A file the manifest does not
 * list (a model of the page's own) has `bytes: null`.
 * @param {Array<string|null>} files URLs or file names of what an element will fetch (duplicate
 *   names and nulls dropped)
 * @param {string|null} [indexHref] the manifest's URL (MODEL_INDEX_URL unless given)
 * @returns {Promise<Array<{file: string, bytes: number|null}>>} never rejects (a manifest that
 *   cannot be read gives null sizes)
 */
export async function downloadSizes(files, indexHref = MODEL_INDEX_URL) {
  const names = [...new Set(files.filter(Boolean).map(baseName))];
  const sizes = new Map();
  if (indexHref) {
    try {
      const manifest = await modelIndex(indexHref);
      for (const entries of Object.values(manifest ?? {})) {
        if (!Array.isArray(entries)) continue;
        for (const m of entries) if (m && typeof m.file === 'string' && Number.isFinite(m.bytes)) sizes.set(m.file, m.bytes);
      }
    } catch { /* no manifest: sizes unknown */ }
  }
  return names.map((file) => ({ file, bytes: sizes.get(file) ?? null }));
}

/**
 * The placeholder of a trained-model element that has not fetched its models yet: what it will
 * fetch and how much (decimal units), and a button that fetches now.
 * @param {Array<{file: string, bytes: number|null}>|null} files from downloadSizes (null: not known yet)
 * @param {() => void} onLoad what the button does
 */
export function lazyPlaceholder(files, onLoad) {
  const known = files?.length && files.every((f) => f.bytes !== null);
  const total = known ? files.reduce((a, f) => a + f.bytes, 0) : null;
  const names = files?.length ? files.map((f) => f.file).join(', ') : '';
  const what = !files?.length ? 'The trained model is'
    : files.length === 1 ? html`The trained model <code>${names}</code>${known ? html` (<span class="size" part="size" data-bytes=${String(total)}>${bytesText(total)}</span>)` : nothing} is`
      : html`${files.length} trained models${known ? html` (<span class="size" part="size" data-bytes=${String(total)}>${bytesText(total)}</span> in all: <code>${names}</code>)` : html` (<code>${names}</code>)`} are`;
  return html`<div class="lazy" part="placeholder">
    <p>${what} fetched when this part of the page comes into view.</p>
    <button type="button" part="load" class="load" @click=${onLoad}>Fetch now${known ? ` (${bytesText(total)})` : ''}</button>
  </div>`;
}

/** Styles of the trained-model elements, on top of baseStyles. */
export const trainedStyles = [baseStyles, css`
  :host { display: block; --_mono: var(--mha-mono, ui-monospace, 'SFMono-Regular', Menlo, monospace); }
  textarea, input[type='text'], select {
    font: 1rem var(--_mono); color: var(--_fg); background: var(--_bg); border: 1px solid var(--_border);
    border-radius: var(--_radius); padding: 0.35em 0.5em; box-sizing: border-box; max-width: 100%;
  }
  textarea, input[type='text'] { width: 100%; }
  label { font-weight: 600; }
  .hint { color: var(--_muted); font-size: 0.9em; }
  .loading { color: var(--_muted); }
  .scroll { overflow-x: auto; max-width: 100%; }
  mha-heatmap::part(label) { font-size: 8px; line-height: 1; }
  .lazy { border: 1px dashed var(--_border); border-radius: var(--_radius); padding: 0.6em 0.8em; color: var(--_muted); }
  .lazy p { margin: 0 0 0.5em; }
  .lazy code { font-family: var(--_mono); overflow-wrap: anywhere; }
  .lazy .size { color: var(--_fg); font-weight: 600; }
`];

/**
 * Base class of the elements that run a trained model: loads `model` (a URL; by default the class's
 * `_defaultModel`, the shipped h = 4 model unless a subclass names another) into the page's shared engine through the shared model cache, holds it
 * while connected, and gives it back when the element leaves the page. Subclasses render from
 * `this.lm` (null while loading) and `this.error`, and override `modelChanged(lm)`.
 *
 * Fetched when seen: with `loading="lazy"` (the default, as `<img loading>`) nothing is fetched
 * until the element comes within one viewport of the visible part of the page (NEAR_VIEWPORT);
 * until then the element shows, instead of its view, a placeholder naming the files it will fetch
 * and their size (`downloads()`, from the manifest's `bytes`) with a button that fetches at once.
 * `loading="eager"` fetches at once; `load()` does so from script. Once it has come near, an element
 * stays loaded-when-connected (moving it in the page re-acquires its model at once, from the bytes
 * kept by models.js). A `loading` value other than "lazy" or "eager" is taken as "lazy", shows one
 * message and fires `mha-error` (`detail: {error}`).
 *
 * @attr {string} loading - "lazy" (default): fetch the model when the element comes near the viewport; "eager": at once.
 * @csspart placeholder - The box shown before the model is fetched.
 * @csspart size - Its download size.
 * @csspart load - Its button that fetches now.
 */
export class TrainedModelElement extends LitElement {
  /** The model loaded without a `model` attribute (a subclass may name another). */
  static _defaultModel = DEFAULT_MODEL_URL;

  static properties = {
    model: { type: String },
    loading: { type: String },
    engine: { attribute: false },
    lm: { state: true },
    error: { state: true },
    _near: { state: true },
    _downloads: { state: true },
  };

  constructor() {
    super();
    this.model = null;
    this.loading = null;
    this.engine = undefined;
    this.lm = null;
    this.error = null;
    this._near = false;        // false until the element has come near the viewport (or loading="eager", or load())
    this._downloads = null;    // the placeholder's files and sizes (downloadSizes), once known
    this._sizesFor = null;
    this._unwatch = null;
    this._lazyGuard = new AttrGuard(this);
    this._attrs = new AttrGuard(this);  // the subclass's attributes (attr-check.js): their messages lead its view
    this._held = null;
    this._want = null;
    this._loadGen = 0;
    // Before the element has come near, the placeholder stands in for the subclass's view; the
    // messages of bad attributes come first, that of a bad `loading` value last.
    const view = this.render;
    this.render = () => html`${this._attrs.view()}${this._near ? view.call(this) : lazyPlaceholder(this._downloads, () => this.load())}${this._lazyGuard.view()}`;
  }

  /** Whether `loading` asks to fetch at once (a bad value counts as the default, "lazy"). */
  get _eager() {
    return enumAttr('loading', this.loading, { dflt: 'lazy', values: LOADING_VALUES }).value === 'eager';
  }

  /** Fetches the model now, whether or not the element has come near the viewport. */
  load() {
    this._unwatch?.();
    this._unwatch = null;
    if (!this._near) this._near = true;
  }

  /**
   * The files this element fetches when it loads, with their sizes, for the placeholder. By
   * default its model; an element that fetches more (the twins) overrides it.
   * @returns {Promise<Array<{file: string, bytes: number|null}>>}
   */
  downloads() {
    return downloadSizes([this.modelHref]);
  }

  /** The absolute URL of the model in use. */
  get modelHref() {
    try {
      return modelURL(this.model, this.constructor._defaultModel);
    } catch {
      return null;
    }
  }

  connectedCallback() {
    super.connectedCallback();
    this._want = null;   // re-acquire after a removal
    if (!this._near && !this._eager) this._unwatch = whenNear(this, () => this.load());
    this.requestUpdate();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._unwatch?.();
    this._unwatch = null;
    this._loadGen++;
    this._release();
  }

  willUpdate(changed) {
    super.willUpdate?.(changed);
    if (changed.has('loading') || !this.hasUpdated) {
      this._lazyGuard.begin();
      this._lazyGuard.take('loading', enumAttr('loading', this.loading, { dflt: 'lazy', values: LOADING_VALUES }));
      this._lazyGuard.end();
    }
    if (!this._near && this._eager) this.load();
    if (!this._near) {
      const key = `${this.modelHref}`;
      if (this.isConnected && this._sizesFor !== key) {
        this._sizesFor = key;
        this.downloads().then((d) => { if (this._sizesFor === key) this._downloads = d; }, () => {});
      }
      return;
    }
    const want = `${this.modelHref}`;
    if (this.isConnected && (this._want !== want || changed.has('engine'))) {
      this._want = want;
      this._load();
    }
  }

  async _load() {
    const gen = ++this._loadGen;
    this._release();
    this.lm = null;
    this.error = null;
    let mha;
    let href;
    try {
      href = modelURL(this.model, this.constructor._defaultModel);
      mha = await (this.engine ? Promise.resolve(this.engine) : getEngine());
      const lm = await acquireModel(mha, href);
      if (gen !== this._loadGen) { releaseModel(mha, href); return; }
      this._held = { mha, href };
      this.lm = lm;
      this.modelChanged(lm);
    } catch (e) {
      if (gen !== this._loadGen) return;
      this.error = e;
      this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
    }
  }

  _release() {
    if (!this._held) return;
    this.modelReleasing();
    const { mha, href } = this._held;
    this._held = null;
    this.lm = null;
    releaseModel(mha, href);
  }

  /** Called once the model is loaded (this.lm is set). */
  modelChanged() {}

  /** Called before the model is given back: free what was made from it (generators). */
  modelReleasing() {}

  /** The inline message of a model that could not be loaded. */
  errorMessage() {
    return `The model ${this.modelHref ?? '(none given)'} could not be loaded. ${errorText(this.error)} ` +
      '(A model is a .safetensors file in the mha-wasm.charlm/1 format, or a Hugging Face model folder, a URL ending in "/" ' +
      'holding config.json, the safetensors and the tokenizer: see docs/trained-models.md and the README\'s "Show the heads of your own model".)';
  }
}

/**
 * A trained-model element whose heads can be switched off: its `ablate` attribute ("layer:head"
 * pairs, 1-based) read as checked [layer, head] pairs, and a head's switch toggling it. The subclass
 * declares `ablate` and defines `_changed()` (what a user edit does: recompute, dispatch `change`).
 */
export class AblatableModelElement extends TrainedModelElement {
  /** The switched-off heads as 0-based [layer, head] pairs, those outside the model dropped. */
  get ablation() {
    const { numLayers = 0, numHeads = 0 } = this.lm?.config ?? {};
    return parseAblate(this.ablate).filter(([l, j]) => l < numLayers && j < numHeads);
  }

  /** Switches head j of layer l off, or back on. */
  _toggle(l, j) {
    const off = this.ablation;
    const i = off.findIndex(([a, b]) => a === l && b === j);
    if (i >= 0) off.splice(i, 1); else off.push([l, j]);
    off.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.ablate = formatAblate(off);
    this._changed();
  }
}

import { html, nothing } from 'lit';
import { TYPE_THRESHOLD, COPYING_THRESHOLD, scoreText } from '../../src/index.js';
import { TrainedModelElement, trainedStyles, showChar, showToken, unitOf, modelInput, headView } from './trained-shared.js';
import { probeHeads } from '../logic/trained-heads.js';
import { headSummaries, headLabel, scoreEntries, cellName, gridMove, TYPE_ABBR } from '../logic/model-view.js';
import { attrError } from '../base/attr-check.js';
import { interpolatorFor } from '../base/color.js';
import { paintThumb, colourTable, modelViewStyles } from './model-view-paint.js';
import '../views/mha-heatmap.js';

const DEFAULT_TEXT = 'The cat sat on the mat. The cat sat on the mat.';

/** Attention weights (layers · heads · T²) up to which the scores are computed before the thumbnails are painted. */
const SYNC_SCORES = 1 << 18;

/**
 * Parses a `layer` or `head` attribute: "all" or a 1-based number within the model.
 * @param {string} name 'layer' or 'head'
 * @param {string|number|null|undefined} raw the attribute (absent → `dflt`)
 * @param {{n: number, dflt: number|'all'}} o how many layers (heads) the model has; the default
 * @returns {{value: number|'all'}|{error: import('../../src/index.js').MHAError, dflt: number|'all'}} value: 0-based, or 'all'
 */
export function pickAttr(name, raw, { n, dflt }) {
  if (raw === null || raw === undefined) return { value: dflt };
  const s = String(raw).trim().toLowerCase();
  if (s === 'all') return { value: 'all' };
  if (/^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= n) return { value: Number(s) - 1 };
  return { error: attrError(name, `"all" or a ${name} number from 1 to ${n}`, raw), dflt };
}

/** A `layer` / `head` property as its attribute: the string as written (null: absent). */
const pickConverter = { fromAttribute: (v) => v, toAttribute: (v) => (v === null || v === undefined ? null : String(v)) };

/** The side of a cell of the opened head's heatmap for T tokens: the map about 600 px wide, 3 to 20 px a cell. */
const openCell = (T) => Math.max(3, Math.min(20, Math.floor(600 / T) - 1));

/**
 * `<mha-model-view>` — every head of a model at once, as bertviz's model view shows them: one
 * thumbnail per layer × head, of the same size whatever the number of tokens (a map of more than
 * 64 tokens is pooled to 64 × 64 by the largest weight of each block), all on one colour scale
 * (0 to 1, the range of every attention weight), each with its label (L·H), its type and its
 * scores on the text: previous-token and induction (scoreText), and copying (copyingScores) where
 * the model carries probe texts. A click, Enter or Space on a thumbnail opens that head full size
 * in a dialog (an `<mha-heatmap>` with the tokens and the value of every cell); filters show one
 * layer or one head.
 *
 * The thumbnails are a WAI-ARIA grid: one Tab stop, the arrow keys move between heads, Home / End
 * to the ends of a layer, Ctrl+Home / Ctrl+End to the first and last head, PageUp / PageDown four
 * layers; each cell is named with its layer, head, type and scores. Escape closes the dialog and
 * the focus returns to the head it came from.
 *
 * Two ways to feed it: a `model` (the attributes of the trained-model elements) and a `text`, run
 * in the page's engine worker as `<mha-trained-heads>` runs them (`lm.run`, `scoreText`, the probes'
 * labels and copying scores; the newest text wins, at most one run waits); or, from script, a run result set as the `result` property (what
 * `LanguageModel.run` returns), with `reference` and `copying` if the page has them: then nothing is
 * fetched unless `model` is set too.
 *
 * @element mha-model-view
 *
 * @attr {string} model - URL of a model file (`.safetensors`) or of a Hugging Face model folder (a URL
 *   ending in "/"), as `<mha-trained-heads>`; default: the shipped h = 4 model. Not fetched when `result`
 *   is set and `model` is not.
 * @attr {string} text - The text the model reads (default "The cat sat on the mat. The cat sat on the mat.");
 *   a text field edits it (shown when the element runs the model itself).
 * @attr {'viridis'|'cividis'} scheme - Colour scale of the thumbnails and the opened head.
 * @attr {string} layer - The layer shown: "all" (default) or a 1-based number; a select (part `layer`) sets it.
 * @attr {string} head - The head shown in every layer: "all" (default) or a 1-based number; a select (part
 *   `head-filter`) sets it. A bad `scheme`, `layer` or `head` keeps the last valid value, shows one message and
 *   fires `mha-error`.
 * @attr {boolean} no-filters - Hide the layer and head selects (a page that filters from outside).
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {object|null} lm - Read-only: the loaded model (null while loading, or when not needed).
 * @prop {object|null} result - The run shown: `{tokens, ids, attention}` as `LanguageModel.run` returns it
 *   (attention: per layer `{data, shape: [h, T, T]}`). Set it from script to show a run of your own;
 *   when the element runs its model, it holds that run.
 * @prop {Array|null} reference - The heads' labels from the model's probes (`LanguageModel.heads`), with `result`.
 * @prop {Array|null} copying - The heads' copying scores (`copyingScores(lm)`), with `result`.
 * @prop {Array|null} textScores - The heads' scores on the run's text (`scoreText`), with `result`; computed when absent.
 * @prop {Array<[number, number]>} off - Heads shown as switched off (0-based [layer, head]); marked "off".
 * @prop {Array|null} summaries - Read-only: what each thumbnail shows (headSummaries, in (layer, head) order).
 * @prop {[number, number]|null} opened - Read-only: the head open full size, 0-based [layer, head].
 * @prop {Error|null} error - Read-only: why the model could not be loaded or run.
 *
 * @fires mha-computed - `{detail: {text, loss, next}}` after the element has run its model.
 * @fires mha-head-open - `{detail: {layer, head}}` (0-based) when a head is opened full size.
 * @fires change - `{detail: {text, layer, head}}` when the reader edits the text or picks a filter
 *   (layer and head 0-based, or 'all').
 * @fires mha-error - `{detail: {error}}`: a bad attribute, or a model that cannot be loaded (shown in place).
 *
 * @csspart text - The text field.
 * @csspart layer - The layer filter (a `<select>`).
 * @csspart head-filter - The head filter (a `<select>`).
 * @csspart legend - The colour legend.
 * @csspart grid - The grid of thumbnails (role="grid").
 * @csspart thumb - One head's cell (role="gridcell"; class `off` when switched off, `data-layer`, `data-head`).
 * @csspart dialog - The dialog of the opened head.
 * @csspart heatmap - The opened head's `<mha-heatmap>`.
 * @csspart error - The error message.
 *
 * @cssprop --mha-thumb-size - Largest side of a thumbnail (default 64px); thumbnails shrink to fit the width.
 * @cssprop --mha-fg, --mha-bg, --mha-border, --mha-muted, --mha-focus - Theme.
 */
export class MhaModelView extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    text: { type: String },
    layer: { converter: pickConverter, reflect: true },
    head: { converter: pickConverter, reflect: true },
    noFilters: { type: Boolean, attribute: 'no-filters' },
    result: { attribute: false },
    reference: { attribute: false },
    copying: { attribute: false },
    textScores: { attribute: false },
    off: { attribute: false },
    _summaries: { state: true },
    _open: { state: true },
    _active: { state: true },
  };

  static styles = [trainedStyles, modelViewStyles];

  constructor() {
    super();
    this.text = DEFAULT_TEXT;
    this.layer = null;
    this.head = null;
    this.noFilters = false;
    this.result = null;
    this.reference = null;
    this.copying = null;
    this.textScores = null;
    this.off = [];
    this._own = null;          // the run this element made (result === _own: not set from script)
    this._layer = 'all';
    this._head = 'all';
    this._summaries = null;
    this._open = null;
    this._active = [0, 0];     // the grid's Tab stop, [layer, head]
    this._sumKey = null;       // what the summaries were made from: [result, reference, copying, lm, textScores]
    this._probed = null;       // {lm, value: probeHeads(lm)} once measured
    this._scoreSeq = 0;
    this._scratch = new Float32Array(64 * 64);
    // the model runs in the engine worker: the newest text wins, at most one run waits
    this.runsOnModel(({ lm, input }) => lm.run(input, { most: lm.config.context, scores: true, logProbs: false }),
      (e, r) => this._ran(e, r));
  }

  /** Whether the run shown was set from script rather than made by this element. */
  get _external() {
    return this.result != null && this.result !== this._own;
  }

  get needsModel() {
    return !(this._external && this.model == null);
  }

  /** What each thumbnail shows (headSummaries), in (layer, head) order; null before a run. */
  get summaries() {
    return this._summaries;
  }

  /** The head open full size, [layer, head] 0-based, or null. */
  get opened() {
    return this._open ? this._open.slice() : null;
  }

  /** The shape of the run shown: {numLayers, numHeads, T}, or null. */
  get _shape() {
    const a = this.result?.attention;
    if (!a?.length) return null;
    return { numLayers: a.length, numHeads: a[0].shape[0], T: a[0].shape[1] };
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    const g = this._attrs;
    g.begin();
    const cfg = this._shape ?? this.lm?.config;
    if (cfg) {
      this._layer = g.take('layer', pickAttr('layer', this.layer, { n: cfg.numLayers, dflt: 'all' }));
      this._head = g.take('head', pickAttr('head', this.head, { n: cfg.numHeads, dflt: 'all' }));
    }
    g.end();
    if (!this._external && this.lm && (changed.has('lm') || changed.has('text'))) this._compute();
    const key = [this.result, this.reference, this.copying, this.lm, this.textScores];
    if (key.some((v, i) => v !== this._sumKey?.[i])) {
      this._sumKey = key;
      this._summarize();
    }
  }

  /**
   * Runs the model on the text, as <mha-trained-heads> does (lm.run in the engine worker, with the
   * heads' scores on the text computed there); the latest text wins.
   */
  _compute() {
    const lm = this.lm;
    try {
      // a byte-pair model's text is encoded (and cut to the context) where the model is
      const input = unitOf(lm.config) === 'token' && lm.config.tokenizer !== 'none' ? String(this.text ?? '') : modelInput(lm, this.text ?? '');
      if (input.length < 1) { this._runs.cancel(); this._ran(null, null); return; }
      this._runs.push({ lm, input });
    } catch (e) {
      this._runs.cancel();
      this._ran(e, null);
    }
  }

  /** A run's result (or error, or neither: no text) arrives. */
  _ran(e, r) {
    if (e || !r) {
      this._own = null;
      this.result = null;
      this.error = e;
      return;
    }
    this._own = r;
    this.result = r;
    this.error = null;
    this.dispatchEvent(new CustomEvent('mha-computed', { detail: { text: this.text, loss: r.loss, next: r.next }, bubbles: true, composed: true }));
  }

  /**
   * The thumbnails' labels and scores from the run shown (scoreText, or `textScores` when given), and
   * the model's probe labels and copying scores where it has them (probeHeads: a run per probe text
   * and a forward per head, measured once per model). Work beyond SYNC_SCORES attention weights, and
   * the probes, wait until the thumbnails have been painted: the maps come first, their scores a
   * frame later (the last scores stay meanwhile).
   */
  _summarize() {
    const r = this.result;
    const shape = this._shape;
    if (!r || !shape) { this._summaries = null; return; }
    const [l, j] = this._active;
    if (l >= shape.numLayers || j >= shape.numHeads) this._active = [0, 0];
    if (this._open && (this._open[0] >= shape.numLayers || this._open[1] >= shape.numHeads)) this._open = null;
    const lm = this.lm && (!this._external || this.reference == null) ? this.lm : null;
    const unprobed = lm && this._probed?.lm !== lm;
    const big = shape.numLayers * shape.numHeads * shape.T * shape.T > SYNC_SCORES;
    const seq = ++this._scoreSeq;
    if (!unprobed && (!big || this.textScores || r.textScores)) { this._score(r, shape, lm); return; }
    if (this._summaries?.length !== shape.numLayers * shape.numHeads) this._summaries = null;
    requestAnimationFrame(() => setTimeout(() => {
      if (seq !== this._scoreSeq || this.result !== r) return;
      if (lm && this.lm === lm && this._probed?.lm !== lm) this._probed = { lm, value: probeHeads(lm) };
      this._score(r, shape, lm);
    }, 0));
  }

  /** Sets the summaries of run r (lm: the model whose probes label the heads, or null). */
  _score(r, shape, lm) {
    const probed = lm ? this._probed?.value : null;
    const reference = lm ? probed?.heads ?? null : this.reference;
    const copying = lm ? probed?.copying ?? null : this.copying;
    const onText = this.textScores ?? r.textScores ?? scoreText(r.attention, r.ids);
    this._summaries = headSummaries(shape, onText, reference, copying);
  }

  /** The layers and heads the filters let through. */
  _visible() {
    const { numLayers: L, numHeads: h } = this._shape;
    return {
      rows: this._layer === 'all' ? Array.from({ length: L }, (_, l) => l) : [this._layer],
      cols: this._head === 'all' ? Array.from({ length: h }, (_, j) => j) : [this._head],
    };
  }

  _changed() {
    this.dispatchEvent(new CustomEvent('change', { detail: { text: this.text, layer: this._layer, head: this._head }, bubbles: true, composed: true }));
  }

  _onInput(e) {
    this.text = e.target.value;
    this._changed();
  }

  _onFilter(e, which) {
    const v = e.target.value;
    this[which] = v;
    this[`_${which}`] = v === 'all' ? 'all' : Number(v) - 1;
    this._changed();
  }

  /** Opens head j of layer l full size. */
  open(l, j) {
    const shape = this._shape;
    if (!shape || !(l >= 0 && l < shape.numLayers && j >= 0 && j < shape.numHeads)) return;
    this._active = [l, j];
    this._open = [l, j];
    this.dispatchEvent(new CustomEvent('mha-head-open', { detail: { layer: l, head: j }, bubbles: true, composed: true }));
  }

  /** Closes the opened head; the focus goes back to its thumbnail. */
  close() {
    this.renderRoot.querySelector('dialog')?.close();
  }

  _onDialogClose() {
    this._open = null;
    this.updateComplete.then(() => this._focusActive());
  }

  _focusActive() {
    const [l, j] = this._active;
    this.renderRoot.querySelector(`.cell[data-layer="${l}"][data-head="${j}"]`)?.focus();
  }

  _cellOf(e) {
    const cell = e.target.closest?.('.cell');
    return cell ? [Number(cell.dataset.layer), Number(cell.dataset.head)] : null;
  }

  _onClick(e) {
    const at = this._cellOf(e);
    if (at) this.open(...at);
  }

  _onKey(e) {
    const at = this._cellOf(e);
    if (!at) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.open(...at);
      return;
    }
    const { rows, cols } = this._visible();
    const r = rows.indexOf(at[0]), c = cols.indexOf(at[1]);
    const to = gridMove([r, c], e, rows.length, cols.length);
    if (!to) return;
    e.preventDefault();
    this._active = [rows[to[0]], cols[to[1]]];
    this.updateComplete.then(() => this._focusActive());
  }

  _onFocusIn(e) {
    const at = this._cellOf(e);
    if (at && (at[0] !== this._active[0] || at[1] !== this._active[1])) this._active = at;
  }

  renderView() {
    if (this.error && !this.lm && !this.result) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.result && !this.lm && this.needsModel) return this.loadingView();
    return html`
      ${this._external ? nothing : this._textField()}
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      ${this._shape ? this._grid() : nothing}
      ${this._dialog()}`;
  }

  _textField() {
    const c = this.lm?.config;
    if (!c) return nothing;
    const unit = unitOf(c);
    return html`<div class="controls"><label class="text">Text the model reads (${c.tokenizer === 'none'
      ? `token ids 0–${c.vocabSize - 1}, separated by spaces` : `one row and column per ${unit}; the first ${c.context} are read`})
      <textarea part="text" rows="2" spellcheck="false" .value=${this.text ?? ''} @input=${this._onInput}></textarea></label></div>`;
  }

  _filters() {
    if (this.noFilters) return nothing;
    const { numLayers: L, numHeads: h } = this._shape;
    const opt = (n, word, sel) => Array.from({ length: n }, (_, i) => html`<option value=${i + 1} ?selected=${sel === i}>${word} ${i + 1}</option>`);
    return html`<label>Layer <select part="layer" @change=${(e) => this._onFilter(e, 'layer')}>
        <option value="all" ?selected=${this._layer === 'all'}>All ${L} layers</option>${opt(L, 'Layer', this._layer)}</select></label>
      <label>Head <select part="head-filter" @change=${(e) => this._onFilter(e, 'head')}>
        <option value="all" ?selected=${this._head === 'all'}>All ${h} heads</option>${opt(h, 'Head', this._head)}</select></label>`;
  }

  _legend() {
    const f = interpolatorFor(this._scheme);
    const stops = Array.from({ length: 11 }, (_, i) => f(i / 10)).join(', ');
    return html`<p class="legend" part="legend"><span>Attention weight 0</span>
      <span class="bar" role="img" aria-label=${`colour scale (${this._scheme}) from 0 to 1, shared by every thumbnail`}
        style=${`background: linear-gradient(to right, ${stops})`}></span><span>1</span></p>`;
  }

  _grid() {
    const { numLayers: L, numHeads: h, T } = this._shape;
    const { rows, cols } = this._visible();
    const byHead = this._summaries;
    const copying = byHead?.some((s) => s.copying !== null);
    const off = this.off ?? [];
    const [al, aj] = rows.includes(this._active[0]) && cols.includes(this._active[1]) ? this._active : [rows[0], cols[0]];
    return html`
      <div class="controls">${this._filters()}${this._legend()}</div>
      <p class="key hint">Each thumbnail: layer · head; its scores on this text: <b>p</b> previous-token,
        <b>i</b> induction${copying ? html`, and <b>c</b> copying (from the model's weights)` : ''}; underlined when a score reaches
        ${copying ? `${TYPE_THRESHOLD} (copying: ${COPYING_THRESHOLD})` : TYPE_THRESHOLD}; then its type where it has one
        (<b>prev</b> previous-token, <b>ind</b> induction, <b>2bk</b> two-back, <b>self</b> current-token, <b>1st</b> first-token${copying ? ', from the probes' : ''}).
        Click a head, or Enter, to open it full size.</p>
      <div role="grid" part="grid" style=${`--_cols: ${cols.length}`} aria-rowcount=${rows.length + 1} aria-colcount=${cols.length + 1}
        aria-label=${`Attention of ${rows.length < L || cols.length < h ? `${rows.length * cols.length} of ` : ''}${L * h} heads (${L} layers × ${h} heads) on ${T} tokens`}
        @click=${this._onClick} @keydown=${this._onKey} @focusin=${this._onFocusIn}>
        <div role="row"><span role="columnheader"><span class="sr-only">Layer</span></span>
          ${cols.map((j) => html`<span role="columnheader">H${j + 1}<span class="sr-only"> (head ${j + 1})</span></span>`)}</div>
        ${rows.map((l) => html`<div role="row"><span role="rowheader">L${l + 1}<span class="sr-only"> (layer ${l + 1})</span></span>
          ${cols.map((j) => this._cell(byHead?.[l * h + j], l, j, l === al && j === aj, off.some(([a, b]) => a === l && b === j)))}</div>`)}
      </div>`;
  }

  _cell(s, l, j, active, off) {
    const scores = s ? scoreEntries(s, TYPE_THRESHOLD) : [];
    return html`<div role="gridcell" part="thumb" class=${`cell${off ? ' off' : ''}${active ? ' active' : ''}`} tabindex=${active ? 0 : -1}
      aria-haspopup="dialog" data-layer=${l} data-head=${j}>
      <span class="sr-only">${s ? cellName(s, off) : `Layer ${l + 1}, head ${j + 1}${off ? ', switched off' : ''}.`}</span>
      <span class="lab" aria-hidden="true">${headLabel(l, j)}</span>
      <canvas aria-hidden="true" data-layer=${l} data-head=${j}></canvas>
      <span class="sc" aria-hidden="true">${scores.map((x) => html`<span class=${x.strong ? 'strong' : ''}>${x.abbr} ${x.text}</span>`)}${
        off || TYPE_ABBR[s?.type] ? html`<b class="type">${off ? 'off' : TYPE_ABBR[s.type]}</b>` : nothing}</span>
    </div>`;
  }

  _dialog() {
    const at = this._open;
    const r = this.result;
    if (!at || !r) return nothing;
    const [l, j] = at;
    const T = this._shape.T;
    const s = this._summaries?.[l * this._shape.numHeads + j];
    const unit = this.lm ? unitOf(this.lm.config) : 'token';
    const tokens = (r.tokens ?? []).map(unit === 'character' ? showChar : showToken);
    return html`<dialog part="dialog" aria-labelledby="open-title" @close=${this._onDialogClose}>
      <div class="bar"><h3 id="open-title">Layer ${l + 1}, head ${j + 1}</h3>
        <button type="button" class="close" autofocus @click=${() => this.close()}>Close</button></div>
      <p class="hint">${s ? cellName(s, (this.off ?? []).some(([a, b]) => a === l && b === j)) : ''}</p>
      <mha-heatmap part="heatmap" scale="shared" scheme=${this._scheme} label=${`Layer ${l + 1}, head ${j + 1}`}
        style=${`--mha-cell-size: ${openCell(T)}px`} data-layer=${l} data-head=${j}
        .tokens=${tokens} .weights=${headView(r.attention[l], j)}></mha-heatmap>
    </dialog>`;
  }

  updated(changed) {
    super.updated?.(changed);
    this._paint();
    const d = this.renderRoot.querySelector('dialog');
    if (d && !d.open) d.showModal();
  }

  /** Paints every visible thumbnail whose run, head or scheme changed since it was painted. */
  _paint() {
    const r = this.result;
    if (!r || !this._shape) return;
    const table = colourTable(this._scheme);
    for (const canvas of this.renderRoot.querySelectorAll('canvas[data-layer]')) {
      const l = Number(canvas.dataset.layer), j = Number(canvas.dataset.head);
      const key = `${this._scheme}/${l}/${j}`;
      if (canvas._run === r && canvas._key === key) continue;
      paintThumb(canvas, r.attention[l], j, table, this._scratch);
      canvas._run = r;
      canvas._key = key;
    }
  }
}

customElements.get('mha-model-view') || customElements.define('mha-model-view', MhaModelView);

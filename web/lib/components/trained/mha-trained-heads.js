import { html, css, nothing } from 'lit';
import { TYPE_THRESHOLD, BROAD_THRESHOLD, COPYING_THRESHOLD, headType, copyingScores, inductionVerdict } from '../../src/index.js';
import {
  AblatableModelElement, trainedStyles, showChar, showToken, unitOf, modelInput, headView, SCORE_OF, f2, f3, mapsLegend, mapsLegendStyles,
} from './trained-shared.js';
import { modelIndex, modelChoices, MODEL_INDEX_URL } from '../models.js';
import { probeHeads, explainHeads, fixedCells, cellSide, solidCells, DEFAULT_MAP, NARROW_MAP } from '../logic/trained-heads.js';
import { aboutModel } from '../logic/trained-text.js';
import { headListAttr, intAttr, attrError } from '../base/attr-check.js';
import { Announcer } from '../base/announce.js';
import { pickAttr } from './mha-model-view.js';
import '../views/mha-heatmap.js';

const DEFAULT_TEXT = 'The cat sat on the mat. The cat sat on the mat.';

export { explainHeads, pickAttr, modelChoices };

/**
 * Models with at most this many heads in all (layers × heads) show every head's map at once by
 * default; bigger ones (stories260K's 5 × 8, GPT-2's 12 × 12) show one layer, picked with a select,
 * and "all" of them as thumbnails (`<mha-model-view>`).
 */
export const ALL_HEADS_MAX = 16;

/**
 * `<mha-trained-heads>` — the trained-heads explorer: a small character-level transformer trained
 * on fortune-cookie text reads the text in the field; every head's attention is drawn as a
 * heatmap with the type it was measured to have on held-out probes, its score on those probes and
 * its score on this text; a switch per head ablates it (its output is zeroed before W_O and the
 * whole model is recomputed); the loss and the five most likely next characters follow.
 *
 * The model runs in the shared engine through `mha.loadModel` (CharModel.run); the loaded model
 * is shared with every other element on the page that uses the same file.
 * Scores: Olsson et al. 2022 ("In-context Learning and Induction Heads") for previous-token and
 * induction heads; the definitions are in docs/trained-models.md ("Head analysis").
 *
 * @element mha-trained-heads
 *
 * @attr {string} model - URL of a model file (`.safetensors`, format mha-wasm.charlm/1), or of a Hugging
 *   Face model folder (a URL ending in "/": GPT-2, Llama; mha.loadModel); default: the shipped h = 4
 *   model, found relative to this module. A byte-pair model's maps have one row per token, shown as
 *   its decoded piece (spaces as ␣); its loss is in bits per token. A model without probe texts (a
 *   folder) labels each head by its strongest pattern on the text shown, and has no copying score.
 *   A folder without a tokenizer reads the text as token ids ("15 7 22").
 * @attr {string} text - The text the model reads (default "The cat sat on the mat. The cat sat on
 *   the mat."); follows what the reader types.
 * @attr {string} ablate - Heads switched off, as 1-based `layer:head` pairs ("2:1 2:3") within the
 *   model; reflects the switches. A bad entry ("9:9", "x") makes the whole value invalid: the last
 *   valid ablation stays, one message names the attribute and the value, and `mha-error` fires.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 * @attr {string} layer - The layer whose heads are drawn: a 1-based number, or "all". Default: "all" for a
 *   model of at most ALL_HEADS_MAX (16) heads in all, else 1 (only that layer's maps are in the page). "all"
 *   on a bigger model shows every head as a thumbnail of fixed size (`<mha-model-view>`, part `model-view`:
 *   Enter or a click opens one full size), with the `head` pick as its filter. A
 *   `<select>` (part `layer`) picks it and sets the attribute; it is shown for a bigger model, or when
 *   `layer` or `head` is set.
 * @attr {string} head - The head drawn within the layer: a 1-based number, or "all" (default). A
 *   `<select>` (part `head`) picks it. A bad `layer` or `head` keeps the last valid pick, shows one
 *   message and fires `mha-error`.
 * @attr {number} map-size - Every head's map at most this many CSS pixels square whatever the text length
 *   (fixedCells; 100 px at most in a container under 520 px, where 1 px cells are drawn without gaps; else cells of 2 to 16 px), the heads of a layer in a
 *   grid of equal cards (switch, scores and map). 48 to 512; default 200. A bad
 *   value keeps the last valid one, with one message and `mha-error`.
 * @attr {boolean} no-picker - Hide the model picker (a select over the shipped models of `index.json`, its
 *   `models` and `gqa` lists, shown when the manifest can be fetched); picking a model sets `model`.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {object|null} lm - Read-only: the loaded CharModel (null while loading).
 * @prop {object|null} result - Read-only: CharModel.run's result on the current text and ablation (from the
 *   engine worker: `attention` holds the drawn layer's weights, null for the other layers unless `layer="all"`).
 * @prop {Array|null} textScores - Read-only: every head's scores on the current text (scoreText).
 * @prop {Error|null} error - Read-only: why the model could not be loaded or run.
 *
 * @fires change - `{detail: {text, ablate, model, layer, head}}` when the reader edits the text, flips a
 *   switch (`ablate` as 0-based `[layer, head]` pairs), picks a model (`model`: its URL) or a layer or
 *   head (0-based, or 'all').
 * @fires mha-computed - `{detail: {text, loss, next, ablate}}` after every run of the model.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute, the attribute left as written) or a model that cannot be loaded (shown in place).
 *
 * @csspart about - What the model is: its sizes, with how it was trained behind a disclosure (one `<details>`).
 * @csspart picker - The model picker (a `<select>`).
 * @csspart layer - The layer picker (a `<select>`).
 * @csspart head-picker - The head picker (a `<select>`).
 * @csspart text - The text field.
 * @csspart loss - The loss in bits per character.
 * @csspart next - The list of likely next characters.
 * @csspart all-on - The "Switch every head on" button.
 * @csspart heads - The grid of heads.
 * @csspart model-view - The `<mha-model-view>` of `layer="all"` on a model of more than ALL_HEADS_MAX heads.
 * @csspart head - One head's box (class `off` when switched off).
 * @csspart switch - A head's on/off switch (role="switch").
 * @csspart badge - A head's type label.
 * @csspart scores - A head's score line.
 * @csspart copying - A head's copying score (copyingScores) and what its two tests say (`data-verdict`:
 *   induction, attends-only, copies-only, neither).
 * @csspart heatmap - A head's `<mha-heatmap>`.
 * @csspart explanation - The computed explanation under the heads (its summary, then a disclosure of one line per head).
 * @csspart error - The error message.
 *
 * @cssprop --mha-cell-size - Side of a heatmap cell (default: picked from the text's length, so that a map is about
 *   map-size px wide).
 * @cssprop --mha-accent, --mha-fg, --mha-bg, --mha-surface, --mha-border, --mha-field-border, --mha-muted, --mha-mono - Theme.
 */
export class MhaTrainedHeads extends AblatableModelElement {
  static worker = true;

  static properties = {
    ...AblatableModelElement.properties,
    text: { type: String },
    ablate: { type: String, reflect: true },
    layer: { converter: { fromAttribute: (v) => v, toAttribute: (v) => (v === null || v === undefined ? null : String(v)) }, reflect: true },
    head: { converter: { fromAttribute: (v) => v, toAttribute: (v) => (v === null || v === undefined ? null : String(v)) }, reflect: true },
    noPicker: { type: Boolean, attribute: 'no-picker' },
    mapSize: { attribute: 'map-size' },
    result: { state: true },
    textScores: { state: true },
    _choices: { state: true },
  };

  static styles = [trainedStyles, mapsLegendStyles, css`
    .controls { display: grid; grid-template-columns: minmax(0, 3fr) minmax(11rem, 2fr); gap: 0.4rem 1.5rem; margin: 0.8rem 0; }
    .controls label { grid-column: 1 / -1; }
    .controls textarea { align-self: start; resize: vertical; }
    /* wide: the labelling note and the all-on switch under the text field, beside the loss */
    .controls .pred { grid-row: span 2; } .controls .how-row { grid-column: 1; align-self: start; margin: 0; }
    @container (max-width: 640px) { .controls { grid-template-columns: minmax(0, 1fr); } }
    :host { container-type: inline-size; }
    .pred p { margin: 0.2em 0; }
    .next { display: flex; flex-wrap: wrap; gap: 0.2rem 1.2rem; list-style-position: inside; padding-left: 0;
      margin: 0.2em 0; font-variant-numeric: tabular-nums; }
    .next li { white-space: nowrap; max-width: 100%; overflow: hidden; text-overflow: ellipsis; }
    .next code { background: var(--_surface); padding: 0 0.3em; border-radius: 4px; font-family: var(--_mono); }
    /* every map is about the same size whatever the text's length: the element picks the cells' side
       from the number of tokens (--_cell-wide, --_cell-narrow: a plot of about map-size px, at most NARROW_MAP px under 520 px) */
    .grid { display: flex; flex-direction: column; gap: 0.6rem; --mha-cell-size: var(--_cell-wide, 8px); }
    /* one colour legend above the maps (.maps-legend) instead of one under each */
    .maps-legend { display: flex; } .grid mha-heatmap::part(legend) { display: none; }
    @container (max-width: 520px) { .grid { --mha-cell-size: var(--_cell-narrow, 6px); }
      /* cells under 6 px: no token labels (one in several would show); the readout and the values table name them */
      .grid.tiny mha-heatmap::part(label) { display: none; }
      .grid.tiny mha-heatmap::part(corner) { font-size: 0; padding: 0; }
      /* 1 px cells: drawn without the gaps that would be half the map */
      .grid.solid mha-heatmap { --mha-cell-gaps: none; } }
    .layer { display: grid; grid-template-columns: repeat(auto-fill, minmax(13.5rem, 1fr)); gap: 0.5rem; align-items: start; }
    /* narrow: two cards to a row, stretched to the row with each map at its card's bottom, so the maps line up */
    @container (max-width: 520px) { .layer { grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); align-items: stretch; }
      .head { display: flex; flex-direction: column; align-items: flex-start; } .head > mha-heatmap { margin-top: auto; } }
    .layer-name { grid-column: 1 / -1; font-weight: 700; margin: 0.2rem 0 0; }
    .head { position: relative; border: 1px solid var(--_border); border-radius: 8px; padding: 0.3rem; overflow-x: auto; max-width: 100%; min-width: 0; box-sizing: border-box; }
    .head.off { border-style: dashed; }
    /* a switched-off head: its map in grey (the text keeps its full contrast), its switch struck through */
    .head.off mha-heatmap { filter: grayscale(1); }
    button[role='switch'] { display: flex; flex-wrap: wrap; gap: 0.2rem 0.6rem; align-items: baseline; font-size: 0.88rem; text-align: left; }
    button[role='switch'][aria-checked='false'] { text-decoration: line-through; }
    .name { font-weight: 600; }
    .badge { padding: 0 0.4em; border-radius: 999px; background: var(--_bg); border: 1px solid var(--_border); }
    .badge.t-induction, .badge.t-previous-token { border-color: var(--_accent); font-weight: 600; }
    .scores, .copying { margin: 0.15rem 0; font-size: 0.75rem; color: var(--_muted); font-variant-numeric: tabular-nums; }
    details.how, details.lines { margin: 0.4rem 0; }
    .how-row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 1rem; margin: 0.4rem 0; }
    .how-row details.how { margin: 0; } .how-row details.how[open] { flex-basis: 100%; }
    details.how > summary, details.lines > summary, details.about > summary { cursor: pointer; }
    details.how > summary { color: var(--_muted); font-size: 0.9em; }
    .how p { margin: 0.3rem 0; }
    .copying.v-induction { color: var(--_fg); font-weight: 600; }
    .explanation ul { padding-left: 1.2em; margin: 0.3em 0; } .explanation li { margin: 0.15em 0; }
    .picker { margin: 0.3rem 0; }
    .pick { display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; align-items: center; margin: 0.4rem 0; }
    .grid.one { --mha-cell-size: 12px; } .picker select { max-width: 100%; }
    details.about { margin: 0.4rem 0; }
    /* a card's name and type on one line, its map's disclosure on one line */
    .badge { font-size: 0.88em; padding: 0 0.35em; }
    button[role='switch'] { column-gap: 0.4rem; padding-left: 0.5em; padding-right: 0.5em; }
    /* wide: a card's lines beside its map, under its switch (a layer's cards stay one row, half as tall) */
    @container (min-width: 521px) {
      .layer { grid-template-columns: repeat(auto-fill, minmax(17.5rem, 1fr)); }
      .head { display: grid; grid-template-columns: max-content minmax(0, 1fr); grid-template-areas: 'switch switch' 'map lines'; gap: 0 0.5rem; align-items: start; }
      .head > button[role='switch'] { grid-area: switch; } .head > .lines { grid-area: lines; } .head > mha-heatmap { grid-area: map; }
    }
  `];

  constructor() {
    super();
    this.text = DEFAULT_TEXT;
    this.ablate = '';
    this._clear();
    this.noPicker = false;
    this.mapSize = null;
    this._mapSize = null;
    this._choices = null;
    this._abl = [];
    this.layer = null;
    this.head = null;
    this._layer = 0;   // the picks drawn: the last valid layer and head ('all' or 0-based)
    this._head = 'all';
    this._announcer = new Announcer(this);   // the loss, said once typing or switching settles
    // the model runs in the engine worker: the newest text and ablation win, at most one run waits
    // only the layer drawn crosses from the worker (a model's 144 maps at 128 tokens are 9.4 MB a run)
    this.runsOnModel(({ lm, text, ablate, layers }) => lm.run(text, { ablate, most: lm.config.context, scores: true, logProbs: false, layers }),
      (e, r, { lm, ablate }) => this._computed(e, r, lm, ablate));
  }

  /**
   * Resolves once the model has computed the current text and ablation (no run running or waiting)
   * and its maps are painted (canvas maps take turns across tasks: views/heatmap/turns.js).
   */
  get computeComplete() {
    return super.computeComplete
      .then(() => Promise.all(Array.from(this.renderRoot.querySelectorAll('mha-heatmap, mha-model-view'), (m) => m.updateComplete)));
  }

  /** The switched-off heads as 0-based [layer, head] pairs: the last valid `ablate`. */
  get ablation() {
    const cfg = this.lm?.config;
    const r = cfg ? headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }) : { error: true };
    return (r.error ? this._abl : r.value).map((p) => p.slice());
  }

  connectedCallback() {
    super.connectedCallback();
    if (this._choices || !MODEL_INDEX_URL) return;
    // the picker appears once the shipped manifest is read; without it (no models/ folder) there is none
    modelIndex(MODEL_INDEX_URL).then((m) => { this._choices = modelChoices(m, MODEL_INDEX_URL); }, () => {});
  }

  /** The switched-off heads as 0-based [layer, head] pairs. */
  willUpdate(changed) {
    super.willUpdate(changed);
    const g = this._attrs;
    g.begin();
    this._mapSize = g.take('map-size', intAttr('map-size', this.mapSize, { dflt: null, min: 48, max: 512, what: 'CSS pixels' }));
    const cfg = this.lm?.config;
    if (cfg) {
      this._abl = g.take('ablate', headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }));
      const all = cfg.numLayers * cfg.numHeads <= ALL_HEADS_MAX;
      // a model change drops the picks' last values (a layer of the old model may not exist)
      if (changed.has('lm')) { g._last.delete('layer'); g._last.delete('head'); }
      this._layer = g.take('layer', pickAttr('layer', this.layer, { n: cfg.numLayers, dflt: all ? 'all' : 0 }));
      this._head = g.take('head', pickAttr('head', this.head, { n: cfg.numHeads, dflt: 'all' }));
    }
    g.end();
    // another model: the last one's result is not drawn over it while the new run is under way
    if (changed.has('lm')) this._clear();
    // a layer picked whose maps the last run did not bring (the worker sends only the layer drawn)
    const missing = this._askedLayer !== this._layer && this.result &&
      (this._layer === 'all' ? this.result.attention.some((a) => !a) : !this.result.attention[this._layer]);
    if (this.lm && (changed.has('lm') || changed.has('text') || changed.has('ablate') || missing)) this._compute();
  }

  _compute() {
    const lm = this.lm;
    let text;
    try {
      // a character model's text and a tokenizer-less model's ids are cut here; a byte-pair model's
      // text is encoded (and cut to the context) in the worker
      text = unitOf(lm.config) === 'token' && lm.config.tokenizer !== 'none' ? String(this.text ?? '') : modelInput(lm, this.text);
    } catch (e) {
      this._clear(true);
      return this._fail(e);
    }
    if (text.length < 1) return this._clear(true);
    this._askedLayer = this._layer;
    this._runs.push({ lm, text, ablate: this.ablation, layers: this._layer === 'all' ? null : [this._layer] });
  }

  /** No result shown (and, with `cancel`, no run waiting). */
  _clear(cancel = false) {
    if (cancel) this._runs.cancel();
    this.result = null;
    this.textScores = null;
  }

  /** A run's result (or error) arrives: shown when it is the newest and its model is still the one held. */
  _computed(e, r, lm, ablate) {
    if (e) return this._fail(e, true);
    if (r.ids.length < 1) return this._clear();
    this.result = r;
    this.textScores = r.textScores;
    this.error = null;
    const { loss, next } = r;
    const unit = unitOf(lm.config);
    this._announcer.say(`${loss === null ? `Type at least 2 ${unit}s` : `Loss ${f3(loss)} bits per ${unit}`}; ${
      ablate.length ? `${ablate.length} head${ablate.length > 1 ? 's' : ''} switched off` : 'all heads on'}.`);
    this.dispatchEvent(new CustomEvent('mha-computed', { detail: { text: r.text, loss, next, ablate }, bubbles: true, composed: true }));
  }

  /** A text the model cannot read: shown in place (`clear`: no result either), and one `mha-error` per new message. */
  _fail(e, clear = false) {
    if (clear) this._clear();
    const again = this.error?.message === e.message;
    this.error = e;
    if (!again) this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
  }

  _changed() {
    this.dispatchEvent(new CustomEvent('change', { detail: { text: this.text, ablate: this.ablation, model: this.modelHref,
      layer: this._layer, head: this._head }, bubbles: true, composed: true }));
  }

  _onLayer(e) {
    this.layer = e.target.value;
    this._layer = e.target.value === 'all' ? 'all' : Number(e.target.value) - 1;
    this._changed();
  }

  _onHead(e) {
    this.head = e.target.value;
    this._head = e.target.value === 'all' ? 'all' : Number(e.target.value) - 1;
    this._changed();
  }

  /** The layer and head selects (a model of more than one head). */
  _layerPicker(c) {
    // a model of at most ALL_HEADS_MAX heads shows them all without a picker, unless a layer or head is asked for
    if (c.numLayers * c.numHeads <= ALL_HEADS_MAX && this.layer == null && this.head == null) return nothing;
    const L = this._layer;
    const H = this._head;
    return html`<div class="pick">
      <label>Layer <select part="layer" class="layer-select" @change=${this._onLayer}>
        <option value="all" ?selected=${L === 'all'}>All ${c.numLayers} layers (${c.numLayers * c.numHeads} ${
          c.numLayers * c.numHeads > ALL_HEADS_MAX ? 'thumbnails' : 'maps'})</option>
        ${Array.from({ length: c.numLayers }, (_, l) => html`<option value=${l + 1} ?selected=${L === l}>Layer ${l + 1} of ${c.numLayers}</option>`)}
      </select></label>
      <label>Head <select part="head-picker" class="head-select" @change=${this._onHead}>
        <option value="all" ?selected=${H === 'all'}>All ${c.numHeads} heads</option>
        ${Array.from({ length: c.numHeads }, (_, j) => html`<option value=${j + 1} ?selected=${H === j}>Head ${j + 1}</option>`)}
      </select></label>
    </div>`;
  }

  _onModel(e) {
    this.ablate = '';
    this.model = e.target.value;
    this._changed();
  }

  _picker() {
    const choices = this._choices;
    if (this.noPicker || !choices?.length) return nothing;
    const here = this.modelHref;
    const known = choices.some((c) => c.href === here);
    return html`<p class="picker"><label>Model <select part="picker" @change=${this._onModel}>
      ${known ? nothing : html`<option value=${here ?? ''} selected>${this.modelName ?? ''}</option>`}
      ${choices.map((c) => html`<option value=${c.href} ?selected=${c.href === here}>${c.label}</option>`)}
    </select></label></p>`;
  }

  _onInput(e) {
    this.text = e.target.value;
    this._changed();
  }

  _allOn() {
    this.ablate = '';
    this._changed();
  }

  renderView() {
    // one template around the picker whatever follows it: the <select> stays the same node while the
    // model it chose loads, and keeps focus (a reader going through the models with the arrow keys)
    return html`${this._picker()}${this._body()}${this._announcer.view()}`;
  }

  _body() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    const lm = this.lm;
    if (!lm) return this.loadingView();
    const c = lm.config;
    const probed = probeHeads(lm);
    const reference = probed?.heads ?? null;
    const copying = probed?.copying ?? null;
    const unit = unitOf(c);
    const r = this.result;
    const off = this.ablation;
    const isOff = (l, j) => off.some(([a, b]) => a === l && b === j);
    // the same labels (the same array) while the result is the same: its maps do not redraw as the reader types
    if (this._tokensOf?.r !== r || this._tokensOf.unit !== unit) this._tokensOf = { r, unit, tokens: r ? r.tokens.map(unit === 'token' ? showToken : showChar) : [] };
    const tokens = this._tokensOf.tokens;
    const explained = r && this.textScores && reference ? explainHeads(reference, this.textScores, copying, off) : null;
    const layers = this._layer === 'all' ? Array.from({ length: c.numLayers }, (_, l) => l) : [this._layer];
    const heads = this._head === 'all' ? Array.from({ length: c.numHeads }, (_, j) => j) : [this._head];
    const noTok = c.tokenizer === 'none';
    return html`
      ${this._about()}
      <div class="controls">
        <label for="text">${noTok ? `Token ids the model reads (this folder has no tokenizer: ids 0–${c.vocabSize - 1}, separated by spaces)`
          : `Text the model reads (one query row per ${unit}${unit === 'token' ? `; the first ${c.context} tokens are read` : ''})`}</label>
        <textarea id="text" part="text" rows="2" spellcheck="false" maxlength=${unit === 'character' ? c.context : nothing}
          .value=${this.text ?? ''} @input=${this._onInput}></textarea>
        <div class="pred">
          <p>Loss on this text: <strong class="loss" part="loss">${!r ? '—' : r.loss === null
            ? `— (type at least 2 ${unit}s)` : `${f3(r.loss)} bits per ${unit}`}</strong></p>
          <p id="next-label">Most likely next ${unit}:</p>
          <ol class="next" part="next" aria-labelledby="next-label">${(r?.next ?? []).map((n) =>
            html`<li><code>${unit === 'token' ? showToken(n.token) : showChar(n.token)}</code> ${(100 * n.p).toFixed(1)} %</li>`)}</ol>
          <p class="hint off-count">${off.length ? `${off.length} head${off.length > 1 ? 's' : ''} switched off.` : 'All heads on.'}</p>
        </div>
        ${!reference ? nothing : html`<div class="how-row"><details class="how"><summary>How each head is labelled, and what its copying score measures</summary>
          <p class="hint">Each head carries the type measured on held-out probes stored with the model: its strongest
          pattern when that score reaches ${TYPE_THRESHOLD}, else "broad" when its attention is spread out (normalised
          entropy ≥ ${BROAD_THRESHOLD}), else "mixed". Beside it, the same score measured on the text above. That label
          says only where a head looks. Its copying score (Olsson et al. 2022) asks what its output does: let the head attend
          to one character alone, and see whether that same character's logit comes out highest; the score is the share of
          the ${c.vocabSize} characters for which it does (chance: 1 in ${c.vocabSize}). A head is called an induction head
          only when its attention is labelled induction and its copying score reaches ${COPYING_THRESHOLD}.</p></details>
          <button type="button" part="all-on" class="all-on" @click=${this._allOn}>Switch every head on</button></div>`}
      </div>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      ${reference ? nothing : html`<p class="hint">This model carries no probe texts, so each head is labelled by its strongest
        pattern on the text above (${TYPE_THRESHOLD} or more of its attention on one kind of position), else "broad" or "mixed";
        the copying score is not computed for it.
        <button type="button" part="all-on" class="all-on" @click=${this._allOn}>Switch every head on</button></p>`}
      ${this._layerPicker(c)}
      ${this._layer === 'all' && c.numLayers * c.numHeads > ALL_HEADS_MAX ? (r ? html`<mha-model-view part="model-view" no-filters
        scheme=${this._scheme} head=${this._head === 'all' ? 'all' : this._head + 1} .result=${r} .reference=${reference}
        .copying=${copying} .textScores=${this.textScores} .off=${off}></mha-model-view>` : nothing) : html`
      ${mapsLegend(this._scheme)}
      <div class=${`${heads.length === 1 && layers.length === 1 ? 'grid one' : 'grid'}${
        cellSide(Math.min(this._mapSize ?? DEFAULT_MAP, NARROW_MAP), tokens.length || c.context) < 6 ? ' tiny' : ''}${
        solidCells(this._mapSize ?? DEFAULT_MAP, tokens.length || c.context) ? ' solid' : ''}`} part="heads"
        style=${fixedCells(this._mapSize ?? DEFAULT_MAP, tokens.length || c.context)}>
        ${layers.map((l) => html`
          <div class="layer" role="group" aria-label=${`Layer ${l + 1}`}>
            <span class="layer-name" aria-hidden="true">Layer ${l + 1}</span>
            ${heads.map((j) => this._headBox(l, j, reference, tokens, isOff(l, j), copying))}
          </div>`)}
      </div>`}
      ${explained ? html`<div class="explanation" part="explanation">
        <details class="lines"><summary>${explained.summary}</summary>
        <ul>${explained.lines.map((t) => html`<li>${t}</li>`)}</ul></details>
      </div>` : nothing}`;
  }

  /** What the model is: its first sentence (the sizes) shown, how it was trained behind a disclosure. */
  _about() {
    const text = aboutModel(this.lm.config, this.lm.training);
    const cut = text.indexOf('. ');
    if (cut < 0) return html`<p class="hint" part="about">${text}</p>`;
    return html`<details class="hint about" part="about"><summary>${text.slice(0, cut + 1)}</summary> ${text.slice(cut + 2)}</details>`;
  }

  /** A head of a model without probes (a Hugging Face folder): labelled by its strongest pattern on this text. */
  _headOnText(l, j, tokens, off) {
    const here = this.textScores?.find((x) => x.layer === l && x.head === j)?.scores;
    const type = here ? headType(Object.fromEntries(Object.entries(here).map(([k, v]) => [k, v ?? 0]))) : '—';
    const key = SCORE_OF[type] ?? 'entropy';
    return this._headCard(l, j, type, off, tokens, `${type} on this text`,
      html`<p class="scores" part="scores" data-text=${here?.[key] ?? ''}>${key === 'entropy' ? 'entropy' : 'score'} on this text ${here ? f2(here[key]) : '—'}</p>`);
  }

  /**
   * One head's card: the switch (name and type badge), the lines `body` gives, the heatmap.
   * @param {number} l layer
   * @param {number} j head
   * @param {string} type the badge
   * @param {boolean} off switched off
   * @param {string[]} tokens
   * @param {string} what the heatmap label's parenthesis
   * @param {unknown} body the card's text lines (a Lit template)
   */
  _headCard(l, j, type, off, tokens, what, body) {
    const r = this.result;
    return html`
      <div class=${off ? 'head off' : 'head'} part="head" data-layer=${l} data-head=${j}>
        <button type="button" role="switch" part="switch" aria-checked=${String(!off)} data-layer=${l} data-head=${j}
          @click=${() => this._toggle(l, j)}>
          <span class="name">L${l + 1} · head ${j + 1}</span>
          <span class=${`badge t-${type}`} part="badge">${type}</span>
        </button>
        <div class="lines">${body}</div>
        <mha-heatmap part="heatmap" compact scheme=${this._scheme} data-layer=${l} data-head=${j}
          label=${`Layer ${l + 1}, head ${j + 1} (${what})`}
          .tokens=${tokens} .weights=${r?.attention[l] ? headView(r.attention[l], j) : null}></mha-heatmap>
      </div>`;
  }

  _headBox(l, j, reference, tokens, off, copying) {
    if (!reference) return this._headOnText(l, j, tokens, off);
    const ref = reference.find((x) => x.layer === l && x.head === j);
    const copy = copying.find((x) => x.layer === l && x.head === j);
    const verdict = inductionVerdict(ref, copy);
    const says = {
      induction: 'induction head: attends and copies',
      'attends-only': 'attends like an induction head; its output does not copy',
      'copies-only': 'its output copies',
      neither: 'its output does not copy',
    }[verdict];
    const here = this.textScores?.find((x) => x.layer === l && x.head === j)?.scores;
    const key = SCORE_OF[ref.type] ?? 'entropy';
    const what = key === 'entropy' ? 'entropy' : 'score';
    const hereText = !here ? '—' : here[key] === null ? (key === 'induction' ? 'no repeated span' : '—') : f2(here[key]);
    return this._headCard(l, j, ref.type, off, tokens, ref.type, html`
        <p class="scores" part="scores" data-probes=${ref.scores[key]} data-text=${here?.[key] ?? ''}>${what}: probes ${f2(ref.scores[key])} · this text ${hereText}</p>
        <p class=${`copying v-${verdict}`} part="copying" data-copying=${copy.score} data-verdict=${verdict}>copying ${f2(copy.score)}
          (${copy.copied}/${copy.total}) · ${says}</p>`);
  }
}

customElements.get('mha-trained-heads') || customElements.define('mha-trained-heads', MhaTrainedHeads);

import { LitElement, html, css, nothing } from 'lit';
import { AttrGuard, schemeAttr, intAttr, rawAttr } from '../base/attr-check.js';
import { baseStyles, toHeads } from '../base/shared.js';
import { parseScale, SHARED_DOMAIN } from './heatmap/scale.js';
import './mha-heatmap.js';
import { AttrSource } from '../base/attr-data.js';

/**
 * `<mha-heads>` — the attention weights of every head of one layer, side by side as small
 * multiples, each captioned "head i · d_k = …". By default every map is coloured on one fixed
 * range, 0 to 1 (`scale="shared"`), so that heads, and the maps of other layers or other settings
 * of h, compare by colour: a sharp head is bright where a diffuse one is dark. A line under the
 * maps states the scale in use.
 *
 * Press a head's caption button to enlarge it (values printed in the cells); press it again to
 * go back. Hovering or focusing a query row in any head highlights that row in every head.
 *
 * @element mha-heads
 *
 * @prop {{data: Float32Array, shape: number[]}|number[][][]} weights - `[h, Tq, Tk]` weights
 *   (a `[1, h, Tq, Tk]` tensor is accepted too), or an array of `[Tq, Tk]` matrices.
 * @prop {string[]} tokens - Query (and key) labels.
 * @prop {string[]} keyTokens - Key labels when they differ from the queries.
 * @prop {number|number[]} dK - d_k of every head (one number, or one per head when widths differ).
 * @prop {string[]} headNames - Optional names, e.g. ["taste", "budget"], shown after "head i".
 *
 * @attr {'viridis'|'cividis'} scheme - Color scale of all heads (default viridis).
 * @attr {number} expanded - Index (0-based) of the enlarged head; absent (the default): none. Clicking a head
 *   sets it, clicking it again removes the attribute.
 * @attr {boolean} show-values - Print values in every small multiple too.
 * @attr {'shared'|'per-map'} scale - `shared` (default): one colour range for every head, 0 to 1 (the range of any
 *   attention weight); `per-map`: each head from 0 to its own largest weight (patterns of flat heads show, but colours
 *   no longer compare between heads). A bad value keeps the last good one and shows a message naming it.
 *
 * @attr {string} src - URL of a JSON file `{"weights": [[[…]]], "tokens"?, "keyTokens"?, "headNames"?, "dK"?}` (h maps of
 *   Tq rows of Tk numbers), fetched and shown: a page needs no script of its own (attr-data.js). Wins over `model`.
 * @attr {string} model - A shipped model's name (e.g. "charlm-h4-s0") or the URL of a .safetensors file, run on
 *   `text` in the shared engine; shows every head of layer `layer`.
 * @attr {string} text - The text the model reads (with `model`; at most the model's context).
 * @attr {number} layer - The layer shown, 1-based (with `model`; default 1).
 *
 * @fires mha-error - `{detail: {error}}` (an MHAError, INVALID_ARGUMENT, `argument` the attribute) when `scale` is not
 *   one of its values, or `src`, `model`, `text` or `layer` is bad or cannot be read (shown in place).
 * @fires mha-data - `{detail: {source: 'src'|'model'}}` when the data of `src` or `model` has been set.
 * @fires mha-expand - `{detail: {head}}` when a head is enlarged (-1 when collapsed).
 *
 * @csspart heads - The container of the small multiples.
 * @csspart head - Each head's figure wrapper.
 * @csspart caption - Each caption button.
 * @csspart heatmap - Each `<mha-heatmap>` (their own parts are forwarded as `heatmap-*`).
 * @csspart scale-note - The line under the maps that states the colour scale.
 * @csspart error - The message of a bad attribute.
 *
 * @cssprop --mha-heads-gap - Space between heads (default 1rem).
 * @cssprop --mha-head-flex - The `flex` of each head's card (default `0 1 auto`; e.g. `1 1 8rem` for cards that share a narrow row).
 * @cssprop --mha-head-min-width - The `min-width` of each head's card (default auto; 0 lets a card narrower than its caption wrap it).
 */
export class MhaHeads extends LitElement {
  static properties = {
    weights: { attribute: false },
    tokens: { attribute: false },
    keyTokens: { attribute: false },
    dK: { attribute: false },
    headNames: { attribute: false },
    scheme: { type: String },
    expanded: { converter: rawAttr, reflect: true },
    showValues: { type: Boolean, attribute: 'show-values' },
    scale: { type: String },
    src: { type: String },
    model: { type: String },
    text: { type: String },
    layer: { type: String },
    _row: { state: true },
  };

  static styles = [baseStyles, css`
    :host { display: block; }
    /* the maps of a row line up whatever the lines of their captions (heads stretched to the row, maps at the bottom) */
    .heads { display: flex; flex-wrap: wrap; gap: var(--mha-heads-gap, 1rem); align-items: stretch; }
    .head {
      border: 1px solid var(--_border); border-radius: var(--_radius); padding: 0.4em 0.5em;
      background: var(--_bg); flex: var(--mha-head-flex, 0 1 auto); min-width: var(--mha-head-min-width, auto);
      display: flex; flex-direction: column; align-items: flex-start;
    }
    .head > mha-heatmap { margin-top: auto; }
    .head.big { flex-basis: 100%; }
    /* an enlarged head shows its values at the heatmap's own cell size, whatever size the small ones are given */
    .head.big mha-heatmap { --mha-cell-size: initial; }
    .cap { display: block; font-size: 0.8em; margin-bottom: 0.35em; background: none; border: 0;
      padding: 0.1em 0.2em; color: var(--_fg); text-align: left; }
    .cap:hover { text-decoration: underline; }
    .cap .hint { font-size: 0.9em; }
    .empty { color: var(--_muted); font-size: 0.9em; }
    .scale-note { color: var(--_muted); font-size: 0.85em; margin: 0.4em 0 0; }
  `];

  constructor() {
    super();
    this.weights = null;
    this.tokens = null;
    this.keyTokens = null;
    this.dK = null;
    this.headNames = null;
    this.scheme = 'viridis';
    /** @type {number|string|null} */ this.expanded = null;
    this.showValues = false;
    this.scale = null;
    this._scale = 'shared';
    this._scheme = 'viridis';
    this._expanded = -1;
    this._attrs = new AttrGuard(this);
    this._row = -1;
    this._headsFor = {};
    this._heads = [];
    this.src = null;
    this.model = null;
    this.text = null;
    this.layer = null;
    this._source = new AttrSource(this, 3);
  }

  /** Per-head matrices as nested arrays `[h][Tq][Tk]` (converted once per new `weights`). */
  get heads() {
    if (this._headsFor !== this.weights) {
      this._headsFor = this.weights;
      try { this._heads = toHeads(this.weights); } catch { this._heads = []; }
    }
    return this._heads;
  }

  /** The colour scale in use: `shared` or `per-map` (the last good value of `scale`). */
  get scaleInUse() {
    return this._scale;
  }

  willUpdate(changed) {
    this._source.update(changed);
    if (changed.has('scale') || changed.has('scheme') || changed.has('expanded')) {
      // one message and one mha-error per bad value; the last good value stays (attr-check.js)
      const g = this._attrs;
      g.begin();
      this._scale = g.take('scale', { dflt: 'shared', ...parseScale(this.scale, 'shared') });
      this._scheme = g.take('scheme', schemeAttr(this.scheme));
      this._expanded = g.take('expanded', intAttr('expanded', this.expanded, { dflt: -1, min: 0, max: 4096 }));
      g.end();
    }
  }

  _toggle(i) {
    this.expanded = this._expanded === i ? null : i;
    this.dispatchEvent(new CustomEvent('mha-expand', { detail: { head: this.expanded ?? -1 }, bubbles: true, composed: true }));
  }

  render() {
    return html`${this._source.view()}${this._renderHeads()}`;
  }

  _renderHeads() {
    const heads = this.heads;
    const error = this._attrs.view();
    if (!heads.length) return html`${error}<p class="empty">No heads to show yet.</p>`;
    const shared = this._scale === 'shared';
    const domain = shared ? SHARED_DOMAIN : null;
    const dk = (i) => (Array.isArray(this.dK) ? this.dK[i] : this.dK);
    return html`${error}<div class="heads" part="heads" @mha-row-hover=${(e) => { this._row = e.detail.row; }}>
      ${heads.map((m, i) => {
        const big = this._expanded === i;
        const name = this.headNames?.[i] ? ` (${this.headNames[i]})` : '';
        const label = `head ${i + 1}${name}`;
        return html`<div class=${big ? 'head big' : 'head'} part="head" data-head=${i}>
          <button class="cap" part="caption" type="button" aria-pressed=${big ? 'true' : 'false'}
                  @click=${() => this._toggle(i)}
                  title=${big ? 'show all heads small' : 'enlarge this head'}>
            <strong>${label}</strong>${dk(i) != null ? html` · d<sub>k</sub> = ${dk(i)}` : nothing}
            <span class="hint">${big ? '(shrink)' : ''}</span>
          </button>
          <mha-heatmap part="heatmap" exportparts="cell: heatmap-cell, grid: heatmap-grid, legend: heatmap-legend, readout: heatmap-readout, save: heatmap-save"
            .weights=${m} .tokens=${this.tokens} .keyTokens=${this.keyTokens} .domain=${domain}
            .highlightRow=${this._row} label=${label} scheme=${this._scheme} scale=${shared ? 'shared' : 'per-map'}
            ?compact=${!big && heads.length > 4} ?show-values=${big || this.showValues}></mha-heatmap>
        </div>`;
      })}
    </div>
    <p class="scale-note" part="scale-note" data-scale=${this._scale}>${shared
      ? `Colour: 0 to 1, the same scale for every head, so colours compare between heads and between settings.`
      : 'Colour: each head on its own scale, from 0 to its largest weight (the numbers under each map): colours do not compare between heads.'}</p>`;
  }
}

customElements.get('mha-heads') || customElements.define('mha-heads', MhaHeads);

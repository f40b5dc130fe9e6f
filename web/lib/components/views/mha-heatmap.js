import { LitElement, html, css, nothing } from 'lit';
import { AttrGuard, enumAttr, intAttr, rawAttr } from '../base/attr-check.js';
import { guard } from 'lit/directives/guard.js';
import { baseStyles, toMatrix, colorFor, interpolatorFor, textOn, fmt } from '../base/shared.js';
import { MHAError } from '../../src/index.js';
import { AttrSource } from '../base/attr-data.js';

/** Length in characters (code points) of the longest label. */
function longest(labels) {
  let n = 1;
  for (const t of labels) n = Math.max(n, t.length === 1 ? 1 : [...t].length);
  return n;
}

/**
 * The values of the `scale` attribute of `<mha-heatmap>` and `<mha-heads>`: `shared` colours every
 * map on one fixed range, 0 to 1 (every attention weight lies in it: a softmax row sums to 1), so
 * that maps (heads, layers, settings of h) can be compared by colour; `per-map` stretches each map
 * from 0 to its own largest weight, which shows the pattern of a flat map but not how sharp it is.
 */
export const SCALES = Object.freeze(['shared', 'per-map']);

/** The colour range of `scale="shared"`. */
export const SHARED_DOMAIN = Object.freeze([0, 1]);

/**
 * Checks a `scale` attribute.
 * @param {string|null|undefined} raw the attribute as written (null/undefined: absent)
 * @param {string} dflt the element's default
 * @returns {{value: string}|{error: MHAError}} an INVALID_ARGUMENT error naming the attribute, the expected and the actual value
 */
export function parseScale(raw, dflt) {
  if (raw === null || raw === undefined) return { value: dflt };
  const v = String(raw).trim();
  if (SCALES.includes(v)) return { value: v };
  return { error: new MHAError('INVALID_ARGUMENT', `scale: expected ${SCALES.map((x) => `"${x}"`).join(' or ')}, got ${JSON.stringify(String(raw))}`, { argument: 'scale' }) };
}

/** Grids of more cells than this are drawn on a canvas; smaller ones keep a DOM node per cell. */
export const CANVAS_ABOVE = 256;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const packed = new Map();   // CSS color of the scale -> RGBA packed for a Uint32Array over ImageData
function pack(color) {
  let v = packed.get(color);
  if (v === undefined) {
    let r = 0, g = 0, b = 0;
    if (color.startsWith('#')) {
      const hex = color.length === 4 ? color.slice(1).replace(/./g, '$&$&') : color.slice(1, 7);
      const n = parseInt(hex, 16);
      r = (n >> 16) & 255; g = (n >> 8) & 255; b = n & 255;
    } else {
      [r, g, b] = (color.match(/\d+(\.\d+)?/g) ?? [0, 0, 0]).map((x) => Math.round(Number(x)));
    }
    v = LITTLE_ENDIAN ? ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
    if (packed.size > 8192) packed.clear();
    packed.set(color, v);
  }
  return v;
}

/**
 * `<mha-heatmap>` — one attention head's `Tq × Tk` weights as a grid of colored cells.
 *
 * Rows are queries, columns are keys. Hover a cell, or move the keyboard focus onto it (Tab into
 * the grid, then the arrow keys, Home/End, Ctrl+Home/End, PageUp/PageDown), and the readout shows
 * "query → key: value".
 *
 * Two renderings, chosen by size (`mode`):
 * - `'dom'` (up to 256 cells, e.g. 16 × 16): one focusable `role="gridcell"` node per cell (roving
 *   tabindex, `data-r`/`data-c`/`data-value`), and the same numbers in a visually hidden `<table>`.
 * - `'canvas'` (more cells, e.g. the 96 × 96 maps of a trained model): the cells are drawn on one
 *   `<canvas>` (device-pixel-ratio aware), so a grid costs a few hundred nodes, not tens of
 *   thousands. Token labels stay DOM text. The plot is one focusable `role="application"` element
 *   whose name says the head and the active cell; the keys move an active cell drawn with a focus
 *   outline, the readout (a polite live region) announces it, the pointer shows the value under it.
 *   A "Table of values" disclosure renders the full table only while it is open.
 * Colors come from a perceptually uniform, color-blind-safe scale (viridis or cividis) and a
 * legend prints the numeric range. `toPNG()` / `toSVG()` and the "Save PNG" / "Save SVG" buttons
 * export the picture.
 *
 * @element mha-heatmap
 *
 * @prop {number[][]|{data: Float32Array, shape: number[]}} weights - The `[Tq, Tk]` matrix.
 * @prop {string[]} tokens - Labels of the queries (and of the keys unless `keyTokens` is set).
 * @prop {string[]} keyTokens - Labels of the keys, for cross-attention (defaults to `tokens`).
 * @prop {[number, number]} domain - Value range of the color scale; when set it wins over `scale`.
 * @prop {number} highlightRow - Query row to highlight (-1 for none); set by `<mha-heads>`.
 *
 * @attr {string} label - Accessible name and PNG title, e.g. "head 1".
 * @attr {'viridis'|'cividis'} scheme - Color scale (default viridis).
 * @attr {'per-map'|'shared'} scale - Range of the colours: `per-map` (default) from 0 to this map's largest value;
 *   `shared` from 0 to 1, the range of every attention weight, so that separate maps compare by colour. A bad
 *   value keeps the last good one and shows a message naming it (and fires `mha-error`).
 * @attr {boolean} show-values - Print the value inside every cell.
 * @attr {number} digits - Decimals in the readout and cells (default 3).
 * @attr {boolean} no-save - Hide the "Save PNG" button.
 * @attr {boolean} compact - Smaller cells and no legend text under 4 keys (for small multiples).
 * @attr {string} src - URL of a JSON file `{"weights": [[…], …], "tokens"?: […], "keyTokens"?: […]}` (Tq rows of
 *   Tk numbers), fetched and shown: a page needs no script of its own (attr-data.js). Wins over `model`.
 * @attr {string} model - A shipped model's name (e.g. "charlm-h4-s0", a file of the models' index.json) or the URL
 *   of a .safetensors file, run on `text` in the shared engine; shows head `head` of layer `layer`.
 * @attr {string} text - The text the model reads (with `model`; at most the model's context).
 * @attr {number} layer - The layer shown, 1-based (with `model`; default 1).
 * @attr {number} head - The head shown, 1-based (with `model`; default 1).
 *
 * @fires mha-error - `{detail: {error}}` (an MHAError, INVALID_ARGUMENT, `argument` the attribute) when `scale` is
 *   not one of its values, or `src`, `model`, `text`, `layer` or `head` is bad or cannot be read (shown in place;
 *   the last good weights stay).
 * @fires mha-data - `{detail: {source: 'src'|'model'}}` when the data of `src` or `model` has been set.
 * @fires mha-cell-focus - `{detail: {row, col, query, key, value}}` when a cell gets hover or focus.
 * @fires mha-row-hover - `{detail: {row}}` when the pointer or focus enters a query row (-1 on leave).
 *
 * @prop {'dom'|'canvas'} mode - Read-only: how the cells are drawn (canvas above 256 cells).
 *
 * @csspart figure - The outer `<figure>`.
 * @csspart grid - The cell grid (role="grid" in DOM mode; labels and plot in canvas mode).
 * @csspart cell - Every value cell (DOM mode only: a canvas grid has no node per cell).
 * @csspart canvas - The `<canvas>` the cells are drawn on (canvas mode only).
 * @csspart table - The "Table of values" disclosure (canvas mode only).
 * @csspart label - Row and column token labels.
 * @csspart readout - The "query → key: value" line.
 * @csspart legend - The color legend.
 * @csspart save - The "Save PNG" button.
 * @csspart error - The message of a bad attribute.
 *
 * @cssprop --mha-cell-size - Side of one cell (default 28px; 20px when compact).
 * @cssprop --mha-fg, --mha-bg, --mha-muted, --mha-border, --mha-focus, --mha-font - Theme.
 */
export class MhaHeatmap extends LitElement {
  static properties = {
    weights: { attribute: false },
    tokens: { attribute: false },
    keyTokens: { attribute: false },
    domain: { attribute: false },
    highlightRow: { type: Number, attribute: 'highlight-row' },
    label: { type: String },
    scheme: { type: String },
    scale: { type: String },
    showValues: { type: Boolean, attribute: 'show-values', reflect: true },
    digits: { converter: rawAttr },
    noSave: { type: Boolean, attribute: 'no-save' },
    compact: { type: Boolean, reflect: true },
    src: { type: String },
    model: { type: String },
    text: { type: String },
    layer: { type: String },
    head: { type: String },
    _active: { state: true },
    _readout: { state: true },
  };

  static styles = [baseStyles, css`
    :host { display: inline-block; --_cell: var(--mha-cell-size, 28px); }
    :host([compact]) { --_cell: var(--mha-cell-size, 20px); }
    :host([show-values]) { --_cell: var(--mha-cell-size, 44px); }
    :host([show-values][compact]) { --_cell: var(--mha-cell-size, 34px); }
    figure { margin: 0; display: inline-flex; flex-direction: column; gap: 0.35em; }
    .grid {
      display: grid; gap: 1px; align-items: stretch; justify-items: stretch;
      font-size: 0.75em; line-height: 1;
    }
    .row { display: contents; }
    .corner { font-size: 0.85em; color: var(--_muted); align-self: end; padding: 0 4px 2px 0; }
    .rl {
      color: var(--_fg); text-align: right; padding-right: 4px; white-space: nowrap;
      align-self: center; max-width: 7em; overflow: hidden; text-overflow: ellipsis;
    }
    .cl {
      color: var(--_fg); writing-mode: vertical-rl; transform: rotate(180deg);
      white-space: nowrap; padding-bottom: 3px; align-self: end; justify-self: center;
      max-height: 6em; overflow: hidden; text-overflow: ellipsis;
    }
    .hl .rl { font-weight: 700; text-decoration: underline; }
    .cell {
      width: var(--_cell); height: var(--_cell); box-sizing: border-box; display: flex;
      align-items: center; justify-content: center; font-variant-numeric: tabular-nums;
      font-size: 0.9em; border-radius: 2px; outline-offset: 0;
    }
    .cell:focus-visible, .cell.active:focus { outline: 3px solid var(--_focus); outline-offset: -1px; z-index: 1; }
    .hl .cell { box-shadow: inset 0 0 0 2px var(--_fg); }
    .readout {
      min-height: 1.3em; font-size: 0.8em; font-variant-numeric: tabular-nums; color: var(--_fg);
    }
    .legend { display: flex; align-items: center; gap: 0.4em; font-size: 0.72em; color: var(--_muted); }
    .bar { height: 10px; flex: 1 1 auto; min-width: 60px; border-radius: 2px; border: 1px solid var(--_border); }
    .actions { display: flex; justify-content: flex-end; }
    .actions button { font-size: 0.72em; padding: 0.15em 0.5em; }
    .empty { color: var(--_muted); font-size: 0.85em; }
    /* canvas mode */
    .cgrid {
      display: grid; grid-template-columns: auto max-content; gap: 1px;
      font-size: 0.75em; line-height: 1; justify-content: start;
    }
    .cols { display: grid; grid-template-columns: repeat(var(--_tk), var(--_cell)); gap: 1px; }
    .rows { display: grid; grid-template-rows: repeat(var(--_tq), var(--_cell)); gap: 1px; }
    /* Every label is a fixed-size, contained box (a relayout boundary): typing a character
       changes one label's text without laying out the other 191 again. Sizes follow the longest
       token (--_rlw, --_clh, in ch of the label's own font, capped like the DOM mode's labels). */
    .cols .cl, .rows .rl { contain: strict; box-sizing: border-box; }
    .rows .rl { width: min(7em, var(--_rlw)); height: var(--_cell); line-height: var(--_cell); align-self: auto; }
    .cols .cl { width: var(--_cell); height: min(6em, var(--_clh)); line-height: var(--_cell); align-self: auto; justify-self: auto; }
    .rl.hl { font-weight: 700; text-decoration: underline; }
    @supports (writing-mode: sideways-lr) {
      /* the same bottom-to-top text without a transform per label (cheaper to lay out and paint) */
      .cols .cl { writing-mode: sideways-lr; transform: none; padding: 0 0 3px 0; }
    }
    .plot {
      position: relative; cursor: crosshair;
      width: calc(var(--_tk) * var(--_cell) + (var(--_tk) - 1) * 1px);
      height: calc(var(--_tq) * var(--_cell) + (var(--_tq) - 1) * 1px);
    }
    .plot canvas { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; }
    .plot canvas.lores {
      image-rendering: pixelated;
      -webkit-mask:
        linear-gradient(to right, #000 var(--_cell), transparent 0) 0 0 / calc(var(--_cell) + 1px) 100% repeat-x,
        linear-gradient(to bottom, #000 var(--_cell), transparent 0) 0 0 / 100% calc(var(--_cell) + 1px) repeat-y;
      -webkit-mask-composite: source-in;
      mask:
        linear-gradient(to right, #000 var(--_cell), transparent 0) 0 0 / calc(var(--_cell) + 1px) 100% repeat-x,
        linear-gradient(to bottom, #000 var(--_cell), transparent 0) 0 0 / 100% calc(var(--_cell) + 1px) repeat-y;
      mask-composite: intersect;
    }
    .plot canvas.overlay { left: -4px; top: -4px; width: calc(100% + 8px); height: calc(100% + 8px); }
    .values { font-size: 0.8em; color: var(--_fg); }
    .values summary { cursor: pointer; color: var(--_muted); }
    .table-wrap { max-height: 20em; max-width: 100%; overflow: auto; margin-top: 0.3em; }
    .table-wrap table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.9em; }
    .table-wrap caption { text-align: left; color: var(--_muted); padding-bottom: 0.2em; }
    .table-wrap th, .table-wrap td { border: 1px solid var(--_border); padding: 1px 4px; text-align: right; }
    .table-wrap thead th { position: sticky; top: 0; background: var(--_bg); }
    .table-wrap tbody th { position: sticky; left: 0; background: var(--_bg); }
  `];

  constructor() {
    super();
    this.weights = null;
    this.tokens = null;
    this.keyTokens = null;
    this.domain = null;
    this.highlightRow = -1;
    this.label = 'attention weights';
    this.scheme = 'viridis';
    this.scale = null;
    this._scale = 'per-map';
    this._scheme = 'viridis';
    this._digits = 3;
    this._attrs = new AttrGuard(this);
    this.showValues = false;
    this.digits = 3;
    this.noSave = false;
    this.compact = false;
    this._active = [0, 0];
    this._shown = null;
    this._readout = '';
    this._tableOpen = false;
    this._focused = false;
    this._hover = null;
    this._drawn = null;   // what the base canvas shows: {key, canvas, cssW, cssH}
    this.src = null;
    this.model = null;
    this.text = null;
    this.layer = null;
    this.head = null;
    this._source = new AttrSource(this, 2);
  }

  /** The weights as nested arrays `[Tq][Tk]` (converted once per `weights` value). */
  get matrix() {
    if (this._mFor !== this.weights || !this._m) {
      this._mFor = this.weights;
      try { this._m = toMatrix(this.weights); } catch { this._m = []; }
    }
    return this._m;
  }

  /**
   * The weight of query `r`, key `c` (undefined outside the grid).
   * @param {number} r query row
   * @param {number} c key column
   * @returns {number|undefined}
   */
  valueAt(r, c) {
    return this.matrix[r]?.[c];
  }

  /** How the cells are drawn: `'dom'` (a node per cell) or `'canvas'` (above 256 cells). */
  get mode() {
    const m = this.matrix;
    return m.length * (m[0]?.length ?? 0) > CANVAS_ABOVE ? 'canvas' : 'dom';
  }

  _labels(m) {
    const tq = m.length, tk = m[0]?.length ?? 0;
    const c = this._labelCache;
    if (c && c.tq === tq && c.tk === tk && c.tokens === this.tokens && c.keyTokens === this.keyTokens) return c.out;
    const qt = this.tokens ?? [];
    const kt = this.keyTokens ?? this.tokens ?? [];
    const out = {
      q: Array.from({ length: tq }, (_, i) => String(qt[i] ?? `q${i + 1}`)),
      k: Array.from({ length: tk }, (_, i) => String(kt[i] ?? `k${i + 1}`)),
    };
    this._labelCache = { tq, tk, tokens: this.tokens, keyTokens: this.keyTokens, out };
    return out;
  }

  /** The colour scale in use: `per-map` or `shared` (the last good value of `scale`). */
  get scaleInUse() {
    return this._scale;
  }

  _domain(m) {
    if (Array.isArray(this.domain) && this.domain.length === 2) return this.domain;
    if (this._scale === 'shared') return SHARED_DOMAIN;
    if (this._domainOf?.m === m) return this._domainOf.range;
    let hi = 0;
    for (const row of m) for (const v of row) if (v > hi) hi = v;
    const range = [0, hi || 1];
    this._domainOf = { m, range };
    return range;
  }

  /** The readout text of cell (r, c), e.g. "bank → river: 0.412". */
  describe(r, c) {
    const m = this.matrix;
    const { q, k } = this._labels(m);
    if (!m[r] || m[r][c] === undefined) return '';
    return `${q[r]} \u2192 ${k[c]}: ${fmt(m[r][c], this._digits)}`;
  }

  _show(r, c, fromFocus) {
    const m = this.matrix;
    if (!m[r] || m[r][c] === undefined) return;
    if (fromFocus) this._active = [r, c];
    this._shown = [r, c];
    this._readout = this.describe(r, c);
    const { q, k } = this._labels(m);
    this.dispatchEvent(new CustomEvent('mha-cell-focus', {
      detail: { row: r, col: c, query: q[r], key: k[c], value: m[r][c] }, bubbles: true, composed: true,
    }));
    this._rowHover(r);
  }

  _rowHover(r) {
    if (this._lastRow === r) return;
    this._lastRow = r;
    this.dispatchEvent(new CustomEvent('mha-row-hover', { detail: { row: r }, bubbles: true, composed: true }));
  }

  _onKey(e) {
    const m = this.matrix;
    const tq = m.length, tk = m[0]?.length ?? 0;
    let [r, c] = this._active;
    switch (e.key) {
      case 'ArrowUp': r = Math.max(0, r - 1); break;
      case 'ArrowDown': r = Math.min(tq - 1, r + 1); break;
      case 'ArrowLeft': c = Math.max(0, c - 1); break;
      case 'ArrowRight': c = Math.min(tk - 1, c + 1); break;
      case 'Home': c = 0; if (e.ctrlKey) r = 0; break;
      case 'End': c = tk - 1; if (e.ctrlKey) r = tq - 1; break;
      case 'PageUp': r = 0; break;
      case 'PageDown': r = tq - 1; break;
      default: return;
    }
    e.preventDefault();
    if (this.mode === 'canvas') {
      this._show(r, c, true);
      return;
    }
    this._active = [r, c];
    this.updateComplete.then(() => {
      const cell = this.renderRoot.querySelector(`.cell[data-r="${r}"][data-c="${c}"]`);
      cell?.focus();
    });
  }

  willUpdate(changed) {
    this._source.update(changed);
    if (changed.has('scale') || changed.has('scheme') || changed.has('digits')) {
      // one message and one mha-error per bad value; the last good value stays (attr-check.js)
      const g = this._attrs;
      g.begin();
      this._scale = g.take('scale', { dflt: 'per-map', ...parseScale(this.scale, 'per-map') });
      this._scheme = g.take('scheme', enumAttr('scheme', this.scheme, { dflt: 'viridis', values: ['viridis', 'cividis'] }));
      this._digits = g.take('digits', intAttr('digits', this.digits, { dflt: 3, min: 0, max: 10 }));
      g.end();
    }
    if (changed.has('weights')) {
      const m = this.matrix;
      const [r, c] = this._active;
      if (r >= m.length || c >= (m[0]?.length ?? 0)) this._active = [0, 0];
      // keep the readout in step with the new numbers of the cell last shown
      if (this._shown) this._readout = this.describe(...this._shown);
    }
  }

  render() {
    return html`${this._source.view()}${this._renderMap()}`;
  }

  _renderMap() {
    const m = this.matrix;
    if (!m.length || !m[0]?.length) {
      return html`<figure part="figure">${this._attrs.view()}<p class="empty">No attention weights yet.</p></figure>`;
    }
    if (this.mode === 'canvas') return this._renderCanvas(m);
    const { q, k } = this._labels(m);
    const [lo, hi] = this._domain(m);
    const color = colorFor(this._scheme, lo, hi);
    const digits = this._digits;
    const [ar, ac] = this._active;
    return html`
      <figure part="figure">
        <div class="grid" part="grid" role="grid" aria-label=${`${this.label}: rows are queries, columns are keys`}
             aria-readonly="true"
             style=${`grid-template-columns: auto repeat(${k.length}, var(--_cell))`}
             @keydown=${this._onKey}
             @mouseleave=${() => this._rowHover(-1)}>
          <div class="row" role="row">
            <span class="corner" role="columnheader"><span class="sr-only">query</span><span aria-hidden="true">q / k</span></span>
            ${k.map((t) => html`<span class="cl" part="label" role="columnheader" title=${t}>${t}</span>`)}
          </div>
          ${m.map((row, r) => html`
            <div class=${r === this.highlightRow ? 'row hl' : 'row'} role="row">
              <span class="rl" part="label" role="rowheader" title=${q[r]}
                    @mouseenter=${() => this._rowHover(r)}>${q[r]}</span>
              ${row.map((v, c) => {
                const bg = color(v);
                const active = r === ar && c === ac;
                return html`<div class=${active ? 'cell active' : 'cell'} part="cell" role="gridcell"
                  data-r=${r} data-c=${c} data-value=${String(v)}
                  tabindex=${active ? 0 : -1}
                  aria-label=${`${q[r]} to ${k[c]}: ${fmt(v, digits)}`}
                  style=${`background:${bg};color:${textOn(bg)}`}
                  @mouseenter=${() => this._show(r, c, false)}
                  @focus=${() => this._show(r, c, true)}
                  @click=${() => { this._active = [r, c]; }}
                >${this.showValues ? fmt(v, digits >= 3 && this.compact ? 2 : digits) : nothing}</div>`;
              })}
            </div>`)}
        </div>
        ${this._tail(lo, hi)}
        <div class="sr-only"><table>
          <caption>${this.label}: attention weights, rows are queries and columns are keys</caption>
          <thead><tr><th scope="col">query</th>${k.map((t) => html`<th scope="col">${t}</th>`)}</tr></thead>
          <tbody>${m.map((row, r) => html`<tr><th scope="row">${q[r]}</th>${row.map((v) => html`<td>${fmt(v, digits)}</td>`)}</tr>`)}</tbody>
        </table></div>
      </figure>`;
  }

  /** Readout, legend and save buttons: the same in both modes. */
  _tail(lo, hi) {
    const interp = interpolatorFor(this._scheme);
    const stops = Array.from({ length: 11 }, (_, i) => `${interp(i / 10)} ${i * 10}%`).join(', ');
    return html`
        ${this._attrs.view()}
        <div class="readout" part="readout" id="readout" role="status" aria-live="polite">${this._readout}</div>
        <div class="legend" part="legend">
          <span class="lo">${fmt(lo, 2)}</span>
          <span class="bar" role="img" aria-label=${`color scale ${this._scheme} from ${fmt(lo, 2)} to ${fmt(hi, 2)}`}
                style=${`background: linear-gradient(to right, ${stops})`}></span>
          <span class="hi">${fmt(hi, 2)}</span>
        </div>
        ${this.noSave ? nothing : html`<div class="actions">
          <button part="save" type="button" @click=${() => this.download()}
                  aria-label=${`Save PNG of ${this.label}`}>Save PNG</button>
          <button part="save save-svg" type="button" @click=${() => this.download(undefined, 'svg')}
                  aria-label=${`Save SVG of ${this.label}`}>Save SVG</button></div>`}`;
  }

  // ---- canvas mode --------------------------------------------------------------------------

  _renderCanvas(m) {
    const { q, k } = this._labels(m);
    const [lo, hi] = this._domain(m);
    const [ar, ac] = this._active;
    const hl = this.highlightRow;
    const active = this.describe(ar, ac).replace(' \u2192 ', ' to ');
    return html`
      <figure part="figure">
        <div class="cgrid" part="grid" style=${`--_tq:${q.length};--_tk:${k.length};` +
          `--_rlw:calc(${longest(q)}ch * 1.2 + 1em);--_clh:calc(${longest(k)}ch * 1.2 + 1em)`}>
          <span class="corner" aria-hidden="true">q / k</span>
          <div class="cols" aria-hidden="true">${guard([k], () => k.map((t) => html`<span class="cl" part="label" title=${t}>${t}</span>`))}</div>
          <div class="rows" aria-hidden="true">${guard([q, hl], () => q.map((t, r) => html`<span class=${r === hl ? 'rl hl' : 'rl'} part="label" title=${t}
                @mouseenter=${() => this._rowHover(r)}>${t}</span>`))}</div>
          <div class="plot" tabindex="0" role="application" aria-roledescription="heatmap"
               aria-label=${`${this.label}: ${q.length} queries by ${k.length} keys; active cell ${active}`}
               aria-describedby="readout keys-hint"
               @keydown=${this._onKey} @focus=${this._onPlotFocus} @blur=${this._onPlotBlur}
               @pointermove=${this._onPlotMove} @pointerleave=${this._onPlotLeave} @click=${this._onPlotClick}>
            <canvas part="canvas" class=${this.showValues ? 'hires' : 'lores'} aria-hidden="true"></canvas>
            <canvas class="overlay" aria-hidden="true" hidden></canvas>
          </div>
        </div>
        <span class="sr-only" id="keys-hint">Arrow keys move between cells; Home and End go to the first and last key,
          Page Up and Page Down to the first and last query. Every value is in the table of values below.</span>
        ${this._tail(lo, hi)}
        <details class="values" part="table" @toggle=${this._onToggle}>
          <summary>Table of values</summary>
          ${this._tableOpen ? guard([m, q, k, this.digits, this.label], () => this._table(m, q, k)) : nothing}
        </details>
      </figure>`;
  }

  _table(m, q, k) {
    const digits = this._digits;
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${`${this.label}: table of values`}>
      <table>
        <caption>${this.label}: attention weights, rows are queries and columns are keys</caption>
        <thead><tr><th scope="col">query</th>${k.map((t) => html`<th scope="col">${t}</th>`)}</tr></thead>
        <tbody>${m.map((row, r) => html`<tr><th scope="row">${q[r]}</th>${row.map((v) => html`<td>${fmt(v, digits)}</td>`)}</tr>`)}</tbody>
      </table></div>`;
  }

  _onToggle(e) {
    const open = e.target.open;
    if (open !== this._tableOpen) {
      this._tableOpen = open;
      this.requestUpdate();
    }
  }

  _onPlotFocus() {
    this._focused = true;
    const [r, c] = this._active;
    this._show(r, c, true);
    this._drawOverlay();
  }

  _onPlotBlur() {
    this._focused = false;
    this._drawOverlay();
  }

  /** The cell under a pointer event on the plot, or null. */
  _cellAt(e) {
    const m = this.matrix;
    const tq = m.length, tk = m[0]?.length ?? 0;
    const box = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - box.left, y = e.clientY - box.top;
    if (!tq || !tk || x < 0 || y < 0 || x >= box.width || y >= box.height) return null;
    // the plot is Tk cells and Tk - 1 gaps of 1px wide: one pitch is (width + 1) / Tk
    const c = Math.min(tk - 1, Math.floor(x / ((box.width + 1) / tk)));
    const r = Math.min(tq - 1, Math.floor(y / ((box.height + 1) / tq)));
    return [r, c];
  }

  _onPlotMove(e) {
    const at = this._cellAt(e);
    if (!at || (this._hover && this._hover[0] === at[0] && this._hover[1] === at[1])) return;
    this._hover = at;
    this._show(at[0], at[1], false);
  }

  _onPlotLeave() {
    this._hover = null;
    this._rowHover(-1);
  }

  _onPlotClick(e) {
    const at = this._cellAt(e);
    if (at) this._show(at[0], at[1], true);
  }

  /** Side of one cell in CSS pixels (the resolved --mha-cell-size). */
  _cellSize(plot, tk) {
    const v = getComputedStyle(this).getPropertyValue('--_cell').trim();
    if (/^[\d.]+px$/.test(v)) return parseFloat(v);
    return (plot.getBoundingClientRect().width + 1) / tk - 1;
  }

  updated(changed) {
    super.updated?.(changed);
    if (this.mode !== 'canvas') {
      this._drawn = null;
      this._focused = false;
      this._ro?.disconnect();
      return;
    }
    const canvas = this.renderRoot.querySelector('canvas[part="canvas"]');
    if (!canvas) return;
    const plot = canvas.parentElement;
    if (this._observed !== plot) {
      this._ro ??= new ResizeObserver(() => {
        const d = this._drawn;
        if (!d) return;
        const w = d.plot.getBoundingClientRect().width;
        if (Math.abs(w - d.cssW) > 0.5) { this._drawn = null; this._cellPx = undefined; this.requestUpdate(); }
      });
      this._ro.disconnect();
      this._ro.observe(plot);
      this._observed = plot;
    }
    const m = this.matrix;
    const tq = m.length, tk = m[0].length;
    // Reading the cell size forces a style recalc: do it only when it can have changed (first
    // draw, compact / show-values, a resize the ResizeObserver saw, a new plot element).
    if (this._cellPx === undefined || changed.has('compact') || changed.has('showValues') || this._drawn?.plot !== plot) {
      this._cellPx = this._cellSize(plot, tk);
    }
    const cell = this._cellPx;
    const dpr = window.devicePixelRatio || 1;
    const key = `${tq}x${tk}@${cell}@${dpr}`;
    const d = this._drawn;
    if (!d || d.canvas !== canvas || d.key !== key || d.m !== m || changed.has('domain') || changed.has('scheme') || changed.has('scale') ||
        changed.has('showValues') || changed.has('digits') || changed.has('compact')) {
      this._drawBase(canvas, m, cell, dpr, key);
      this._watchDpr(dpr);
    }
    this._drawOverlay();
  }

  /** Redraw when the page zoom (device pixel ratio) changes. */
  _watchDpr(dpr) {
    if (this._dprWatched === dpr) return;
    this._dprWatched = dpr;
    this._dprQuery?.removeEventListener('change', this._dprChange);
    this._dprChange ??= () => { this._drawn = null; this._cellPx = undefined; this.requestUpdate(); };
    this._dprQuery = matchMedia(`(resolution: ${dpr}dppx)`);
    this._dprQuery.addEventListener('change', this._dprChange);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._ro?.disconnect();
    this._observed = null;
    this._dprQuery?.removeEventListener('change', this._dprChange);
    this._dprWatched = null;
  }

  /**
   * Paint every cell. Without printed values the bitmap has one pixel per cell, scaled up by CSS
   * with `image-rendering: pixelated` (crisp at any devicePixelRatio) and a CSS mask that cuts the
   * 1px gaps between cells: a 96 × 96 map is a 36 KB bitmap, cheap to fill, upload and composite.
   * With printed values (show-values) it is drawn at device resolution, text included.
   */
  _drawBase(canvas, m, cell, dpr, key) {
    const tq = m.length, tk = m[0].length;
    const pitch = cell + 1;
    const cssW = tk * pitch - 1, cssH = tq * pitch - 1;
    const lores = !this.showValues;
    const W = lores ? tk : Math.max(1, Math.round(cssW * dpr)), H = lores ? tq : Math.max(1, Math.round(cssH * dpr));
    if (canvas.width !== W) canvas.width = W;
    if (canvas.height !== H) canvas.height = H;
    const g = canvas.getContext('2d');
    let img = this._img;
    const fresh = !img || img.width !== W || img.height !== H || this._imgKey !== `${key}/${lores}`;
    if (!img || img.width !== W || img.height !== H) img = this._img = g.createImageData(W, H);
    this._imgKey = `${key}/${lores}`;
    const px = new Uint32Array(img.data.buffer);
    const [lo, hi] = this._domain(m);
    const color = colorFor(this._scheme, lo, hi);
    if (lores) {
      for (let r = 0, i = 0; r < tq; r++) {
        const row = m[r];
        for (let c = 0; c < tk; c++, i++) px[i] = pack(color(row[c]));
      }
      g.putImageData(img, 0, 0);
      this._drawn = { key, canvas, plot: canvas.parentElement, m, cell, pitch, cssW, cssH, dpr };
      return;
    }
    // the gaps are never written: clear them once per geometry
    if (fresh) px.fill(0);
    // device-pixel edges of every column and row of cells (the 1px gaps stay transparent)
    const x0 = new Int32Array(tk), x1 = new Int32Array(tk);
    for (let c = 0; c < tk; c++) { x0[c] = Math.round(c * pitch * dpr); x1[c] = Math.min(W, Math.round((c * pitch + cell) * dpr)); }
    for (let r = 0; r < tq; r++) {
      const y0 = Math.round(r * pitch * dpr), y1 = Math.min(H, Math.round((r * pitch + cell) * dpr));
      if (y1 <= y0) continue;
      const row = m[r], base = y0 * W;
      for (let c = 0; c < tk; c++) px.fill(pack(color(row[c])), base + x0[c], base + x1[c]);
      for (let y = y0 + 1; y < y1; y++) px.copyWithin(y * W, base, base + W);
    }
    g.putImageData(img, 0, 0);
    if (this.showValues) {
      const digits = this._digits;
      const d = digits >= 3 && this.compact ? 2 : digits;
      const size = parseFloat(getComputedStyle(canvas).fontSize) * 0.9 || 10;
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.font = `${size}px ${getComputedStyle(this).fontFamily}`;
      g.textAlign = 'center'; g.textBaseline = 'middle';
      for (let r = 0; r < tq; r++) {
        for (let c = 0; c < tk; c++) {
          g.fillStyle = textOn(color(m[r][c]));
          g.fillText(fmt(m[r][c], d), c * pitch + cell / 2, r * pitch + cell / 2, cell);
        }
      }
      g.setTransform(1, 0, 0, 1, 0, 0);
    }
    this._drawn = { key, canvas, plot: canvas.parentElement, m, cell, pitch, cssW, cssH, dpr };
  }

  /** The highlighted row and, while the plot has focus, the active cell's outline. */
  _drawOverlay() {
    const d = this._drawn;
    if (!d) return;
    const over = d.plot.querySelector('canvas.overlay');
    if (!over) return;
    const pad = 4;
    const W = Math.round((d.cssW + 2 * pad) * d.dpr), H = Math.round((d.cssH + 2 * pad) * d.dpr);
    const tq = d.m.length;
    const hl = this.highlightRow;
    const showRow = Number.isInteger(hl) && hl >= 0 && hl < tq;
    const g = over.getContext('2d');
    if (!showRow && !this._focused) {
      // nothing to draw: hide it (no layer to composite), read no style (a style recalc)
      if (!over.hidden) {
        over.hidden = true;
        over.width = 1; over.height = 1;
      }
      return;
    }
    over.hidden = false;
    if (over.width !== W) over.width = W;
    if (over.height !== H) over.height = H;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, W, H);
    g.setTransform(d.dpr, 0, 0, d.dpr, d.dpr * pad, d.dpr * pad);
    const style = getComputedStyle(this);
    if (showRow) {
      g.strokeStyle = style.getPropertyValue('--_fg').trim() || style.color;
      g.lineWidth = Math.min(2, d.cell / 3);
      const w = g.lineWidth;
      g.strokeRect(w / 2, hl * d.pitch + w / 2, d.cssW - w, d.cell - w);
    }
    if (this._focused) {
      const [r, c] = this._active;
      const x = c * d.pitch, y = r * d.pitch;
      g.lineWidth = 3;
      g.strokeStyle = style.getPropertyValue('--_focus').trim() || 'orangered';
      g.strokeRect(x - 1.5, y - 1.5, d.cell + 3, d.cell + 3);
      g.lineWidth = 1;
      g.strokeStyle = style.getPropertyValue('--_bg').trim() || '#fff';
      g.strokeRect(x - 3.5, y - 3.5, d.cell + 7, d.cell + 7);
    }
  }

  /** The picture's geometry and colors, shared by toPNG() and toSVG(). */
  _picture() {
    const m = this.matrix;
    const { q, k } = this._labels(m);
    const [lo, hi] = this._domain(m);
    const color = colorFor(this._scheme, lo, hi);
    const fg = getComputedStyle(this).color || '#000';
    const cell = 40, font = '13px system-ui, sans-serif';
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = font;
    const left = 12 + Math.max(...q.map((t) => probe.measureText(t).width));
    const top = 34 + Math.max(...k.map((t) => probe.measureText(t).width));
    const w = left + k.length * cell + 16, h = top + q.length * cell + 48;
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    const interp = interpolatorFor(this._scheme);
    return { m, q, k, lo, hi, color, fg, cell, font, left, top, w, h, bg: dark ? '#0d1117' : '#ffffff', interp,
      legendY: top + q.length * cell + 14, legendW: k.length * cell };
  }

  /**
   * Draw the heatmap (labels, cells, legend) on a canvas and return it as a PNG Blob.
   * @param {{scale?: number}} [opts] - device pixels per CSS pixel (default 2).
   * @returns {Promise<Blob>}
   */
  async toPNG({ scale = 2 } = {}) {
    const { m, q, k, lo, hi, color, fg, cell, font, left, top, w, h, bg, interp, legendY: ly, legendW: lw } = this._picture();
    const canvas = document.createElement('canvas');
    canvas.width = w * scale; canvas.height = h * scale;
    const g = canvas.getContext('2d');
    g.scale(scale, scale);
    g.fillStyle = bg;
    g.fillRect(0, 0, w, h);
    g.font = `600 ${font}`; g.fillStyle = fg; g.textBaseline = 'top';
    g.fillText(this.label, 6, 6);
    g.font = font;
    k.forEach((t, c) => {
      g.save(); g.translate(left + c * cell + cell / 2 + 4, top - 4); g.rotate(-Math.PI / 2);
      g.textBaseline = 'middle'; g.fillText(t, 0, 0); g.restore();
    });
    g.textBaseline = 'middle'; g.textAlign = 'right';
    q.forEach((t, r) => g.fillText(t, left - 6, top + r * cell + cell / 2));
    g.textAlign = 'center';
    m.forEach((row, r) => row.forEach((v, c) => {
      const cbg = color(v);
      g.fillStyle = cbg; g.fillRect(left + c * cell, top + r * cell, cell - 1, cell - 1);
      g.fillStyle = textOn(cbg);
      g.fillText(fmt(v, 2), left + c * cell + cell / 2, top + r * cell + cell / 2);
    }));
    const grad = g.createLinearGradient(left, 0, left + lw, 0);
    for (let i = 0; i <= 10; i++) grad.addColorStop(i / 10, interp(i / 10));
    g.fillStyle = grad; g.fillRect(left, ly, lw, 10);
    g.fillStyle = fg; g.textAlign = 'right'; g.fillText(fmt(lo, 2), left - 4, ly + 5);
    g.textAlign = 'left'; g.fillText(fmt(hi, 2), left + lw + 4 > w - 30 ? left + lw - 28 : left + lw + 4, ly + 24);
    return new Promise((res) => canvas.toBlob(res, 'image/png'));
  }

  /**
   * The same picture as toPNG() as a standalone SVG document (vector: text stays text, scales
   * without blur), one <rect> per cell carrying its value in a <title>.
   * @returns {string} the SVG markup
   */
  toSVG() {
    const { m, q, k, lo, hi, color, fg, cell, left, top, w, h, bg, interp, legendY: ly, legendW: lw } = this._picture();
    const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
    const parts = [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="system-ui, sans-serif" font-size="13">`,
      `<title>${esc(this.label)}</title>`,
      `<rect width="${w}" height="${h}" fill="${bg}"/>`,
      `<text x="6" y="18" font-weight="600" fill="${fg}">${esc(this.label)}</text>`,
      '<defs><linearGradient id="legend">',
      ...Array.from({ length: 11 }, (_, i) => `<stop offset="${i * 10}%" stop-color="${interp(i / 10)}"/>`),
      '</linearGradient></defs>',
    ];
    k.forEach((t, c) => parts.push(`<text transform="translate(${left + c * cell + cell / 2 + 4} ${top - 4}) rotate(-90)" dominant-baseline="middle" fill="${fg}">${esc(t)}</text>`));
    q.forEach((t, r) => parts.push(`<text x="${left - 6}" y="${top + r * cell + cell / 2}" text-anchor="end" dominant-baseline="middle" fill="${fg}">${esc(t)}</text>`));
    m.forEach((row, r) => row.forEach((v, c) => {
      const cbg = color(v);
      const x = left + c * cell, y = top + r * cell;
      parts.push(`<g class="cell"><title>${esc(q[r])} to ${esc(k[c])}: ${fmt(v, 4)}</title><rect x="${x}" y="${y}" width="${cell - 1}" height="${cell - 1}" fill="${cbg}"/>` +
        `<text x="${x + cell / 2}" y="${y + cell / 2}" text-anchor="middle" dominant-baseline="middle" fill="${textOn(cbg)}">${fmt(v, 2)}</text></g>`);
    }));
    parts.push(`<rect x="${left}" y="${ly}" width="${lw}" height="10" fill="url(#legend)"/>`,
      `<text x="${left - 4}" y="${ly + 5}" text-anchor="end" dominant-baseline="middle" fill="${fg}">${fmt(lo, 2)}</text>`,
      `<text x="${left + lw}" y="${ly + 24}" text-anchor="end" dominant-baseline="middle" fill="${fg}">${fmt(hi, 2)}</text>`, '</svg>');
    return parts.join('\n');
  }

  /**
   * Save the heatmap as a file named after the label.
   * @param {string} [filename]
   * @param {'png'|'svg'} [format] default 'png'
   */
  async download(filename, format = 'png') {
    const blob = format === 'svg' ? new Blob([this.toSVG()], { type: 'image/svg+xml' }) : await this.toPNG();
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = filename || `${this.label.replace(/[^\w.-]+/g, '_')}.${format}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }
}

customElements.get('mha-heatmap') || customElements.define('mha-heatmap', MhaHeatmap);

import { LitElement, html } from 'lit';
import { AttrGuard, schemeAttr, intAttr, rawAttr } from '../base/attr-check.js';
import { baseStyles, toMatrix, fmt } from '../base/shared.js';
import { AttrSource } from '../base/attr-data.js';
import { heatmapStyles } from './heatmap/styles.js';
import { CANVAS_ABOVE, SHARED_DOMAIN, parseScale, perMapDomain, tokenLabels } from './heatmap/scale.js';
import { renderDomGrid } from './heatmap/dom-grid.js';
import { renderCanvasGrid, cellAt, keyMove } from './heatmap/canvas-grid.js';
import { drawBase, drawOverlay } from './heatmap/paint.js';
import { turnNow, nextTurn, waitingTurn } from './heatmap/turns.js';
import { toPNG, toSVG, download } from './heatmap/export.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { themeColor, usedScheme } from '../base/color.js';

export { SCALES, SHARED_DOMAIN, CANVAS_ABOVE, parseScale } from './heatmap/scale.js';

/**
 * `<mha-heatmap>` — one attention head's `Tq × Tk` weights as a grid of colored cells.
 *
 * Rows are queries, columns are keys. Hover a cell, or move the keyboard focus onto it (Tab into
 * the grid, then the arrow keys, Home/End, Ctrl+Home/End, PageUp/PageDown), and the readout shows
 * "query → key: value".
 *
 * Two renderings, chosen by size (`mode`):
 * - `'dom'` (up to 256 cells, e.g. 16 × 16): one focusable `role="gridcell"` node per cell (roving
 *   tabindex, `data-r`/`data-c`/`data-value`) in a `role="grid"` whose row and column headers are the
 *   tokens: the one representation a screen reader reads.
 * - `'canvas'` (more cells, e.g. the 96 × 96 maps of a trained model): the cells are drawn on one
 *   `<canvas>` (device-pixel-ratio aware), so a grid costs a few hundred nodes, not tens of
 *   thousands. Token labels stay DOM text. The plot is one focusable `role="application"` element
 *   whose name says the head and the active cell; the keys move an active cell drawn with a focus
 *   outline, the readout (a polite live region) announces it, the pointer shows the value under it.
 *   A "Table of values" disclosure renders the full table only while it is open.
 * Colors come from a perceptually uniform, color-blind-safe scale (viridis or cividis) and a
 * legend prints the numeric range. `toPNG()` / `toSVG()` and the "Save PNG" / "Save SVG" buttons
 * export the picture; the buttons sit in the one disclosure under the map (with the canvas plot's
 * table), so that a map is at most two Tab stops: its cells and the disclosure.
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
 * @csspart table - The "Table of values" disclosure, with the save buttons (canvas mode only).
 * @csspart downloads - The disclosure of the save buttons (DOM mode, unless `no-save`).
 * @csspart label - Row and column token labels.
 * @csspart corner - The "q / k" corner above the row labels (canvas mode only).
 * @csspart readout - The "query → key: value" line.
 * @csspart legend - The color legend.
 * @csspart save - The "Save PNG" button.
 * @csspart error - The message of a bad attribute.
 *
 * @cssprop --mha-cell-size - Side of one cell (default 28px; 20px when compact).
 * @cssprop --mha-cell-gaps - `none`: canvas mode draws each cell over the 1px gap after it (for cells
 *   so small that the gaps would be half the map); read when the cell size is.
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

  static styles = [baseStyles, heatmapStyles];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
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
    /** @type {number|string} */ this.digits = 3;
    this.noSave = false;
    this.compact = false;
    this._active = [0, 0];
    this._shown = null;
    this._readout = '';
    this._tableOpen = false;
    this._focused = false;
    this._hover = null;
    this._drawn = null;   // what the base canvas shows (paint.js drawBase): {key, canvas, cssW, cssH, …}
    this._bitmap = {};    // the base canvas's last bitmap, reused while its size holds (paint.js)
    // what the renderers (heatmap/) call back
    this._on = {
      key: (e) => this._onKey(e), rowHover: (r) => this._rowHover(r), show: (r, c, focus) => this._show(r, c, focus),
      pick: (r, c) => { this._active = [r, c]; }, toggle: (e) => this._onToggle(e), save: (f) => this.download(undefined, f),
      plotFocus: () => this._onPlotFocus(), plotBlur: () => this._onPlotBlur(), plotMove: (e) => this._onPlotMove(e),
      plotLeave: () => this._onPlotLeave(), plotClick: (e) => this._onPlotClick(e),
    };
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
    this._labelCache = { tq, tk, tokens: this.tokens, keyTokens: this.keyTokens, out: tokenLabels(tq, tk, this.tokens, this.keyTokens) };
    return this._labelCache.out;
  }

  /** The colour scale in use: `per-map` or `shared` (the last good value of `scale`). */
  get scaleInUse() {
    return this._scale;
  }

  _domain(m) {
    if (Array.isArray(this.domain) && this.domain.length === 2) return this.domain;
    if (this._scale === 'shared') return SHARED_DOMAIN;
    if (this._domainOf?.m === m) return this._domainOf.range;
    const range = perMapDomain(m);
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
    const to = keyMove(e, this._active, m.length, m[0]?.length ?? 0);
    if (!to) return;
    const [r, c] = to;
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

  /**
   * A canvas map updates in its turn (heatmap/turns.js): the maps updating in one task share a
   * time budget, the others wait for a later task, so a dozen new maps at once do not make one long
   * main-thread task. A map's first canvas paint (its labels laid out, its cell size read) always
   * waits for a turn: the page's own changes that came with its weights are laid out first, in
   * another task. `updateComplete` still resolves once the map is painted.
   */
  scheduleUpdate() {
    if (this.mode !== 'canvas' || (this._drawn && !waitingTurn() && turnNow())) return super.scheduleUpdate();
    return this._inTurn();
  }

  async _inTurn() {
    do await nextTurn(); while (!turnNow());
    super.scheduleUpdate();
  }

  willUpdate(changed) {
    this._source.update(changed);
    if (changed.has('scale') || changed.has('scheme') || changed.has('digits')) {
      // one message and one mha-error per bad value; the last good value stays (attr-check.js)
      const g = this._attrs;
      g.begin();
      this._scale = g.take('scale', { dflt: 'per-map', ...parseScale(this.scale, 'per-map') });
      this._scheme = g.take('scheme', schemeAttr(this.scheme));
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
    return this.mode === 'canvas' ? renderCanvasGrid(this._view(m)) : renderDomGrid(this._view(m));
  }

  /** What the renderers draw (heatmap/view.js): labels, colour range, options, state and the handlers. */
  _view(m) {
    const { q, k } = this._labels(m);
    const [lo, hi] = this._domain(m);
    return { m, q, k, lo, hi, label: this.label, scheme: this._scheme, digits: this._digits, active: this._active,
      activeText: this.describe(...this._active), step: this._labelStep ?? 1, highlightRow: this.highlightRow,
      showValues: this.showValues, compact: this.compact, noSave: this.noSave, tableOpen: this._tableOpen,
      readout: this._readout, messages: this._attrs.view(), on: this._on };
  }

  /** What the exporters draw (heatmap/export.js): the cells, labels, colour range and theme. */
  _picture() {
    const m = this.matrix;
    const [lo, hi] = this._domain(m);
    return { label: this.label, m, ...this._labels(m), lo, hi, scheme: this._scheme,
      fg: getComputedStyle(this).color || '#000', dark: usedScheme(this) === 'dark' };
  }

  // ---- canvas mode: events of the plot, painting after render ------------------------------------

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

  _onPlotMove(e) {
    const at = cellAt(e, this.matrix.length, this.matrix[0]?.length ?? 0);
    if (!at || (this._hover && this._hover[0] === at[0] && this._hover[1] === at[1])) return;
    this._hover = at;
    this._show(at[0], at[1], false);
  }

  _onPlotLeave() {
    this._hover = null;
    this._rowHover(-1);
  }

  _onPlotClick(e) {
    const at = cellAt(e, this.matrix.length, this.matrix[0]?.length ?? 0);
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
      this._watchGrid();
      return;
    }
    this._gridRo?.disconnect();
    this._gridObserved = null;
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
      this._solid = getComputedStyle(this).getPropertyValue('--mha-cell-gaps').trim() === 'none';
      this._fitLabels(this._cellPx);
    }
    const cell = this._cellPx;
    const dpr = window.devicePixelRatio || 1;
    const key = `${tq}x${tk}@${cell}@${dpr}${this._solid ? '/solid' : ''}`;
    const d = this._drawn;
    if (!d || d.canvas !== canvas || d.key !== key || d.m !== m || changed.has('domain') || changed.has('scheme') || changed.has('scale') ||
        changed.has('showValues') || changed.has('digits') || changed.has('compact')) {
      const [lo, hi] = this._domain(m);
      const digits = this._digits >= 3 && this.compact ? 2 : this._digits;
      this._drawn = drawBase(this._bitmap, canvas, m, { cell, dpr, key, lo, hi, scheme: this._scheme, showValues: this.showValues, digits, solid: this._solid });
      this._watchDpr(dpr);
    }
    this._drawOverlay();
  }

  /**
   * DOM mode: the label step follows the cell size, measured whenever the grid's box changes (a
   * new shape, `compact`, a page's --mha-cell-size from a container query; the observer also
   * reports once on observing), after layout, so no update forces a style recalculation.
   */
  _watchGrid() {
    const grid = this.renderRoot.querySelector('.grid');
    if (!grid || this._gridObserved === grid) return;
    this._gridRo ??= new ResizeObserver(() => {
      const g = this._gridObserved;
      const cell = g?.isConnected && g.querySelector('.cell');
      if (!cell) return;
      const v = getComputedStyle(this).getPropertyValue('--_cell').trim();
      this._fitLabels(/^[\d.]+px$/.test(v) ? parseFloat(v) : cell.getBoundingClientRect().height);
    });
    this._gridRo.disconnect();
    this._gridRo.observe(grid);
    this._gridObserved = grid;
  }

  /**
   * How many cells one token label spans: 1 when a line of label text fits in a cell, else enough
   * cells for one (the labels keep their legible size; every step-th token is labelled).
   */
  _fitLabels(cell) {
    const label = this.renderRoot.querySelector('.rl');
    const px = label ? parseFloat(getComputedStyle(label).fontSize) : 0;
    const step = px > 0 ? Math.max(1, Math.ceil((px * 1.1) / (cell + 1))) : 1;
    if (step !== (this._labelStep ?? 1)) {
      this._labelStep = step;
      this.requestUpdate();
    }
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
    this._gridRo?.disconnect();
    this._gridObserved = null;
    this._dprQuery?.removeEventListener('change', this._dprChange);
    this._dprWatched = null;
  }

  /** The highlighted row and, while the plot has focus, the active cell's outline. */
  _drawOverlay() {
    drawOverlay(this._drawn, { highlightRow: this.highlightRow, focused: this._focused, active: this._active, color: (n) => themeColor(this, n) });
  }

  /**
   * Draw the heatmap (labels, cells, legend) on a canvas and return it as a PNG Blob.
   * @param {{scale?: number}} [opts] - device pixels per CSS pixel (default 2).
   * @returns {Promise<Blob>}
   */
  async toPNG(opts) {
    return toPNG(this._picture(), opts);
  }

  /**
   * The same picture as toPNG() as a standalone SVG document (vector: text stays text, scales
   * without blur), one <rect> per cell carrying its value in a <title>.
   * @returns {string} the SVG markup
   */
  toSVG() {
    return toSVG(this._picture());
  }

  /**
   * Save the heatmap as a file named after the label.
   * @param {string} [filename]
   * @param {'png'|'svg'} [format] default 'png'
   */
  async download(filename, format = 'png') {
    return download(this._picture(), filename, format);
  }
}

customElements.get('mha-heatmap') || customElements.define('mha-heatmap', MhaHeatmap);

import { LitElement, html, css, nothing } from 'lit';
import { baseStyles, toMatrix, colorFor, interpolatorFor, textOn, fmt, num } from './shared.js';

/**
 * `<mha-heatmap>` — one attention head's `Tq × Tk` weights as a grid of colored cells.
 *
 * Rows are queries, columns are keys. Hover a cell, or move the keyboard focus onto it (Tab into
 * the grid, then the arrow keys, Home/End, PageUp/PageDown), and the readout shows
 * "query → key: value". The same numbers are in a visually hidden `<table>` for screen readers.
 * Colors come from a perceptually uniform, color-blind-safe scale (viridis or cividis) and a
 * legend prints the numeric range. `toPNG()` / `toSVG()` and the "Save PNG" / "Save SVG" buttons
 * export the picture.
 *
 * @element mha-heatmap
 *
 * @prop {number[][]|{data: Float32Array, shape: number[]}} weights - The `[Tq, Tk]` matrix.
 * @prop {string[]} tokens - Labels of the queries (and of the keys unless `keyTokens` is set).
 * @prop {string[]} keyTokens - Labels of the keys, for cross-attention (defaults to `tokens`).
 * @prop {[number, number]} domain - Value range of the color scale; default `[0, max]` of the data.
 * @prop {number} highlightRow - Query row to highlight (-1 for none); set by `<mha-heads>`.
 *
 * @attr {string} label - Accessible name and PNG title, e.g. "head 1".
 * @attr {'viridis'|'cividis'} scheme - Color scale (default viridis).
 * @attr {boolean} show-values - Print the value inside every cell.
 * @attr {number} digits - Decimals in the readout and cells (default 3).
 * @attr {boolean} no-save - Hide the "Save PNG" button.
 * @attr {boolean} compact - Smaller cells and no legend text under 4 keys (for small multiples).
 *
 * @fires mha-cell-focus - `{detail: {row, col, query, key, value}}` when a cell gets hover or focus.
 * @fires mha-row-hover - `{detail: {row}}` when the pointer or focus enters a query row (-1 on leave).
 *
 * @csspart figure - The outer `<figure>`.
 * @csspart grid - The cell grid (role="grid").
 * @csspart cell - Every value cell.
 * @csspart label - Row and column token labels.
 * @csspart readout - The "query → key: value" line.
 * @csspart legend - The color legend.
 * @csspart save - The "Save PNG" button.
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
    showValues: { type: Boolean, attribute: 'show-values', reflect: true },
    digits: { type: Number },
    noSave: { type: Boolean, attribute: 'no-save' },
    compact: { type: Boolean, reflect: true },
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
    this.showValues = false;
    this.digits = 3;
    this.noSave = false;
    this.compact = false;
    this._active = [0, 0];
    this._shown = null;
    this._readout = '';
  }

  /** The weights as nested arrays `[Tq][Tk]`. */
  get matrix() {
    try { return toMatrix(this.weights); } catch { return []; }
  }

  _labels(m) {
    const tq = m.length, tk = m[0]?.length ?? 0;
    const qt = this.tokens ?? [];
    const kt = this.keyTokens ?? this.tokens ?? [];
    return {
      q: Array.from({ length: tq }, (_, i) => String(qt[i] ?? `q${i + 1}`)),
      k: Array.from({ length: tk }, (_, i) => String(kt[i] ?? `k${i + 1}`)),
    };
  }

  _domain(m) {
    if (Array.isArray(this.domain) && this.domain.length === 2) return this.domain;
    let hi = 0;
    for (const row of m) for (const v of row) if (v > hi) hi = v;
    return [0, hi || 1];
  }

  /** The readout text of cell (r, c), e.g. "bank → river: 0.412". */
  describe(r, c) {
    const m = this.matrix;
    const { q, k } = this._labels(m);
    if (!m[r] || m[r][c] === undefined) return '';
    return `${q[r]} \u2192 ${k[c]}: ${fmt(m[r][c], num(this.digits, 3))}`;
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
    this._active = [r, c];
    this.updateComplete.then(() => {
      const cell = this.renderRoot.querySelector(`.cell[data-r="${r}"][data-c="${c}"]`);
      cell?.focus();
    });
  }

  willUpdate(changed) {
    if (changed.has('weights')) {
      const m = this.matrix;
      const [r, c] = this._active;
      if (r >= m.length || c >= (m[0]?.length ?? 0)) this._active = [0, 0];
      // keep the readout in step with the new numbers of the cell last shown
      if (this._shown) this._readout = this.describe(...this._shown);
    }
  }

  render() {
    const m = this.matrix;
    if (!m.length || !m[0]?.length) {
      return html`<figure part="figure"><p class="empty">No attention weights yet.</p></figure>`;
    }
    const { q, k } = this._labels(m);
    const [lo, hi] = this._domain(m);
    const color = colorFor(this.scheme, lo, hi);
    const digits = num(this.digits, 3);
    const [ar, ac] = this._active;
    const interp = interpolatorFor(this.scheme);
    const stops = Array.from({ length: 11 }, (_, i) => `${interp(i / 10)} ${i * 10}%`).join(', ');
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
        <div class="readout" part="readout" role="status" aria-live="polite">${this._readout}</div>
        <div class="legend" part="legend">
          <span class="lo">${fmt(lo, 2)}</span>
          <span class="bar" role="img" aria-label=${`color scale ${this.scheme} from ${fmt(lo, 2)} to ${fmt(hi, 2)}`}
                style=${`background: linear-gradient(to right, ${stops})`}></span>
          <span class="hi">${fmt(hi, 2)}</span>
        </div>
        ${this.noSave ? nothing : html`<div class="actions">
          <button part="save" type="button" @click=${() => this.download()}
                  aria-label=${`Save PNG of ${this.label}`}>Save PNG</button>
          <button part="save save-svg" type="button" @click=${() => this.download(undefined, 'svg')}
                  aria-label=${`Save SVG of ${this.label}`}>Save SVG</button></div>`}
        <table class="sr-only">
          <caption>${this.label}: attention weights, rows are queries and columns are keys</caption>
          <thead><tr><th scope="col">query</th>${k.map((t) => html`<th scope="col">${t}</th>`)}</tr></thead>
          <tbody>${m.map((row, r) => html`<tr><th scope="row">${q[r]}</th>${row.map((v) => html`<td>${fmt(v, digits)}</td>`)}</tr>`)}</tbody>
        </table>
      </figure>`;
  }

  /** The picture's geometry and colors, shared by toPNG() and toSVG(). */
  _picture() {
    const m = this.matrix;
    const { q, k } = this._labels(m);
    const [lo, hi] = this._domain(m);
    const color = colorFor(this.scheme, lo, hi);
    const fg = getComputedStyle(this).color || '#000';
    const cell = 40, font = '13px system-ui, sans-serif';
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = font;
    const left = 12 + Math.max(...q.map((t) => probe.measureText(t).width));
    const top = 34 + Math.max(...k.map((t) => probe.measureText(t).width));
    const w = left + k.length * cell + 16, h = top + q.length * cell + 48;
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    const interp = interpolatorFor(this.scheme);
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

// The DOM rendering of <mha-heatmap> (up to CANVAS_ABOVE cells): one focusable role="gridcell" node
// per cell with a roving tabindex, its row and column headers the token labels: the one accessible
// representation of the numbers (a screen reader's table commands walk the grid).
import { html, nothing } from 'lit';
import { fmt } from '../../base/shared.js';
import { colorFor, textOn } from '../../base/color.js';
import { renderTail } from './legend.js';

/**
 * The grid of cells: rows are queries, columns are keys; each cell carries `data-r`, `data-c`,
 * `data-value` and an aria-label "query to key: value".
 * @param {import('./view.js').HeatmapView} view what the element draws (its `_view(m)`: labels, range, active cell, options, handlers)
 * @returns {import('lit').TemplateResult}
 */
export function renderDomGrid(view) {
  const { m, q, k, lo, hi, digits, on } = view;
  const color = colorFor(view.scheme, lo, hi);
  const [ar, ac] = view.active;
  const cellText = (v) => (view.showValues ? fmt(v, digits >= 3 && view.compact ? 2 : digits) : nothing);
  // labels stay legible (11 px or more) on cells smaller than a line of text: then every step-th
  // token's label spans `step` cells and the others are headers for screen readers only (taken out
  // of the grid's placement), so every row and column keeps its header
  const step = view.step;
  const span = (i, n) => Math.min(step, n - i);
  const spaced = step > 1 ? ' spaced' : '';
  const colHeader = (t, c) => (c % step
    ? html`<span class="cl sr-only" part="label" role="columnheader">${t}</span>`
    : html`<span class=${`cl${spaced}`} part="label" role="columnheader" title=${t}
        style=${step > 1 ? `grid-column: span ${span(c, k.length)}` : nothing}>${t}</span>`);
  const rowHeader = (t, r) => (r % step
    ? html`<span class="rl sr-only" part="label" role="rowheader">${t}</span>`
    : html`<span class=${`rl${spaced}`} part="label" role="rowheader" title=${t}
        style=${step > 1 ? `grid-row: span ${span(r, q.length)}` : nothing}
        @mouseenter=${() => on.rowHover(r)}>${t}</span>`);
  const cell = (v, r, c) => {
    const bg = color(v);
    const active = r === ar && c === ac;
    return html`<div class=${active ? 'cell active' : 'cell'} part="cell" role="gridcell"
      data-r=${r} data-c=${c} data-value=${String(v)}
      tabindex=${active ? 0 : -1}
      aria-label=${`${q[r]} to ${k[c]}: ${fmt(v, digits)}`}
      style=${`background:${bg};color:${textOn(bg)}`}
      @mouseenter=${() => on.show(r, c, false)}
      @focus=${() => on.show(r, c, true)}
      @click=${() => on.pick(r, c)}
    >${cellText(v)}</div>`;
  };
  return html`
    <figure part="figure">
      <div class="grid" part="grid" role="grid" aria-label=${`${view.label}: rows are queries, columns are keys`}
           aria-readonly="true"
           style=${`grid-template-columns: auto repeat(${k.length}, var(--_cell))`}
           @keydown=${on.key}
           @mouseleave=${() => on.rowHover(-1)}>
        <div class="row" role="row">
          <span class="corner" role="columnheader"><span class="sr-only">query</span><span aria-hidden="true">q / k</span></span>
          ${k.map(colHeader)}
        </div>
        ${m.map((row, r) => html`
          <div class=${r === view.highlightRow ? 'row hl' : 'row'} role="row">
            ${rowHeader(q[r], r)}
            ${row.map((v, c) => cell(v, r, c))}
          </div>`)}
      </div>
      ${renderTail(view)}
    </figure>`;
}

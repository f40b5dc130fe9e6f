// The canvas rendering of <mha-heatmap> (more than CANVAS_ABOVE cells): DOM token labels around one
// focusable role="application" plot whose cells are painted on a canvas (paint.js), and a "Table of
// values" disclosure (with the save buttons) whose table is rendered only while open.
import { html, nothing } from 'lit';
import { guard } from 'lit/directives/guard.js';
import { renderTail } from './legend.js';
import { valuesTable } from './table.js';

/** Length in characters (code points) of the longest label. */
export function longest(labels) {
  let n = 1;
  for (const t of labels) n = Math.max(n, t.length === 1 ? 1 : [...t].length);
  return n;
}

/**
 * The labels, the plot (a base canvas and a focus/highlight overlay, painted after render), the
 * keyboard hint, readout, legend and the table disclosure.
 * @param {import('./view.js').HeatmapView} v what the element draws (its `_view(m)`: labels, range, active cell, options, handlers)
 * @returns {import('lit').TemplateResult}
 */
export function renderCanvasGrid(v) {
  const { m, q, k, on, label } = v;
  const hl = v.highlightRow;
  const active = v.activeText.replace(' \u2192 ', ' to ');
  // labels stay legible (11 px or more) on cells smaller than a line of text: then every step-th
  // token is labelled, its label spanning `step` cells (the readout and the table name every one)
  const step = v.step;
  const span = (i, n) => Math.min(step, n - i);
  const spaced = step > 1 ? ' spaced' : '';
  const rowLabel = (t, r) => (r % step ? nothing : html`<span class=${`rl${r === hl ? ' hl' : ''}${spaced}`} part="label" title=${t}
        style=${step > 1 ? `grid-row: ${r + 1} / span ${span(r, q.length)}; --_span: ${span(r, q.length)}` : nothing}
        @mouseenter=${() => on.rowHover(r)}>${t}</span>`);
  const colLabel = (t, c) => (c % step ? nothing : html`<span class=${`cl${spaced}`} part="label" title=${t}
        style=${step > 1 ? `grid-column: ${c + 1} / span ${span(c, k.length)}; --_span: ${span(c, k.length)}` : nothing}>${t}</span>`);
  return html`
    <figure part="figure">
      <div class="cgrid" part="grid" style=${`--_tq:${q.length};--_tk:${k.length};` +
        `--_rlw:calc(${longest(q)}ch * 1.2 + 1em);--_clh:calc(${longest(k)}ch * 1.2 + 1em)`}>
        <span class="corner" part="corner" aria-hidden="true">q / k</span>
        <div class="cols" aria-hidden="true">${guard([k, step], () => k.map(colLabel))}</div>
        <div class="rows" aria-hidden="true">${guard([q, hl, step], () => q.map(rowLabel))}</div>
        <div class="plot" tabindex="0" role="application" aria-roledescription="heatmap"
             aria-label=${`${label}: ${q.length} queries by ${k.length} keys; active cell ${active}`}
             aria-describedby="readout keys-hint"
             @keydown=${on.key} @focus=${on.plotFocus} @blur=${on.plotBlur}
             @pointermove=${on.plotMove} @pointerleave=${on.plotLeave} @click=${on.plotClick}>
          <canvas part="canvas" aria-hidden="true"></canvas>
          <canvas class="overlay" aria-hidden="true" hidden></canvas>
        </div>
      </div>
      <span class="sr-only" id="keys-hint">Arrow keys move between cells; Home and End go to the first and last key,
        Page Up and Page Down to the first and last query. Every value is in the table of values below.</span>
      ${renderTail(v, v.tableOpen ? guard([m, q, k, v.digits, label], () => html`<div class="table-wrap" tabindex="0"
        role="region" aria-label=${`${label}: table of values`}>${valuesTable(label, m, q, k, v.digits)}</div>`) : nothing)}
    </figure>`;
}

/**
 * The cell under a pointer event on the plot. The plot is Tk cells and Tk − 1 gaps of 1px wide
 * (likewise Tq rows): one pitch is (width + 1) / Tk.
 * @param {{currentTarget: Element, clientX: number, clientY: number}} e the event
 * @param {number} tq queries
 * @param {number} tk keys
 * @returns {[number, number]|null} `[row, col]`, or null outside the plot
 */
export function cellAt(e, tq, tk) {
  const box = e.currentTarget.getBoundingClientRect();
  const x = e.clientX - box.left, y = e.clientY - box.top;
  if (!tq || !tk || x < 0 || y < 0 || x >= box.width || y >= box.height) return null;
  const c = Math.min(tk - 1, Math.floor(x / ((box.width + 1) / tk)));
  const r = Math.min(tq - 1, Math.floor(y / ((box.height + 1) / tq)));
  return [r, c];
}

/**
 * Where a key moves the active cell of a `tq × tk` map: the arrows one cell, Home/End to the first
 * or last key (with Ctrl, of the first or last query), PageUp/PageDown to the first or last query.
 * @param {{key: string, ctrlKey: boolean}} e the keyboard event
 * @param {[number, number]} active the active cell `[row, col]`
 * @param {number} tq queries
 * @param {number} tk keys
 * @returns {[number, number]|null} the new cell, or null for a key that moves nothing
 */
export function keyMove(e, [r, c], tq, tk) {
  switch (e.key) {
    case 'ArrowUp': return [Math.max(0, r - 1), c];
    case 'ArrowDown': return [Math.min(tq - 1, r + 1), c];
    case 'ArrowLeft': return [r, Math.max(0, c - 1)];
    case 'ArrowRight': return [r, Math.min(tk - 1, c + 1)];
    case 'Home': return [e.ctrlKey ? 0 : r, 0];
    case 'End': return [e.ctrlKey ? tq - 1 : r, tk - 1];
    case 'PageUp': return [0, c];
    case 'PageDown': return [tq - 1, c];
    default: return null;
  }
}

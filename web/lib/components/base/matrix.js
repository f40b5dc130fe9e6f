// Labelled matrices as tables, shared by <mha-stepper> and <mha-wo-mix>.
import { html, css } from 'lit';
import { fmt } from './shared.js';

/** Styles of the labelled matrices (`matrixTable`) and their scroll wrappers. */
export const matrixStyles = css`
  :host {
    --_hl: var(--mha-highlight, light-dark(#fff3b0, #5a4a00));
    --_hl-fg: var(--mha-highlight-fg, light-dark(#1b1f24, #ffffff));
  }
  @supports not (color: light-dark(#000, #fff)) {
    :host { --_hl: var(--mha-highlight, #fff3b0); --_hl-fg: var(--mha-highlight-fg, #1b1f24); }
    @media (prefers-color-scheme: dark) {
      :host { --_hl: var(--mha-highlight, #5a4a00); --_hl-fg: var(--mha-highlight-fg, #ffffff); }
    }
  }
  .scroll { overflow-x: auto; max-width: 100%; }
  table.matrix { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.85rem; margin: 0.3rem 0; }
  table.matrix caption { font-weight: 600; text-align: left; padding-bottom: 0.2em; white-space: nowrap; }
  table.matrix th { font-weight: 500; color: var(--_muted); padding: 0.15em 0.45em; font-size: 0.8rem; white-space: nowrap; }
  table.matrix th[scope='row'] { text-align: right; color: var(--_fg); }
  table.matrix td { padding: 0.2em 0.5em; text-align: right; border: 1px solid var(--_border); min-width: 3.4em; }
  table.matrix td.split, table.matrix th.split { border-left: 3px solid var(--_accent); }
  table.matrix.result td { background: var(--_surface); cursor: default; }
  table.matrix td.hl, table.matrix.result td.hl { background: var(--_hl); color: var(--_hl-fg); }
  table.matrix td.key { font-weight: 700; outline: 2px solid var(--_accent); outline-offset: -2px; }
  table.matrix td:focus-visible { outline: 3px solid var(--_focus); outline-offset: -3px; }
  table.matrix td.corner, table.matrix.result td.corner { border: 0; background: none; }
`;

/**
 * A labelled matrix as a `<table>` (Lit template).
 * @param {object} o
 * @param {unknown} o.caption - Caption (text or a Lit template).
 * @param {string[]} o.rows - Row labels.
 * @param {string[]} o.cols - Column labels.
 * @param {number[][]} o.values - The numbers.
 * @param {'operand'|'result'} [o.kind]
 * @param {number} [o.digits] - Digits after the point (default 3).
 * @param {number} [o.split] - Column index that starts a new head (drawn with a rule).
 * @param {string} [o.part] - The table's `part`.
 * @param {{row?: number, col?: number}|null} [o.hl] - Cells to highlight (a row, a column, or one cell).
 * @param {{r: number, c: number}|null} [o.tabCell] - The cell with tabindex 0 (roving focus), if any.
 * @param {(r: number, c: number) => string} [o.cellClass] - Extra class of a cell.
 * @param {object} [o.on] - `{enter(r, c), focus(r, c), keydown(event)}` handlers of the cells.
 */
export function matrixTable({ caption, rows, cols, values, kind = 'operand', digits = 3, split = -1, part = 'matrix',
  hl = null, tabCell = null, cellClass = null, on = null }) {
  const lit = (r, c) => !!hl && (hl.row === undefined || hl.row === r) && (hl.col === undefined || hl.col === c);
  return html`<table class="matrix ${kind}" part=${part} @keydown=${on?.keydown ?? null}>
    <caption>${caption}</caption>
    <thead><tr><td class="corner"></td>${cols.map((c, j) => html`<th scope="col" class=${j === split ? 'split' : ''}>${c}</th>`)}</tr></thead>
    <tbody>${values.map((row, r) => html`<tr><th scope="row">${rows[r]}</th>${row.map((v, c) => {
      const cls = [c === split ? 'split' : '', lit(r, c) ? 'hl' : '', cellClass?.(r, c) ?? ''].filter(Boolean).join(' ');
      return on
        ? html`<td class=${cls} data-r=${r} data-c=${c} data-value=${String(v)}
            tabindex=${tabCell && tabCell.r === r && tabCell.c === c ? 0 : -1}
            aria-label=${`${rows[r]}, ${cols[c]}: ${fmt(v, digits)}`}
            @mouseenter=${() => on.enter(r, c)} @focus=${() => on.focus(r, c)}>${fmt(v, digits)}</td>`
        : html`<td class=${cls} data-r=${r} data-c=${c} data-value=${String(v)}>${fmt(v, digits)}</td>`;
    })}</tr>`)}</tbody>
  </table>`;
}


// The values of a heatmap as an HTML table (the "Table of values" of the canvas plot).
import { html } from 'lit';
import { fmt } from '../../base/shared.js';

/**
 * A `<table>` of the weights, queries as rows and keys as columns.
 * @param {string} label the map's name (the caption begins with it)
 * @param {number[][]} m the `[Tq][Tk]` weights
 * @param {string[]} q the Tq query labels
 * @param {string[]} k the Tk key labels
 * @param {number} digits decimals of every value
 * @returns {import('lit').TemplateResult}
 */
export function valuesTable(label, m, q, k, digits) {
  return html`<table>
    <caption>${label}: attention weights, rows are queries and columns are keys</caption>
    <thead><tr><th scope="col">query</th>${k.map((t) => html`<th scope="col">${t}</th>`)}</tr></thead>
    <tbody>${m.map((row, r) => html`<tr><th scope="row">${q[r]}</th>${row.map((v) => html`<td>${fmt(v, digits)}</td>`)}</tr>`)}</tbody>
  </table>`;
}

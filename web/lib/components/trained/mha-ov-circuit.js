import { html, css, nothing } from 'lit';
import { copyingOf } from '../../src/index.js';
import { TrainedModelElement, trainedStyles, showChar, f2 } from './trained-shared.js';
import { fmt } from '../logic/format.js';
import '../views/mha-heatmap.js';

/** Two decimals with a true minus sign (−0.20), as the lesson's prose writes them; none on a value that rounds to zero. */
const signed = (v) => fmt(v, 2);

/** Width in CSS pixels of the heatmap's grid, whatever the vocabulary size. */
const MAP_PX = 200;

/**
 * Each row of a [V, V] matrix scaled from its smallest entry (0) to its largest (1), as rows for
 * `<mha-heatmap>`: what the copying score reads is which entry of a row is largest, not the row's scale.
 * @param {ArrayLike<number>} M [V, V] row-major
 * @param {number} V
 * @returns {number[][]}
 */
export function rowScaled(M, V) {
  const out = [];
  for (let s = 0; s < V; s++) {
    let lo = Infinity, hi = -Infinity;
    for (let t = 0; t < V; t++) { const v = M[s * V + t]; if (v < lo) lo = v; if (v > hi) hi = v; }
    const span = hi - lo || 1;
    out.push(Array.from({ length: V }, (_, t) => (M[s * V + t] - lo) / span));
  }
  return out;
}

/**
 * `<mha-ov-circuit>` — what each head of a trained model writes when it reads a token: its direct
 * OV path (token embedding → the layer's norm → W_V·W_O → the final norm → unembedding) as a
 * vocabulary × vocabulary heatmap, one row per token attended to, one column per logit raised,
 * each row scaled from its smallest to its largest logit. A bright diagonal is a head that copies.
 * Beside it, for every head: the label its attention earned on the probes, the copying score (the
 * share of rows whose diagonal entry is the largest: copying.js) and Elhage et al.'s eigenvalue
 * positivity Σλ / Σ|λ| of the same circuit (ov-eigen.js). The numbers are the JS API's.
 *
 * @element mha-ov-circuit
 *
 * @attr {string} model - URL of a model file (format mha-wasm.charlm/1); default: the shipped h = 4 model.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmap.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {[number, number]|null} selected - The head shown, 0-based [layer, head]; by default the head with the highest copying score.
 * @prop {Array<{layer: number, head: number, type: string, copying: number, positivity: number|null}>|null} rows -
 *   Read-only: the table's numbers, one entry per head.
 *
 * @fires mha-computed - `{detail: {rows}}` once the scores of a model are computed.
 * @fires mha-error - `{detail: {error}}`: a bad attribute or a model that cannot be loaded (shown in place).
 *
 * @csspart table - The table of heads (a radio button per head chooses the heatmap).
 * @csspart summary - The sentence about the head shown.
 * @csspart heatmap - The head's OV heatmap.
 * @csspart error - The error message.
 */
export class MhaOvCircuit extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    selected: { attribute: false },
    rows: { state: true },
  };

  static styles = [trainedStyles, css`
    table { border-collapse: collapse; margin: 0.4rem 0 0.8rem; }
    th, td { padding: 0.2em 0.6em; border-bottom: 1px solid var(--_border); text-align: left; }
    td.n { text-align: right; font-variant-numeric: tabular-nums; }
    td label { font-weight: 400; white-space: nowrap; }
    th { font-size: 0.9em; }
    input[type='radio']:focus-visible { outline: 2px solid var(--_accent); outline-offset: 2px; }
    .side { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: flex-start; }
    .side > * { min-width: 0; max-width: 100%; }
    .side p { max-width: 20rem; margin-top: 0.4rem; }
    .map { --mha-cell-size: 2px; overflow-x: auto; max-width: 100%; }
    .map mha-heatmap::part(label) { font-size: 3px; }
    /* wide: the sentence under the table, the map beside both */
    :host { container-type: inline-size; }
    @container (min-width: 900px) {
      .side { display: grid; grid-template-columns: max-content minmax(0, max-content); column-gap: 1.5rem;
        grid-template-rows: auto 1fr; align-items: start; }
      .side > div { display: contents; }
      .side > .scroll { grid-column: 1; grid-row: 1; }
      .side [part='summary'] { grid-column: 1; grid-row: 2; max-width: 32rem; margin: 0; }
      .side .map { grid-column: 2; grid-row: 1 / span 2; margin-top: 0.4rem; }
    }
  `];

  constructor() {
    super();
    this.selected = null;
    this.rows = null;
    this._ov = new Map();   // layer → its heads' [V, V] OV logits, or the promise of them (from the engine worker)
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    if (changed.has('lm')) this._compute();
  }

  /** Resolves once the table and the selected head's map are computed (in the engine worker) and drawn. */
  get computeComplete() {
    return this.updateComplete.then(() => this._circuit).then(() => this.updateComplete)
      .then(() => (this.selected ? this._ov.get(this.selected[0]) : null)).then(() => this.updateComplete);
  }

  /** The table's numbers (copyingScores, eigenPositivity), computed in the engine worker. */
  _compute() {
    this._ov = new Map();
    this.rows = null;
    const lm = this.lm;
    if (!lm) return;
    this._circuit = lm.ovCircuit().then(({ copying, positivity }) => {
      if (lm !== this.lm) return;
      let heads = null;
      try { heads = lm.heads; } catch { heads = null; }
      this.rows = copying.map((c, i) => ({ layer: c.layer, head: c.head, type: heads ? heads[i].type : '—', copying: c.score, positivity: positivity[i].positivity }));
      if (!this.selected) {
        const best = this.rows.reduce((a, b) => (b.copying > a.copying ? b : a));
        this.selected = [best.layer, best.head];
      }
      this.dispatchEvent(new CustomEvent('mha-computed', { detail: { rows: this.rows }, bubbles: true, composed: true }));
    }, (e) => { if (lm === this.lm) this.error = e; });
  }

  /** The selected head's OV logits (asked of the engine worker once per layer; null until they arrive). */
  _matrix(l, j) {
    const lm = this.lm;
    if (!this._ov.has(l)) {
      const ov = this._ov;
      ov.set(l, lm.ovLogits(l).then((m) => {
        if (this._ov !== ov) return;
        ov.set(l, m);
        this.requestUpdate();
      }, (e) => { if (this._ov === ov) this.error = e; }));
    }
    const m = this._ov.get(l);
    return typeof m?.then === 'function' ? null : m[j];
  }

  _table() {
    const [sl, sj] = this.selected ?? [-1, -1];
    return html`<div class="scroll"><table part="table">
      <thead><tr><th scope="col">Layer:head</th><th scope="col">Attention label</th>
        <th scope="col">Copying score</th><th scope="col">Eigenvalue positivity</th></tr></thead>
      <tbody>${this.rows.map((r) => html`<tr>
        <td><label><input type="radio" name="head" .checked=${r.layer === sl && r.head === sj}
          aria-label=${`layer ${r.layer + 1}, head ${r.head + 1}`}
          @change=${() => { this.selected = [r.layer, r.head]; }}> ${r.layer + 1}:${r.head + 1}</label></td>
        <td>${r.type}</td><td class="n">${f2(r.copying)}</td><td class="n">${signed(r.positivity)}</td></tr>`)}</tbody>
    </table></div>`;
  }

  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.lm) return this.loadingView();
    if (this.error) return html`<p class="error" part="error" role="alert">${this.error.message}</p>`;
    if (!this.rows || !this.selected) return nothing;
    const [l, j] = this.selected;
    const V = this.lm.config.vocabSize;
    const M = this._matrix(l, j);
    if (!M) return html`<div class="side">${this._table()}<p class="loading" role="status">Computing layer ${l + 1}'s OV paths…</p></div>`;
    const c = copyingOf(M, V);
    const row = this.rows.find((r) => r.layer === l && r.head === j);
    const tokens = this.lm.vocab.map(showChar);
    return html`<div class="side">${this._table()}<div>
      <p part="summary" role="status">Layer ${l + 1}, head ${j + 1}: the diagonal is the largest entry of its row for
        ${c.copied} of the ${c.total} tokens (copying score ${f2(c.score)}); eigenvalue positivity ${signed(row.positivity)}.</p>
      <div class="map" style=${`--mha-cell-size: ${Math.max(2, Math.floor(MAP_PX / V))}px`}><mha-heatmap part="heatmap" compact no-save
        scheme=${this._scheme} .domain=${[0, 1]}
        label=${`Layer ${l + 1}, head ${j + 1}: OV path, row = token attended to, column = logit raised, each row scaled from its smallest (0) to its largest (1) logit`}
        .tokens=${tokens} .weights=${rowScaled(M, V)}></mha-heatmap></div></div></div>`;
  }
}

customElements.get('mha-ov-circuit') || customElements.define('mha-ov-circuit', MhaOvCircuit);

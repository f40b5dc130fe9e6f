import { LitElement, html, css } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, taskEngine, errorText, renderLatest, int } from '../base/shared.js';
import { MODELS } from '../logic/models-data.js';
import { ScrollCue } from '../base/scroll-cue.js';

/**
 * `<mha-model-table>` — the attention configuration of well-known models as a `<table>`: d_model,
 * heads h, K/V heads (MHA or GQA), and d_k and the parameter count of W_Q, W_K, W_V, W_O computed
 * by the engine (`mha.passport`) from d_model, h and g. A configuration the engine refuses shows
 * the engine's message in its row.
 *
 * @element mha-model-table
 *
 * @attr {string} caption - Table caption (default "Attention configuration of well-known models (one attention block)").
 *
 * @prop {{name: string, dModel: number, heads: number, kvHeads?: number, layers?: number, bias?: boolean}[]} models -
 *   The rows (default: the lesson's models, models-data.js).
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {{name: string, dModel: number, heads: number, kvHeads: number, dK: number|null, params: number|null, error: Error|null}[]|null} rows -
 *   Read-only: the computed rows (params = W_Q + W_K + W_V + W_O weights, without biases).
 * @prop {Error|null} error - Read-only: the engine's load error, if any.
 *
 * @fires mha-computed - `{detail: {rows}}` after every computation.
 * @fires mha-error - `{detail: {error}}` when the engine cannot load or refuses the computation (shown in place).
 *
 * @csspart table - The `<table>`.
 * @csspart caption - The caption.
 * @csspart error - An engine error (in a row, or in place of the table).
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-error - Theme.
 */
export class MhaModelTable extends LitElement {
  static properties = {
    caption: { type: String },
    models: { attribute: false },
    engine: { attribute: false },
  };

  static styles = [baseStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; container-type: inline-size; }
    .scroll { overflow-x: auto; max-width: 100%; }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.92rem; margin: 0.5rem 0 1rem; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { padding: 0.3em 0.8em; border-bottom: 1px solid var(--_border); text-align: right; }
    th[scope='row'], thead th:first-child { text-align: left; }
    thead th { color: var(--_muted); font-weight: 600; font-size: 0.85rem; }
    td.error { border: 0; text-align: left; margin: 0; }
    .loading { color: var(--_muted); font-size: 0.9em; }
    /* a narrow column (a half page, a phone): tighter cells, so the six columns fit without scrolling */
    @container (max-width: 520px) { th, td { padding: 0.3em 0.4em; } }
    /* a half page: smaller type and cells, the K/V heads on one line, so that each model takes one line where the names fit */
    @container (min-width: 420px) and (max-width: 520px) {
      table { font-size: 0.84rem; } th, td { padding: 0.3em 0.28em; } td.kv { white-space: nowrap; }
    }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    this.caption = 'Attention configuration of well-known models (one attention block)';
    this.models = MODELS;
    this.engine = undefined;
    // the rows are the task's value: rendered with Task.render, read through `rows` and `error`
    this._task = new Task(this, {
      args: () => [this.models, this.engine],
      task: async ([models, engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        return (models ?? []).map((m) => {
          const kvHeads = m.kvHeads ?? m.heads;
          const row = { name: m.name, dModel: m.dModel, heads: m.heads, kvHeads, dK: null, params: null, error: null };
          try {
            const p = mha.passport({ seqLen: 1, dModel: m.dModel, numHeads: m.heads, kvHeads });
            row.dK = p.dK;
            row.params = p.params.wQ + p.params.wK + p.params.wV + p.params.wO;
          } catch (err) {
            row.error = err;
          }
          return row;
        });
      },
      onComplete: (rows) => {
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: { rows }, bubbles: true, composed: true }));
      },
      onError: (err) => {
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: err }, bubbles: true, composed: true }));
      },
    });
  }

  /** The computed rows (the task's last value; null before the first and after an error). */
  get rows() {
    return this._task.value ?? null;
  }

  /** The engine's error, if the last computation failed. */
  get error() {
    return this._task.error ?? null;
  }

  render() {
    // a new computation keeps the last table until its rows arrive
    return renderLatest(this._task, (rows) => this._table(rows));
  }

  _table(rows) {
    return html`<div class="scroll" tabindex="0" role="region" aria-label=${this.caption}>
      <table part="table">
        <caption part="caption">${this.caption}</caption>
        <thead><tr><th scope="col">model</th><th scope="col">d<sub>model</sub></th><th scope="col">heads h</th>
          <th scope="col">K/V heads</th><th scope="col">d<sub>k</sub></th><th scope="col">W<sub>Q,K,V,O</sub> parameters</th></tr></thead>
        <tbody>${rows.map((r) => html`<tr data-model=${r.name}>
          <th scope="row">${r.name}</th><td>${int(r.dModel)}</td><td>${r.heads}</td>
          <td class="kv">${r.kvHeads === r.heads ? `${r.kvHeads} (MHA)` : `${r.kvHeads} (GQA)`}</td>
          ${r.error
            ? html`<td colspan="2" class="error" part="error">${errorText(r.error)}</td>`
            : html`<td class="dk">${r.dK}</td><td class="params" data-params=${String(r.params)}>${int(r.params)}</td>`}
        </tr>`)}</tbody>
      </table>
    </div>`;
  }
}

customElements.get('mha-model-table') || customElements.define('mha-model-table', MhaModelTable);

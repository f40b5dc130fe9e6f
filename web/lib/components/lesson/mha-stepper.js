import { LitElement, html, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { tex } from '../base/tex.js';
import { rich } from '../base/rich.js';
import { STEPS, stepView } from '../logic/stepper-steps.js';
import { matrixTable, matrixStyles } from '../base/matrix.js';
import { baseStyles, taskEngine, renderLatest, toMatrix } from '../base/shared.js';
import { PEOPLE, FEATURES, X0, HEADS, restaurantLayerOptions } from '../logic/restaurant.js';
import { AttrGuard, intAttr, rawAttr, fireError } from '../base/attr-check.js';
import '../views/mha-heads.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { radioKeys } from '../base/choice.js';
import { Announcer } from '../base/announce.js';

/** Largest magnitude accepted in an editable cell of X (keeps every product far from float32 overflow). */
export const X_LIMIT = 1e6;

/** An operand of stepView with its caption drawn (sub- and superscripts). */
const drawn = (o) => ({ ...o, caption: rich(o.caption) });

const clampInt = (v, lo, hi, dflt) => {
  const n = Math.trunc(Number(v));
  return Number.isFinite(n) ? Math.max(lo, Math.min(hi, n)) : dflt;
};

/**
 * `<mha-stepper>` — the restaurant worked example, step by step: three friends (Alex, Emma, Daniel)
 * described by six features, two hand-made heads of different widths (taste: d_k = 2, d_v = 3;
 * budget: d_k = 2, d_v = 2) and W_O (5 × 6). It shows the editable input X (with Reset), head tabs
 * and the eight step tabs with Previous / Next, each step's title, formula (KaTeX, rendered as
 * MathML) and explanation, the operand and result matrices (X, an operand of steps 1–3, is drawn once: the
 * editable table, whose row lights up for a selected result cell), the per-head attention heatmaps
 * (`<mha-heads>`) and the final output. Hovering or focusing a result cell highlights the row and
 * column it came from and shows that cell's formula; in the result, arrow keys, Home and End move.
 * Every number comes from the engine (`layer.trace` of the example's layer, recomputed when X changes).
 *
 * An edited cell of X must be a number with |v| ≤ 1e6; anything else is refused with a message that
 * names the cell, and the numbers keep their last valid state.
 *
 * Section 4 of the lesson (how W_O mixes the heads) is a separate element, `<mha-wo-mix for="…">`,
 * that follows a stepper's X through its `mha-computed` event.
 *
 * Slots (the page's own prose, shown between the parts): `heads-intro` before the heatmaps (default:
 * a heading "Attention weights of both heads") and `output-intro` before the output table (default:
 * a heading "Final output").
 *
 * @element mha-stepper
 *
 * @attr {number} step - The step shown, 0–7 (Q, K, V, scores, softmax, A·V, concat, W_O); reflects the user's choice.
 * @attr {number} head - The head shown in steps 0–5, 0 (taste) or 1 (budget); reflects the user's choice.
 *
 * A bad `step` or `head` (not a whole number, out of range) keeps the last valid value (or 0),
 * shows one message naming the attribute, the value and what is allowed, and fires `mha-error`;
 * the attribute stays as written.
 *
 * @prop {number[][]} x - The input X `[3, 6]` (nested arrays or `{data, shape}`); default the
 *   example's. Setting it recomputes; reading it returns a copy of the values in use.
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {{heads: {q, k, v, scores, weights, output}[], concat: number[][], output: number[][]}|null} trace -
 *   Read-only: every intermediate of the last computation as nested arrays (null before the
 *   first one and after an engine error).
 * @prop {Error|null} error - Read-only: the last engine error.
 *
 * @fires change - `{detail: {step, head}}` when the user picks another step or head.
 * @fires mha-computed - `{detail: {x, output}}` (nested arrays) after every recomputation.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute), or the engine's error when it cannot load or refuses the computation (shown in place).
 *
 * @slot heads-intro - Content before the heatmaps.
 * @slot output-intro - Content before the output table.
 *
 * @csspart x-table - The editable X table.
 * @csspart reset - The "Reset X" button.
 * @csspart input-error - The message shown when an edited cell is refused.
 * @csspart controls - The head and step tabs.
 * @csspart head-tab - Each head tab (the current one has `aria-pressed="true"`).
 * @csspart step-tab - Each step tab (the current one has `aria-pressed="true"`).
 * @csspart title - The step title.
 * @csspart formula - The step's formula.
 * @csspart explanation - The step's explanation.
 * @csspart matrices - The row of operand and result matrices (scrolls horizontally).
 * @csspart matrix - Each operand matrix.
 * @csspart result - The result matrix.
 * @csspart cell-formula - The formula of the hovered or focused result cell.
 * @csspart nav - The Previous / Next row.
 * @csspart prev - The Previous button.
 * @csspart next - The Next button.
 * @csspart heads - The `<mha-heads>` of both heads.
 * @csspart output - The final output table.
 * @csspart error - An engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-field-border, --mha-accent, --mha-accent-fg, --mha-focus, --mha-error, --mha-radius - Theme.
 * @cssprop --mha-highlight, --mha-highlight-fg - Background and text of highlighted cells.
 */
export class MhaStepper extends LitElement {
  static properties = {
    step: { reflect: true, converter: rawAttr },
    head: { reflect: true, converter: rawAttr },
    engine: { attribute: false },
    _x: { state: true },
    _sel: { state: true },
    _inputError: { state: true },
  };

  static styles = [baseStyles, matrixStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; container-type: inline-size; }
    /* wide: both heads' weights beside the final output */
    @container (min-width: 760px) { .blocks { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0 1.5rem; align-items: start; } }
    .block { min-width: 0; }
    .x-editor { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: flex-end; margin: 0.8rem 0; }
    .x-editor .scroll { flex: 0 1 auto; }
    table.input td { padding: 0; }
    table.input input {
      width: 4.6em; font: inherit; text-align: right; border: 0; border-bottom: 1px solid var(--_field-border); background: transparent; color: var(--_fg);
      padding: 0.25em 0.35em;
    }
    table.input input[aria-invalid='true'] { outline: 2px solid var(--_error); }
    .stepper {
      border: 1px solid var(--_border); border-radius: calc(var(--_radius) * 1.6); padding: 1rem;
      margin: 0.4rem 0 0; background: var(--_bg);
    }
    .controls { display: flex; flex-direction: column; gap: 0.5rem; }
    /* the editable X and the head and step tabs side by side when both fit */
    .top { display: flex; flex-wrap: wrap; gap: 0.2rem 1.2rem; align-items: flex-start; }
    .top .x-editor { margin: 0; flex: 0 1 auto; min-width: 0; }
    .top .controls { flex: 1 1 20rem; min-width: 0; }
    .x-ref { font-weight: 600; white-space: nowrap; }
    .x-ref .muted { font-weight: 400; }
    .seg { display: flex; flex-wrap: wrap; gap: 0.3rem; }
    button:disabled { opacity: 0.55; cursor: default; }
    h3 { font-size: 1.05rem; margin: 0.9rem 0 0.4rem; }
    .tex { overflow-x: auto; overflow-y: hidden; padding: 0.2em 0; max-width: 100%; }
    .tex math { font-size: 1.1em; }
    .matrices { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: center; }
    .op { font-size: 1.2rem; color: var(--_muted); padding: 0 0.2rem; }
    .cell-formula {
      min-height: 2.6em; padding: 0.5em 0.7em; background: var(--_surface);
      border-radius: var(--_radius); overflow-x: auto;
    }
    .muted { color: var(--_muted); font-size: 0.9rem; }
    .nav { display: flex; align-items: center; justify-content: space-between; gap: 0.8rem; color: var(--_muted); font-size: 0.9rem; }
    /* the selected cell's formula and Previous / Next on one row when both fit */
    .foot { display: flex; flex-wrap: wrap; align-items: center; gap: 0.6rem 1rem; margin-top: 0.6rem; }
    /* the matrices, then the cell's formula and Previous / Next: beside them when they leave room, else below */
    .work { display: flex; flex-wrap: wrap; align-items: center; gap: 0 1.2rem; }
    .work > .scroll { flex: 0 1 auto; min-width: 0; }
    .work > .foot { flex: 1 1 22rem; min-width: 0; }
    .foot .cell-formula { flex: 1 1 24rem; min-width: 0; margin: 0; }
    .foot .nav { flex: 0 0 auto; margin-left: auto; }
    .title-row { display: flex; flex-wrap: wrap; align-items: center; gap: 0 1.5rem; margin: 0.7rem 0 0.2rem; }
    .title-row h3 { margin: 0; }
    .title-row .tex { flex: 0 1 auto; min-width: 0; }
    .body > p { margin: 0.3rem 0 0.6rem; }
    /* a phone: both heads' maps side by side (smaller cells) */
    @container (max-width: 480px) {
      .heads-wrap mha-heads { --mha-cell-size: 34px; --mha-heads-gap: 0.4rem; --mha-head-flex: 1 1 8rem; --mha-head-min-width: 0; }
      .seg button { padding: 0.25em 0.55em; flex: 0 0 auto; white-space: nowrap; }
      /* the steps on one line, scrolled sideways (padding: room for the focus outline); the head row wraps, as its
         buttons are disabled at steps 7 and 8 and a scrolled row needs something to focus */
      .seg.steps { flex-wrap: nowrap; overflow-x: auto; overscroll-behavior-x: contain; scrollbar-width: thin; padding: 3px; margin: -3px; }
      .controls { gap: 0.3rem; }
      .stepper { padding: 0.7rem; }
    }
    .loading { color: var(--_muted); font-size: 0.9em; }
    ::slotted(h3) { font-size: 1.15rem; margin: 1em 0 0.3em; }
    .block { margin-top: 0.2rem; }
    /* room for the heatmaps' focus outlines */
    .heads-wrap { position: relative; overflow: hidden; padding: 4px; margin: -4px; }
    @container (min-width: 481px) { .heads-wrap mha-heads { --mha-cell-size: 36px; } }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    this._announcer = new Announcer(this);   // one short line once an edit of X settles
    /** @type {number|string} */ this.step = 0;
    /** @type {number|string} */ this.head = 0;
    this._attrs = new AttrGuard(this);
    this._s = 0;
    this._h = 0;
    this.engine = undefined;
    this._x = X0.map((r) => r.slice());
    this._sel = null;           // the hovered / focused result cell {r, c}
    this._tab = { r: 0, c: 0 }; // the result cell that takes Tab (roving tabindex)
    this._inputError = '';
    this._syncInputs = false;
    this._shown = '';
    // The example's layer on the engine, traced again whenever X (or the engine) changes; an
    // overtaken run is aborted before it computes.
    this._task = new Task(this, {
      args: () => [this._x, this.engine],
      task: async ([x, engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        const layer = mha.createLayer(restaurantLayerOptions());
        try {
          const tr = layer.trace(x);
          return {
            heads: tr.heads.map((h) => ({
              q: toMatrix(h.q), k: toMatrix(h.k), v: toMatrix(h.v), scores: toMatrix(h.scores),
              weights: toMatrix(h.weights), output: toMatrix(h.output),
            })),
            concat: toMatrix(tr.concat),
            output: toMatrix(tr.output),
          };
        } finally {
          layer.dispose();
        }
      },
      onComplete: (tr) => {
        this.dispatchEvent(new CustomEvent('mha-computed', {
          detail: { x: this.x, output: tr.output.map((r) => r.slice()) }, bubbles: true, composed: true,
        }));
      },
      onError: (err) => fireError(this, err),
    });
  }

  /** Every intermediate of the last computation (null before the first one and after an engine error). */
  get trace() { return this._task.value ?? null; }

  /** The last engine error (null after a computation that succeeded). */
  get error() { return this._task.error ?? null; }

  /** The input X in use, `[3, 6]` (a copy). */
  get x() { return this._x.map((r) => r.slice()); }

  set x(v) {
    this._x = toMatrix(v ?? X0);
    this._inputError = '';
    this._syncInputs = true;
  }

  willUpdate(changed) {
    const g = this._attrs;
    g.begin();
    this._s = g.take('step', intAttr('step', this.step, { dflt: 0, min: 0, max: STEPS.length - 1 }));
    this._h = g.take('head', intAttr('head', this.head, { dflt: 0, min: 0, max: HEADS.length - 1 }));
    g.end();
    if (changed.has('step') || changed.has('head')) {
      this._sel = null;
      this._tab = { r: 0, c: 0 };
    }
  }

  updated() {
    if (this._syncInputs) {
      this._syncInputs = false;
      for (const inp of this.renderRoot.querySelectorAll('table.input input')) {
        inp.value = String(this._x[inp.dataset.r]?.[inp.dataset.c] ?? '');
        inp.removeAttribute('aria-invalid');
      }
    }
  }

  _go(step, head = this._h) {
    step = clampInt(step, 0, STEPS.length - 1, 0);
    if (step === this._s && head === this._h && !this._attrs.errors.length) return;
    this.step = step;
    this.head = head;
    this.dispatchEvent(new CustomEvent('change', { detail: { step, head }, bubbles: true, composed: true }));
  }

  /** Restore the example's X. */
  reset() {
    this.x = X0;
  }

  _onInput(e) {
    const inp = e.target;
    if (!(inp instanceof HTMLInputElement)) return;
    const r = Number(inp.dataset.r), c = Number(inp.dataset.c);
    const v = Number(inp.value);
    // What a user types is only ever read as a number: anything else (text, huge values that would
    // overflow float32) is refused with a message, and the numbers keep their last valid state.
    if (inp.validity.badInput || inp.value.trim() === '' || !Number.isFinite(v) || Math.abs(v) > X_LIMIT) {
      inp.setAttribute('aria-invalid', 'true');
      inp.setAttribute('aria-describedby', 'x-error');
      const lim = X_LIMIT.toLocaleString('en-US');
      this._inputError = `${PEOPLE[r] ?? `row ${r + 1}`} · ${FEATURES[c] ?? `column ${c + 1}`}: not accepted — enter a number between −${lim} and ${lim}. The results still use ${this._x[r][c]}.`;
      return;
    }
    inp.removeAttribute('aria-invalid');
    inp.removeAttribute('aria-describedby');
    this._announcer.say(`${PEOPLE[r] ?? `row ${r + 1}`}, ${FEATURES[c] ?? `column ${c + 1}`} set to ${v}: every step recomputed.`);
    if (!this.renderRoot.querySelector('table.input [aria-invalid="true"]')) this._inputError = '';
    const x = this._x.map((row) => row.slice());
    x[r][c] = v;
    this._x = x;
  }

  async _resultKey(e) {
    const rows = this.renderRoot.querySelectorAll('table.result tbody tr');
    const nr = rows.length, nc = rows[0]?.querySelectorAll('td').length ?? 0;
    let { r, c } = this._tab;
    switch (e.key) {
      case 'ArrowRight': c = Math.min(nc - 1, c + 1); break;
      case 'ArrowLeft': c = Math.max(0, c - 1); break;
      case 'ArrowDown': r = Math.min(nr - 1, r + 1); break;
      case 'ArrowUp': r = Math.max(0, r - 1); break;
      case 'Home': c = 0; if (e.ctrlKey) r = 0; break;
      case 'End': c = nc - 1; if (e.ctrlKey) r = nr - 1; break;
      default: return;
    }
    e.preventDefault();
    this._tab = { r, c };
    this._sel = { r, c };
    await this.updateComplete;
    this.renderRoot.querySelector(`table.result td[data-r="${r}"][data-c="${c}"]`)?.focus();
  }

  /** The editable X; `hlRow`: the row that made the selected result cell (at the steps whose operand is X). */
  _renderEditor(hlRow = -1) {
    const X = this._x;
    const cols = FEATURES.length;
    return html`<div class="x-editor">
      <div class="scroll" tabindex="0" role="region" aria-label="input X, editable">
        <table class="matrix input" part="x-table" @input=${this._onInput}>
          <caption>X: three people × six features (editable)</caption>
          <thead><tr><td class="corner"></td>${FEATURES.map((f) => html`<th scope="col">${f}</th>`)}</tr></thead>
          <tbody>${X.map((row, r) => html`<tr><th scope="row">${PEOPLE[r] ?? r + 1}</th>${row.slice(0, cols).map((v, c) => html`<td class=${r === hlRow ? 'hl' : ''}>
            <input type="number" step="0.01" value=${String(v)} data-r=${r} data-c=${c}
              aria-label=${`${PEOPLE[r] ?? `row ${r + 1}`}, ${FEATURES[c]}`}></td>`)}</tr>`)}</tbody>
        </table>
      </div>
      <button type="button" part="reset" @click=${() => this.reset()}>Reset X</button>
    </div>`;
  }

  /** The message of a refused cell of X, and the line announced once an edit settles. */
  _renderInputMessages() {
    return html`<div role="status" aria-live="polite">${this._inputError
      ? html`<p class="error" part="input-error" id="x-error">${this._inputError}</p>` : nothing}</div>
    ${this._announcer.view()}`;
  }

  _renderStep(tr) {
    const s = this._s, hi = this._h;
    const view = stepView(s, hi, this._x, tr);
    const sel = this._sel;
    const link = sel ? view.link(sel.r, sel.c) : {};
    const on = {
      enter: (r, c) => { this._sel = { r, c }; },
      focus: (r, c) => { this._sel = { r, c }; this._tab = { r, c }; },
      keydown: (e) => this._resultKey(e),
    };
    // the title with the formula beside it when both fit (one line less on a wide page)
    return html`
      <div class="title-row">
        <h3 part="title">Step ${s + 1} of ${STEPS.length} · ${STEPS[s].title}${s < 6 ? ` · head ${hi + 1} (${HEADS[hi].name})` : ''}</h3>
        <div class="tex" part="formula" tabindex="0" role="region" aria-label="formula of this step">${tex(view.tex)}</div>
      </div>
      <p part="explanation">${view.text}</p>
      <div class="work">
      <div class="scroll" tabindex="0" role="region" aria-label="matrices of this step">
        <div class="matrices" part="matrices">
          ${view.left.caption === 'X' ? html`<span class="x-ref" part="matrix" data-operand="X">X <span class="muted">(above)</span></span>`
            : matrixTable({ ...drawn(view.left), hl: link.left })}
          <span class="op" aria-hidden="true">${view.op}</span>
          ${view.right ? html`${matrixTable({ ...drawn(view.right), hl: link.right })}<span class="op" aria-hidden="true">=</span>` : nothing}
          ${matrixTable({ ...drawn(view.result), kind: 'result', part: 'result', hl: sel ? { row: sel.r, col: sel.c } : null, tabCell: this._tab, on })}
        </div>
      </div>
      <div class="foot">${this._renderCellFormula(tr)}${this._renderNav()}</div>
      </div>`;
  }

  /** Previous / Next and where the reader is. */
  _renderNav() {
    const s = this._s;
    return html`<div class="nav" part="nav">
      <button type="button" part="prev" aria-disabled=${s === 0 ? 'true' : 'false'} @click=${() => { if (s > 0) this._go(s - 1); }}>← Previous</button>
      <span>${s + 1} / ${STEPS.length}</span>
      <button type="button" part="next" aria-disabled=${s === STEPS.length - 1 ? 'true' : 'false'}
        @click=${() => { if (s < STEPS.length - 1) this._go(s + 1); }}>Next →</button>
    </div>`;
  }

  /** The row of X that made the selected result cell, at the steps whose left operand is X (else -1). */
  _xRow() {
    const sel = this._sel, tr = this.trace;
    if (!sel || !tr) return -1;
    const view = stepView(this._s, this._h, this._x, tr);
    return view.left.caption === 'X' ? view.link(sel.r, sel.c).left?.row ?? -1 : -1;
  }

  /** The formula of the hovered or focused result cell (or how to get one). */
  _renderCellFormula(tr) {
    const sel = this._sel;
    const view = stepView(this._s, this._h, this._x, tr);
    return html`<div class="cell-formula" part="cell-formula" tabindex="0" role="region" aria-label="formula of the selected cell" aria-live="polite">${sel
        ? tex(view.explain(sel.r, sel.c), false)
        : html`<span class="muted">Hover or focus a number in the result to see which row and column produced it.</span>`}</div>`;
  }

  render() {
    const tr = this.trace;
    const s = this._s, hi = this._h;
    return html`
      ${this._attrs.view()}
      <div class="stepper">
        <div class="top">
        ${this._renderEditor(this._xRow())}
        <div class="controls" part="controls">
          <div role="radiogroup" aria-label="head" class="seg" @keydown=${radioKeys}>
            ${HEADS.map((h, i) => html`<button type="button" part="head-tab" data-head=${i}
                role="radio" aria-checked=${i === hi ? 'true' : 'false'} tabindex=${i === hi ? 0 : -1} ?disabled=${s >= 6}
                @click=${() => this._go(s, i)}>head ${i + 1} · ${h.name} (d<sub>k</sub> = ${h.wQ[0].length}, d<sub>v</sub> = ${h.wV[0].length})</button>`)}
          </div>
          <div role="radiogroup" aria-label="step" class="seg steps" @keydown=${radioKeys}>
            ${STEPS.map((st, i) => html`<button type="button" part="step-tab" data-step=${i}
                role="radio" aria-checked=${i === s ? 'true' : 'false'} tabindex=${i === s ? 0 : -1} aria-label=${`${i + 1} ${st.short} (step ${i + 1}: ${st.title})`}
                @click=${() => this._go(i)}>${i + 1} ${st.short}</button>`)}
          </div>
        </div>
        </div>
        ${this._renderInputMessages()}
        <p class="sr-only" role="status">${tr ? `Step ${s + 1} of ${STEPS.length}: ${STEPS[s].title}${s < 6 ? `, head ${hi + 1}` : ''}` : ''}</p>
        <div class="body">${renderLatest(this._task, (t) => this._renderStep(t))}</div>
      </div>
      <div class="blocks">
      <div class="block">
        <slot name="heads-intro"><h3>Attention weights of both heads</h3></slot>
        ${tr ? html`<div class="heads-wrap"><mha-heads part="heads" .weights=${tr.heads.map((h) => h.weights)} .tokens=${PEOPLE}
            .dK=${HEADS.map((h) => h.wQ[0].length)} .headNames=${HEADS.map((h) => h.name)} show-values></mha-heads></div>` : nothing}
      </div>
      <div class="block">
        <slot name="output-intro"><h3>Final output</h3></slot>
        ${tr ? html`<div class="scroll" tabindex="0" role="region" aria-label="output of the layer">
          ${matrixTable({ caption: html`output = concat · W<sub>O</sub> (engine values)`, rows: PEOPLE, cols: FEATURES,
            values: tr.output, kind: 'result', part: 'output', cellClass: (r, c) => (r === 0 && c === 1 ? 'key' : '') })}
        </div>` : nothing}
      </div>
      </div>`;
  }
}

customElements.get('mha-stepper') || customElements.define('mha-stepper', MhaStepper);

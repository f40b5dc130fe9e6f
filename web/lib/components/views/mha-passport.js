import { LitElement, html, css, nothing } from 'lit';
import { formulaMath } from '../base/formula-math.js';
import { countFormulas } from '../logic/passport-counts.js';
import { scrollCueStyles, watchOverflow, unwatchOverflow } from '../base/scroll-cue.js';
import { Task } from '@lit/task';
import { baseStyles, taskEngine, renderLatest, int } from '../base/shared.js';
import { AttrGuard, intAttr, rawAttr, fireError } from '../base/attr-check.js';

/** Render an engine shape (array of dims or a string) as "5 × 24". */
export function shapeText(shape) {
  if (Array.isArray(shape)) return shape.join(' \u00d7 ');
  return String(shape ?? '').replace(/\s*[x*]\s*/g, ' \u00d7 ');
}

/**
 * `<mha-passport>` — the "shape passport" of a multi-head attention layer: a real `<table>` of
 * every step's tensor and shape, the W_Q size per head and in total next to the single-head
 * reference, the parameter total, the FLOPs of the matrix products and of the scaling + softmax
 * (6 per score, exp counted as one FLOP, + 1 per row; they grow with h at a fixed d_model), their
 * total, and the number of scores the layer holds in memory (h·T²). Every number comes from the
 * engine's `mha.passport()`, so it is right for any d_model, h and T; a combination the engine
 * refuses (h not dividing d_model, say) shows the engine's message in place.
 *
 * @element mha-passport
 *
 * @attr {number} seq-len - Tokens T, 1–1000000 (default 5).
 * @attr {number} d-model - d_model, 1–65536 (default 24).
 * @attr {number} heads - num_heads h, 1 to d-model (default 2); the engine checks that it divides d-model.
 * @attr {number} kv-heads - Key/value heads g for grouped-query attention, 1 to heads (default: h).
 * @attr {number} batch - Batch size B, 1–1000000 (optional; omitted means an unbatched input).
 * @attr {number} key-len - Key length when it differs from seq-len (cross-attention), 1–1000000.
 * @attr {string} caption - Table caption (default "Shape passport").
 * @attr {boolean} compact - Hide the formula column; the steps and the counts become two tables, side by side when
 *   the element is wide enough (about 41rem).
 * @attr {boolean} no-bias - Count a layer without biases (default: with biases, as in PyTorch).
 *
 * @prop {object} engine - An engine from `createMHA()`; by default one shared engine is created.
 * @prop {object|null|undefined} data - A passport already computed for the same attributes (the
 *   `<mha-widget>` passes its own, so the engine is asked once); null shows the loading line;
 *   undefined (the default) asks the engine.
 * @prop {object|null} passport - Read-only: the last result of `mha.passport()` (null on error).
 * @prop {Error|null} error - Read-only: the last engine error (null when valid).
 *
 * @fires mha-passport - `{detail: passport}` after every successful update.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute; the last valid value stays in use and the attribute as written), the engine refusing the
 *   configuration (an MHAError with `code` INVALID_CONFIG naming the size, e.g. heads not dividing
 *   d_model), or the engine's load error (name MHALoadError) when the module cannot load. Shown in place.
 *
 * @csspart table - The `<table>`.
 * @csspart caption - The caption.
 * @csspart error - The error message.
 * @csspart summary - The parameter, FLOP and score-memory rows.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-error - Theme.
 */
export class MhaPassport extends LitElement {
  static properties = {
    seqLen: { attribute: 'seq-len', converter: rawAttr },
    dModel: { attribute: 'd-model', converter: rawAttr },
    heads: { converter: rawAttr },
    kvHeads: { attribute: 'kv-heads', converter: rawAttr },
    batch: { converter: rawAttr },
    keyLen: { attribute: 'key-len', converter: rawAttr },
    caption: { type: String },
    compact: { type: Boolean },
    noBias: { type: Boolean, attribute: 'no-bias' },
    engine: { attribute: false },
    data: { attribute: false },
  };

  static styles = [baseStyles, scrollCueStyles, css`
    :host { display: block; }
    .scroll { overflow-x: auto; max-width: 100%; }
    table { border-collapse: collapse; width: 100%; font-size: 0.88em; font-variant-numeric: tabular-nums; }
    caption { text-align: left; font-weight: 600; padding: 0.2em 0 0.4em; }
    th, td { text-align: left; padding: 0.12em 0.5em; line-height: 1.3; border-bottom: 1px solid var(--_border); vertical-align: top; }
    thead th { font-size: 0.85em; color: var(--_muted); font-weight: 600; }
    tbody th { font-weight: 500; }
    /* one table wide enough for every step's name on one line: the "how" column wraps instead (fewer lines in all) */
    @container (min-width: 36rem) { .whole tbody th { white-space: nowrap; } }
    td.shape { white-space: nowrap; font-family: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); }
    /* the "how" column: MathML that does not break inside a formula (the table scrolls sideways, with a cue, when it is wider than the element) */
    td.formula { color: var(--_muted); font-size: 0.92em; min-width: 8em; }
    td.formula math { white-space: nowrap; font-size: 1.05em; }
    tbody.summary th, tbody.summary td { background: var(--_surface); }
    tbody.summary tr:first-child > * { border-top: 2px solid var(--_border); }
    .num { white-space: nowrap; font-family: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); }
    .loading { color: var(--_muted); font-size: 0.9em; }
    /* compact: the steps and the counts side by side when both fit */
    .split { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: start; }
    .split > div { flex: 1 1 20rem; min-width: 0; }
    /* a phone: each step a card (its name, its shape, then its formula on a line of its own), no column cut off at the side */
    :host { container-type: inline-size; }
    @container (max-width: 30rem) {
      .scroll { overflow-x: visible; }
      table, tbody, tr, caption { display: block; }
      thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
      tbody tr { display: flex; flex-wrap: wrap; gap: 0.1em 0.8em; align-items: baseline; justify-content: space-between;
        padding: 0.15em 0.2em; border-bottom: 1px solid var(--_border); }
      th, td { display: block; box-sizing: border-box; border: 0; padding: 0; min-width: 0; }
      tbody th { flex: 1 1 7em; }
      td.shape, td.num { white-space: normal; overflow-wrap: anywhere; text-align: right; flex: 0 1 auto; }
      td.formula { flex: 1 0 100%; min-width: 0; overflow-x: auto; overflow-y: hidden; }
      td.formula:empty { display: none; }
      tbody.summary tr { background: var(--_surface); }
      tbody.summary tr:first-child { border-top: 2px solid var(--_border); }
      tbody.summary tr:first-child > * { border-top: 0; }
    }
  `];

  constructor() {
    super();
    /** @type {number|string} */ this.seqLen = 5;
    /** @type {number|string} */ this.dModel = 24;
    /** @type {number|string} */ this.heads = 2;
    /** @type {number|string|undefined} */ this.kvHeads = undefined;
    /** @type {number|string|undefined} */ this.batch = undefined;
    /** @type {number|string|undefined} */ this.keyLen = undefined;
    this.caption = 'Shape passport';
    this.compact = false;
    this.noBias = false;
    this.engine = undefined;
    this.data = undefined;
    this._attrs = new AttrGuard(this);
    this._cfg = { seqLen: 5, dModel: 24, numHeads: 2 };
    // The engine call, re-run when an attribute, the engine or `data` changes; a run that a newer
    // one overtakes while the engine is still loading is aborted before it asks. Its value is the
    // passport drawn (Task.render) and read through `passport`.
    this._passportTask = new Task(this, {
      args: () => [JSON.stringify(this.config), this.engine, this.data],
      task: async ([, engine, data], { signal }) => {
        if (data !== undefined) return data;
        const mha = await taskEngine(engine, signal);
        return mha.passport(this.config);
      },
      onComplete: (passport) => {
        if (passport) this.dispatchEvent(new CustomEvent('mha-passport', { detail: passport, bubbles: true, composed: true }));
      },
      onError: (err) => {
        fireError(this, err);
      },
    });
  }

  /** The passport drawn: the last computation's (or `data`); null before the first and after an error. */
  get passport() {
    return this._passportTask.value ?? null;
  }

  /** The engine's error, if the last computation failed. */
  get error() {
    return this._passportTask.error ?? null;
  }

  /** The options object this element passes to `mha.passport()`. */
  get config() {
    return this._cfg;
  }

  /** Parse the attributes (attr-check.js); a bad one keeps its last valid value. */
  willUpdate() {
    const g = this._attrs;
    g.begin();
    const N = 1000000;
    const c = {
      seqLen: g.take('seq-len', intAttr('seq-len', this.seqLen, { dflt: 5, min: 1, max: N })),
      dModel: g.take('d-model', intAttr('d-model', this.dModel, { dflt: 24, min: 1, max: 65536 })),
    };
    c.numHeads = g.take('heads', intAttr('heads', this.heads, { dflt: 2, min: 1, max: c.dModel }));
    const kv = g.take('kv-heads', intAttr('kv-heads', this.kvHeads, { dflt: undefined, min: 1, max: c.numHeads }));
    const batch = g.take('batch', intAttr('batch', this.batch, { dflt: undefined, min: 1, max: N }));
    const keyLen = g.take('key-len', intAttr('key-len', this.keyLen, { dflt: undefined, min: 1, max: N }));
    g.end();
    if (kv !== undefined) c.kvHeads = kv;
    if (batch !== undefined) c.batch = batch;
    if (keyLen !== undefined) c.keyLen = keyLen;
    if (this.noBias) c.bias = false;
    if (JSON.stringify(c) !== JSON.stringify(this._cfg)) this._cfg = c;
  }

  updated(changed) {
    super.updated?.(changed);
    watchOverflow(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    unwatchOverflow(this);
  }

  render() {
    // a new computation keeps the last table until its passport arrives
    return html`${this._attrs.view()}${renderLatest(this._passportTask, (p) => this._table(p), 'Computing the shape passport…')}`;
  }

  _table(p) {
    const cfg = this.config;
    const d = cfg.dModel;
    const h = cfg.numHeads;
    const g = cfg.kvHeads ?? h;
    const P = p.params ?? {};
    const F = p.flops ?? {};
    const counts = countFormulas(cfg);
    const caption = html`<caption part="caption">${this.caption}: d<sub>model</sub> = ${d}, h = ${h}${g !== h ? html`, kv-heads = ${g}` : nothing},
        T = ${cfg.seqLen}${cfg.batch ? html`, batch = ${cfg.batch}` : nothing}
        → d<sub>k</sub> = <span data-k="dK">${p.dK}</span>${p.dV !== p.dK ? html`, d<sub>v</sub> = ${p.dV}` : nothing}</caption>`;
    const steps = html`
      <thead><tr><th scope="col">step</th><th scope="col">shape</th>${this.compact ? nothing : html`<th scope="col">how</th>`}</tr></thead>
      <tbody>
        ${(p.steps ?? []).map((s) => html`<tr data-step=${s.name}>
          <th scope="row">${s.name}</th><td class="shape">${shapeText(s.shape)}</td>
          ${this.compact ? nothing : html`<td class="formula" data-formula=${s.formula ?? ''}>${formulaMath(s.formula)}</td>`}</tr>`)}
      </tbody>`;
    const summary = html`      <tbody class="summary" part="summary">
        <tr data-k="wQPerHead"><th scope="row">W<sub>Q</sub> per head</th>
          <td class="num">${d} × ${p.dK} = ${int(P.wQPerHead)}</td>${this.compact ? nothing : html`<td></td>`}</tr>
        <tr data-k="wQ"><th scope="row">W<sub>Q</sub> all heads</th>
          <td class="num">${h} × ${int(P.wQPerHead)} = ${int(P.wQ)}</td>${this.compact ? nothing : html`<td></td>`}</tr>
        <tr data-k="singleHeadWQ"><th scope="row">single-head reference</th>
          <td class="num">${d} × ${d} = ${int(P.singleHeadWQ)}</td>${this.compact ? nothing : html`<td class="formula">${P.wQ === P.singleHeadWQ ? 'same as all heads together' : 'differs from the multi-head total'}</td>`}</tr>
        <tr data-k="wKV"><th scope="row">W<sub>K</sub>, W<sub>V</sub></th>
          <td class="num">${int(P.wK)} + ${int(P.wV)}</td>${this.compact ? nothing : html`<td></td>`}</tr>
        <tr data-k="wO"><th scope="row">W<sub>O</sub></th>
          <td class="num">${int(P.wO)}</td>${this.compact ? nothing : html`<td></td>`}</tr>
        <tr data-k="total"><th scope="row">parameters ${P.bias ? html`(incl. ${int(P.bias)} bias)` : '(no bias)'}</th>
          <td class="num">${int(P.total)}</td>${this.compact ? nothing : html`<td></td>`}</tr>
        <tr data-k="matmul"><th scope="row">FLOPs of the matrix products</th>
          <td class="num">${int(F.matmul)}</td>${this.compact ? nothing : html`<td class="formula">projections ${int(F.projections)} · scores ${int(F.scores)} · weights·V ${int(F.weighted)} · W<sub>O</sub> ${int(F.output)}</td>`}</tr>
        <tr data-k="softmax"><th scope="row">FLOPs of scaling + softmax</th>
          <td class="num">${int(F.softmax)}</td>${this.compact ? nothing : html`<td class="formula">${formulaMath(counts.softmax)}: 6 per score (exp counted as 1), 1 per row</td>`}</tr>
        <tr data-k="flops"><th scope="row">FLOPs</th>
          <td class="num">${int(F.total)}</td>${this.compact ? nothing : html`<td class="formula">matrix products + softmax${F.scoreMods ? html` + score modifiers ${int(F.scoreMods)}` : nothing}${F.rope ? html` + RoPE ${int(F.rope)}` : nothing}</td>`}</tr>
        <tr data-k="scores"><th scope="row">scores held in memory</th>
          <td class="num">${int(p.memory?.scores)}</td>${this.compact ? nothing : html`<td class="formula">${formulaMath(counts.scores)} values (${int(p.memory?.scoreBytes)} bytes at float32)</td>`}</tr>
      </tbody>`;
    // compact: the steps and the counts as two tables, side by side when the element is wide enough
    if (this.compact) {
      const hint = html`<p class="scroll-hint" aria-hidden="true">scroll sideways →</p>`;
      return html`<div class="split">
        <div><div class="scroll" part="scroll" tabindex="0" role="region" aria-label=${this.caption}><table part="table">${caption}${steps}</table></div>${hint}</div>
        <div><div class="scroll" part="scroll" tabindex="0" role="region" aria-label=${`${this.caption}: counts`}><table part="table counts">
          <caption class="sr-only">Counts</caption>${summary}</table></div>${hint}</div>
      </div>`;
    }
    return html`<div class="scroll whole" part="scroll" tabindex="0" role="region" aria-label=${this.caption}><table part="table">
      ${caption}${steps}${summary}
    </table></div><p class="scroll-hint" aria-hidden="true">scroll sideways →</p>`;
  }
}

customElements.get('mha-passport') || customElements.define('mha-passport', MhaPassport);

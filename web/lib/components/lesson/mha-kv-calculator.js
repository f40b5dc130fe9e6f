import { LitElement, html, mathml, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, formStyles, taskEngine, renderLatest, int } from '../base/shared.js';
import { AttrGuard, intAttr, enumAttr, attrError, rawAttr, fireError } from '../base/attr-check.js';
import { DECODERS } from '../logic/models-data.js';
import { modelParams } from '../logic/cost-ledger.js';
import '../views/mha-passport.js';
import { kvCacheFactors, kvCacheSize, contextNote } from '../logic/kv-cache.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { Announcer } from '../base/announce.js';

const DTYPES = [[4, 'float32 (4 bytes)'], [2, 'float16 / bfloat16 (2 bytes)'], [1, 'int8 (1 byte)']];
const MAX_CONTEXT = 1048576;
const MAX_BATCH = 4096;

/** "1.34 GB (1.25 GiB)": decimal and binary units. */
export function formatBytes(b) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let i = 0, v = b;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  const bi = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let j = 0, w = b;
  while (w >= 1024 && j < bi.length - 1) { w /= 1024; j++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]} (${w.toFixed(w < 10 ? 2 : 1)} ${bi[j]})`;
}


/**
 * The KV-cache formula with the numbers filled in, as MathML the browser draws (no TeX engine:
 * a product of integers needs none).
 * @param {{model: {layers: number}, B: number, T: number, g: number, dK: number, bytesPer: number, bytes: number}} r
 */
function kvFormula(r) {
  const factors = kvCacheFactors({ layers: r.model.layers, batch: r.B, tokens: r.T, kvHeads: r.g, dK: r.dK, bytesPerValue: r.bytesPer });
  return html`<math display="block"><mrow>${factors.map((f, i) => mathml`${i ? mathml`<mo>×</mo>` : nothing}<mn>${int(f)}</mn>`)}<mtext>\u00a0B</mtext><mo>=</mo><mn>${int(r.bytes)}</mn><mtext>\u00a0B</mtext></mrow></math>`;
}

/**
 * One sentence comparing the KV cache with the weights, from the numbers: which is larger, by how
 * much, and at how many cached tokens (B·T) the cache would equal the weights.
 * @param {{bytes: number, weightBytes: number, B: number, T: number}} r
 */
export function weightsSentence(r) {
  const perToken = r.bytes / (r.B * r.T);       // cache bytes per cached token (all layers)
  const even = Math.ceil(r.weightBytes / perToken);
  const ratio = (x) => (x >= 10 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));
  if (r.weightBytes >= r.bytes) {
    return `The weights are ${ratio(r.weightBytes / r.bytes)}× the KV cache: here the weights, not the cache, take most of the accelerator's memory. ` +
      `The cache would equal them at B·T = ${int(even)} cached tokens (a batch of ${int(Math.ceil(even / r.T))} at T = ${int(r.T)}).`;
  }
  return `The KV cache is ${ratio(r.bytes / r.weightBytes)}× the weights: at this context and batch the cache, not the weights, takes most of the accelerator's memory ` +
    `(the two are equal at B·T = ${int(even)} cached tokens).`;
}

/**
 * `<mha-kv-calculator>` — the KV-cache and grouped-query attention calculator: pick a decoder model,
 * the number g of key/value heads (the divisors of its h: g = h is standard multi-head attention,
 * g = 1 multi-query), the context T, the batch B and the bytes per value; it shows
 * `KV bytes = 2 · L · B · T · g · d_k · bytes` with d_k from the engine (`mha.passport`), how many
 * times smaller that is than with h K/V heads, and, behind a disclosure, the compact passport of one layer
 * (`<mha-passport>`, handed the same engine result). Beside the cache it shows the whole model's
 * weights at the same bytes per value (the engine's attention parameters per layer, with the chosen
 * g, plus the MLP, embeddings and norms of the published sizes) and a sentence, computed from the
 * two, saying which is larger and at how many cached tokens they would be equal. A number outside its range (T in
 * 1…1,048,576, B in 1…4,096) is refused with a message and the last valid value stays.
 *
 * A bad attribute value (an unknown model, a word where a number belongs, a number out of range, a g
 * that does not divide h) keeps the last valid value (or the default), shows one message naming
 * the attribute, the value and what is allowed, and fires `mha-error`; the attribute stays as written.
 *
 * @element mha-kv-calculator
 *
 * @attr {string} model - Name of the model, one of `models` (default "LLaMA-2 70B"); reflects the user's choice.
 * @attr {number} kv-heads - K/V heads g, a divisor of the model's h (default: the model's own); reflects the user's choice.
 * @attr {number} context - Context length T in tokens, 1–1,048,576 (default: the model's trained context, else 4096;
 *   left out, T follows the model picked); reflects the user's choice. A T beyond the model's trained context is
 *   computed and flagged: a note says the model never holds that cache and gives the cache at its own context.
 * @attr {number} batch - Batch size B, 1–4,096 (default 1); reflects the user's choice.
 * @attr {number} dtype-bytes - Bytes per stored value, 1–8: 4, 2 (default) or 1 in the menu; reflects the user's choice.
 *
 * @prop {{name: string, dModel: number, heads: number, kvHeads: number, layers: number, bias?: boolean}[]} models -
 *   The models offered (default: the decoders of the lesson's table, models-data.js).
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {number|null} bytes - Read-only: the KV-cache size in bytes (null before the first result or on error).
 *   The result element carries it too, as `data-bytes`.
 * @prop {{model: object, g: number, T: number, B: number, bytesPer: number, dK: number, bytes: number, fullBytes: number, weightParams: number|null, weightBytes: number|null, passport: object}|null} result -
 *   Read-only: the last computation (`fullBytes`: the same cache with h K/V heads; `weightBytes`: the
 *   whole model's weights at bytesPer, null for a model without dFF/vocab in `models`).
 * @prop {Error|null} error - Read-only: the last engine error.
 *
 * @fires change - `{detail: {model, kvHeads, context, batch, dtypeBytes}}` when the user changes a control.
 * @fires mha-computed - `{detail: result}` after every computation.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute), or the engine's error when it cannot load or refuses the computation (shown in place).
 *
 * @csspart form - The controls.
 * @csspart control - Each select and input.
 * @csspart result - The result box (with `data-bytes`), read in place.
 * @csspart announcement - The visually hidden line announced once a choice settles (model, g, T, B and the size).
 * @csspart formula - The formula with the numbers filled in.
 * @csspart bytes - The size in bytes, in words.
 * @csspart weights - The model's weight bytes at the same dtype.
 * @csspart comparison - The sentence comparing the cache with the weights.
 * @csspart context-note - The note shown when T is beyond the model's trained context.
 * @csspart passport-details - The disclosure (closed at first) holding the passport.
 * @csspart passport - The `<mha-passport>` of one layer.
 * @csspart input-error - The message shown when a typed number is refused.
 * @csspart error - An engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaKvCalculator extends LitElement {
  static properties = {
    model: { type: String, reflect: true },
    kvHeads: { attribute: 'kv-heads', reflect: true, converter: rawAttr },
    context: { reflect: true, converter: rawAttr },
    batch: { reflect: true, converter: rawAttr },
    dtypeBytes: { attribute: 'dtype-bytes', reflect: true, converter: rawAttr },
    models: { attribute: false },
    engine: { attribute: false },
    _inputError: { state: true },
  };

  static styles = [baseStyles, formStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; container-type: inline-size; }
    .result { background: var(--_surface); border-radius: calc(var(--_radius) * 1.4); padding: 0.5em 1em; margin-bottom: 0.6rem; }
    .result p { margin: 0.3em 0; }
    .tex { overflow-x: auto; overflow-y: hidden; padding: 0.2em 0; }
    .tex { width: fit-content; max-width: 100%; box-sizing: border-box; }
    .tex math { font-size: 1.05em; }
    details.layer > summary { cursor: pointer; font-weight: 600; font-size: 0.92rem; margin: 0.2rem 0; }
    details.layer[open] > summary { margin-bottom: 0.5rem; }
    .loading { color: var(--_muted); font-size: 0.9em; }
    .context-note { border-left: 3px solid var(--_accent); padding-left: 0.6em; }
    /* a phone: the controls two to a row; the formula a little smaller, so that it fits */
    @container (max-width: 34rem) {
      .tex math { font-size: 0.82em; }
      form { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); align-items: end; }
      form select, form input { width: 100%; box-sizing: border-box; }
      /* the model and the dtype, whose names are long, on a row of their own: nothing cut off */
      form label:has(select[name='model']), form label:has(select[name='dtype']) { grid-column: 1 / -1; }
    }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    // the result is read where it is; a choice says one short line with the size once it settles
    this._announcer = new Announcer(this);
    this.model = 'LLaMA-2 70B';
    /** @type {number|string|undefined} */ this.kvHeads = undefined;
    /** @type {number|string|undefined} */ this.context = undefined;   // the model's own context
    /** @type {number|string} */ this.batch = 1;
    /** @type {number|string} */ this.dtypeBytes = 2;
    this.models = DECODERS;
    this.engine = undefined;
    this._inputError = '';
    this._attrs = new AttrGuard(this);
    this._c = null;
    this._task = new Task(this, {
      args: () => [this._c?.model, this._c?.g, this._c?.T, this._c?.B, this._c?.bytesPer, this.engine],
      task: async ([m, g, T, B, bytesPer, engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        if (!m) throw new Error(`no models to choose from (the models property is empty)`);
        const cfg = { seqLen: T, dModel: m.dModel, numHeads: m.heads, kvHeads: g };
        if (m.bias === false) cfg.bias = false;
        const passport = mha.passport(cfg);
        const dK = passport.dK;
        const L = m.layers;
        const shape = { layers: L, batch: B, tokens: T, dK, bytesPerValue: bytesPer };
        const bytes = kvCacheSize({ ...shape, kvHeads: g });
        const fullBytes = kvCacheSize({ ...shape, kvHeads: m.heads });
        // the whole model's weights at the same dtype: L layers of the engine's attention parameters
        // (with g K/V heads) + the MLP, embeddings and norms of the published sizes (cost-ledger.js)
        const weightParams = m.dFF ? modelParams(m, passport.params.total) : null;
        const weightBytes = weightParams === null ? null : weightParams * bytesPer;
        return { model: m, g, T, B, bytesPer, dK, bytes, fullBytes, weightParams, weightBytes, passport };
      },
      onComplete: (r) => {
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: r, bubbles: true, composed: true }));
      },
      onError: (err) => fireError(this, err),
    });
  }

  /** The last computation (null before the first one and after an engine error). */
  get result() { return this._task.value ?? null; }

  /** The last engine error (null after a computation that succeeded). */
  get error() { return this._task.error ?? null; }

  /** The KV-cache size in bytes of the current choice (null before the first result or on error). */
  get bytes() { return this._task.value?.bytes ?? null; }

  get _model() { return this._c?.model ?? null; }

  /** Parse the attributes (attr-check.js): a bad value keeps the last valid one and is reported once. */
  willUpdate() {
    const g = this._attrs;
    g.begin();
    const models = this.models ?? [];
    const names = models.map((x) => x.name);
    const dflt = names.includes('LLaMA-2 70B') ? 'LLaMA-2 70B' : names[0];
    const name = names.length ? g.take('model', enumAttr('model', this.model, { dflt, values: names })) : undefined;
    const m = models.find((x) => x.name === name) ?? null;
    let kv = m ? m.kvHeads ?? m.heads : undefined;
    if (m) {
      const r = intAttr('kv-heads', this.kvHeads, { dflt: kv, min: 1, max: m.heads });
      if (r.error) g.add(r.error);
      else if (m.heads % r.value) g.add(attrError('kv-heads', `a divisor of ${m.name}'s h = ${m.heads}`, this.kvHeads));
      else kv = r.value;
    }
    const T = g.take('context', intAttr('context', this.context, { dflt: m?.context ?? 4096, min: 1, max: MAX_CONTEXT }));
    const B = g.take('batch', intAttr('batch', this.batch, { dflt: 1, min: 1, max: MAX_BATCH }));
    const bytesPer = g.take('dtype-bytes', intAttr('dtype-bytes', this.dtypeBytes, { dflt: 2, min: 1, max: 8 }));
    g.end();
    const c = this._c;
    if (!c || c.model !== m || c.g !== kv || c.T !== T || c.B !== B || c.bytesPer !== bytesPer) this._c = { model: m, g: kv, T, B, bytesPer };
  }

  _changed() {
    const c = this._c;
    this._announcer.say(() => {
      const r = this.result;
      return r ? `${r.model.name}, g = ${r.g}, T = ${int(r.T)}, B = ${int(r.B)}: ${formatBytes(r.bytes)} of KV cache.` : '';
    });
    this.dispatchEvent(new CustomEvent('change', {
      detail: { model: c.model?.name, kvHeads: c.g, context: c.T, batch: c.B, dtypeBytes: c.bytesPer },
      bubbles: true, composed: true,
    }));
  }

  _onModel(e) {
    this.model = e.target.value;
    this.kvHeads = undefined;   // the new model's own number of K/V heads
    this.removeAttribute('kv-heads');
    this.updateComplete.then(() => this._changed());
  }

  _onKV(e) { this.kvHeads = Number(e.target.value); this.updateComplete.then(() => this._changed()); }

  _onDtype(e) { this.dtypeBytes = Number(e.target.value); this.updateComplete.then(() => this._changed()); }

  _onNumber(e, key, label, max) {
    const inp = e.target;
    const v = Number(inp.value);
    if (inp.validity.badInput || inp.value.trim() === '' || !Number.isInteger(v) || v < 1 || v > max) {
      inp.setAttribute('aria-invalid', 'true');
      this._inputError = `${label}: not accepted — enter a whole number from 1 to ${int(max)}. The result still uses ${int(this._c[key === 'context' ? 'T' : 'B'])}.`;
      return;
    }
    inp.removeAttribute('aria-invalid');
    if (!this.renderRoot.querySelector('input[aria-invalid="true"]')) this._inputError = '';
    if (this._c[key === 'context' ? 'T' : 'B'] !== v) { this[key] = v; this.updateComplete.then(() => this._changed()); }
  }

  /** The note when T is beyond the model's trained context (logic/kv-cache.js contextNote). */
  _contextNote(r) {
    const note = contextNote(r.model, r.T, r.bytes, formatBytes);
    return note ? html`<p part="context-note" class="context-note" data-k="context-note" data-bytes=${String(note.bytesAtContext)}>${note.text}</p>` : nothing;
  }

  _kvOptions(m) {
    const opts = [];
    for (let g = 1; g <= m.heads; g++) {
      if (m.heads % g) continue;
      opts.push([g, g === m.heads ? `${g} (standard MHA)` : g === 1 ? '1 (multi-query)' : `${g} (grouped)`]);
    }
    return opts;
  }

  render() {
    const c = this._c;
    const m = c.model;
    const g = c.g;
    const dts = DTYPES.some(([b]) => b === c.bytesPer) ? DTYPES : [...DTYPES, [c.bytesPer, `${c.bytesPer} bytes`]];
    return html`${this._attrs.view()}
      <form part="form" @submit=${(e) => e.preventDefault()}>
        <label>model <select part="control" name="model" @change=${this._onModel}>
          ${(this.models ?? []).map((x) => html`<option value=${x.name} ?selected=${x === m}>${x.name} (${x.layers} layers)</option>`)}
        </select></label>
        <label>K/V heads g <select part="control" name="kv-heads" @change=${this._onKV} ?disabled=${!m}>
          ${m ? this._kvOptions(m).map(([v, label]) => html`<option value=${v} ?selected=${v === g}>${label}</option>`) : nothing}
        </select></label>
        <label>context T <input part="control" name="context" type="number" min="1" max=${MAX_CONTEXT} step="1"
          .value=${String(c.T)} @input=${(e) => this._onNumber(e, 'context', 'context T', MAX_CONTEXT)}></label>
        <label>batch B <input part="control" name="batch" type="number" min="1" max=${MAX_BATCH} step="1"
          .value=${String(c.B)} @input=${(e) => this._onNumber(e, 'batch', 'batch B', MAX_BATCH)}></label>
        <label>dtype <select part="control" name="dtype" @change=${this._onDtype}>
          ${dts.map(([b, label]) => html`<option value=${b} ?selected=${b === c.bytesPer}>${label}</option>`)}
        </select></label>
      </form>
      <div role="status" aria-live="polite">${this._inputError ? html`<p class="error" part="input-error">${this._inputError}</p>` : nothing}</div>
      ${this._announcer.view()}
      ${renderLatest(this._task, (r) => this._view(r, c))}`;
  }

  /** The result box of a computation `r` and the passport of one layer (for the choice `c` in use). */
  _view(r, c) {
    const m = c.model;
    return html`<div class="result" part="result" data-bytes=${String(r.bytes)}>
        <div class="tex" part="formula" tabindex="0" role="region" aria-label="KV cache formula with the numbers">${kvFormula(r)}</div>
        <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
        <p><strong part="bytes" class="bytes" data-bytes=${String(r.bytes)}>${formatBytes(r.bytes)}</strong> of KV cache for ${r.model.name}
          · d<sub>k</sub> = ${r.dK} from the engine ·
          ${r.g === r.model.heads ? 'standard multi-head attention.'
            : `${r.model.heads / r.g}× smaller than with ${r.model.heads} K/V heads (${formatBytes(r.fullBytes)}).`}</p>
        ${r.weightBytes === null ? nothing : html`<p data-k="weights"><strong part="weights" class="bytes" data-bytes=${String(r.weightBytes)}>${formatBytes(r.weightBytes)}</strong>
          of weights at the same ${r.bytesPer} byte${r.bytesPer === 1 ? '' : 's'} per value (${int(r.weightParams)} parameters${r.g === r.model.kvHeads ? '' : html`, with g = ${r.g}`}).</p>
        <p part="comparison" data-k="comparison">${weightsSentence(r)}</p>`}
        ${this._contextNote(r)}
      </div>
      ${m ? html`<details class="layer" part="passport-details"><summary>One layer's shapes, parameters and FLOPs (its passport)</summary>
        <mha-passport part="passport" compact caption="Passport of one layer"
          seq-len=${c.T} d-model=${m.dModel} heads=${m.heads} kv-heads=${c.g} ?no-bias=${m.bias === false}
          .engine=${this.engine} .data=${r.model === m && r.g === c.g && r.T === c.T ? r.passport : null}></mha-passport></details>` : nothing}`;
  }
}

customElements.get('mha-kv-calculator') || customElements.define('mha-kv-calculator', MhaKvCalculator);

import { LitElement, html, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, taskEngine, renderLatest, seededMatrix, defaultTokens, int } from '../base/shared.js';
import { AttrGuard, intAttr, schemeAttr, attrError, rawAttr, fireError } from '../base/attr-check.js';
import { radioKeys } from '../base/choice.js';
import { PhoneFold } from '../base/phone-fold.js';
import './mha-passport.js';
import './mha-heads.js';

/** Up to this content width (px) the widget lays out for a phone (as its container queries). */
const NARROW_PX = 480;

/**
 * `<mha-widget>` — the lesson widget: buttons for h = 1, 2, 4, 8 (or other divisors of d_model),
 * the shape passport, and every head's attention weights, all recomputed by the wasm engine.
 *
 * The input X (`[seq-len, d-model]`) and the packed weights W_Q, W_K, W_V, W_O (each
 * `[d_model, d_model]`, the `[in, out]` convention) are fixed: generated from `seed` unless set as
 * properties. Changing h builds a new layer from the *same* packed matrices, so the heads are
 * only a different slicing of the same W_Q, W_K, W_V. "New weights" draws a new seed.
 *
 * @element mha-widget
 *
 * @attr {number} seq-len - Tokens T, 1–64 (default 5).
 * @attr {number} d-model - d_model, 1–512 (default 24).
 * @attr {number} heads - The selected num_heads h, a divisor of d-model (default 2); a click on a
 *   button sets it (and so the attribute; a value written by the author is never rewritten).
 * @attr {string} head-options - Space-separated h values for the buttons, 1 to d-model (default "1 2 4 8"),
 *   or "divisors" for every divisor of d_model.
 * @attr {number} seed - Seed of the generated X and weights, 0–1000000 (default 7).
 * @attr {'viridis'|'cividis'} scheme - Color scale (default viridis).
 *
 * A bad attribute value (not a number, out of range, heads not dividing d-model, an unknown word)
 * keeps the last valid value (or the default), shows one message naming the attribute, the value
 * and what is allowed, and fires `mha-error`; the attribute stays as written.
 * @attr {'shared'|'per-map'} scale - Colour range of the heads' maps, passed to `<mha-heads>`: `shared` (default), 0 to 1
 *   for every head and every h, so that sharpness compares by colour; `per-map`, each head from 0 to its own largest
 *   weight. A bad value shows `<mha-heads>`' message naming it.
 * @attr {boolean} causal - Apply a causal mask.
 * @attr {boolean} no-reseed - Hide the "New weights" button.
 *
 * @prop {number[][]|{data, shape}} x - Input `[T, d_model]`; default: seeded standard normal.
 * @prop {{wQ, wK, wV, wO}} weights - Packed weights, each `[d_model, d_model]`; default: seeded.
 * @prop {string[]} tokens - Token labels (default: the first T words of a fixed sentence).
 * @prop {object} engine - An engine from `createMHA()`; by default one shared engine is created.
 * @prop {object|null} result - Read-only: `{heads, weights, output, passport}` of the last run.
 * @prop {Error|null} error - Read-only: the last engine error.
 *
 * @fires change - `{detail: {heads}}` when the user picks another h.
 * @fires mha-computed - `{detail: {heads, weights, output}}` after every recomputation.
 * @fires mha-error - `{detail: {error}}`: an MHAError (`code`, `argument` = the attribute) for a bad
 *   attribute, or the engine's error (both shown in place).
 *
 * @csspart controls - The button row.
 * @csspart head-button - Each h button (the pressed one has `aria-pressed="true"`).
 * @csspart reseed - The "New weights" button.
 * @csspart passport-details - The disclosure holding the passport: open, its line hidden, wider than a phone; closed at
 *   first on a phone, its line giving d_k, W_Q's parameters, the FLOPs and the scores.
 * @csspart passport - The `<mha-passport>`.
 * @csspart heads - The `<mha-heads>`.
 * @csspart error - The error message (a bad attribute: one `<p part="error" data-attr="NAME">` each).
 *
 * @cssprop --mha-accent, --mha-accent-fg, --mha-fg, --mha-bg, --mha-surface, --mha-border - Theme.
 */
export class MhaWidget extends LitElement {
  static properties = {
    seqLen: { attribute: 'seq-len', converter: rawAttr },
    dModel: { attribute: 'd-model', converter: rawAttr },
    heads: { converter: rawAttr, reflect: true },
    headOptions: { type: String, attribute: 'head-options' },
    seed: { converter: rawAttr, reflect: true },
    scheme: { type: String },
    scale: { type: String },
    causal: { type: Boolean },
    noReseed: { type: Boolean, attribute: 'no-reseed' },
    x: { attribute: false },
    weights: { attribute: false },
    tokens: { attribute: false },
    engine: { attribute: false },
  };

  static styles = [baseStyles, css`
    :host {
      display: block; container-type: inline-size; background: var(--_bg); border: 1px solid var(--_border);
      border-radius: calc(var(--_radius) * 1.5); padding: 1rem;
    }
    .controls { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem; margin-bottom: 0.8rem; }
    .controls .lbl { font-weight: 600; margin-right: 0.3rem; }
    /* what the maps show, between the buttons and "New weights" (its own line on a phone) */
    .controls .status { flex: 1 1 14rem; margin: 0 0.4rem; }
    .layout { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1rem; }
    @container (min-width: 820px) {
      .layout { grid-template-columns: minmax(0, 25rem) minmax(0, 1fr); }
    }
    /* wide: room for the passport's steps and counts side by side (its compact split), the maps beside them */
    @container (min-width: 1060px) {
      .layout { grid-template-columns: minmax(0, 42rem) minmax(0, 1fr); }
    }
    .status { font-size: 0.8em; color: var(--_muted); }
    details.passport > summary { cursor: pointer; font-size: 0.9rem; }
    details.passport[open] > summary { margin-bottom: 0.5rem; }
    /* wider than a phone the passport is always shown: no disclosure line */
    @container (min-width: 481px) { details.passport > summary { display: none; } }
    /* a phone: two maps to a row (smaller cells) */
    @container (max-width: 480px) {
      mha-heads { --mha-cell-size: 16px; --mha-heads-gap: 0.4rem; --mha-head-flex: 1 1 8rem; --mha-head-min-width: 0; }
    }
  `];

  constructor() {
    super();
    /** @type {number|string} */ this.seqLen = 5;
    /** @type {number|string} */ this.dModel = 24;
    /** @type {number|string} */ this.heads = 2;
    this.headOptions = '1 2 4 8';
    /** @type {number|string} */ this.seed = 7;
    this.scheme = 'viridis';
    this.causal = false;
    this.noReseed = false;
    this.x = undefined;
    this.weights = undefined;
    this.tokens = undefined;
    this.engine = undefined;
    this._gen = null;
    /** Open wider than a phone; on a phone the maps come first, the passport behind its disclosure. */
    this._fold = new PhoneFold(this, NARROW_PX + 1);
    this._attrs = new AttrGuard(this);
    /** The valid configuration in use: the attributes parsed, or their last valid values. */
    this._c = { T: 5, d: 24, h: 2, seed: 7, options: [1, 2, 4, 8], scheme: 'viridis' };
    // The layer on the engine, re-run when an input changes; a run that a newer one overtakes
    // while the engine is still loading is aborted before it computes. The passport is computed here once and handed to
    // the nested <mha-passport> (its `data`), which then does not ask the engine again.
    this._layerTask = new Task(this, {
      args: () => [this._c.T, this._c.d, this._c.h, this._c.seed, this.causal, this.x, this.weights, this.engine],
      task: async ([, d, h, , , , , engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        const layer = mha.createLayer({ dModel: d, numHeads: h, bias: false, weights: this.packedWeights });
        try {
          const r = layer.forward(this.input, { causal: this.causal, needWeights: true });
          const passport = mha.passport({ seqLen: this._T, dModel: d, numHeads: h, bias: false });
          return { heads: h, weights: r.weights, output: r.output, passport };
        } finally {
          layer.dispose();
        }
      },
      onComplete: ({ heads, weights, output }) => {
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: { heads, weights, output }, bubbles: true, composed: true }));
      },
      onError: (err) => fireError(this, err),
    });
  }

  /** `{heads, weights, output, passport}` of the last run (null before the first one and after an engine error). */
  get result() { return this._layerTask.value ?? null; }

  /** The last engine error (null after a run that succeeded). */
  get error() { return this._layerTask.error ?? null; }

  /** Parse the attributes once per update (attr-check.js): bad values keep the last valid ones. */
  willUpdate() {
    const g = this._attrs;
    g.begin();
    const T = g.take('seq-len', intAttr('seq-len', this.seqLen, { dflt: 5, min: 1, max: 64 }));
    const d = g.take('d-model', intAttr('d-model', this.dModel, { dflt: 24, min: 1, max: 512 }));
    let h = g.take('heads', intAttr('heads', this.heads, { dflt: 2, min: 1, max: d }));
    if (d % h !== 0) {
      if (!g.has('heads')) g.add(attrError('heads', `a divisor of d-model = ${d} (d_k = d_model / h)`, this.heads));
      h = d % this._c.h === 0 ? this._c.h : 1;
    }
    const seed = g.take('seed', intAttr('seed', this.seed, { dflt: 7, min: 0, max: 1000000 }));
    const scheme = g.take('scheme', schemeAttr(this.scheme));
    let options = this._c.options;
    const spec = String(this.headOptions ?? '1 2 4 8').trim();
    if (spec === 'divisors') options = Array.from({ length: d }, (_, i) => i + 1).filter((k) => d % k === 0);
    else {
      const list = spec.split(/[\s,]+/).filter(Boolean);
      const ok = list.length > 0 && list.every((t) => /^\d+$/.test(t) && Number(t) >= 1 && Number(t) <= d);
      if (ok) options = list.map(Number);
      else g.add(attrError('head-options', `"divisors" or space-separated whole numbers from 1 to d-model = ${d}`, this.headOptions));
    }
    g.end();
    this._c = { T, d, h, seed, options, scheme };
  }

  get _T() { return this._c.T; }
  get _d() { return this._c.d; }

  /** The h values offered as buttons. */
  get options() {
    return this._c.options;
  }

  /** The input X in use: the `x` property, or the seeded one. */
  get input() {
    return this.x ?? this._generated().x;
  }

  /** The packed weights in use: the `weights` property, or the seeded ones. */
  get packedWeights() {
    return this.weights ?? this._generated().weights;
  }

  /** The token labels in use. */
  get tokenLabels() {
    return this.tokens ?? defaultTokens(this._T);
  }

  _generated() {
    const T = this._T, d = this._d, seed = this._c.seed;
    const key = `${T}/${d}/${seed}`;
    if (this._gen?.key !== key) {
      // Xavier-uniform limit sqrt(6 / (d + d)), widened a little so the untrained heads show
      // patterns that are easy to tell apart.
      const limit = 1.6 * Math.sqrt(6 / (2 * d));
      const w = (k) => seededMatrix(seed * 1000 + k, d, d, { kind: 'uniform', limit });
      this._gen = {
        key,
        x: seededMatrix(seed * 1000, T, d),
        weights: { wQ: w(1), wK: w(2), wV: w(3), wO: w(4) },
      };
    }
    return this._gen;
  }

  _pick(h) {
    if (h === this._c.h && !this._attrs.has('heads')) return;
    this.heads = h;
    this.dispatchEvent(new CustomEvent('change', { detail: { heads: h }, bubbles: true, composed: true }));
  }

  /** Draw a new seed for X and the weights ("New weights"). */
  reseed() {
    this.seed = (this._c.seed * 7919 + 13) % 100003;
  }

  render() {
    const h = this._c.h;
    return html`${this._attrs.view()}
      <div class="controls" part="controls">
        <span class="lbl" aria-hidden="true">heads h</span>
        <span class="choices" role="radiogroup" aria-label="number of heads h" @keydown=${radioKeys}>${this.options.map((o) => html`<button
            type="button" part="head-button" data-h=${o} role="radio" aria-checked=${o === h ? 'true' : 'false'}
            tabindex=${o === h ? 0 : -1} aria-label=${`h = ${o}`} @click=${() => this._pick(o)}>${o}</button>`)}</span>
        <p class="status" aria-live="polite">${this._statusText()}</p>
        ${this.noReseed ? nothing : html`<button type="button" part="reseed" @click=${() => this.reseed()}>New weights</button>`}
      </div>
      ${renderLatest(this._layerTask, (r) => this._view(r, h), 'Loading the engine…')}`;
  }

  /**
   * The passport and the heads' maps of a result `r` (the last one while h's new run computes). On a
   * phone the maps come first and the passport sits behind a disclosure whose line gives what stays
   * and what grows (W_Q over all heads, the FLOPs); wider, the passport is shown beside the maps.
   */
  _view(r, h) {
    const p = r.passport;
    const passport = html`<details class="passport" part="passport-details" ?open=${this._fold.open}>
        <summary>Shape passport: d<sub>k</sub> = ${p.dK}, W<sub>Q</sub> ${int(p.params.wQ)} parameters, ${int(p.flops.total)} FLOPs, ${int(p.memory.scores)} scores</summary>
        <mha-passport part="passport" seq-len=${this._T} d-model=${this._d} heads=${h}
          .engine=${this.engine} .data=${r.heads === h ? p : null} compact no-bias></mha-passport></details>`;
    const heads = html`<mha-heads part="heads" .weights=${r.weights} .tokens=${this.tokenLabels}
          .dK=${p.dK} scheme=${this._c.scheme} .scale=${this.scale ?? null}></mha-heads>`;
    return html`<div class="layout">${!this._fold.open ? html`${heads}${passport}` : html`${passport}${heads}`}</div>`;
  }

  /** The line beside the buttons saying what the maps show (empty before the first result and after an error). */
  _statusText() {
    const r = this.result;
    return r ? `${r.heads} head${r.heads > 1 ? 's' : ''} of ${this._T} × ${this._T} attention weights, computed by the wasm engine` : '';
  }
}

customElements.get('mha-widget') || customElements.define('mha-widget', MhaWidget);


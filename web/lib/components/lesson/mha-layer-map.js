import { LitElement, html, svg, nothing } from 'lit';
import { Task, TaskStatus } from '@lit/task';
import { baseStyles, taskEngine, errorText } from '../base/shared.js';
import { AttrGuard, attrError, fireError } from '../base/attr-check.js';
import { rich } from '../base/rich.js';
import { LAYER_MAP_TENSORS, TENSOR_WHAT, MLP_RATIO, bracket, layerMapTensors } from '../logic/layer-map.js';
import { layerMapConfig } from './layer-map/config.js';
import { headColor, STROKE, block, deck, scoreMap } from './layer-map/glyphs.js';
import { layerMapStyles } from './layer-map/styles.js';

export { LAYER_MAP_TENSORS, MLP_RATIO, layerMapTensors } from '../logic/layer-map.js';
export { layerMapConfig } from './layer-map/config.js';
export { headColor } from './layer-map/glyphs.js';

/** The width (px) from which the detail panel sits beside the map instead of under a row. */
const WIDE = 720;

/** Score maps drawn at most; above, the first and last ones with an ellipsis between. */
const MAX_MAPS = 32;

/**
 * `<mha-layer-map>` — a map of one multi-head attention layer inside a pre-norm decoder block:
 * X → LayerNorm → the packed W_Q, W_K, W_V, each drawn as its h column slices (one color per head)
 * → the per-head Q_i, K_i, V_i → h score maps (T × T, the causal mask greyed when `causal`) →
 * softmax → ·V_i → concat → W_O → + residual → LayerNorm → MLP → + residual. Every tensor is a
 * button; selecting it (click, Enter or Space) opens a panel with its name, shape, formula, what it
 * is for and a PyTorch line with the numbers filled in; for Q, K and V also the reshape
 * `[B, T, d_model] —view→ [B, T, h, d_k] —transpose(1, 2)→ [B, h, T, d_k]` (Vaswani et al. 2017,
 * eq. of MultiHead; the pre-norm block as in GPT-2, Radford et al. 2019).
 *
 * Shapes come from the engine's `mha.passport({seqLen, dModel, numHeads, batch?, kvHeads?})`: the
 * tensors the passport lists take its step's shape and formula; W_Q, W_K, W_V take
 * `[d_model, params.wQ / d_model]` (and wK, wV) from its parameter counts; the norms, residual sums
 * and the MLP (d_ff = 4 · d_model) are derived and marked so (`source.derived`, a dashed shape).
 * A bad attribute (not a whole number ≥ 1, heads not dividing d-model, kv-heads not dividing heads)
 * keeps the last good map, shows one message naming the attribute, what it expects and what it got,
 * fires `mha-error`, and the attribute stays as written.
 *
 * @element mha-layer-map
 *
 * @attr {number} seq-len - Tokens T (default 5).
 * @attr {number} d-model - d_model (default 24).
 * @attr {number} heads - num_heads h, a divisor of d-model (default 2).
 * @attr {number} batch - Batch size B (optional; left out, the shapes are unbatched `[T, d_model]`).
 * @attr {number} kv-heads - Key/value heads g for grouped-query attention, a divisor of heads
 *   (optional; default g = h).
 * @attr {boolean} causal - Draw the causal mask (the grey upper triangle of each score map).
 * @attr {string} selected - The selected tensor, one of `x ln1 wq wk wv q k v scores weights heads
 *   concat wo attn resid ln2 w1 hidden w2 mlp y` (LAYER_MAP_TENSORS); reflects the user's choice.
 *   An unknown name shows a message listing the valid ones and keeps the last valid selection.
 *
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {object|null} passport - Read-only: the engine's passport of the map drawn (the last good one).
 * @prop {Array<{name: string, label: string, shape: number[], sym: string[], formula: string,
 *   source: {step?: string, derived?: string}, purpose: string, code: string[]}>} tensors -
 *   Read-only: every tensor drawn, in forward order (empty before the first passport).
 * @prop {Error|null} error - Read-only: the last attribute or engine error (null when the map is current).
 *
 * @fires select - `{detail: {tensor, shape}}` when the user selects a tensor (`tensor` is its name,
 *   `shape` its number[]); not fired when the page sets `selected`.
 * @fires mha-error - `{detail: {error}}` (an MHAError) for a bad attribute or an engine refusal (shown in place).
 *
 * @csspart figure - The whole map.
 * @csspart caption - The line with d_model, h, d_k, T (and B, g).
 * @csspart tensor - Each tensor's button (`data-tensor`, `data-shape`, `aria-pressed`).
 * @csspart shape - The shape under a tensor's name (`data-derived` when not from the passport).
 * @csspart slices - A packed weight matrix's SVG (one band per head).
 * @csspart map - One head's score or weight map.
 * @csspart mask - The causal mask of one map (only with `causal`).
 * @csspart attention - The attention sub-layer's frame.
 * @csspart mlp - The MLP sub-layer's frame.
 * @csspart detail - The panel of the selected tensor (beside the map when wide; under its stage when narrow, where the
 *   reshape drawing and the PyTorch lines are behind a disclosure).
 * @csspart reshape - The view/transpose drawing of Q, K or V.
 * @csspart code - The PyTorch lines.
 * @csspart error - A bad attribute or engine error.
 * @csspart selected-error - An unknown `selected` name.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaLayerMap extends LitElement {
  static properties = {
    seqLen: { type: String, attribute: 'seq-len' },
    dModel: { type: String, attribute: 'd-model' },
    heads: { type: String },
    batch: { type: String },
    kvHeads: { type: String, attribute: 'kv-heads' },
    causal: { type: Boolean },
    selected: { type: String, reflect: true },
    engine: { attribute: false },
    _wide: { state: true },
  };

  static styles = [baseStyles, layerMapStyles];

  constructor() {
    super();
    // the attributes as written (null: left out, the default applies); parsed by layerMapConfig
    /** @type {number|string|null} */
    this.seqLen = null;
    /** @type {number|string|null} */
    this.dModel = null;
    /** @type {number|string|null} */
    this.heads = null;
    /** @type {number|string|null} */
    this.batch = null;
    /** @type {number|string|null} */
    this.kvHeads = null;
    this.causal = false;
    /** @type {string|null} */
    this.selected = null;
    this.engine = undefined;
    this._attrs = new AttrGuard(this);
    this._cfg = null;           // the last valid configuration (the task's input)
    // the map of the last good configuration is the task's value ({cfg, causal, passport, tensors}),
    // drawn through Task.render: kept while a new one is computed, while a bad attribute is shown, and
    // when the engine refuses a configuration (the value is then that map with `refused`, the engine's error)
    this._task = new Task(this, {
      args: () => [this._cfg, this.causal, this.engine],
      task: async ([cfg, causal, engine], { signal }) => {
        if (!cfg) return null;
        const mha = await taskEngine(engine, signal);
        let passport;
        try {
          passport = mha.passport(cfg);
        } catch (e) {
          if (!e?.code) throw e;
          e.message = `${this._asWritten()}: the engine refused: ${e.message}`;
          fireError(this, e);
          const last = this._task.value;
          return { ...(last?.tensors ? last : {}), refused: e };
        }
        return { cfg, causal: !!causal, passport, tensors: layerMapTensors(passport, cfg, !!causal) };
      },
      onError: (err) => fireError(this, err),
    });
    this._lastSelected = null;
    this._selectedProblem = '';
    this._wide = false;
    // wide enough for the panel beside the map (else it opens under the selected tensor's row)
    this._resize = typeof ResizeObserver === 'function'
      ? new ResizeObserver(([e]) => { const w = e.contentRect.width >= WIDE; if (w !== this._wide) this._wide = w; })
      : null;
  }

  connectedCallback() {
    super.connectedCallback();
    this._resize?.observe(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._resize?.disconnect();
  }

  /** Every tensor drawn, in forward order (empty before the first passport). */
  get tensors() { return this._task.value?.tensors ?? []; }

  /**
   * The engine's passport of the map drawn (the last good one; null before the first).
   * @returns {object|null}
   */
  get passport() { return this._task.value?.passport ?? null; }

  /**
   * The first bad attribute's error, else the engine's refusal of the map, else null (the map is current).
   * @returns {Error|null}
   */
  get error() {
    return this._attrs.errors[0] ?? this._task.value?.refused ?? (this._task.status === TaskStatus.ERROR ? this._task.error : null) ?? null;
  }

  /** The element's tag with its size attributes as written, e.g. `<mha-layer-map seq-len="5" …>`. */
  _asWritten() {
    const a = (name, v) => (v != null && v !== '' ? ` ${name}="${v}"` : '');
    return `<mha-layer-map seq-len="${this.seqLen ?? ''}" d-model="${this.dModel ?? ''}" heads="${this.heads ?? ''}"`
      + `${a('batch', this.batch)}${a('kv-heads', this.kvHeads)}>`;
  }

  willUpdate(changed) {
    if (['seqLen', 'dModel', 'heads', 'batch', 'kvHeads'].some((k) => changed.has(k))) {
      // one message and one mha-error per bad attribute; the last valid map stays (attr-check.js)
      const { cfg, errors } = layerMapConfig(this);
      const g = this._attrs;
      g.begin();
      errors.forEach((e) => g.add(e));
      g.end();
      if (cfg && !(this._cfg && JSON.stringify(this._cfg) === JSON.stringify(cfg))) this._cfg = cfg;
    }
    if (changed.has('selected')) this._checkSelected();
  }

  /** `selected`: a tensor's name, or empty for none; an unknown name keeps the last valid selection. */
  _checkSelected() {
    const s = this.selected;
    if (s === null || s === undefined || s === '') {
      this._lastSelected = null;
      this._selectedProblem = '';
    } else if (LAYER_MAP_TENSORS.includes(s)) {
      this._lastSelected = s;
      this._selectedProblem = '';
    } else {
      const err = attrError('selected', `one of ${LAYER_MAP_TENSORS.join(', ')}`, s);
      this._selectedProblem = err.message + (this._lastSelected ? `; still showing ${this._lastSelected}.` : '.');
      queueMicrotask(() => fireError(this, err));
    }
  }

  _select(t) {
    this.selected = t.name;
    this.dispatchEvent(new CustomEvent('select', { detail: { tensor: t.name, shape: [...t.shape] }, bubbles: true, composed: true }));
  }

  /** One tensor's button: `glyph` above its name and shape. Its accessible name begins with the visible
   * text (W<sub>Q</sub> reads "WQ"), then what the tensor is and where its shape comes from. */
  _button(t, glyph, extra = '') {
    const derived = !!t.source.derived;
    const pressed = this._lastSelected === t.name;
    return html`<button type="button" class=${`t ${extra}`} part="tensor" data-tensor=${t.name} data-shape=${t.shape.join(',')}
      aria-pressed=${pressed ? 'true' : 'false'} aria-label=${`${t.label.replace(/_/g, '')} ${bracket(t.shape)}: ${TENSOR_WHAT[t.name]}${t.row === 'scores' || t.row === 'weights' ? `, ${t.n} maps of ${t.shape.at(-2)} × ${t.shape.at(-1)}${this._task.value?.causal ? ', future keys masked' : ''}` : ''}, shape ${derived ? 'derived' : 'from the engine'}`}
      @click=${() => this._select(t)}>
      ${glyph}
      <span class="name">${rich(t.label)}</span>
      <span class="shape" part="shape" ?data-derived=${derived}>${bracket(t.shape)}</span>
    </button>`;
  }

  _maps(t, T, causal, size, what) {
    const n = t.n;
    const idx = n <= MAX_MAPS ? [...Array(n).keys()] : [...Array(MAX_MAPS - 2).keys(), -1, n - 2, n - 1];
    return html`<div class="maps-grid">${idx.map((i) => i < 0
      ? html`<span class="more" data-n=${`… ${n - MAX_MAPS + 1} more …`}></span>`
      : html`<span class="m" part="map" data-map=${what} data-head=${i} data-n=${i + 1}>${scoreMap(T, size, headColor(i, n), causal, i)}</span>`)}</div>`;
  }

  _glyph(t, d) {
    const { h, g, T } = d;
    // glyphs small enough that a row of stages stays short
    const z = (v) => Math.round(v * 0.7);
    switch (t.name) {
      case 'x': case 'ln1': case 'attn': case 'resid': case 'ln2': case 'mlp': case 'y':
        return block(z(76), z(26), { lines: T });
      case 'wq': case 'wk': case 'wv':
        return html`<span part="slices" data-slices=${t.n}>${block(z(64), z(56), { n: t.n, colors: t.name === 'wq' ? undefined : (i) => headColor(i * (h / g), h), head: t.name === 'wq' ? undefined : (i) => i * (h / g) })}</span>`;
      case 'q': return deck(h, z(30), z(30));
      case 'k': case 'v': return deck(g, z(30), z(30), (i) => headColor(i * (h / g), h), (i) => i * (h / g));
      case 'heads': return deck(h, z(26), z(30));
      case 'concat': return block(z(80), z(26), { n: h, lines: T });
      case 'wo': return html`<span part="slices" data-slices=${h}>${block(z(56), z(64), { n: h, dir: 'rows' })}</span>`;
      case 'w1': return block(z(96), z(28));
      case 'hidden': return block(z(110), z(26), { lines: T });
      case 'w2': return block(z(28), z(72));
      default: return nothing;
    }
  }

  _reshape(t) {
    const r = t.reshape;
    const n = r.n;
    const h = this.tensors.find((x) => x.name === 'q').n;
    const c = (i) => headColor(i * (h / n), h);   // K and V head j: the colour of its first query head
    const w = 84, hh = 34;
    const gap = n <= 16 ? 3 : 1;
    const bw = (w - gap * (n - 1)) / n;
    const split = [];
    for (let i = 0; i < n; i++) split.push(svg`<rect x=${i * (bw + gap)} y="0" width=${bw} height=${hh} fill=${c(i)} stroke=${STROKE} stroke-width="0.6"></rect>`);
    const which = t.label;
    const ax = r.final.length === 4 ? 1 : 0;
    return html`<div class="reshape" part="reshape" role="group" aria-label=${`How ${which} gets its head axis`}>
      <figure>${block(w, hh, { n, colors: c })}<figcaption>x̂·W<sub>${which}</sub><br><span class="shape">${bracket(r.packed)}</span></figcaption></figure>
      <span class="to"><span aria-hidden="true">→</span><br>.view</span>
      <figure><svg class="glyph" width=${w + 2} height=${hh + 2} viewBox=${`-1 -1 ${w + 2} ${hh + 2}`} aria-hidden="true" focusable="false">${split}</svg>
        <figcaption>split the last axis<br><span class="shape">${bracket(r.view)}</span></figcaption></figure>
      <span class="to"><span aria-hidden="true">→</span><br>.transpose(${ax}, ${ax + 1})</span>
      <figure>${deck(n, 30, 30, c)}<figcaption>head axis first<br><span class="shape">${bracket(r.final)}</span></figcaption></figure>
    </div>
    <p>The view only reads the same numbers as ${n} groups of ${r.view[r.view.length - 1]}; the transpose swaps two axes without copying, so each head can multiply its own T × ${r.view[r.view.length - 1]} block.</p>`;
  }

  _detail(t, beside = false) {
    if (!t || this._wide !== beside) return nothing;
    const src = t.source.step
      ? html`the engine’s passport, step “${t.source.step}”`
      : html`derived: ${t.source.derived}`;
    return html`<section class="detail" part="detail" aria-labelledby="detail-title" data-tensor=${t.name}>
      <h4 id="detail-title">${t.long}</h4>
      <dl>
        <dt>shape</dt><dd class="mono" data-k="shape">${bracket(t.shape)} = ${bracket(t.sym)}</dd>
        <dt>formula</dt><dd class="mono" data-k="formula">${t.formula}</dd>
        <dt>shape from</dt><dd data-k="source">${src}</dd>
      </dl>
      <p data-k="purpose">${t.purpose}</p>
      ${beside ? this._how(t) : html`<details class="how"><summary>${t.reshape ? 'The view, drawn, and the PyTorch line' : 'The PyTorch line'}</summary>${this._how(t)}</details>`}
    </section>`;
  }

  /** The reshape drawn (Q, K, V, concat) and the PyTorch line of tensor `t`: in the side panel, or behind a
   * disclosure in the panel under its stage (a narrow page, where the panel pushes the map down). */
  _how(t) {
    return html`${t.reshape ? this._reshape(t) : nothing}
      <pre part="code"><code>${t.code.join('\n')}</code></pre>`;
  }

  /** One stage: `lead` (the step's arrow and label) and the buttons of its tensors, then the detail panel
   * if the selected tensor is among them (when the panel is not beside the map). */
  _row(names, byName, d, lead = nothing) {
    const ts = names.map((n) => byName.get(n));
    const sel = ts.find((t) => t.name === this._lastSelected);
    return html`<div class="step">${lead}<div class="row">${ts.map((t) => this._button(t, this._glyph(t, d), t.row === 'scores' || t.row === 'weights' ? 'maps' : ''))}</div></div>${this._detail(sel)}`;
  }

  /** One `<p part="error" role="alert">` per bad attribute (`data-attr`), or the engine's refusal. */
  _errors(dr) {
    const still = dr ? ' The map still shows the last valid attributes.' : '';
    const p = (text, attr) => html`<p class="error" part="error" role="alert" data-attr=${attr ?? nothing}>${text.replace(/([^.!?])$/, '$1.')}${still}</p>`;
    if (this._attrs.errors.length) return this._attrs.errors.map((e) => p(e.message, e.argument));
    return this.error ? p(errorText(this.error)) : nothing;
  }

  render() {
    const t = this._task;
    // the last good map while a new one is computed, and under the engine's refusal of a configuration
    const map = (v) => (v?.tensors ? v : null);
    return t.render({
      initial: () => this._view(null),
      pending: () => this._view(map(t.value)),
      complete: (v) => this._view(map(v)),
      error: () => this._view(null),
    });
  }

  /** The messages, and the map `dr` (the task's value) or, before any, the loading line. */
  _view(dr) {
    const err = this._errors(dr);
    const selErr = this._selectedProblem ? html`<p class="error" part="selected-error" role="alert">${this._selectedProblem}</p>` : nothing;
    if (!dr) return html`${err}${selErr}${this.error ? nothing : html`<p class="loading">Asking the engine for the layer’s shapes…</p>`}`;
    const { cfg, causal, passport: p, tensors } = dr;
    const byName = new Map(tensors.map((t) => [t.name, t]));
    const h = byName.get('q').n, g = byName.get('k').n;
    const T = cfg.seqLen;
    const d = { h, g, T };
    const mapsBtn = (name, size, lead) => {
      const t = byName.get(name);
      return html`<div class="step">${lead}<div class="row">${this._button(t, this._maps(t, T, causal, size, name), 'maps')}</div></div>${this._detail(t.name === this._lastSelected ? t : null)}`;
    };
    // the stages flow left to right in rows that wrap (the block stays short), each step's label under a →
    const op = (text) => html`<div class="op"><span class="arrow" aria-hidden="true">→</span>${text}</div>`;
    const colours = Math.min(h, 10);
    const sel = this._lastSelected ? byName.get(this._lastSelected) : null;
    const hint = html`<p class="hint">Select a tensor (click, or Tab to it and press Enter) to see its shape, formula and a PyTorch line.</p>`;
    return html`${err}${selErr}
    <figure part="figure">
      <figcaption part="caption">One multi-head attention layer in a pre-norm decoder block:
        d<sub>model</sub> = <span data-k="dModel">${cfg.dModel}</span>, h = <span data-k="h">${h}</span>
        → d<sub>k</sub> = <span data-k="dK">${p.dK}</span> (engine)${g !== h ? html`, g = ${g} key/value heads` : nothing},
        T = ${T}${cfg.batch !== undefined ? html`, B = ${cfg.batch}` : nothing}${causal ? ', causal' : nothing}.</figcaption>
      <div class="legend">
        <span><svg class="sw" width=${colours * 9} height="12" aria-hidden="true">${[...Array(colours).keys()].map((i) => svg`<rect x=${i * 9} width="8" height="12" fill=${headColor(i, h)}></rect>`)}</svg> one colour per head${h > colours ? ` (${colours} of ${h} shown)` : ''}</span>
        <span><span class="dash">[dashed]</span> shape derived, not in the engine’s passport</span>
        ${causal ? html`<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" class="mask"></rect></svg> masked (future keys)</span>` : nothing}
        ${this._wide ? nothing : html`<span>select a tensor for its shape, formula and PyTorch line</span>`}
      </div>
      <div class=${this._wide ? 'layout wide' : 'layout'}>
      <div class="block">
        <div class="rail start"></div><div class="io">${this._row(['x'], byName, d)}</div>
        <div class="rail"></div>
        <div class="sub" part="attention"><h3>multi-head attention sub-layer</h3>
          ${this._row(['ln1'], byName, d, op('LayerNorm'))}
          ${this._row(['wq', 'wk', 'wv'], byName, d, op(html`× the packed projections; column slice i (colour i) is head i’s W<sub>Q</sub><sup>(i)</sup>, W<sub>K</sub><sup>(i)</sup>, W<sub>V</sub><sup>(i)</sup>`))}
          ${this._row(['q', 'k', 'v'], byName, d, op(html`x̂·W, then .view(…, ${h === g ? 'h' : 'h or g'}, d<sub>k</sub>) and .transpose: the head axis moves before T`))}
          ${mapsBtn('scores', T <= 16 && h <= 8 ? 32 : 26, op(html`per head: Q<sub>i</sub>·K<sub>i</sub><sup>T</sup> / √d<sub>k</sub>${causal ? ' + causal mask' : ''}`))}
          ${mapsBtn('weights', 18, op('softmax over each row'))}
          ${this._row(['heads'], byName, d, op(html`per head: A<sub>i</sub>·V<sub>i</sub>`))}
          ${this._row(['concat', 'wo'], byName, d, op('transpose back, concatenate the heads; then × W_O'))}
          ${this._row(['attn'], byName, d, op(html`concat·W<sub>O</sub>`))}
        </div>
        <div class="rail"><span class="plus" aria-hidden="true">+</span></div><div class="io">${this._row(['resid'], byName, d, op('add to the residual stream'))}</div>
        <div class="rail"></div>
        <div class="sub" part="mlp"><h3>MLP sub-layer (d<sub>ff</sub> = ${MLP_RATIO}·d<sub>model</sub>, derived)</h3>
          ${this._row(['ln2'], byName, d, op('LayerNorm'))}
          ${this._row(['w1', 'hidden'], byName, d, op(html`× W<sub>1</sub>, GELU`))}
          ${this._row(['w2', 'mlp'], byName, d, op(html`× W<sub>2</sub>`))}
        </div>
        <div class="rail end"><span class="plus" aria-hidden="true">+</span></div><div class="io">${this._row(['y'], byName, d, op('add to the residual stream'))}</div>
      </div>
      ${this._wide ? html`<div class="side">${sel ? this._detail(sel, true) : hint}</div>` : sel ? nothing : hint}
      </div>
    </figure>`;
  }
}

customElements.get('mha-layer-map') || customElements.define('mha-layer-map', MhaLayerMap);

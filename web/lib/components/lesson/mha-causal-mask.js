import { LitElement, html, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, taskEngine, seededMatrix, toHeads, fmt } from '../base/shared.js';
import { tokensAttr, tokensProp } from '../base/attr-check.js';
import { pickLayerAttrs, LayerConfig, taskHandlers, errorsView } from './demo-layer.js';
import '../views/mha-heads.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { radioKeys } from '../base/choice.js';
import { Announcer } from '../base/announce.js';
import { PhoneFold, phoneFoldStyles } from '../base/phone-fold.js';

/** Default sentence of `<mha-causal-mask>` (6 tokens). */
export const CAUSAL_DEFAULT_TEXT = 'the cat sat on the mat';
/** Most tokens the element accepts (16 × 16 cells keep one DOM node per heatmap cell). */
export const CAUSAL_MAX_TOKENS = 16;

/**
 * The input and weights `<mha-causal-mask>` runs, as plain data, so a page or a test can run the
 * same layer through the JS API: X `[T, d_model]` standard normal from `seed` (one row per token
 * position; the words are only labels), and packed W_Q, W_K, W_V, W_O, each `[d_model, d_model]`
 * (`[in, out]`), uniform in ±1.6·√(6 / 2·d_model) (a widened Xavier limit, as in `<mha-widget>`),
 * all drawn with `seededMatrix` (mulberry32). The layer has no biases.
 * @param {{T: number, dModel: number, seed: number}} o
 * @returns {{x: {data: Float32Array, shape: number[]}, weights: {wQ, wK, wV, wO}}}
 */
export function causalMaskInputs({ T, dModel, seed }) {
  const limit = 1.6 * Math.sqrt(6 / (2 * dModel));
  const w = (k) => seededMatrix(seed * 1000 + k, dModel, dModel, { kind: 'uniform', limit });
  return { x: seededMatrix(seed * 1000, T, dModel), weights: { wQ: w(1), wK: w(2), wV: w(3), wO: w(4) } };
}

const q = (t) => `\u201c${t}\u201d`;

/**
 * The sentences under the tables, computed from one head's attention weights (`[T][T]`, from the
 * engine) and the tokens: with the mask, what the first token can attend to (its one weight), what
 * the last one spreads over, and how many weights above the diagonal are exactly 0; without it,
 * how much weight the first token puts on later tokens.
 * @param {number[][]} W one head's weights
 * @param {string[]} tokens
 * @param {boolean} causal whether the mask was applied
 * @param {number} head 0-based head index (for the text)
 * @returns {string[]}
 */
export function causalSentences(W, tokens, causal, head) {
  const T = W.length;
  let above = 0, zeros = 0, worst = 0;
  for (let i = 0; i < T; i++) {
    let s = 0;
    for (let j = 0; j < T; j++) {
      s += W[i][j];
      if (j > i) { above++; if (W[i][j] === 0) zeros++; }
    }
    worst = Math.max(worst, Math.abs(s - 1));
  }
  const argmax = (row, upTo = row.length) => row.slice(0, upTo).reduce((b, v, j) => (v > row[b] ? j : b), 0);
  const out = [];
  const h = `In head ${head + 1}`;
  if (causal) {
    out.push(`${h}, with the mask, token 1 (${q(tokens[0])}) can only attend to itself: weight ${W[0][0].toFixed(2)}.`);
    if (T > 1) {
      const last = W[T - 1], j = argmax(last);
      out.push(`Token ${T} (${q(tokens[T - 1])}) may attend to all ${T} tokens up to itself; its largest weight, ${last[j].toFixed(2)}, goes to token ${j + 1} (${q(tokens[j])}).`);
      out.push(`${zeros} of the ${above} weights above the diagonal are exactly 0 (their scores were −∞ before the softmax), and every row still sums to 1 (largest deviation ${worst.toExponential(1)}).`);
    }
  } else if (T > 1) {
    const later = W[0].slice(1).reduce((a, b) => a + b, 0);
    const j = 1 + argmax(W[0].slice(1));
    out.push(`${h}, without the mask, token 1 (${q(tokens[0])}) puts ${later.toFixed(2)} of its weight on the ${T - 1} tokens after it (the most, ${W[0][j].toFixed(2)}, on token ${j + 1}, ${q(tokens[j])}).`);
    out.push(`${zeros} of the ${above} weights above the diagonal are 0. A language model trained to predict the next token would see that token here: the mask is what stops it.`);
  } else {
    out.push(`${h}: a single token can only attend to itself (weight ${W[0][0].toFixed(2)}), with or without the mask.`);
  }
  return out;
}

/**
 * `<mha-causal-mask>` — where the triangle comes from. One short text (token labels) goes through
 * one seeded multi-head self-attention layer on the engine; a toggle button "causal mask"
 * (`aria-pressed`) re-runs it with `causal: true` or `false`. Shown: every head's attention weights
 * (`<mha-heads>`), and for one head (buttons "head i") the mask in use as a T × T grid (allowed /
 * masked: key j > query i), the scores Q·Kᵀ/√d_k before the softmax with −∞ where masked (from the
 * engine's `layer.trace`, whose scores are taken before any mask), and the attention weights with
 * each row's sum (from the engine's `layer.forward`). Sentences computed from those numbers say
 * what the first and last tokens may attend to. Causal masking as in the decoder of Vaswani et al.
 * 2017, §3.2.3: scores of illegal connections are set to −∞, so their softmax weight is 0.
 *
 * The layer's X and weights come from `causalMaskInputs({T, dModel, seed})` (seeded, untrained):
 * the pattern is arbitrary, the triangle is not.
 *
 * A bad attribute keeps the last good state, shows a message naming the attribute, the expected
 * and the written value, and fires `mha-error`; the attribute is left as written.
 *
 * @element mha-causal-mask
 *
 * @attr {string} text - The text, split at spaces into 1–16 tokens (default "the cat sat on the mat").
 * @attr {boolean} causal - Apply the causal mask (default: absent, off). The element's own state:
 *   the toggle button adds or removes it.
 * @attr {number} heads - num_heads h, a divisor of d-model (default 2).
 * @attr {number} d-model - d_model, 1–128 (default 16).
 * @attr {number} seed - Seed of X and the weights, 0–1000000 (default 7).
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {string[]} tokens - Token labels; when set, used instead of `text`.
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {{tokens: string[], dModel: number, heads: number, seed: number, causal: boolean, dK: number,
 *   weights: object, heads3: number[][][], scores: number[][][], rowSums: number[][]}|null} result -
 *   Read-only: the last run (weights: the engine's `[h, T, T]` Tensor; heads3 the same as nested
 *   arrays; scores: per head, before the mask; rowSums: per head and query row).
 * @prop {Error|null} error - Read-only: the last engine error or attribute error.
 *
 * @fires change - `{detail: {causal}}` when the user toggles the mask.
 * @fires mha-computed - `{detail: result}` after every run.
 * @fires mha-error - `{detail: {error}}` for a bad attribute or an engine error (shown in place).
 *
 * @csspart controls - The button row.
 * @csspart toggle - The "causal mask" button (`aria-pressed`).
 * @csspart head-button - Each "head i" button choosing the head of the tables.
 * @csspart heads - The `<mha-heads>`.
 * @csspart mask - The mask grid table.
 * @csspart scores - The scores table (on a phone, folded behind its caption).
 * @csspart weights - The weights table (with the row sums).
 * @csspart explain - The computed sentences.
 * @csspart error - An attribute or engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-accent-fg, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaCausalMask extends LitElement {
  static properties = {
    text: { type: String },
    causal: { type: Boolean, reflect: true },
    headsAttr: { type: String, attribute: 'heads' },
    dModelAttr: { type: String, attribute: 'd-model' },
    seedAttr: { type: String, attribute: 'seed' },
    scheme: { type: String },
    tokens: { attribute: false },
    engine: { attribute: false },
    _head: { state: true },
  };

  static styles = [baseStyles, phoneFoldStyles, css`
    :host {
      display: block; container-type: inline-size; background: var(--_bg); border: 1px solid var(--_border);
      border-radius: calc(var(--_radius) * 1.5); padding: 1rem; max-width: 100%; box-sizing: border-box;
    }
    .controls { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem; margin-bottom: 0.8rem; }
    .controls .lbl { color: var(--_muted); font-size: 0.9em; margin-left: 0.6rem; }
    /* the heads' maps, then the mask, scores and weights tables, side by side as the width allows */
    .tables { display: flex; flex-wrap: wrap; gap: 0.8rem 1.2rem; align-items: flex-start; }
    .tables mha-heads { flex: 0 1 auto; min-width: 0; max-width: 100%; }
    mha-heads::part(scale-note) { contain: inline-size; }   /* the maps set the width; the scale's note wraps to it */
    .scroll {
      overflow-x: auto; max-width: 100%; padding-bottom: 0.3rem;
    }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.82rem; }
    .tbl { min-width: 0; max-width: 100%; }
    .cap { font-weight: 600; font-size: 0.82rem; margin: 0 0 0.25em; max-width: 36em; contain: inline-size; }   /* wraps to its table's width */
    th { font-weight: 500; color: var(--_muted); padding: 0.15em 0.4em; white-space: nowrap; font-size: 0.78rem; }
    th[scope='row'] { text-align: right; color: var(--_fg); }
    td { border: 1px solid var(--_border); padding: 0.2em 0.45em; text-align: right; min-width: 2.6em; }
    td.masked { background: var(--_surface); color: var(--_muted); }
    table.mask td { text-align: center; min-width: 1.6em; }
    table.mask td.ok { background: var(--_accent); color: var(--_accent-fg); }
    td.sum, th.sum { border-left: 3px solid var(--_accent); font-weight: 600; }
    .explain { margin: 0.8rem 0 0; padding: 0.5em 0.9em; background: var(--_surface); border-radius: var(--_radius); box-sizing: border-box; }
    .explain p { margin: 0.3em 0; }
    /* the explanation and the closing note follow the tables; on a wide element the explanation sits beside the mask
       table (both beside the maps) and the note beside the weights table */
    .side { display: contents; }
    .side .explain { order: 1; flex: 1 0 100%; margin: 0; }
    .tables > .note { order: 2; flex: 1 0 100%; }
    @container (min-width: 900px) {
      .side { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 0.8rem 1.2rem; flex: 1 1 20rem; min-width: 0; }
      .side .explain { order: 0; flex: 1 1 16rem; }
      .tables > .note { order: 0; flex: 1 1 14rem; margin: 0; }
    }
    .note { font-size: 0.85em; color: var(--_muted); margin: 0.6rem 0 0; }
    /* a phone: the column heads are the tokens' numbers (each row head keeps number and word) */
    @container (max-width: 519.98px) {
      th .word { display: none; }
      table { font-size: 0.75rem; }
      td { padding: 0.2em 0.2em; min-width: 0; }
      th { padding: 0.15em 0.25em; }
      details.fold > .cap { display: none; }   /* folded: its summary line says it */
      details.fold > summary { font-size: 0.82rem; }
      .tbl { flex: 1 1 100%; }
      .cap { contain: none; max-width: none; }   /* a caption as wide as the element, not its narrow table */
    }
    .loading { color: var(--_muted); font-size: 0.9em; }
    /* a phone: both maps side by side (smaller cells) */
    @container (max-width: 480px) { mha-heads { --mha-cell-size: 17px; --mha-heads-gap: 0.4rem; --mha-head-flex: 1 1 8rem; --mha-head-min-width: 0; } }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    this.text = undefined;
    this.causal = false;
    this.headsAttr = undefined;
    this.dModelAttr = undefined;
    this.seedAttr = undefined;
    this.scheme = 'viridis';
    this.tokens = undefined;
    this.engine = undefined;
    this._head = 0;
    // the sentences are read in place; a change of mask or head says their first line once it settles
    this._announcer = new Announcer(this);
    this._fold = new PhoneFold(this);   // the scores table: open on a wide element, folded behind its caption on a phone
    this._layer = new LayerConfig(this);   // the last valid configuration, the scheme, the attribute errors
    this._task = new Task(this, {
      args: () => [this._layer.key, !!this.causal, this.engine],
      task: async ([key, causal, engine], { signal }) => {
        if (!key) return null;
        const cfg = this._layer.cfg;
        const mha = await taskEngine(engine, signal);
        const { x, weights } = causalMaskInputs({ T: cfg.tokens.length, dModel: cfg.dModel, seed: cfg.seed });
        const layer = mha.createLayer({ dModel: cfg.dModel, numHeads: cfg.heads, bias: false, weights });
        try {
          const fw = layer.forward(x, { causal, needWeights: true });
          const tr = layer.trace(x, { causal });
          const heads3 = toHeads(fw.weights);
          return {
            ...cfg, causal, dK: cfg.dModel / cfg.heads,
            weights: fw.weights, output: fw.output, heads3,
            scores: tr.heads.map((hd) => hd.scores.toArray()),
            rowSums: heads3.map((m) => m.map((row) => row.reduce((a, b) => a + b, 0))),
          };
        } finally {
          layer.dispose();
        }
      },
      ...taskHandlers(this, (r) => { if (this._head >= r.heads) this._head = 0; }),
    });
  }

  /** The last run: the task's value (null before the first run and after an engine error). */
  get result() {
    return this._task.value ?? null;
  }

  /** The engine's error, if the last run failed. */
  get error() {
    return this._task.error ?? null;
  }

  /** Parse the attributes; on success they become the configuration, else the last good one stays. */
  willUpdate() {
    const errors = [];
    const pick = (r) => { if (r.error) errors.push(r.error); return r.value; };
    const tokens = pick(tokensProp('tokens', this.tokens, {
      fallback: tokensAttr('text', this.text, { dflt: CAUSAL_DEFAULT_TEXT.split(' '), max: CAUSAL_MAX_TOKENS }), max: CAUSAL_MAX_TOKENS,
    }));
    const { dModel, heads, seed } = pickLayerAttrs(this, pick, errors, { dModel: 16, dModelMin: 1 });
    this._layer.settle(errors, { tokens, dModel, heads, seed }, this.scheme);
  }

  /** Switch the causal mask on or off (as the toggle button does) and re-run the engine. */
  toggle() {
    this.causal = !this.causal;
    this._announceFirst();
    this.dispatchEvent(new CustomEvent('change', { detail: { causal: this.causal }, bubbles: true, composed: true }));
  }

  /** Announces the first sentence about the head shown, once the input has settled. */
  _announceFirst() {
    this._announcer.say(() => {
      const r = this.result;
      return r ? causalSentences(r.heads3[this._head], r.tokens, r.causal, this._head)[0] ?? '' : '';
    });
  }

  _table(kind, caption, label, r, cell, extra = null, fold = false) {
    const T = r.tokens.length;
    const labels = r.tokens.map((t, i) => `${i + 1} ${t}`);
    // a column head is the token's number and word; on a phone the number alone (the row heads keep the words)
    const col = (t, i) => html`<th scope="col">${i + 1}<span class="word"> ${t}</span></th>`;
    const body = html`<div class="scroll" tabindex="0" role="region" aria-label=${label}>
      <table class=${kind} part=${kind} aria-labelledby=${`cap-${kind}`}>
        <thead><tr><td></td>${r.tokens.map(col)}${extra ? html`<th scope="col" class="sum">${extra.head}</th>` : nothing}</tr></thead>
        <tbody>${Array.from({ length: T }, (_, i) => html`<tr><th scope="row">${labels[i]}</th>
          ${Array.from({ length: T }, (_, j) => cell(i, j))}${extra ? extra.cell(i) : nothing}</tr>`)}</tbody>
      </table></div>`;
    // a folded table (on a phone, base/phone-fold.js) shows its caption as the summary line
    return fold
      ? html`<details class="tbl fold" ?open=${this._fold.open}><summary>${caption}</summary><p class="cap" id=${`cap-${kind}`}>${caption}</p>${body}</details>`
      : html`<div class="tbl"><p class="cap" id=${`cap-${kind}`}>${caption}</p>${body}</div>`;
  }

  _details(r, lead = nothing, explain = nothing, tail = nothing) {
    const k = this._head;
    const masked = (i, j) => r.causal && j > i;
    const S = r.scores[k], W = r.heads3[k];
    return html`<div class="tables">${lead}
      <div class="side">${this._table('mask', `Mask in use (${r.causal ? 'causal: key j > query i is masked' : 'none: every key allowed'})`, 'mask', r, (i, j) => (masked(i, j)
        ? html`<td class="masked" data-r=${i} data-c=${j} data-masked="true"><span aria-hidden="true">✕</span><span class="sr-only">masked</span></td>`
        : html`<td class="ok" data-r=${i} data-c=${j} data-masked="false"><span aria-hidden="true">✓</span><span class="sr-only">allowed</span></td>`))}${explain}</div>
      ${this._table('scores', html`Head ${k + 1}: scores Q·Kᵀ/√d<sub>k</sub> before the softmax${r.causal ? ', −∞ where masked' : ''}`, `head ${k + 1} scores`, r, (i, j) => (masked(i, j)
        ? html`<td class="masked" data-r=${i} data-c=${j} data-value="-Infinity">−∞</td>`
        : html`<td data-r=${i} data-c=${j} data-value=${String(S[i][j])}>${fmt(S[i][j], 2)}</td>`), null, true)}
      ${this._table('weights', `Head ${k + 1}: attention weights, softmax of each row (0 printed without decimals is exactly 0)`, `head ${k + 1} attention weights`, r,
        (i, j) => html`<td class=${W[i][j] === 0 ? 'masked' : ''} data-r=${i} data-c=${j} data-value=${String(W[i][j])}>${W[i][j] === 0 ? '0' : fmt(W[i][j], 3)}</td>`,
        { head: html`<span class="word">row </span>sum`, cell: (i) => html`<td class="sum" data-sum=${String(r.rowSums[k][i])}>${fmt(r.rowSums[k][i], 3)}</td>` })}
      ${tail}
    </div>`;
  }

  render() {
    const r = this.result;
    return html`
      <div class="controls" part="controls">
        <button type="button" part="toggle" aria-pressed=${this.causal ? 'true' : 'false'} @click=${() => this.toggle()}>causal mask</button>
        ${r && r.heads > 1 ? html`<span class="lbl" id="hl">tables show</span>
          <span role="radiogroup" aria-labelledby="hl" @keydown=${radioKeys}>${Array.from({ length: r.heads }, (_, i) => html`<button type="button"
            part="head-button" data-head=${i} role="radio" aria-checked=${i === this._head ? 'true' : 'false'} tabindex=${i === this._head ? 0 : -1}
            @click=${() => { this._head = i; this._announceFirst(); }}>head ${i + 1}</button>`)}</span>` : nothing}
      </div>
      ${errorsView(this._layer.errors, this.error, r)}
      ${this._announcer.view()}
      ${r ? html`
        ${this._details(r, html`<mha-heads part="heads" .weights=${r.weights} .tokens=${r.tokens} .dK=${r.dK} scheme=${this._layer.scheme}></mha-heads>`,
          html`<div class="explain" part="explain">${causalSentences(r.heads3[this._head], r.tokens, r.causal, this._head).map((s) => html`<p>${s}</p>`)}</div>`,
          html`<p class="note">One self-attention layer, d<sub>model</sub> = ${r.dModel}, h = ${r.heads}, d<sub>k</sub> = ${r.dK}, computed by the wasm engine with <code>causal: ${r.causal}</code>.
          X and the weights are seeded random (seed ${r.seed}), not trained: the pattern inside the triangle is arbitrary, the triangle is the mask.</p>`)}`
        : this._layer.errors.length || this.error ? nothing : html`<p class="loading">Loading the engine…</p>`}`;
  }
}

customElements.get('mha-causal-mask') || customElements.define('mha-causal-mask', MhaCausalMask);

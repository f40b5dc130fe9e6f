import { LitElement, html, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, formStyles, taskEngine, renderLatest, toMatrix, fmt, int } from '../base/shared.js';
import { AttrGuard, intAttr, rawAttr, fireError } from '../base/attr-check.js';
import { StepperLink } from '../base/stepper-link.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { PEOPLE, X0, HEADS, restaurantLayerOptions } from '../logic/restaurant.js';
import { onlineSoftmax, scoreMemory } from '../logic/flash-attention.js';
import { DECODERS } from '../logic/models-data.js';

/** Milliseconds between two tiles while playing. */
const PLAY_MS = 1400;
/** Keys per tile at real scale, for the memory comparison (FlashAttention's blocks are 64–128 keys wide). */
const REAL_TILE = 128;

/** "−∞" for the running maximum before the first tile, else fmt with 3 decimals. */
const fm = (v) => (v === -Infinity ? '−∞' : fmt(v, 3));

/**
 * `<mha-flash-attention>` — FlashAttention's tiled online softmax (Dao et al. 2022), replayed on one
 * head of the restaurant example: the keys are read in tiles of B_c, and after each tile every query
 * row shows its running maximum m, the factor exp(m_old − m) that rescales what it kept, the running
 * sum ℓ and the running weighted sum of values (the accumulator). After the last tile, accumulator
 * / ℓ is the head's output; it is shown beside the engine's own output of the full softmax
 * (`layer.trace` of the example's layer through the JS API), with the largest difference. Beside the
 * table: the numbers written to memory for the scores, the full grid h·T² against m and ℓ per row (2·h·T).
 *
 * The replay itself is logic/flash-attention.js (float64); Q, K, V and the reference output are
 * the engine's. Like `<mha-wo-mix>`, it has its own X (the example's) and can follow a
 * `<mha-stepper>` with `for`, recomputing when the stepper's X is edited.
 *
 * Keyboard: the step slider (arrow keys, Home, End), Previous / Next, Play / Pause and the two
 * selects; every step is announced in a polite live region. Play advances one tile every
 * 1.4 s; with `prefers-reduced-motion: reduce` it does not animate and goes to the last tile at once.
 *
 * @element mha-flash-attention
 *
 * @attr {string} for - Id of a `<mha-stepper>` whose X to follow (as `<mha-wo-mix for>`).
 * @attr {number} head - Head replayed, 1 or 2 (1 taste, 2 budget; default 1).
 * @attr {number} tile - Keys per tile B_c, 1–3 (default 1).
 *
 * A bad attribute keeps the last valid value, shows one message naming it, and fires `mha-error`;
 * the attribute stays as written.
 *
 * @prop {number[][]} x - The input X `[3, 6]`; set by the followed stepper when `for` is given.
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {number} step - Tiles read so far, 0 … number of tiles.
 * @prop {object|null} replay - Read-only: onlineSoftmax's result for the current head and tile, with
 *   `reference` (the engine's head output) and `maxDiff` (largest |output − reference|).
 * @prop {Error|null} error - Read-only: the last engine error.
 *
 * @fires change - `{detail: {head, tile, step}}` when the reader moves the replay.
 * @fires mha-computed - `{detail: {x, heads}}` after the engine's trace (heads: q, k, v, output per head).
 * @fires mha-error - `{detail: {error}}`: a bad attribute or an engine error (shown in place).
 *
 * @csspart controls - The selects and the step controls.
 * @csspart slider - The step slider.
 * @csspart play - The Play / Pause button.
 * @csspart status - The live sentence of the current step.
 * @csspart table - The running values per query row.
 * @csspart check - The comparison with the engine's full softmax.
 * @csspart memory - The numbers written to memory for the scores, full softmax against tiles.
 * @csspart error - An attribute or engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaFlashAttention extends LitElement {
  static properties = {
    for: { type: String },
    head: { converter: rawAttr },
    tile: { converter: rawAttr },
    x: { attribute: false },
    engine: { attribute: false },
    step: { type: Number, attribute: false },
    _playing: { state: true },
  };

  static styles = [baseStyles, formStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; }
    .steps { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.8rem; margin: 0.4rem 0 0.6rem; }
    .steps input[type='range'] { width: 10rem; }
    .status { min-height: 2.6em; margin: 0.3rem 0 0.5rem; }
    .scroll { overflow-x: auto; max-width: 100%; }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.88rem; margin: 0.3rem 0 0.6rem; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { padding: 0.25em 0.6em; border-bottom: 1px solid var(--_border); text-align: right; white-space: nowrap; }
    th[scope='row'] { text-align: left; font-weight: 500; }
    thead th { color: var(--_muted); font-weight: 600; font-size: 0.85em; }
    td.changed { background: var(--_surface); font-weight: 600; }
    .check, .memory { background: var(--_surface); border-radius: calc(var(--_radius) * 1.4); padding: 0.4em 0.9em; margin: 0.4rem 0; }
    .check p, .memory p { margin: 0.3em 0; }
    .loading { color: var(--_muted); font-size: 0.9em; }
    @media (prefers-reduced-motion: no-preference) { td.changed { transition: background-color 0.3s; } }
    :host { container-type: inline-size; }
    @container (min-width: 900px) {
      .bar { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 0 1rem; }
      .bar form { margin: 0.3rem 0; }
      .bar .steps { margin: 0.3rem 0; }
      .steps input[type='range'] { width: 6.5rem; }
      .layout:not(.done) .notes { font-size: 0.92rem; }
      .layout:not(.done) { display: grid; grid-template-columns: minmax(0, 44rem) minmax(16rem, 1fr); gap: 0 1.2rem; align-items: start; }
      .layout:not(.done) .notes > :first-child { margin-top: 0.3rem; }
    }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of the wide table (base/scroll-cue.js)
    this.for = '';
    this.head = 1;
    this.tile = 1;
    this.x = X0;
    this.engine = undefined;
    this.step = 0;
    this._playing = false;
    this._timer = null;
    this._attrs = new AttrGuard(this);
    this._h = 0;
    this._b = 1;
    this._replayed = null;   // the replay of the task's heads for the head and tile size it was made for
    this._stepper = new StepperLink(this);
    // the engine's Q, K, V and output of every head: the task's value, drawn with Task.render; the
    // replay of the chosen head and tile size is made from it (`replay`)
    this._task = new Task(this, {
      args: () => [this.x, this.engine],
      task: async ([x, engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        const X = toMatrix(x);
        const layer = mha.createLayer(restaurantLayerOptions());
        try {
          const tr = layer.trace(X);
          return { X, heads: tr.heads.map((h) => ({ q: toMatrix(h.q), k: toMatrix(h.k), v: toMatrix(h.v), output: toMatrix(h.output) })) };
        } finally {
          layer.dispose();
        }
      },
      onComplete: ({ X, heads }) => {
        this.step = Math.min(this.step, this._replayOf({ heads }).tiles.length);
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: { x: X, heads }, bubbles: true, composed: true }));
      },
      onError: (err) => fireError(this, err),
    });
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._pause();
  }

  willUpdate(changed) {
    if (changed.has('for') && this.isConnected) this._stepper.link();
    const g = this._attrs;
    g.begin();
    if (this._stepper.error) g.add(this._stepper.error);
    const h = g.take('head', intAttr('head', this.head, { dflt: 1, min: 1, max: HEADS.length })) - 1;
    const b = g.take('tile', intAttr('tile', this.tile, { dflt: 1, min: 1, max: PEOPLE.length, what: 'keys per tile B_c' }));
    g.end();
    if (h !== this._h || b !== this._b) {
      this._h = h;
      this._b = b;
      if (this.replay) this.step = Math.min(this.step, this.replay.tiles.length);
    }
  }

  /** The replay of the chosen head and tile size on the engine's last Q, K, V (null before them and after an error). */
  get replay() {
    const v = this._task.value;
    return v ? this._replayOf(v) : null;
  }

  /** The engine's error, if the last computation failed. */
  get error() {
    return this._task.error ?? null;
  }

  /** The replay of the chosen head and tile size on `heads` (made once per heads, head and tile size). */
  _replayOf({ heads }) {
    const m = this._replayed;
    if (m && m.heads === heads && m.h === this._h && m.b === this._b) return m.replay;
    const hd = heads[this._h];
    const r = onlineSoftmax(hd.q, hd.k, hd.v, this._b);
    let maxDiff = 0;
    r.output.forEach((row, i) => row.forEach((v, c) => { maxDiff = Math.max(maxDiff, Math.abs(v - hd.output[i][c])); }));
    const replay = { ...r, reference: hd.output, maxDiff, head: this._h, tileSize: this._b };
    this._replayed = { heads, h: this._h, b: this._b, replay };
    return replay;
  }

  /** Moves to tile count `s` (clamped) and tells listeners. */
  goTo(s) {
    const n = this.replay?.tiles.length ?? 0;
    const v = Math.max(0, Math.min(n, Math.round(Number(s) || 0)));
    if (v === this.step) return;
    this.step = v;
    this.dispatchEvent(new CustomEvent('change', { detail: { head: this._h + 1, tile: this._b, step: v }, bubbles: true, composed: true }));
  }

  _reducedMotion() {
    return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
  }

  _play() {
    const n = this.replay?.tiles.length ?? 0;
    if (this._reducedMotion()) { this.goTo(n); return; }   // no animation: every tile at once
    if (this.step >= n) this.goTo(0);
    this._playing = true;
    this._timer = setInterval(() => {
      if (this.step >= (this.replay?.tiles.length ?? 0)) { this._pause(); return; }
      this.goTo(this.step + 1);
      if (this.step >= this.replay.tiles.length) this._pause();
    }, PLAY_MS);
  }

  _pause() {
    clearInterval(this._timer);
    this._timer = null;
    this._playing = false;
  }

  _setAttr(name, v) {
    this._pause();
    this.setAttribute(name, String(v));
    this.step = 0;
    this.dispatchEvent(new CustomEvent('change', { detail: { head: name === 'head' ? v : this._h + 1, tile: name === 'tile' ? v : this._b, step: 0 }, bubbles: true, composed: true }));
  }

  _controls(n) {
    return html`<form part="controls" @submit=${(e) => e.preventDefault()}>
      <label><span>head</span> <select name="head" @change=${(e) => this._setAttr('head', Number(e.target.value))}>
        ${HEADS.map((h, i) => html`<option value=${i + 1} ?selected=${i === this._h}>${i + 1} (${h.name})</option>`)}
      </select></label>
      <label><span>keys per tile B<sub>c</sub></span> <select name="tile" @change=${(e) => this._setAttr('tile', Number(e.target.value))}>
        ${PEOPLE.map((_, i) => html`<option value=${i + 1} ?selected=${i + 1 === this._b}>${i + 1}</option>`)}
      </select></label>
    </form>
    <div class="steps" role="group" aria-label="Replay of the tiles">
      <button type="button" class="prev" @click=${() => { this._pause(); this.goTo(this.step - 1); }} ?disabled=${this.step === 0}>Previous tile</button>
      <input part="slider" type="range" min="0" max=${n} step="1" .value=${String(this.step)}
        aria-label="Tiles read" aria-valuetext=${`${this.step} of ${n} tiles read`}
        @input=${(e) => { this._pause(); this.goTo(e.target.value); }}>
      <button type="button" class="next" @click=${() => { this._pause(); this.goTo(this.step + 1); }} ?disabled=${this.step === n}>Next tile</button>
      <button type="button" part="play" class="play" aria-pressed=${String(this._playing)}
        @click=${() => (this._playing ? this._pause() : this._play())}>${this._playing ? 'Pause' : 'Play'}</button>
    </div>`;
  }

  /** The live sentence of the current step. */
  _status(r) {
    const n = r.tiles.length;
    if (this.step === 0) {
      return `No key read yet: every row starts with m = −∞, ℓ = 0 and an accumulator of zeros. ${n} tile${n > 1 ? 's' : ''} of at most ${r.tileSize} key${r.tileSize > 1 ? 's' : ''} to read.`;
    }
    const t = r.tiles[this.step - 1];
    const keys = PEOPLE.slice(t.from, t.to).join(' and ');
    const raised = t.rows.filter((row) => row.mPrev !== -Infinity && row.m > row.mPrev).length;
    const what = this.step === 1 ? 'the first scores set m, ℓ and the accumulator'
      : raised ? `${raised} row${raised > 1 ? 's' : ''} found a larger score, so what ${raised > 1 ? 'they' : 'it'} kept is scaled down by exp(m_old − m)`
        : 'no row found a larger score, so nothing is rescaled (factor 1)';
    const end = this.step === n ? ' Every key is read: output = accumulator / ℓ.' : '';
    return `Tile ${this.step} of ${n}: ${keys === '' ? 'no key' : `the key${t.to - t.from > 1 ? 's' : ''} of ${keys}`}; ${what}.${end}`;
  }

  _table(r) {
    const H = HEADS[r.head];
    const t = this.step ? r.tiles[this.step - 1] : null;
    const done = this.step === r.tiles.length;
    const cols = H.vCols;
    return html`<div class="scroll" tabindex="0" role="region" aria-label="Running values per query">
      <table part="table">
        <caption>Head ${r.head + 1} (${H.name}) after ${this.step} of ${r.tiles.length} tiles${t ? `: keys ${PEOPLE.slice(0, t.to).join(', ')} read` : ''}</caption>
        <thead><tr><th scope="col">query</th><th scope="col">scores of this tile</th><th scope="col">m</th>
          <th scope="col">exp(m<sub>old</sub> − m)</th><th scope="col">ℓ</th>
          ${cols.map((c) => html`<th scope="col">acc: ${c}</th>`)}
          ${done ? cols.map((c) => html`<th scope="col">output: ${c}</th>`) : nothing}</tr></thead>
        <tbody>${PEOPLE.map((p, i) => {
          const row = t?.rows[i];
          const ch = row ? 'changed' : '';
          return html`<tr data-row=${i}><th scope="row">${p}</th>
            <td>${row ? row.scores.map((s) => fmt(s, 3)).join(', ') : '—'}</td>
            <td class=${row && row.m !== row.mPrev ? ch : ''} data-value=${row ? row.m : ''}>${row ? fm(row.m) : '−∞'}</td>
            <td data-value=${row ? row.rescale : ''}>${row ? (row.mPrev === -Infinity ? '—' : fmt(row.rescale, 3)) : '—'}</td>
            <td class=${ch} data-value=${row ? row.l : 0}>${fmt(row ? row.l : 0, 3)}</td>
            ${cols.map((_, c) => html`<td class=${ch} data-value=${row ? row.acc[c] : 0}>${fmt(row ? row.acc[c] : 0, 3)}</td>`)}
            ${done ? cols.map((_, c) => html`<td data-value=${r.output[i][c]}>${r.output[i][c].toPrecision(7)}</td>`) : nothing}
          </tr>`;
        })}</tbody>
      </table>
    </div>`;
  }

  _check(r) {
    if (this.step !== r.tiles.length) {
      return html`<div class="check" part="check"><p>After the last tile the output is accumulator / ℓ; it is compared there with the
        engine's full softmax.</p></div>`;
    }
    const ref = r.reference;
    return html`<div class="check" part="check" data-max-diff=${r.maxDiff}>
      <p>The engine's full softmax (softmax(Q·K<sup>⊤</sup>/√d<sub>k</sub>)·V, all ${int(PEOPLE.length ** 2)} scores at once):
        ${PEOPLE.map((p, i) => html`${p} ${ref[i].map((v) => v.toPrecision(7)).join(', ')}${i < PEOPLE.length - 1 ? '; ' : '.'}`)}</p>
      <p>Largest difference from the tiled output: <strong>${r.maxDiff.toExponential(1)}</strong>, the rounding of the engine's
        float32 (about 1 part in 10<sup>7</sup>): the same attention, never holding the whole grid of scores.</p>
    </div>`;
  }

  _memory(r) {
    const T = PEOPLE.length, h = HEADS.length;
    const here = scoreMemory({ tq: T, tk: T, heads: h, tile: r.tileSize });
    const big = DECODERS.find((m) => m.name === 'LLaMA-2 70B');
    const real = scoreMemory({ tq: big.context, tk: big.context, heads: big.heads, tile: REAL_TILE });
    return html`<div class="memory" part="memory" data-full=${here.full} data-tiled=${here.tiled}>
      <p>Written to memory for the scores of this layer. Full softmax: every head's T × T grid, h·T<sup>2</sup> =
        <strong>${here.full}</strong> numbers. Tiles: only m and ℓ per query row of each head, 2·h·T =
        <strong>${here.tiled}</strong>, linear in T; each tile of scores (T × B<sub>c</sub> = ${here.onChip} here) stays in fast
        on-chip memory and is overwritten by the next.</p>
      <p>At ${big.name}'s size (h = ${big.heads}, T = ${int(big.context)}, tiles of ${REAL_TILE} keys): ${int(real.full)} against
        ${int(real.tiled)} numbers per layer.</p>
    </div>`;
  }

  render() {
    // a new X keeps the last replay until the engine's new Q, K, V arrive
    return html`${this._attrs.view()}${renderLatest(this._task, (v) => this._view(this._replayOf(v)))}`;
  }

  _view(r) {
    // wide and before the last tile: the replay (controls, sentence, table) beside the two notes; the
    // last tile's table gains the output columns and takes the full width again
    const done = this.step === r.tiles.length;
    return html`<div class=${done ? 'layout done' : 'layout'}>
      <div class="replay">
        <div class="bar">${this._controls(r.tiles.length)}</div>
        <p class="status" part="status" role="status" aria-live="polite">${this._status(r)}</p>
        ${this._table(r)}
      </div>
      <div class="notes">${this._check(r)}${this._memory(r)}</div>
    </div>`;
  }
}

customElements.get('mha-flash-attention') || customElements.define('mha-flash-attention', MhaFlashAttention);

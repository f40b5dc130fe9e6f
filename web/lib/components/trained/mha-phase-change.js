import { html, svg, css, nothing } from 'lit';
import { TrainedModelElement, trainedStyles, showChar, headView, f2, progressText } from './trained-shared.js';
import '../views/mha-heatmap.js';
import { intAttr, rawAttr } from '../base/attr-check.js';
import { taskEngine } from '../base/shared.js';
import { fetchBytes, DEFAULT_PHASE_URL } from '../models.js';
import { modelSource } from './model-source.js';
import { readCheckpoints, chartPoints, stepText, phaseChange } from '../logic/phase-change.js';
import { STALE } from './model-element.js';

/** Milliseconds between two checkpoints while playing. */
export const PLAY_MS = 450;

const W = 240, H = 88;   // a chart's plotting box (SVG user units)

/**
 * `<mha-phase-change>` — the phase change, replayed: one two-layer character model saved at
 * checkpoints through its training (docs/trained-models.md, "The phase-change checkpoints"). A slider (and Play)
 * picks a checkpoint; two small charts show, over the training steps, the bits per character on
 * the first and on the second copy of random-letter spans written twice, and the best head's
 * previous-token and induction scores (the values training measured, stored in the file); below,
 * every head's attention weights at the chosen checkpoint on the reader's text, computed live by
 * the engine. Olsson et al. (2022) found that induction heads form in a short window of training,
 * and that the loss on repeated text falls in the same window.
 *
 * The checkpoints are one file (default: the shipped `phase-change.safetensors`, 1,996,036 bytes),
 * fetched when the element comes near the viewport (`loading`, as the other trained-model elements);
 * each checkpoint becomes a model (mha.loadModel) the first time it is shown.
 *
 * @element mha-phase-change
 *
 * @attr {string} model - URL of a checkpoints file; default: the shipped one.
 * @attr {string} text - The text the heads read (default: a phrase written twice); cut to the model's context.
 * @attr {number} step - The training step shown; the nearest checkpoint is taken (default: the last).
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {object[]|null} checkpoints - Read-only: what training measured at each checkpoint
 *   (`{step, heldoutBpc, firstCopyBpc, secondCopyBpc, previous, induction, inductionProse, heads}`).
 * @prop {{step: number, tokens: string[], attention: object[]}|null} shown - Read-only: the checkpoint
 *   whose maps are drawn, the text's characters and the engine's attention weights per layer.
 * @prop {boolean} playing - Read-only: whether Play is running.
 *
 * @fires change - `{detail: {step}}` when the reader picks a checkpoint, `{detail: {text}}` when they edit the text.
 * @fires mha-computed - `{detail: {step}}` after the maps of a checkpoint are drawn.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (the last valid value stays) or a file that cannot be read (shown in place).
 *
 * @csspart slider - The step slider.
 * @csspart play - The Play / Pause button.
 * @csspart charts - The two charts.
 * @csspart values - The sentence with the chosen checkpoint's values.
 * @csspart text - The text field.
 * @csspart heatmap - Each head's `<mha-heatmap>`.
 * @csspart error - The error message.
 */
export class MhaPhaseChange extends TrainedModelElement {
  static _defaultModel = DEFAULT_PHASE_URL;

  static properties = {
    ...TrainedModelElement.properties,
    text: { type: String },
    step: { converter: rawAttr },
    shown: { state: true },
    playing: { state: true },
    _index: { state: true },
  };

  static styles = [trainedStyles, css`
    :host { container-type: inline-size; }
    .controls { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem 0.8rem; }
    .controls input[type='range'] { flex: 1 1 14rem; min-width: 10rem; accent-color: var(--_accent); }
    .controls output { font-variant-numeric: tabular-nums; min-width: 9ch; }
    button { font: inherit; padding: 0.25em 0.9em; border-radius: var(--_radius); border: 1px solid var(--_accent);
      background: var(--_accent); color: var(--_accent-fg); cursor: pointer; }
    button:focus-visible, input:focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; }
    .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 0.4rem 1rem; margin: 0.5rem 0 0.2rem; }
    figure { margin: 0; }
    figcaption { font-size: 0.85em; color: var(--_muted); }
    svg { width: 100%; height: auto; max-height: 7.5rem; overflow: visible; font-size: 9px; }
    .axis { stroke: var(--_border); }
    .tick { fill: var(--_muted); }
    .a { stroke: var(--_accent); fill: none; stroke-width: 1.8; }
    .b { stroke: var(--_muted); fill: none; stroke-width: 1.4; stroke-dasharray: 4 3; }
    .cursor { stroke: var(--_focus); stroke-width: 1.2; }
    .band { fill: color-mix(in srgb, var(--_accent) 14%, transparent); }
    .key-a { color: var(--_accent); font-weight: 600; }
    .values { margin: 0.2rem 0 0.4rem; font-variant-numeric: tabular-nums; }
    .hint.band { margin: 0; font-size: 0.85em; }
    /* a column at least as wide as a map of the default text (45 characters: 45 cells of 3 px and their
       1 px gaps, and the row labels), so that no map and no legend's right end is cut off by its column */
    .maps { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: 0.3rem 0.8rem; --mha-cell-size: 3px; }
    @container (max-width: 520px) { svg { max-height: 6rem; } .charts { gap: 0.2rem 0.6rem; grid-template-columns: repeat(2, minmax(0, 1fr)); } }
    @container (max-width: 520px) { .maps { grid-template-columns: repeat(2, minmax(0, 1fr)); --mha-cell-size: 2px; } }
    .maps h4 { margin: 0; font-size: 0.85em; font-weight: 600; }
    .maps .kind { display: block; color: var(--_muted); font-weight: 400; }
    .map { overflow-x: auto; max-width: 100%; }
    input[type='text'] { max-width: 36rem; }
    .side label { margin-right: 0.6rem; }
    /* wide: the step's values and the text box in one band over the two charts (stacked, the shaded band's
       note under them) beside the heads' maps */
    @container (min-width: 1000px) {
      .view { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 45rem); column-gap: 1.5rem; align-items: start;
        grid-template-areas: 'controls controls' 'side side' 'charts maps' 'band maps'; grid-template-rows: auto auto auto 1fr; }
      .view > .controls { grid-area: controls; }
      .view > .side { grid-area: side; margin: 0.2rem 0 0.4rem; }
      .view > .charts { grid-area: charts; grid-template-columns: minmax(0, 1fr); margin: 0; }
      .view > .hint.band { grid-area: band; }
      .view > .maps, .view > .hint:not(.band) { grid-area: maps; }
      /* the four maps in one row of the 45rem column: cells of 2 px (a map of 45 characters is 161 px wide) */
      .maps { grid-template-columns: repeat(auto-fill, minmax(10.5rem, 1fr)); --mha-cell-size: 2px; }
      svg { max-height: 7rem; }
      .side .values { margin: 0 0 0.3rem; }
      .side input[type='text'] { width: 36rem; box-sizing: border-box; }
    }
  `];

  constructor() {
    super();
    this.text = 'zebra quilts vex jumpy zebra quilts vex jumpy';
    this.step = null;
    this.shown = null;
    this.playing = false;
    this._index = -1;
    this._ckpt = null;       // readCheckpoints() of the loaded file
    this._mha = null;        // the engine the checkpoints' models live on
    this._models = new Map();  // step -> Promise<LanguageModel>
    this._want = 0;          // counts map requests: only the newest one draws
    this._timer = 0;
  }

  /** What training measured at each checkpoint (null until the file is read). */
  get checkpoints() {
    return this._ckpt?.table ?? null;
  }

  /** Reads the checkpoints file (a download with progress, or a File from disk). */
  async _acquire(engine, signal) {
    this._release();
    this.error = null;
    this._progress = null;
    const src = modelSource(this.model, this.tokenizer, this.constructor._defaultModel);
    const mha = await taskEngine(engine, signal).catch((e) => { throw signal.aborted ? STALE : e; });
    const progress = (p) => {
      if (signal.aborted) return;
      const t = progressText(p.loaded, p.total);
      if (t.text !== this._progress?.text) this._progress = { name: src.name, loaded: p.loaded, total: p.total, ...t };
    };
    const file = Array.isArray(src.source) ? src.source[0] : src.source;
    const bytes = file && typeof file.arrayBuffer === 'function' ? new Uint8Array(await file.arrayBuffer()) : await fetchBytes(src.key, progress);
    if (signal.aborted) throw STALE;
    const ck = readCheckpoints(bytes);
    this._mha = mha;
    this._ckpt = ck;
    return { config: JSON.parse(ck.metadata.config), checkpoints: ck.table };
  }

  /** The inline message of a file that could not be read. */
  errorMessage() {
    return `The checkpoints file ${this.modelHref ?? this.modelName ?? '(none given)'} could not be read. ${errorLine(this.error)} `
      + '(A checkpoints file is written by scripts/train/train.py --checkpoints: see docs/trained-models.md, "The phase-change checkpoints".)';
  }

  _release() {
    this._stop();
    const models = [...this._models.values()];
    this._models.clear();
    for (const m of models) m.then((lm) => lm.dispose(), () => {});
    this._ckpt = null;
    this.shown = null;
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    this._attrs.begin();
    const step = this._attrs.take('step', intAttr('step', this.step, { dflt: undefined, min: 0, what: 'a training step' }));
    this._attrs.end();
    const ck = this._ckpt;
    if (!ck || !this.lm) return;
    let moved = changed.has('_index');
    if (changed.has('lm') || changed.has('step')) {
      const i = step === undefined ? ck.steps.length - 1 : nearest(ck.steps, step);
      if (i !== this._index) { this._index = i; moved = true; }
    }
    if (changed.has('lm') || moved || changed.has('text')) this._draw();
  }

  /** Computes the chosen checkpoint's attention weights on the text (the newest request wins). */
  async _draw() {
    const ck = this._ckpt;
    const step = ck.steps[this._index];
    const want = ++this._want;
    let lm;
    try {
      if (!this._models.has(step)) this._models.set(step, this._mha.loadModel(ck.file(step)));
      lm = await this._models.get(step);
      if (want !== this._want || this._ckpt !== ck) return;
      const text = Array.from(this.text ?? '').slice(0, lm.config.context).join('');
      if (text.length === 0) { this.shown = null; return; }
      const r = lm.run(text);
      this.error = null;
      this.shown = { step, tokens: r.tokens.map(showChar), attention: r.attention };
    } catch (e) {
      if (want === this._want) this.error = e;
      return;
    }
    this.dispatchEvent(new CustomEvent('mha-computed', { detail: { step }, bubbles: true, composed: true }));
  }

  _pick(i) {
    if (!this._ckpt) return;
    this._index = Math.max(0, Math.min(this._ckpt.steps.length - 1, i));
    this.step = this._ckpt.steps[this._index];
    this.dispatchEvent(new CustomEvent('change', { detail: { step: this.step }, bubbles: true, composed: true }));
  }

  _onSlider(e) {
    this._stop();
    this._pick(Number(e.target.value));
  }

  /** Play: from the first checkpoint (or the one shown, if not the last) to the last; with reduced motion, straight to the last. */
  _togglePlay() {
    if (this.playing) { this._stop(); return; }
    const last = this._ckpt.steps.length - 1;
    if (globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches) { this._pick(last); return; }
    this.playing = true;
    if (this._index >= last) this._pick(0);
    const tick = () => {
      if (!this.playing) return;
      if (this._index >= last) { this._stop(); return; }
      this._pick(this._index + 1);
      this._timer = setTimeout(tick, PLAY_MS);
    };
    this._timer = setTimeout(tick, PLAY_MS);
  }

  _stop() {
    clearTimeout(this._timer);
    this._timer = 0;
    this.playing = false;
  }

  disconnectedCallback() {
    this._stop();
    super.disconnectedCallback();
  }

  _onText(e) {
    this.text = e.target.value;
    this.dispatchEvent(new CustomEvent('change', { detail: { text: this.text }, bubbles: true, composed: true }));
  }

  /** One chart: two series over steps, with a y axis from lo to hi, and the chosen step's cursor. */
  _chart(label, a, b, lo, hi, ticks, i) {
    const steps = this._ckpt.steps;
    const x = steps[i] / steps[steps.length - 1] * W;
    const { from, to } = phaseChange(this._ckpt.table);
    const x0 = from.step / steps[steps.length - 1] * W, x1 = to.step / steps[steps.length - 1] * W;
    return svg`<svg viewBox="-26 -6 ${W + 34} ${H + 22}" role="img" aria-label=${label}>
      <rect class="band" x=${x0} y="0" width=${x1 - x0} height=${H}></rect>
      <line class="axis" x1="0" y1=${H} x2=${W} y2=${H}></line><line class="axis" x1="0" y1="0" x2="0" y2=${H}></line>
      ${ticks.map((t) => svg`<text class="tick" x="-4" y=${H - (t - lo) / (hi - lo) * H + 3} text-anchor="end">${t}</text>`)}
      <text class="tick" x="0" y=${H + 12}>0</text><text class="tick" x=${W} y=${H + 12} text-anchor="end">${stepText(steps[steps.length - 1])} steps</text>
      <polyline class="b" points=${chartPoints(steps, b, W, H, lo, hi)}></polyline>
      <polyline class="a" points=${chartPoints(steps, a, W, H, lo, hi)}></polyline>
      <line class="cursor" x1=${x} y1="0" x2=${x} y2=${H}></line>
    </svg>`;
  }

  /** The element's view once it has come near (the base class shows the placeholder before). */
  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.lm || !this._ckpt) return this.loadingView('the training checkpoints');
    const ck = this._ckpt;
    const t = ck.table;
    const i = Math.max(0, this._index);
    const c = t[i];
    const top = Math.ceil(Math.max(...t.map((r) => r.firstCopyBpc), ...t.map((r) => r.secondCopyBpc)));
    const s = this.shown;
    const band = phaseChange(t);
    const L = this.lm.config.num_layers, h = this.lm.config.num_heads;
    const heads = c.heads ?? [];
    const kind = (l, j) => heads.find((x) => x.layer === l && x.head === j);
    const values = `Step ${stepText(c.step)} of ${stepText(ck.steps[ck.steps.length - 1])}: copy 1 ${f2(c.firstCopyBpc)}, copy 2 ${f2(c.secondCopyBpc)} bits per character; `
      + `best previous-token score ${f2(c.previous)}, best induction score ${f2(c.induction)}.`;
    return html`<div class="view">
      <div class="controls">
        <button part="play" type="button" aria-pressed=${this.playing ? 'true' : 'false'} @click=${this._togglePlay}>${this.playing ? 'Pause' : 'Play'}</button>
        <label for="step">Training step</label>
        <input id="step" part="slider" type="range" min="0" max=${t.length - 1} step="1" .value=${String(i)}
          aria-valuetext=${`step ${stepText(c.step)} (checkpoint ${i + 1} of ${t.length})`} @input=${this._onSlider}>
        <output for="step">${stepText(c.step)}</output>
      </div>
      <div class="charts" part="charts">
        <figure>${this._chart(`Bits per character on each copy over training: copy 2 falls from ${f2(t[0].secondCopyBpc)} to ${f2(t[t.length - 1].secondCopyBpc)}, copy 1 from ${f2(t[0].firstCopyBpc)} to ${f2(t[t.length - 1].firstCopyBpc)}`,
          t.map((r) => r.secondCopyBpc), t.map((r) => r.firstCopyBpc), 0, top, [0, Math.round(top / 2), top], i)}
          <figcaption>Bits per character: <span class="key-a">copy 2</span>, copy 1 (dashed)</figcaption></figure>
        <figure>${this._chart(`Best head scores over training: induction from ${f2(t[0].induction)} to ${f2(t[t.length - 1].induction)}, previous-token from ${f2(t[0].previous)} to ${f2(t[t.length - 1].previous)}`,
          t.map((r) => r.induction), t.map((r) => r.previous), 0, 1, [0, 0.5, 1], i)}
          <figcaption>Best head score: <span class="key-a">induction</span>, previous-token (dashed)</figcaption></figure>
      </div>
      <p class="hint band">Shaded: steps ${stepText(band.from.step)}–${stepText(band.to.step)}, 10 % to 90 % of the induction score's rise.</p>
      <div class="side">
      <p class="values" part="values" aria-live=${this.playing ? 'off' : 'polite'}>${values}</p>
      <label for="text">Text the heads read</label>
      <input id="text" part="text" type="text" spellcheck="false" .value=${this.text ?? ''} @input=${this._onText}>
      ${this.error ? html`<p class="error" part="error" role="alert">${errorLine(this.error)}</p>` : nothing}
      </div>
      ${s ? html`<div class="maps">${Array.from({ length: L * h }, (_, k) => {
        const l = Math.floor(k / h), j = k % h;
        const hd = kind(l, j);
        const name = `Layer ${l + 1}, head ${j + 1}`;
        return html`<div><h4>${name} <span class="kind">${hd ? hd.type : '\u00a0'}</span></h4>
          <div class="map"><mha-heatmap part="heatmap" compact no-save scheme=${this._scheme}
            label=${`${name} at step ${stepText(s.step)}${hd ? ` (${hd.type}; induction ${f2(hd.scores.induction)}, previous-token ${f2(hd.scores.previous)})` : ''}`}
            .tokens=${s.tokens} .weights=${headView(s.attention[l], j)}></mha-heatmap></div></div>`;
      })}</div>` : Array.from(this.text ?? '').length === 0 ? html`<p class="hint">Type a text for the heads to read.</p>` : nothing}</div>`;
  }
}

/** Index of the value of `steps` (ascending) nearest to `step` (the earlier on a tie). */
function nearest(steps, step) {
  let k = 0;
  for (let i = 1; i < steps.length; i++) if (Math.abs(steps[i] - step) < Math.abs(steps[k] - step)) k = i;
  return k;
}

const errorLine = (e) => e?.message ?? String(e);

customElements.get('mha-phase-change') || customElements.define('mha-phase-change', MhaPhaseChange);

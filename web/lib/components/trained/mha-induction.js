import { html, css, nothing } from 'lit';
import { scoreText } from '../../src/index.js';
import { TrainedModelElement, trainedStyles, showChar, showToken, unitOf, modelInput, headView, f2 } from './trained-shared.js';
import '../views/mha-heatmap.js';
import { copiesSentence } from '../logic/trained-text.js';

/**
 * Bits per character the model spends on each copy of a phrase written twice ("p p"): copy 1 is
 * scored on its characters after the first, copy 2 on all of its characters after the first
 * (the same count), each predicted from everything before it.
 * @param {{logProbs: {data: Float32Array}, ids: Int32Array}} r CharModel.run's result on `${p} ${p}`
 * @param {number} n characters in the phrase
 * @param {number} V vocabulary size
 * @returns {{first: number, second: number}}
 */
export function copyBits(r, n, V) {
  const bits = (from, to) => {
    let s = 0;
    for (let t = from; t < to; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
    return s / (to - from) / Math.LN2;
  };
  // predictions of characters 2..n of each copy: copy 1 = ids 1..n−1, copy 2 = ids n+2..2n
  return { first: bits(0, n - 1), second: bits(n + 1, 2 * n) };
}

/**
 * The induction probe's measurement: the phrase written twice, run by the model (a RemoteModel of
 * the engine worker, or the same surface on the main thread), each copy's bits, and the run.
 * @param {object} lm the model (its `run`, `encode`, `decode` return promises)
 * @param {string} phrase
 * @returns {Promise<{p: string, r: object, first: number, second: number}|null>} null: fewer than 2
 *   characters (tokens) in the phrase
 */
async function measureCopies(lm, phrase) {
  const c = lm.config;
  if (unitOf(c) !== 'token') {
    const p = Array.from(phrase ?? '').slice(0, Math.floor((c.context - 1) / 2)).join('');
    if (Array.from(p).length < 2) return null;
    const r = await lm.run(`${p} ${p}`, { scores: true });
    return { p, r, ...copyBits(r, Array.from(p).length, c.vocabSize) };
  }
  // a byte-pair model: the phrase's tokens read twice, token for token (BOS, if the tokenizer adds one, once in front)
  const ids = Array.from(c.tokenizer === 'none' ? modelInput(lm, phrase ?? '', Infinity) : await lm.encode(String(phrase ?? '')));
  const o = c.bos !== null && c.bos !== undefined && ids[0] === c.bos ? 1 : 0;
  const body = ids.slice(o, o + Math.floor((c.context - o) / 2));
  if (body.length < 2) return null;
  const p = await lm.decode(body);
  const n = body.length;
  const r = await lm.run([...ids.slice(0, o), ...body, ...body], { scores: true });
  const V = c.vocabSize;
  const bits = (from, to) => {
    let s = 0;
    for (let t = from; t < to; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
    return s / (to - from) / Math.LN2;
  };
  return { p, r, first: bits(o, o + n - 1), second: bits(o + n, o + 2 * n - 1) };
}

/**
 * `<mha-induction>` — the induction probe: the reader types a phrase, the element writes it twice
 * and measures, with the trained model, how many bits per character each copy costs. An induction
 * head (Olsson et al. 2022) lets the second copy be predicted from the first. Below, the
 * model's strongest induction head (by its score on the held-out probes), with its induction
 * score on this very text.
 *
 * @element mha-induction
 *
 * @attr {string} model - URL of a model file; default: the shipped h = 4 model.
 * @attr {string} phrase - The phrase (default "zebra quilts vex jumpy"); follows what is typed.
 *   Cut to ⌊(context − 1) / 2⌋ characters so that both copies fit the model's context.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmap.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {{first: number, second: number, head: object, textScore: number|null}|null} measured -
 *   Read-only: bits per character of each copy, the head shown, and its induction score here.
 *
 * @fires change - `{detail: {phrase}}` when the reader edits the phrase.
 * @fires mha-computed - `{detail: {phrase, first, second}}` after every measurement.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute; the last valid value stays, the attribute as written) or a model that cannot be loaded (shown in place).
 *
 * @csspart phrase - The text field.
 * @csspart result - The sentence with both measurements.
 * @csspart heatmap - The induction head's `<mha-heatmap>`.
 * @csspart error - The error message.
 *
 * @cssprop --mha-cell-size - Side of a heatmap cell (default 9px here).
 */
export class MhaInduction extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    phrase: { type: String },
    measured: { state: true },
  };

  static styles = [trainedStyles, css`
    input[type='text'] { max-width: 32rem; display: block; margin: 0.3rem 0; }
    :host { container-type: inline-size; }
    .map { position: relative; --mha-cell-size: 9px; overflow-x: auto; max-width: 100%; }
    @container (max-width: 520px) { .map { --mha-cell-size: 6px; } }
    .layout { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 1.5rem; align-items: start; }
    .text { min-width: 0; }
    @container (min-width: 760px) { .layout { grid-template-columns: minmax(16rem, 1fr) minmax(0, max-content); } }
  `];

  constructor() {
    super();
    this.phrase = 'zebra quilts vex jumpy';
    this.measured = null;
    this._run = null;
    // the model runs in the engine worker: the newest phrase wins, at most one measurement waits
    this.runsOnModel(({ lm, phrase }) => measureCopies(lm, phrase), (e, m) => this._measured(e, m));
  }

  /** Resolves once the current phrase is measured (no run running or waiting) and drawn. */
  get computeComplete() {
    return super.computeComplete
      .then(() => this.renderRoot.querySelector('mha-heatmap')?.updateComplete);
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    if (this.lm && (changed.has('lm') || changed.has('phrase'))) this._compute();
  }

  _compute() {
    this._runs.push({ lm: this.lm, phrase: this.phrase });
  }

  /** A measurement (or its error) arrives; null: the phrase is too short. The last one stays while the next runs. */
  _measured(e, m) {
    if (e || !m) {
      this._run = null;
      this.measured = null;
      this.error = e;
      return;
    }
    this.error = null;
    const { p, r, first, second } = m;
    const lm = this.lm;
    const c = lm.config;
    // the strongest induction head: by its probe score, or (a model without probes) by its score on this text
    let heads = null;
    try { heads = lm.headsProbes === 'file' ? lm.heads : null; } catch { heads = null; }
    const onText = r.textScores ?? scoreText(r.attention, r.ids);
    let best;
    if (heads) {
      best = heads.filter((h) => h.layer > 0).sort((a, b) => b.scores.induction - a.scores.induction)[0] ?? heads[0];
    } else {
      const cand = onText.filter((h) => h.layer > 0 || c.numLayers === 1);
      const s = cand.sort((a, b) => (b.scores.induction ?? -1) - (a.scores.induction ?? -1))[0];
      best = { layer: s.layer, head: s.head, type: 'on this text', scores: { induction: s.scores.induction }, onText: true };
    }
    const textScore = onText.find((h) => h.layer === best.layer && h.head === best.head).scores.induction;
    this._run = r;
    this.measured = { first, second, head: best, textScore };
    this.dispatchEvent(new CustomEvent('mha-computed', { detail: { phrase: p, first, second }, bubbles: true, composed: true }));
  }

  _onInput(e) {
    this.phrase = e.target.value;
    this.dispatchEvent(new CustomEvent('change', { detail: { phrase: this.phrase }, bubbles: true, composed: true }));
  }

  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.lm) return this.loadingView();
    const m = this.measured;
    const h = m?.head;
    const unit = unitOf(this.lm.config);
    const show = unit === 'token' ? showToken : showChar;
    // wide: the phrase and what it measures beside the map
    return html`<div class="layout"><div class="text">
      <label for="phrase">Phrase</label>
      <input id="phrase" part="phrase" type="text" spellcheck="false" .value=${this.phrase ?? ''} @input=${this._onInput}>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      <p class="result" part="result" aria-live="polite">${!m ? `Type a phrase of at least 2 ${unit}s.` : copiesSentence(m.first, m.second, unit)}</p>
      ${m ? html`<p class="hint">Layer ${h.layer + 1}, head ${h.head + 1}: ${h.onText ? 'the strongest induction head on this text (the model carries no probe texts), '
        : `induction score ${f2(h.scores.induction)} on the probes, `}${m.textScore === null ? `not defined on this text (no span of 4 ${unit}s repeats)` : `${f2(m.textScore)} on this text`}.</p>` : nothing}
      </div>
      ${m ? html`<div class="map"><mha-heatmap part="heatmap" compact scheme=${this._scheme}
          label=${`Layer ${h.layer + 1}, head ${h.head + 1} (${h.type}, induction score ${f2(h.scores.induction)})`}
          .tokens=${this._run.tokens.map(show)} .weights=${headView(this._run.attention[h.layer], h.head)}></mha-heatmap></div>`
        : nothing}</div>`;
  }
}

customElements.get('mha-induction') || customElements.define('mha-induction', MhaInduction);

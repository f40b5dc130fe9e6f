import { html, css, nothing } from 'lit';
import { TrainedModelElement, trainedStyles, showChar, headView, f2 } from './trained-shared.js';
import '../views/mha-heatmap.js';
import { compositionExperimentAsync, supportedPrediction, PREDICTIONS } from '../logic/composition.js';

/** Width in CSS pixels of each heatmap's grid, whatever the phrase's length. */
const MAP_PX = 200;
/** The same on a phone (two maps side by side in 352 px). */
const MAP_PX_NARROW = 140;

const names = (pairs) => pairs.map(([, j]) => j + 1).join(' and ');
/** "head 2" or "heads 2 and 4". */
const headsOf = (pairs) => `${pairs.length > 1 ? 'heads' : 'head'} ${names(pairs)}`;

/**
 * `<mha-composition>` — an experiment the reader predicts, then runs: switch off a trained
 * model's previous-token heads of layer 1 and measure, on a phrase written twice, what happens to
 * the induction heads of layer 2 (their attention on the character after the earlier copy, and
 * the bits per character the second copy costs). A control arm switches off layer 1's other heads
 * instead. K-composition (Elhage et al. 2021): the induction head's keys read what the
 * previous-token head wrote into the residual stream. The numbers are the engine's, on the text
 * in the field (logic/composition.js).
 *
 * @element mha-composition
 *
 * @attr {string} model - URL of a model file with probes (format mha-wasm.charlm/1); default: the shipped h = 4 model.
 * @attr {string} phrase - The phrase written twice (default "purple kites drift north"); follows what is typed.
 *   At least 5 characters; cut to ⌊(context − 1) / 2⌋.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {string|null} prediction - The prediction chosen ("same", "collapse", "stronger"), or null.
 * @prop {boolean} revealed - Whether the measurement is shown (after "Run the experiment").
 * @prop {object|null} measured - Read-only: compositionExperiment's result on the current phrase.
 *
 * @fires change - `{detail: {phrase}}` when the reader edits the phrase.
 * @fires mha-computed - `{detail: measured}` after every measurement.
 * @fires mha-error - `{detail: {error}}`: a bad attribute or a model that cannot be loaded (shown in place).
 *
 * @csspart phrase - The text field.
 * @csspart predict - The fieldset of predictions.
 * @csspart run - The "Run the experiment" button.
 * @csspart verdict - The announced sentence (role="status"): what to do, then the verdict and the change measured.
 * @csspart result - The measurements: a table of the three arms and the heatmaps.
 * @csspart heatmap - The two heatmaps of the first induction head (whole model, writers off).
 * @csspart error - The error message.
 */
export class MhaComposition extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    phrase: { type: String },
    prediction: { attribute: false },
    revealed: { attribute: false },
    measured: { state: true },
  };

  static styles = [trainedStyles, css`
    input[type='text'] { max-width: 32rem; display: block; margin: 0.3rem 0 0.6rem; }
    fieldset { border: 1px solid var(--_border); border-radius: var(--_radius); margin: 0 0 0.6rem; padding: 0.4rem 0.8rem; }
    legend { font-weight: 600; padding: 0 0.3em; }
    fieldset label { font-weight: 400; display: block; margin: 0.25rem 0; }
    button { font: inherit; padding: 0.35em 0.9em; border-radius: var(--_radius); border: 1px solid var(--_accent);
      background: var(--_accent); color: var(--_bg); cursor: pointer; }
    button:focus-visible, input:focus-visible { outline: 2px solid var(--_accent); outline-offset: 2px; }
    table { border-collapse: collapse; margin: 0.6rem 0; }
    th, td { padding: 0.2em 0.6em; border-bottom: 1px solid var(--_border); text-align: left; }
    td.n { text-align: right; font-variant-numeric: tabular-nums; }
    .maps { display: flex; flex-wrap: wrap; gap: 1rem; }
    .maps figure { margin: 0; }
    .maps figcaption { font-size: 0.9em; color: var(--_muted); max-width: 16rem; }
    @container (min-width: 1000px) { .maps figcaption { max-width: none; } }
    :host { container-type: inline-size; }
    .maps .scroll { --mha-cell-size: var(--_cell-wide); }
    /* wide: the table beside the two maps; a phone: the two maps side by side (smaller cells) */
    @container (min-width: 760px) {
      [part='result'] { display: grid; grid-template-columns: minmax(0, 1fr) max-content; gap: 0 1.2rem; align-items: start; }
      [part='result'] table { width: 100%; }
    }
    /* wider still: the phrase and the run button beside the prediction; the verdict above the table, both
       beside the two maps */
    @container (min-width: 1000px) {
      .setup { display: grid; grid-template-columns: minmax(0, 18rem) minmax(0, 1fr); column-gap: 1.2rem; align-items: start;
        grid-template-rows: auto auto auto 1fr; }
      .setup > :not(fieldset) { grid-column: 1; }
      .setup > fieldset { grid-column: 2; grid-row: 1 / span 4; }
      .setup fieldset label { margin: 0.15rem 0; }
      .setup > button { justify-self: start; }
      .setup input[type='text'] { max-width: none; width: 100%; box-sizing: border-box; }
      .outcome { display: grid; grid-template-columns: minmax(0, 1fr) max-content; column-gap: 1.2rem; align-items: start;
        grid-template-rows: auto 1fr; }
      .outcome > [part='verdict'] { grid-column: 1; grid-row: 1; margin-top: 0.2rem; }
      .outcome > [part='result'] { display: contents; }
      .outcome table { grid-column: 1; grid-row: 2; width: 100%; margin-top: 0; }
      .outcome .maps { grid-column: 2; grid-row: 1 / span 2; }
    }
    @container (max-width: 480px) {
      /* each row of the table a card: the model, then its two numbers named */
      table, tbody, tr { display: block; }
      thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
      tbody tr { display: flex; flex-wrap: wrap; gap: 0.1em 1em; padding: 0.3em 0.2em; border-bottom: 1px solid var(--_border); }
      th, td { display: block; border: 0; padding: 0; }
      th[scope='row'] { flex: 1 0 100%; }
      td.n::before { color: var(--_muted); }
      td.n:nth-of-type(1)::before { content: 'induction attention '; }
      td.n:nth-of-type(2)::before { content: 'second copy, bits per character '; }
      .maps { gap: 0.5rem; }
      .maps figure { flex: 1 1 0; min-width: 0; }
      .maps .scroll { --mha-cell-size: var(--_cell-narrow); }
    }
  `];

  constructor() {
    super();
    this.phrase = 'purple kites drift north';
    this.prediction = null;
    this.revealed = false;
    this.measured = null;
    // the model runs in the engine worker: the newest phrase wins, at most one experiment waits
    this.runsOnModel(({ lm, phrase }) => compositionExperimentAsync(lm, phrase), (e, m) => this._measured(e, m));
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    if (this.lm && (changed.has('lm') || changed.has('phrase'))) this._compute();
  }

  _compute() {
    this._runs.push({ lm: this.lm, phrase: this.phrase });
  }

  /** The experiment on the newest phrase (null: too short), or its error, arrives. */
  _measured(e, m) {
    if (e) {
      this.measured = null;
      this.error = e;
      return;
    }
    this.measured = m;
    this.error = null;
    if (this.measured) this.dispatchEvent(new CustomEvent('mha-computed', { detail: this.measured, bubbles: true, composed: true }));
  }

  _onInput(e) {
    this.phrase = e.target.value;
    this.dispatchEvent(new CustomEvent('change', { detail: { phrase: this.phrase }, bubbles: true, composed: true }));
  }

  _question(hd) {
    const w = hd.labelled ? `layer 1's previous-token ${hd.writers.length > 1 ? 'heads' : 'head'} (${names(hd.writers)})`
      : `layer 1's head ${names(hd.writers)} (no head of layer 1 is labelled previous-token; this one scores highest)`;
    return `Switch off ${w}. What happens to layer 2's induction ${hd.readers.length > 1 ? 'heads' : 'head'} (${names(hd.readers)})?`;
  }

  _verdict(m) {
    const got = supportedPrediction(m);
    const said = PREDICTIONS.find(([k]) => k === got)?.[1] ?? 'no induction score on this text';
    const mine = this.prediction ? (this.prediction === got ? 'Your prediction holds.' : 'Not what you predicted.') : 'You made no prediction.';
    return `${mine} On this text: ${said.charAt(0).toLowerCase()}${said.slice(1)}.`;
  }

  _table(m) {
    const row = (name, a) => html`<tr><th scope="row">${name}</th><td class="n">${f2(a.induction)}</td><td class="n">${f2(a.bits)}</td></tr>`;
    const hd = m.heads;
    return html`<table>
      <thead><tr><th scope="col">Model</th><th scope="col">Induction attention (layer 2, ${headsOf(hd.readers)})</th>
        <th scope="col">Second copy, bits per character</th></tr></thead>
      <tbody>${row('Whole model', m.whole)}${row(`Layer 1, ${headsOf(hd.writers)} off`, m.writersOff)}
        ${m.controlOff ? row(`Control: layer 1, ${headsOf(hd.control)} off`, m.controlOff) : nothing}</tbody>
    </table>`;
  }

  _maps(m) {
    const [l, j] = m.heads.readers[0];
    const T = m.whole.tokens.length;
    const cell = `--_cell-wide: ${Math.max(2, Math.floor(MAP_PX / T))}px; --_cell-narrow: ${Math.max(2, Math.floor(MAP_PX_NARROW / T))}px`;
    const map = (a, what) => html`<figure><div class="scroll" style=${cell}><mha-heatmap part="heatmap" compact no-save
        scale="shared" scheme=${this._scheme} label=${`Layer ${l + 1}, head ${j + 1}, ${what}`}
        .tokens=${a.tokens.map(showChar)} .weights=${headView(a.attention[l], j)}></mha-heatmap></div>
      <figcaption>Layer ${l + 1}, head ${j + 1}: ${what}</figcaption></figure>`;
    return html`<div class="maps">${map(m.whole, 'whole model')}${map(m.writersOff, `layer 1, ${headsOf(m.heads.writers)} off`)}</div>`;
  }

  /** The announced sentence: what to do next, or the verdict with the measured change. */
  _status(m) {
    if (!m) return 'Type a phrase of at least 5 characters.';
    if (!m.heads.readers.length) return 'This model has no head after layer 1 that passes both induction tests.';
    if (!this.revealed) return 'Choose a prediction, then run the experiment.';
    return `${this._verdict(m)} Induction attention ${f2(m.whole.induction)} → ${f2(m.writersOff.induction)}; ` +
      `second copy ${f2(m.whole.bits)} → ${f2(m.writersOff.bits)} bits per character.`;
  }

  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.lm) return this.loadingView();
    const m = this.measured;
    return html`<div class="setup">
      <label for="phrase">Phrase (written twice)</label>
      <input id="phrase" part="phrase" type="text" spellcheck="false" .value=${this.phrase ?? ''} @input=${this._onInput}>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      ${m?.heads.readers.length ? html`<fieldset part="predict"><legend>${this._question(m.heads)}</legend>
        ${PREDICTIONS.map(([k, text]) => html`<label><input type="radio" name="predict" value=${k} .checked=${this.prediction === k}
          @change=${() => { this.prediction = k; }}> ${text}</label>`)}
      </fieldset>
      <button part="run" type="button" @click=${() => { this.revealed = true; }}>Run the experiment</button>` : nothing}
      </div><div class="outcome">
      <p part="verdict" role="status">${this._status(m)}</p>
      ${m?.heads.readers.length && this.revealed ? html`<div part="result">${this._table(m)}${this._maps(m)}</div>` : nothing}</div>`;
  }
}

customElements.get('mha-composition') || customElements.define('mha-composition', MhaComposition);

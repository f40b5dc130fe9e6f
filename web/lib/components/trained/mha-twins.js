import { html, css, nothing } from 'lit';
import { Task, TaskStatus, initialState } from '@lit/task';
import { STALE } from './model-element.js';
import { errorText } from '../base/shared.js';
import { TrainedModelElement, trainedStyles, f3, heldoutLoss, heldoutLossAsync, downloadSizes } from './trained-shared.js';
import { twinsVerdict } from '../logic/twins-verdict.js';
import { acquireModel, releaseModel, modelIndex, modelFileURL, MODEL_INDEX_URL } from '../models.js';
import { scrollCueStyles } from '../base/scroll-cue.js';
import { Announcer } from '../base/announce.js';

export { heldoutLoss, twinsVerdict };

/**
 * `<mha-twins>` — one head or several: the shipped twins (the same architecture, data, steps and
 * parameter count, h = 1 against h = 4, two seeds each) scored by the engine, live, on the
 * held-out passages stored in the model file, beside the loss each had on the whole held-out set
 * at training. The verdict sentence is computed (twinsVerdict, logic/twins-verdict.js): it states
 * the held-out set's size, each gap seed by seed, says when a gap is within seed noise, and calls a
 * comparison on fewer than five seeds per model suggestive, not a test.
 *
 * @element mha-twins
 *
 * @attr {string} index - URL of a models manifest (`index.json`: `{models: [{file, numHeads, seed,
 *   heldoutBpc}]}`, files relative to it); default: the shipped one, found relative to this module.
 * @attr {string} model - URL of the model whose stored held-out passages are scored; default: the
 *   shipped h = 4 model.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {Array<{file: string, numHeads: number, seed: number, heldoutBpc: number, live: number}>|null} rows -
 *   Read-only: every model with its loss measured here (`live`).
 * @prop {Error|null} error - Read-only: why this element's model (`model`) could not be loaded; a failure to
 *   score the manifest's models is shown in place and fired as `mha-error`, not kept here.
 *
 * @fires mha-computed - `{detail: {rows}}` when every model has been scored.
 * @fires mha-error - `{detail: {error}}` once per failure: this element's model cannot be loaded (then it is
 *   `error` too), or the manifest or one of its models cannot be loaded or scored (shown under the table).
 *
 * @csspart table - The results table.
 * @csspart verdict - The computed comparison.
 * @csspart error - The error message.
 */
export class MhaTwins extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    index: { type: String },
  };

  static styles = [trainedStyles, scrollCueStyles, css`
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { border-bottom: 1px solid var(--_border); padding: 0.3em 0.8em 0.3em 0; text-align: left; }
    td.num { text-align: right; }
    :host { container-type: inline-size; }
    /* a wide element: the verdict beside the table, not under it */
    @container (min-width: 760px) {
      .layout { display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 0 2rem; align-items: start; }
      .layout > .verdict { margin-top: 0; }
    }
  `];

  constructor() {
    super();
    this.index = null;
    this._announcer = new Announcer(this);   // one short line once every model is scored; the verdict is read in place
    // scores every model of the manifest on this model's passages, again when the model or the manifest changes;
    // its value ({rows, probes}) is what the table and the verdict draw (Task.render)
    this._scoreTask = new Task(this, {
      args: () => [this.lm, this._indexHref],
      task: ([lm, base], { signal }) => (lm ? this._score(lm, base, signal) : initialState),
      onComplete: ({ rows }) => {
        this._announcer.say(`${rows.length} models scored on the held-out passages; the verdict follows the table.`);
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: { rows }, bubbles: true, composed: true }));
      },
      // the failure is the task's (drawn by Task.render under the table), not the element's `error`
      onError: (e) => {
        if (e === STALE || !this.isConnected) return;
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
      },
    });
  }

  /** Every model of the manifest with its loss on the page's passages (`live`); null until they are scored. */
  get rows() {
    return this._scoreTask.status === TaskStatus.COMPLETE ? this._scoreTask.value.rows : null;
  }

  /** Resolves once every model of the manifest is scored (in the engine worker) and the table drawn. */
  get computeComplete() {
    return this.updateComplete.then(() => this._scoreTask.taskComplete).catch(() => {}).then(() => this.updateComplete);
  }

  get _indexHref() {
    return this.index ? new URL(this.index, document.baseURI).href : MODEL_INDEX_URL;
  }

  /** What it fetches (the placeholder's size): its own model and every model of the manifest. */
  async downloads() {
    const base = this._indexHref;
    const listed = await modelIndex(base).then((m) => (m.models ?? []).map((x) => x?.file), () => []);
    return downloadSizes([this.modelHref, ...listed], base);
  }

  /**
   * The score task's work: every model of the manifest loaded in turn (one at a time, the page
   * getting a turn between) and scored on the passages `lm` stores (heldoutLoss); a run made stale
   * (a new model or manifest, the model given back) ends with STALE.
   * @returns {Promise<{rows: Array<object>, probes: string[]}>} the manifest's entries with `live`, by heads then
   *   seed, and the passages they were scored on
   */
  async _score(lm, base, signal) {
    const { mha } = this._held;
    const probes = lm.metadata.probes ? JSON.parse(lm.metadata.probes).text : null;
    if (!probes?.length) throw new Error(`the model ${this.modelHref} stores no held-out passages (__metadata__.probes)`);
    const manifest = await modelIndex(base);
    const rows = [];
    for (const m of manifest.models ?? []) {
      if (signal.aborted) throw STALE;
      const href = modelFileURL(m.file, base);
      const other = await acquireModel(mha, href);
      try {
        rows.push({ ...m, live: await heldoutLossAsync(other, probes) });
      } finally {
        releaseModel(mha, href);
      }
      // one model at a time, then the page gets a turn (scoring a model takes a few hundred ms)
      await new Promise((r) => setTimeout(r));
    }
    if (signal.aborted) throw STALE;
    rows.sort((a, b) => a.numHeads - b.numHeads || a.seed - b.seed);
    return { rows, probes };
  }

  modelReleasing() {
    this._scoreTask.abort(STALE);
  }

  /** The verdict's sentence on the scored rows and the passages they were scored on. */
  _verdict({ rows, probes }) {
    const chars = probes.reduce((a, t) => a + Array.from(t).length, 0);
    return twinsVerdict(rows, probes.length, chars, this.lm?.training?.heldout_chars ?? null);
  }

  /**
   * The table and the verdict drawn from the score task (Task.render); a failure to score is the
   * task's, shown in place under the table, while `error` (the model not loaded) replaces the view.
   */
  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    const line = (text) => html`<tr><td colspan="4">${text}</td></tr>`;
    // a run made stale (the model given back) is no failure: the next run follows it
    const failed = (e) => e !== STALE;
    const body = this._scoreTask.render({
      initial: () => line('Computing…'), pending: () => line('Computing…'), error: (e) => line(failed(e) ? '—' : 'Computing…'),
      complete: ({ rows }) => rows.map((m) => html`<tr>
        <td>h = ${m.numHeads}</td><td>${m.seed}</td><td class="num">${f3(m.live)}</td><td class="num">${f3(m.heldoutBpc)}</td></tr>`),
    });
    return html`<div class="layout"><div>
      <div class="scroll" tabindex="0" role="region" aria-label="Held-out loss of the twins">
        <table part="table">
          <caption>Held-out loss in bits per character (lower is better)</caption>
          <thead><tr><th scope="col">heads</th><th scope="col">seed</th><th scope="col">on this page</th>
            <th scope="col">whole held-out set, at training</th></tr></thead>
          <tbody>${body}</tbody>
        </table>
      </div>
      <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
      ${this._scoreTask.render({
        error: (e) => (failed(e) ? html`<p class="error" part="error" role="alert">The twins could not be scored. ${errorText(e)}</p>` : nothing),
      })}</div>
      <p class="verdict" part="verdict">${this._scoreTask.render({ complete: (v) => this._verdict(v) })}</p></div>
      ${this._announcer.view()}`;
  }
}

customElements.get('mha-twins') || customElements.define('mha-twins', MhaTwins);

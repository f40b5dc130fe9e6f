import { html, css, nothing } from 'lit';
import { Task, initialState } from '@lit/task';
import { STALE } from './model-element.js';
import { TrainedModelElement, trainedStyles, f3, mean, range, heldoutLoss, heldoutLossAsync, downloadSizes } from './trained-shared.js';
import { acquireModel, releaseModel, modelIndex, modelFileURL, MODEL_INDEX_URL } from '../models.js';
import { scrollCueStyles } from '../base/scroll-cue.js';
import { Announcer } from '../base/announce.js';

export { heldoutLoss };

/**
 * How h = lo and h = hi compare on one figure of the rows (`live`: the page's passages; `heldoutBpc`:
 * the whole held-out set at training): the mean of each over its seeds, the gap (h = lo minus h = hi,
 * positive when more heads are better) and the largest difference between two seeds of one model.
 * @param {Array<object>} rows
 * @param {number} lo
 * @param {number} hi
 * @param {'live'|'heldoutBpc'} key
 */
function compare(rows, lo, hi, key) {
  const by = (h) => rows.filter((m) => m.numHeads === h).map((m) => m[key]);
  const one = by(lo);
  const many = by(hi);
  return { one: mean(one), many: mean(many), gap: mean(one) - mean(many), spread: Math.max(range(one), range(many)),
    seeds: one.length === many.length ? `${one.length} seeds each` : `${one.length} and ${many.length} seeds` };
}

/** The judgement of one comparison: a gap smaller than the seed spread is called noise. */
function judge({ gap, spread }, hi) {
  return gap > spread
    ? `${hi} heads are better by ${f3(gap)} bits, more than the ${f3(spread)} bits that separate two seeds of the same model.`
    : gap > 0
      ? `${hi} heads are better by ${f3(gap)} bits, but two seeds of one model differ by up to ${f3(spread)}, so this gap is within the noise.`
      : `${hi} heads are not better here (${f3(-gap)} bits worse); seeds differ by up to ${f3(spread)}.`;
}

/**
 * The sentences that compare the mean loss of the h = 1 and h = 4 models, honest about seeds:
 * a gap smaller than the spread between two seeds of one model is called noise. First on the
 * passages scored in the page; then, when every row has it, on the whole held-out set as measured
 * at training (`heldoutBpc` of the manifest), which has far more characters and so less noise.
 * @param {Array<{numHeads: number, live: number, heldoutBpc?: number}>} rows
 * @param {number} passages how many texts were scored, and `chars` their characters
 * @param {number} chars
 * @returns {string}
 */
export function twinsVerdict(rows, passages, chars) {
  const hs = [...new Set(rows.map((r) => r.numHeads))].sort((a, b) => a - b);
  if (hs.length < 2) return `Only models with h = ${hs.join(', ')} are listed: nothing to compare.`;
  const [lo, hi] = [hs[0], hs[hs.length - 1]];
  const page = compare(rows, lo, hi, 'live');
  let text = `On these ${passages} held-out passages (${chars} characters), h = ${lo} scores ${f3(page.one)} and h = ${hi} ` +
    `scores ${f3(page.many)} bits per character (mean of ${page.seeds}): ${judge(page, hi)}`;
  if (rows.every((m) => typeof m.heldoutBpc === 'number')) {
    const whole = compare(rows, lo, hi, 'heldoutBpc');
    text += ` On the whole held-out set, measured at training: h = ${lo} ${f3(whole.one)}, h = ${hi} ${f3(whole.many)}; ` +
      judge(whole, hi);
  }
  return text;
}

/**
 * `<mha-twins>` — one head or several: the shipped twins (the same architecture, data, steps and
 * parameter count, h = 1 against h = 4, two seeds each) scored by the engine, live, on the
 * held-out passages stored in the model file, beside the loss each had on the whole held-out set
 * at training. The verdict sentence is computed, and says when a gap is within seed noise.
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
 *
 * @fires mha-computed - `{detail: {rows}}` when every model has been scored.
 * @fires mha-error - `{detail: {error}}` when a model or the manifest cannot be loaded.
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
    rows: { state: true },
  };

  static styles = [trainedStyles, scrollCueStyles, css`
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { border-bottom: 1px solid var(--_border); padding: 0.3em 0.8em 0.3em 0; text-align: left; }
    td.num { text-align: right; }
  `];

  constructor() {
    super();
    this.index = null;
    this.rows = null;
    this._announcer = new Announcer(this);   // one short line once every model is scored; the verdict is read in place
    // scores every model of the manifest on this model's passages, again when the model or the manifest changes
    this._scoreTask = new Task(this, {
      args: () => [this.lm, this._indexHref],
      task: ([lm, base], { signal }) => (lm ? this._score(lm, base, signal) : initialState),
      onComplete: (rows) => {
        this.rows = rows;
        this._announcer.say(`${rows.length} models scored on the held-out passages; the verdict follows the table.`);
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: { rows }, bubbles: true, composed: true }));
      },
      onError: (e) => {
        if (e === STALE || !this.isConnected) return;
        this.error = e;
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
      },
    });
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
   * @returns {Promise<Array<object>>} the manifest's entries with `live`, by heads then seed
   */
  async _score(lm, base, signal) {
    this.rows = null;
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
    this._probes = probes;
    return rows;
  }

  modelReleasing() {
    this._scoreTask.abort(STALE);
  }


  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    const rows = this.rows;
    const chars = this._probes ? this._probes.reduce((a, t) => a + Array.from(t).length, 0) : 0;
    return html`
      <div class="scroll" tabindex="0" role="region" aria-label="Held-out loss of the twins">
        <table part="table">
          <caption>Held-out loss in bits per character (lower is better)</caption>
          <thead><tr><th scope="col">heads</th><th scope="col">seed</th><th scope="col">on this page</th>
            <th scope="col">whole held-out set, at training</th></tr></thead>
          <tbody>${rows ? rows.map((m) => html`<tr>
            <td>h = ${m.numHeads}</td><td>${m.seed}</td><td class="num">${f3(m.live)}</td><td class="num">${f3(m.heldoutBpc)}</td></tr>`)
            : html`<tr><td colspan="4">${this.error ? '—' : 'Computing…'}</td></tr>`}</tbody>
        </table>
      </div>
      <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      <p class="verdict" part="verdict">${rows ? twinsVerdict(rows, this._probes.length, chars) : ''}</p>
      ${this._announcer.view()}`;
  }
}

customElements.get('mha-twins') || customElements.define('mha-twins', MhaTwins);

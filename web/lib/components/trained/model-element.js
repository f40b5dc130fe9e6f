// The base classes of the trained-model elements: TrainedModelElement loads `model` through the
// page's shared cache (models.js) with one @lit/task, shows the download's progress while it
// arrives, gives the model back when the element leaves the page, and shows a bad model inline;
// AblatableModelElement adds heads that can be switched off.
import { LitElement, html, css, nothing } from 'lit';
import { Task, TaskStatus, initialState } from '@lit/task';
import { baseStyles, taskEngine, errorText, getEngine } from '../base/shared.js';
import { acquireModel, releaseModel, modelURL, DEFAULT_MODEL_URL } from '../models.js';
import { taskModelEngine, getModelEngine, LatestRun } from '../base/worker-engine.js';
import { enumAttr, schemeAttr, AttrGuard } from '../base/attr-check.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { parseAblate, formatAblate, progressText } from '../logic/trained-text.js';
import { downloadSizes, lazyPlaceholder, whenNear, LOADING_VALUES } from './lazy.js';
import { modelSource, isDiskSource, dropTarget } from './model-source.js';

/** Styles of the trained-model elements, on top of baseStyles. */
export const trainedStyles = [baseStyles, css`
  :host { display: block; --_mono: var(--mha-mono, ui-monospace, 'SFMono-Regular', Menlo, monospace); }
  textarea, input[type='text'], select {
    font: 1rem var(--_mono); color: var(--_fg); background: var(--_bg); border: 1px solid var(--_field-border);
    border-radius: var(--_radius); padding: 0.35em 0.5em; box-sizing: border-box; max-width: 100%;
  }
  textarea, input[type='text'] { width: 100%; }
  label { font-weight: 600; }
  .hint { color: var(--_muted); font-size: 0.9em; }
  .loading { color: var(--_muted); }
  .scroll { overflow-x: auto; max-width: 100%; }
  mha-heatmap::part(label) { font-size: 8px; line-height: 1; }
  .lazy { border: 1px dashed var(--_border); border-radius: var(--_radius); padding: 0.6em 0.8em; color: var(--_muted); }
  .lazy p { margin: 0 0 0.5em; }
  .lazy code { font-family: var(--_mono); overflow-wrap: anywhere; }
  .lazy .size { color: var(--_fg); font-weight: 600; }
  .loading progress { display: block; width: min(100%, 24rem); margin-top: 0.3em; accent-color: var(--_accent); }
  :host([data-drop]) { outline: 2px dashed var(--_accent); outline-offset: 4px; }
`];

/** Why a stale model load stopped (the model attribute changed, or the element left the page). */
export const STALE = Object.freeze({ name: 'AbortError', message: 'a newer model load replaced this one' });

/**
 * Base class of the elements that run a trained model: loads `model` (a URL, or files from the
 * reader's disk: see "From disk" below; by default the class's
 * `_defaultModel`, the shipped h = 4 model unless a subclass names another) into the page's shared engine through the shared model cache, holds it
 * while connected, and gives it back when the element leaves the page. Subclasses draw in `renderView()` from
 * `this.lm` (null while loading) and `this.error`, and override `modelChanged(lm)`.
 *
 * Fetched when seen: with `loading="lazy"` (the default, as `<img loading>`) nothing is fetched
 * until the element comes within one viewport of the visible part of the page (NEAR_VIEWPORT);
 * until then the element shows, instead of its view, a placeholder naming the files it will fetch
 * and their size (`downloads()`, from the manifest's `bytes`) with a button that fetches at once.
 * `loading="eager"` fetches at once; `load()` does so from script. Once it has come near, an element
 * stays loaded-when-connected (moving it in the page re-acquires its model at once, from the bytes
 * kept by models.js). A `loading` value other than "lazy" or "eager" is taken as "lazy", shows one
 * message and fires `mha-error` (`detail: {error}`).
 *
 * From disk: the `model` property also takes one `File`, a `FileList` or an array of Files (an
 * `<input type=file>`, a folder from `<input type=file webkitdirectory>`), read by mha.loadModel
 * (formats/sources.js: a Hugging Face folder, a model file, a llama2.c .bin with its tokenizer.bin);
 * files or a folder dropped onto the element become its model (the host has `data-drop` while
 * files are dragged over it). They load at once (nothing is downloaded), and are named by the
 * file's or folder's name.
 *
 * @attr {string} loading - "lazy" (default): fetch the model when the element comes near the viewport; "eager": at once.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps, in the elements that draw them (default viridis).
 * @attr {string} tokenizer - A llama2.c model's tokenizer.bin (a URL relative to the page; the property also takes a `File`).
 * @csspart placeholder - The box shown before the model is fetched.
 * @csspart size - Its download size.
 * @csspart load - Its button that fetches now.
 * @csspart loading - The message while the model loads (with the download's bytes and percent).
 * @csspart progress - Its `<progress>` bar.
 */
export class TrainedModelElement extends LitElement {
  /** The model loaded without a `model` attribute (a subclass may name another). */
  static _defaultModel = DEFAULT_MODEL_URL;

  /** True for an element whose model runs in the page's engine worker (base/worker-engine.js): its
   * `lm` is then a RemoteModel (src/worker.js) whose computations return promises. */
  static worker = false;

  static properties = {
    model: { type: String },
    tokenizer: { type: String },
    loading: { type: String },
    scheme: { type: String },
    engine: { attribute: false },
    error: { state: true },
    _near: { state: true },
    _downloads: { state: true },
    _progress: { state: true },
  };

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of the views' wide boxes (base/scroll-cue.js)
    this.model = null;
    this.tokenizer = null;
    this.loading = null;
    this.scheme = 'viridis';
    this._scheme = 'viridis';  // the last valid `scheme`, the heatmaps' colour scale
    this._schemeGuard = new AttrGuard(this);
    this.engine = undefined;
    this.error = null;
    this._near = false;        // false until the element has come near the viewport (or loading="eager", or load())
    this._downloads = null;    // the placeholder's files and sizes (downloadSizes), once known
    this._progress = null;     // the download under way: {name, loaded, total, text, percent}
    this._sizesFor = null;
    this._unwatch = null;
    this._undrop = null;       // removes the drop target's listeners (model-source.js dropTarget)
    this._lazyGuard = new AttrGuard(this);
    this._attrs = new AttrGuard(this);  // the subclass's attributes (attr-check.js): their messages lead its view
    this._held = null;
    this._connection = 0;      // counts connections: an element put back in the page acquires its model again
    this._lmSeen = null;       // the model the last update saw (willUpdate records a change of it as 'lm')
    this._modelTask = new Task(this, {
      args: () => [this._near && this.isConnected && this.needsModel ? this._source?.key ?? 'null' : null, this.engine, this._connection],
      task: ([want, engine], { signal }) => (want === null ? initialState : this._acquire(engine, signal)),
      onComplete: (lm) => {
        this._progress = null;
        this.modelChanged(lm);
      },
      onError: (e) => {
        this._progress = null;
        if (e === STALE || !this.isConnected) return;
        this.error = e;
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
      },
    });
  }

  /**
   * The loaded model: the model task's value while the element holds it; null while it loads,
   * after an error, and once it has been given back.
   * @returns {object|null}
   */
  get lm() {
    return this._modelTask.status === TaskStatus.COMPLETE ? this._modelTask.value ?? null : null;
  }

  /**
   * The subclass's view (`renderView()`) once the element has come near; before that the placeholder
   * stands in for it. The messages of bad attributes come first, that of a bad `loading` value last.
   */
  render() {
    return html`${this._attrs.view()}${this._schemeGuard.view()}${this._near || !this.needsModel ? this.renderView() : lazyPlaceholder(this._downloads, () => this.load())}${this._lazyGuard.view()}`;
  }

  /**
   * The element's own view, from `this.lm` and `this.error` (each subclass overrides it).
   * @returns {unknown} what Lit can render (a template, `nothing`, …), as `render()` returns
   */
  renderView() {
    return nothing;
  }

  /**
   * Whether the element needs its model: true unless a subclass is shown data set from script that
   * makes the model unnecessary (`<mha-model-view>` given a run result and no `model`); while false,
   * nothing is fetched and no placeholder stands in for the view.
   */
  get needsModel() {
    return true;
  }

  /** Whether `loading` asks to fetch at once (a bad value counts as the default, "lazy"). */
  get _eager() {
    return enumAttr('loading', this.loading, { dflt: 'lazy', values: LOADING_VALUES }).value === 'eager';
  }

  /** Fetches the model now, whether or not the element has come near the viewport. */
  load() {
    this._unwatch?.();
    this._unwatch = null;
    if (!this._near) this._near = true;
  }

  /**
   * The files this element fetches when it loads, with their sizes, for the placeholder. By
   * default its model; an element that fetches more (the twins) overrides it.
   * @returns {Promise<Array<{file: string, bytes: number|null}>>}
   */
  downloads() {
    return downloadSizes([this.modelHref]);
  }

  /** The absolute URL of the model in use (null for files from disk). */
  get modelHref() {
    if (isDiskSource(this.model)) return null;
    try {
      return modelURL(this.model, this.constructor._defaultModel);
    } catch {
      return null;
    }
  }

  /** What `model` and `tokenizer` name (model-source.js), or null when there is no model. */
  get _source() {
    try {
      return modelSource(this.model, this.tokenizer, this.constructor._defaultModel);
    } catch {
      return null;
    }
  }

  /** The name the model in use is shown by: its file name, a folder's name with "/", or the files' names. */
  get modelName() {
    return this._source?.name ?? null;
  }

  connectedCallback() {
    super.connectedCallback();
    this._connection++;
    this._undrop ??= dropTarget(this, (files) => {
      this.model = files;
      this.dispatchEvent(new CustomEvent('change', { detail: { model: this.modelName }, bubbles: true, composed: true }));
    });
    if (!this._near && !this._eager) {
      this._unwatch = whenNear(this, () => this.load(), () => (this.engine ? Promise.resolve(this.engine) : this.constructor.worker ? getModelEngine() : getEngine()));
    }
    this.requestUpdate();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._unwatch?.();
    this._unwatch = null;
    this._undrop?.();
    this._undrop = null;
    this._modelTask.abort(STALE);
    this._progress = null;
    this._release();
    // the model is given back: the task runs with none, so its value is no longer the element's model
    this._modelTask.run([null, this.engine, this._connection]);
  }

  willUpdate(changed) {
    super.willUpdate?.(changed);
    // `lm` is derived from the model task; a change of it is recorded as a change of 'lm', so that a
    // subclass's willUpdate asks changed.has('lm') as of a reactive property
    if (this.lm !== this._lmSeen) {
      changed.set('lm', this._lmSeen);
      this._lmSeen = this.lm;
    }
    if (changed.has('scheme') || !this.hasUpdated) {
      this._schemeGuard.begin();
      this._scheme = this._schemeGuard.take('scheme', schemeAttr(this.scheme));
      this._schemeGuard.end();
    }
    if (changed.has('loading') || !this.hasUpdated) {
      this._lazyGuard.begin();
      this._lazyGuard.take('loading', enumAttr('loading', this.loading, { dflt: 'lazy', values: LOADING_VALUES }));
      this._lazyGuard.end();
    }
    if (!this._near && (this._eager || isDiskSource(this.model))) this.load();   // files from disk: nothing to download
    if (!this._near) {
      const key = `${this.modelHref}`;
      if (this.isConnected && this._sizesFor !== key) {
        this._sizesFor = key;
        this.downloads().then((d) => { if (this._sizesFor === key) this._downloads = d; }, () => {});
      }
    }
  }

  /**
   * The model task's work (a run starts when the model, the engine or the connection changes): gives
   * back the model held, acquires the new one with its download's progress in `_progress`, and keeps
   * it; a run made stale meanwhile gives back what it acquired and ends with STALE.
   * @returns {Promise<object>} the CharModel
   */
  async _acquire(engine, signal) {
    this._release();
    this.error = null;
    this._progress = null;
    const src = modelSource(this.model, this.tokenizer, this.constructor._defaultModel);
    const href = src.key;
    const mha = await (this.constructor.worker ? taskModelEngine : taskEngine)(engine, signal).catch((e) => { throw signal.aborted ? STALE : e; });
    const name = src.name;
    const progress = (p) => {
      if (signal.aborted) return;
      const t = progressText(p.loaded, p.total);
      if (t.text !== this._progress?.text) this._progress = { name, loaded: p.loaded, total: p.total, ...t };
    };
    let lm;
    try {
      lm = await acquireModel(mha, href, { progress, ...(src.source ? { source: src.source, tokenizer: src.tokenizer } : {}) });
    } catch (e) {
      throw signal.aborted ? STALE : e;
    }
    if (signal.aborted) {
      releaseModel(mha, href);
      throw STALE;
    }
    this._held = { mha, href };
    return lm;
  }

  _release() {
    if (!this._held) return;
    this.modelReleasing();
    const { mha, href } = this._held;
    this._held = null;
    releaseModel(mha, href);
  }

  /**
   * What a subclass shows while its model loads: "Loading the trained model…", and once bytes
   * arrive "Loading <file>: 12.3 of 250.0 MB (4 %)" with a `<progress>` bar (indeterminate while the
   * size is unknown), updated as the download's chunks arrive (role="status"; the bar is labelled
   * by the text).
   * @param {string} [what] what is loading, for the message before the first bytes
   */
  loadingView(what = 'the trained model') {
    const p = this._progress;
    if (!p) return html`<p class="loading" part="loading" role="status">Loading ${what}…</p>`;
    return html`<div class="loading" part="loading" role="status" data-loaded=${p.loaded} data-total=${p.total ?? ''}>
      <span id="load-text">Loading <code>${p.name}</code>: ${p.text}</span>
      <progress part="progress" aria-labelledby="load-text" max=${p.total ? p.total : nothing}
        value=${p.total ? Math.min(p.loaded, p.total) : nothing}></progress>
    </div>`;
  }

  /**
   * Called once a model has loaded, with it (the update that follows draws it as `this.lm`).
   * @param {object} lm the loaded model
   */
  modelChanged(lm) {}

  /**
   * The element's computations on its model, the newest input winning (LatestRun, at most one
   * waiting): `measure(job)` runs on `job.lm` (a RemoteModel in the engine worker, or the model
   * itself); `done(error, result, job)` is called only while `job.lm` is still the element's model.
   * The runs are cancelled when the model is given back, and `computeComplete` waits for them.
   * @param {(job: {lm: object}) => Promise<unknown>} measure
   * @param {(error: Error|null, result: unknown, job: {lm: object}) => void} done
   * @returns {LatestRun} push a job `{lm, …}` to it for each new input
   */
  runsOnModel(measure, done) {
    this._runs = new LatestRun(measure, (e, r, job) => { if (job.lm === this.lm) done(e, r, job); });
    return this._runs;
  }

  /** Resolves once the current input is computed (no run running or waiting: runsOnModel) and drawn. */
  get computeComplete() {
    return this.updateComplete.then(() => this._runs?.settled).then(() => this.updateComplete);
  }

  /** Called before the model is given back: free what was made from it (runs under way, generators). */
  modelReleasing() {
    this._runs?.cancel();
  }

  /** The inline message of a model that could not be loaded. */
  errorMessage() {
    return `The model ${this.modelHref ?? this.modelName ?? '(none given)'} could not be loaded. ${errorText(this.error)} ` +
      '(A model is a .safetensors file in the mha-wasm.charlm/1 format, or a Hugging Face model folder, a URL ending in "/" ' +
      'holding config.json, the safetensors and the tokenizer: see docs/trained-models.md and the README\'s "Show the heads of your own model".)';
  }
}

/**
 * A trained-model element whose heads can be switched off: its `ablate` attribute ("layer:head"
 * pairs, 1-based) read as checked [layer, head] pairs, and a head's switch toggling it. The subclass
 * declares `ablate` and defines `_changed()` (what a user edit does: recompute, dispatch `change`).
 */
export class AblatableModelElement extends TrainedModelElement {
  /** The switched-off heads as 0-based [layer, head] pairs, those outside the model dropped. */
  get ablation() {
    const { numLayers = 0, numHeads = 0 } = this.lm?.config ?? {};
    return parseAblate(this.ablate).filter(([l, j]) => l < numLayers && j < numHeads);
  }

  /** Switches head j of layer l off, or back on. */
  _toggle(l, j) {
    const off = this.ablation;
    const i = off.findIndex(([a, b]) => a === l && b === j);
    if (i >= 0) off.splice(i, 1); else off.push([l, j]);
    off.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.ablate = formatAblate(off);
    this._changed();
  }
}

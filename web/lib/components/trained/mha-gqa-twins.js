import { LitElement, html, nothing } from 'lit';
import { Task, TaskStatus, initialState } from '@lit/task';
import { kvCacheBytes, whenNear, downloadSizes, lazyPlaceholder } from './trained-shared.js';
import { STALE } from './model-element.js';
import { acquireModel, releaseModel, modelIndex, modelFileURL, MODEL_INDEX_URL } from '../models.js';
import { taskEngine, errorText } from '../base/shared.js';
import { gqaVerdict, gqaFigures, verdictLead } from '../logic/gqa-verdict.js';
import { kvName, pickTwins, storedProbes, twinRow } from '../logic/gqa-twins.js';
import { twinsStyles, seedsView, scoreView, generateView, headsView } from './gqa-twins-views.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { AttrGuard, numberAttr, intAttr, enumAttr, schemeAttr, rawAttr } from '../base/attr-check.js';
import { Announcer } from '../base/announce.js';
import { PhoneFold } from '../base/phone-fold.js';
import '../views/mha-heatmap.js';

const DEFAULT_PROMPT = 'The cat sat on the mat. ';

export { gqaVerdict, gqaFigures, kvName };

/**
 * `<mha-gqa-twins>` — grouped-query attention measured: the shipped twins that differ only in how
 * many K/V heads their 8 query heads share (8: multi-head, 2: grouped, 1: multi-query; the same
 * data, steps and parameter count; `gqa` in the models' `index.json`), loaded into the engine. For
 * each the element shows
 * - the KV cache's bytes per token, computed from the file's config (2 · layers · K/V heads · d_k ·
 *   4 bytes, float32), against the held-out loss in bits per character, measured live on the held-out
 *   passages stored in the files (`__metadata__.probes`): a table and a chart; and sentences made
 *   from the numbers (gqaVerdict, gqa-verdict.js) that judge what sharing K and V costs on the whole
 *   held-out set as index.json records it (`heldoutBpc`, both seeds): a gap to multi-head attention
 *   is called a cost only beyond the largest spread between two seeds of one model, and sized as a
 *   multiple of it; the page's passages (a few hundred characters) are reported as the smaller
 *   sample they are, with their own seed spread;
 * - generation from each model through its KV cache, side by side, with the cache's bytes after
 *   every step;
 * - one model's per-head attention over the text it wrote, its query heads framed by the K/V head
 *   they share.
 * The models load when the element first comes into view (or on its button, or at once with
 * `loading="eager"`); nothing is hard-coded: numbers come from the files and the engine.
 *
 * @element mha-gqa-twins
 *
 * @attr {string} index - URL of a models manifest (`index.json` with a `gqa` list: `{file, kvHeads, numHeads,
 *   seed, heldoutBpc}`, files relative to it); default: the shipped one, found relative to this module.
 * @attr {number} seed - Which seed's twins are loaded and shown (default 0); reflects the switch.
 * @attr {boolean} both-seeds - Also score the other seeds' twins on the page's passages, so that their differences there are
 *   set against the seed spread on that text too (the judgement on the whole held-out set needs no loading); reflects the button.
 * @attr {string} prompt - The start of every model's text (default "The cat sat on the mat. ").
 * @attr {number} temperature - Sampling temperature, 0–10; 0 (default) takes the most likely character.
 * @attr {number} steps - Characters generated when the text (re)starts, 0–1000 (default 24).
 * @attr {number} shown - K/V heads of the model whose heads are drawn (default: the grouped one); reflects the reader's choice.
 * @attr {number} layer - The layer whose heads are drawn, 1 to the model's layers (default 2); reflects the reader's choice.
 *
 * A bad `seed`, `temperature`, `steps`, `shown`, `layer` or `scheme` keeps the last valid value (or
 * the default), shows one message naming the attribute, the value and what is allowed, and fires
 * `mha-error`; the attribute stays as written.
 * @attr {'lazy'|'eager'} loading - `lazy` (default): load the models when the element comes into view; `eager`: at once.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {Array<{file: string, kvHeads: number, numHeads: number, seed: number, heldoutBpc: number, live: number,
 *   perToken: number, fullPerToken: number}>|null} rows - Read-only: every scored model with its loss measured here (`live`).
 * @prop {Array<{file: string, kvHeads: number, text: string, cacheLength: number, kvBytes: object, steps: number}>} twins -
 *   Read-only: the shown seed's models and their generation (text, tokens cached, the cache's bytes).
 * @prop {string[]} verdict - Read-only: the sentences computed from `verdictRows`.
 * @prop {Array<object>} verdictRows - Read-only: every twin of the manifest with `heldoutBpc`, `live` (null where not
 *   scored here) and `perToken`, the rows the verdict is made from.
 * @prop {Error|null} error - Read-only: why the models could not be loaded or run.
 *
 * @fires mha-computed - `{detail: {rows, verdict}}` when the models are scored.
 * @fires mha-step - `{detail: {twins}}` after every generation step.
 * @fires change - `{detail: {seed, bothSeeds, shown, layer, temperature}}` when the reader changes one of them.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute) or a model or the manifest that cannot be loaded (shown in place).
 *
 * @csspart load - The button that loads the models before the element is scrolled to.
 * @csspart table - The table of bytes per token and loss (on the whole held-out set, from index.json, and on the page's passages).
 * @csspart chart - The chart of loss against bytes per token (the whole held-out set's, when index.json lists it); on a phone,
 *   folded behind its summary line.
 * @csspart verdict - The computed sentences: the judgement, then the numbers behind it in a disclosure that starts closed.
 * @csspart seeds - The seed switch and the "score both seeds" button.
 * @csspart controls - The prompt field and the generation buttons.
 * @csspart prompt - The prompt field.
 * @csspart texts - The models' texts, one box each.
 * @csspart cache - A model's cache line (with `data-*` numbers).
 * @csspart models - The buttons picking the model whose heads are drawn.
 * @csspart layers - The layer buttons.
 * @csspart groups - The K/V frames of the shown model.
 * @csspart group - One K/V head's frame with its query heads.
 * @csspart head - One query head's box.
 * @csspart heatmap - A head's `<mha-heatmap>`.
 * @csspart error - The error message.
 *
 * @cssprop --mha-accent, --mha-fg, --mha-bg, --mha-surface, --mha-border, --mha-field-border, --mha-muted, --mha-mono - Theme.
 */
export class MhaGqaTwins extends LitElement {
  static properties = {
    index: { type: String },
    seed: { reflect: true, converter: rawAttr },
    bothSeeds: { type: Boolean, attribute: 'both-seeds', reflect: true },
    prompt: { type: String },
    temperature: { converter: rawAttr },
    steps: { converter: rawAttr },
    shown: { reflect: true, converter: rawAttr },
    layer: { reflect: true, converter: rawAttr },
    loading: { type: String },
    scheme: { type: String },
    engine: { attribute: false },
    error: { state: true },
    _phase: { state: true },
    _version: { state: true },
  };

  static styles = twinsStyles;

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of the table (base/scroll-cue.js)
    // the verdict and the texts are read in place; a choice or a step says one short line once it settles
    this._announcer = new Announcer(this);
    this._fold = new PhoneFold(this);   // the chart: open on a wide element, folded behind its summary line on a phone
    this.index = null;
    /** @type {number|string} */ this.seed = 0;
    this.bothSeeds = false;
    this.prompt = DEFAULT_PROMPT;
    /** @type {number|string} */ this.temperature = 0;
    /** @type {number|string} */ this.steps = 24;
    /** @type {number|string|null} */ this.shown = null;
    /** @type {number|string} */ this.layer = 2;
    this.loading = 'lazy';
    this.scheme = 'viridis';
    this._attrs = new AttrGuard(this);
    this._c = { seed: 0, temperature: 0, steps: 24, shown: null, layer: 2, scheme: 'viridis' };
    const view = this.render;
    this.render = () => html`${this._attrs.view()}${view.call(this)}`;
    this.engine = undefined;
    this.error = null;
    this._phase = 'idle';    // idle (waiting to be seen) → loading → ready
    this._version = 0;
    this._twins = [];        // the shown seed's models: {entry, href, lm, gen, steps}
    this._held = [];         // [{mha, href}] given back on disconnect or reload
    this._connection = 0;      // counts connections: an element put back in the page loads its twins again
    this._twinsTask = new Task(this, {
      args: () => [this.isConnected && this._phase !== 'idle' ? JSON.stringify([this._indexHref, this._c.seed, !!this.bothSeeds]) : null,
        this.engine, this._connection],
      task: ([key, engine], { signal }) => (key === null ? initialState : this._loadTwins(engine, signal)),
      onComplete: ({ twins, rows }) => {
        // the generators are the element's to run and give back; the scores stay the task's value (rows)
        this._twins = twins;
        this._phase = 'ready';
        this._restartAll();
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: { rows, verdict: this._verdictOf(rows) }, bubbles: true, composed: true }));
      },
      onError: (e) => {
        if (e === STALE) return;
        this._releaseAll();
        this.error = e;
        this._phase = 'ready';
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
      },
    });
    this._io = null;
    this._probes = null;
    this._probesFrom = null; // the file whose passages are scored, when the files store different ones
    this._seeds = null;      // the seeds of the manifest's twins
    this._run = null;        // the shown model's last full forward: {lm, text, r, views}
  }

  get _indexHref() {
    return this.index ? new URL(this.index, document.baseURI).href : MODEL_INDEX_URL;
  }

  /** The shown seed's models and their generation so far. */
  get twins() {
    return this._twins.map((t) => ({
      file: t.entry.file, kvHeads: t.lm.config.kvHeads, text: t.gen?.text ?? this._prompt(),
      cacheLength: t.gen?.cacheLength ?? 0, kvBytes: kvCacheBytes(t.lm.config, t.gen?.cacheLength ?? 0), steps: t.steps,
    }));
  }

  /** Every scored model (the twins task's value; null until the models are scored). */
  get rows() {
    return this._twinsTask.status === TaskStatus.COMPLETE ? this._twinsTask.value.rows : null;
  }

  /** The sentences computed from `rows` (empty before they are measured). */
  get verdict() {
    return this._verdictOf(this.rows);
  }

  _verdictOf(rows) {
    if (!rows) return [];
    const chars = this._probes.reduce((a, t) => a + Array.from(t).length, 0);
    return gqaVerdict(this._verdictRowsOf(rows), this._probes.length, chars, this._probesFrom ? `in ${this._probesFrom}` : 'in the files');
  }

  /**
   * Every twin of the manifest as the verdict judges it: its whole-held-out-set loss as index.json
   * records it (`heldoutBpc`, every seed, whether loaded here or not), its loss on the page's
   * passages where scored here (`live`, else null) and its KV-cache bytes per token from the loaded
   * config of a model with as many K/V heads, and the held-out set's size from a loaded model's training
   * record (`heldoutChars`; empty before the models are scored).
   * @returns {Array<{file: string, kvHeads: number, numHeads: number, seed: number, heldoutBpc: number|null,
   *   live: number|null, perToken: number, heldoutChars: number|null}>}
   */
  get verdictRows() {
    return this._verdictRowsOf(this.rows);
  }

  _verdictRowsOf(rows) {
    if (!rows) return [];
    const scored = new Map(rows.map((r) => [r.file, r]));
    const shape = new Map(rows.map((r) => [r.kvHeads, r]));
    return (this._list ?? []).flatMap((m) => {
      const r = scored.get(m.file);
      const like = r ?? shape.get(m.kvHeads);
      if (!like) return [];
      return [{ file: m.file, kvHeads: like.kvHeads, numHeads: like.numHeads, seed: m.seed,
        heldoutBpc: typeof m.heldoutBpc === 'number' ? m.heldoutBpc : null, live: r ? r.live : null, perToken: like.perToken,
        heldoutChars: like.heldoutChars ?? null }];
    });
  }

  _prompt() {
    return this.prompt || DEFAULT_PROMPT;
  }

  connectedCallback() {
    super.connectedCallback();
    this._connection++;
    if (this.loading === 'eager' || typeof IntersectionObserver === 'undefined') {
      this.requestUpdate();
      return;
    }
    // fetched within one viewport of the visible page (trained-shared.js whenNear); the placeholder says how much
    this._io = { disconnect: whenNear(this, () => this.load()) };
    const base = this._indexHref;
    modelIndex(base).then((m) => {
      const seed = this._c.seed;
      const files = (m.gqa ?? []).filter((x) => x?.file && (this.bothSeeds || x.seed === seed)).map((x) => x.file);
      return downloadSizes(files, base);
    }).then((d) => { if (this._phase === 'idle') { this._downloads = d; this.requestUpdate(); } }, () => {});
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._io?.disconnect();
    this._io = null;
    this._twinsTask.abort(STALE);
    this._releaseAll();
    if (this._phase !== 'idle') this._phase = 'idle';
  }

  /** Loads the models now (the element does so by itself when it comes into view). */
  load() {
    this._io?.disconnect();
    this._io = null;
    if (this._phase === 'idle') {
      this._phase = 'loading';
      this.requestUpdate();
    }
  }

  /** Parse the attributes (attr-check.js): a bad value keeps the last valid one and is reported once. */
  _parseAttrs() {
    const g = this._attrs;
    g.begin();
    const L = this._twins?.[0]?.lm.config.numLayers ?? 64;
    this._c = {
      seed: g.take('seed', intAttr('seed', this.seed, { dflt: 0, min: 0, max: 1000000 })),
      temperature: g.take('temperature', numberAttr('temperature', this.temperature, { dflt: 0, min: 0, max: 10 })),
      steps: g.take('steps', intAttr('steps', this.steps, { dflt: 24, min: 0, max: 1000 })),
      shown: g.take('shown', intAttr('shown', this.shown, { dflt: null, min: 1, max: 1024 })),
      layer: g.take('layer', intAttr('layer', this.layer, { dflt: 2, min: 1, max: L })),
      scheme: g.take('scheme', schemeAttr(this.scheme)),
    };
    g.take('loading', enumAttr('loading', this.loading, { dflt: 'lazy', values: ['lazy', 'eager'] }));   // a bad value counts as "lazy"
    g.end();
  }

  willUpdate(changed) {
    this._parseAttrs();
    if (!this.isConnected) return;
    if (this._phase === 'idle' && this.loading === 'eager') this._phase = 'loading';
    if (this._phase === 'idle') return;
    if (this._phase === 'ready' && (changed.has('prompt') || changed.has('temperature') || changed.has('steps'))) this._restartAll();
  }

  _releaseAll() {
    this._run = null;
    for (const t of this._twins) t.gen?.dispose();
    this._twins = [];
    for (const { mha, href } of this._held) releaseModel(mha, href);
    this._held = [];
  }

  /**
   * The twins task's work (a run starts when the manifest, the seed, `both-seeds`, the engine or
   * the connection changes): gives back the models held, loads and scores the manifest's twins one
   * at a time (the other seed's too with `both-seeds`, given back once scored), keeps the shown
   * seed's; a run made stale meanwhile gives back what it holds and ends with STALE.
   */
  async _loadTwins(engine, signal) {
    this._releaseAll();
    this.error = null;
    this._phase = 'loading';
    const stale = () => { if (signal.aborted) throw STALE; };
    const mha = await taskEngine(engine, signal).catch((e) => { throw signal.aborted ? STALE : e; });
    const base = this._indexHref;
    const manifest = await modelIndex(base);
    stale();
    const { list, mine, others, seeds } = pickTwins(manifest, this._c.seed, this.bothSeeds, base);
    this._seeds = seeds;
    this._list = list;
    const rows = [];
    const twins = [];
    for (const m of [...mine, ...others]) {
      const href = modelFileURL(m.file, base);
      const lm = await acquireModel(mha, href);
      if (signal.aborted) { releaseModel(mha, href); throw STALE; }
      try {
        // every model is scored on the passages of the first; if a file stores others, the sentences say whose
        const probes = storedProbes(lm);
        if (m === mine[0]) {
          if (!probes?.length) throw new Error(`the model ${href} stores no held-out passages (__metadata__.probes)`);
          this._probes = probes;
          this._probesFrom = null;
        } else if (JSON.stringify(probes) !== JSON.stringify(this._probes)) {
          this._probesFrom = mine[0].file;
        }
        rows.push(twinRow(m, lm, this._probes, kvCacheBytes(lm.config)));
      } catch (e) {
        releaseModel(mha, href);
        throw e;
      }
      if (mine.includes(m)) {
        this._held.push({ mha, href });
        twins.push({ entry: m, href, lm, gen: null, steps: 0 });
      } else {
        releaseModel(mha, href);
      }
      // one model at a time, then the page gets a turn
      await new Promise((r) => setTimeout(r));
      stale();
    }
    twins.sort((a, b) => (b.lm.config.kvHeads ?? b.lm.config.numHeads) - (a.lm.config.kvHeads ?? a.lm.config.numHeads));
    rows.sort((a, b) => b.kvHeads - a.kvHeads || a.seed - b.seed);
    return { twins, rows };
  }

  _restartAll() {
    const n = this._c.steps;
    try {
      for (const t of this._twins) {
        t.gen?.dispose();
        t.gen = null;
        t.steps = 0;
        t.gen = t.lm.generator(this._prompt(), { temperature: this._c.temperature, seed: 7 });
      }
      this.error = null;
      this._advance(n, false);
    } catch (e) {
      this.error = e;
    }
    this._version++;
  }

  _advance(n, loud = true) {
    for (let i = 0; i < n; i++) {
      for (const t of this._twins) {
        if (!t.gen) continue;
        t.last = t.gen.step();
        t.steps++;
      }
      if (loud) this.dispatchEvent(new CustomEvent('mha-step', { detail: { twins: this.twins }, bubbles: true, composed: true }));
    }
    this._version++;
  }

  /**
   * Generates n more characters with every shown model, each through its own KV cache.
   * @param {number} n
   */
  step(n = 1) {
    if (this._phase !== 'ready' || !this._twins.length) return;
    try {
      this._advance(n);
      this._announcer.say(() => `Each model wrote ${n} more character${n > 1 ? 's' : ''}: ${this.twins.map((x) => `${x.kvBytes.kvHeads} K/V head${x.kvBytes.kvHeads > 1 ? 's' : ''}, ${x.cacheLength} tokens cached`).join('; ')}.`);
    } catch (e) {
      this.error = e;
    }
  }

  /** Back to the prompt alone. */
  restart() {
    if (this._phase === 'ready') this._restartAll();
  }

  _changed() {
    const detail = { seed: this._c.seed, bothSeeds: !!this.bothSeeds, shown: this._shownTwin()?.lm.config.kvHeads ?? null, layer: this._layer(), temperature: this._c.temperature };
    this._announcer.say(() => `Seed ${detail.seed}${detail.bothSeeds ? ' (both seeds scored)' : ''}; maps of the ${detail.shown} K/V head model, layer ${detail.layer}; temperature ${detail.temperature}.`);
    this.dispatchEvent(new CustomEvent('change', { detail, bubbles: true, composed: true }));
  }

  _shownTwin() {
    const t = this._twins;
    if (!t.length) return null;
    const want = this._c.shown;
    const g = (x) => x.lm.config.kvHeads ?? x.lm.config.numHeads;
    return t.find((x) => g(x) === want) ?? t.find((x) => g(x) > 1 && g(x) < x.lm.config.numHeads) ?? t[0];
  }

  _layer() {
    const L = this._shownTwin()?.lm.config.numLayers ?? 1;
    return Math.min(L, this._c.layer);
  }

  render() {
    if (this._phase === 'idle') {
      return lazyPlaceholder(this._downloads ?? null, () => this.load());
    }
    if (this.error && !this.rows) {
      return html`<p class="error" part="error" role="alert">The grouped-query twins could not be loaded. ${errorText(this.error)}</p>`;
    }
    // one template whether the twins are loading or scored: the seed buttons stay the same nodes (and keep focus)
    const edit = (f) => (v) => { f(v); this._changed(); };
    const loading = () => html`<p class="loading" role="status">Loading and scoring the twins…</p>`;
    return html`
      ${seedsView({
        seed: this._c.seed, seeds: this._seeds, bothSeeds: !!this.bothSeeds,
        onSeed: edit((s) => { this.seed = s; }), onBothSeeds: edit(() => { this.bothSeeds = !this.bothSeeds; }),
      })}
      ${this._announcer.view()}
      ${this._twinsTask.render({ initial: loading, pending: loading, error: loading, complete: ({ rows }) => html`
      ${scoreView({ rows, verdictRows: this._verdictRowsOf(rows), verdict: this._verdictOf(rows), lead: verdictLead(this._verdictRowsOf(rows)),
        seed: this._c.seed, bothSeeds: !!this.bothSeeds, open: this._fold.open })}
      ${this.error ? html`<p class="error" part="error" role="alert">${errorText(this.error)}</p>` : nothing}
      ${generateView({
        field: this.prompt ?? '', prompt: this._prompt(), temperature: this._c.temperature, twins: this.twins,
        config: this._twins[0]?.lm.config ?? null, onPrompt: edit((p) => { this.prompt = p; }),
        onTemperature: edit((t) => { this.temperature = t; }), onStep: (n) => this.step(n), onRestart: () => this.restart(),
      })}
      ${this._heads(edit)}` })}`;
  }

  /** The shown model's heads over the text it wrote (one full forward per model and text, kept while neither changes). */
  _heads(edit) {
    const tw = this._shownTwin();
    if (!tw) return nothing;
    const c = tw.lm.config;
    const text = Array.from(tw.gen?.text ?? this._prompt()).slice(-c.context).join('');
    try {
      if (this._run?.lm !== tw.lm || this._run.text !== text) this._run = { lm: tw.lm, text, r: tw.lm.run(text) };
    } catch (e) {
      return html`<p class="error" part="error" role="alert">${errorText(e)}</p>`;
    }
    const { r } = this._run;
    // each head's type, measured by the runner on the probes stored in the file (none without probes)
    let types = null;
    try { types = tw.lm.heads; } catch { types = null; }
    const kv = (x) => x.lm.config.kvHeads ?? x.lm.config.numHeads;
    return headsView({
      models: this._twins.map(kv), shown: kv(tw), config: c, layer: this._layer(), tokens: r.tokens,
      attention: r.attention[this._layer() - 1], types, scheme: this._c.scheme,
      onModel: edit((g) => { this.shown = g; }), onLayer: edit((n) => { this.layer = n; }),
    });
  }

}

customElements.get('mha-gqa-twins') || customElements.define('mha-gqa-twins', MhaGqaTwins);

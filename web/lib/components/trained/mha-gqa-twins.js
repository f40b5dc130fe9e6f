import { LitElement, html, svg, css, nothing } from 'lit';
import {
  trainedStyles, kvGroupStyles, kvGroups, kvCacheBytes, bytesFormula, showChar, headView, f3, heldoutLoss,
  whenNear, downloadSizes, lazyPlaceholder,
} from './trained-shared.js';
import { acquireModel, releaseModel, modelIndex, modelFileURL, MODEL_INDEX_URL } from '../models.js';
import { getEngine, errorText, int } from '../base/shared.js';
import { gqaVerdict, gqaFigures } from '../logic/gqa-verdict.js';
import { scrollCueStyles, watchOverflow, unwatchOverflow } from '../base/scroll-cue.js';
import { AttrGuard, numberAttr, intAttr, enumAttr, rawAttr } from '../base/attr-check.js';
import '../views/mha-heatmap.js';

const DEFAULT_PROMPT = 'The cat sat on the mat. ';
const TEMPERATURES = [0, 0.7, 1];

/** What a number of K/V heads is called, for h query heads. */
export function kvName(g, h) {
  return g === h ? 'multi-head' : g === 1 ? 'multi-query' : 'grouped-query';
}

export { gqaVerdict, gqaFigures };

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
 * @csspart chart - The chart of loss against bytes per token (the whole held-out set's, when index.json lists it).
 * @csspart verdict - The computed sentences.
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
 * @cssprop --mha-accent, --mha-fg, --mha-bg, --mha-surface, --mha-border, --mha-muted, --mha-mono - Theme.
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
    rows: { state: true },
    error: { state: true },
    _phase: { state: true },
    _version: { state: true },
  };

  static styles = [trainedStyles, kvGroupStyles, scrollCueStyles, css`
    :host { container-type: inline-size; }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.4rem 0; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { border-bottom: 1px solid var(--_border); padding: 0.3em 0.8em 0.3em 0; text-align: left; }
    td.num { text-align: right; }
    .top { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: flex-start; }
    .top > * { min-width: 0; max-width: 100%; }
    .chart { margin: 0; flex: 1 1 18rem; max-width: 28rem; }
    .chart svg { width: 100%; height: auto; display: block; overflow: visible; }
    .chart .axis { stroke: var(--_muted); stroke-width: 1; }
    .chart .grid { stroke: var(--_border); stroke-width: 1; }
    .chart text { fill: var(--_fg); font-size: 12px; font-family: inherit; }
    .chart .muted { fill: var(--_muted); }
    .chart .pt { fill: var(--_accent); stroke: var(--_bg); stroke-width: 1.5; }
    .chart .pt.other { fill: var(--_bg); stroke: var(--_accent); stroke-width: 2; }
    .row-controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: center; margin: 0.6rem 0; }
    .verdict p { margin: 0.35em 0; }
    .controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: end; margin: 0.8rem 0 0.4rem; }
    .controls .prompt { flex: 1 1 14rem; display: flex; flex-direction: column; gap: 0.2em; }
    .texts { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 0.6rem; }
    .twin { border: 1px solid var(--_border); border-radius: calc(var(--_radius) * 1.4); padding: 0.4em 0.7em; min-width: 0; }
    .twin h4 { margin: 0.1em 0 0.3em; font-size: 0.95rem; }
    .text { font-family: var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; background: var(--_surface);
      padding: 0.4em 0.6em; border-radius: var(--_radius); margin: 0.3rem 0; font-size: 0.9rem; }
    mark { background: var(--_accent); color: var(--_accent-fg); border-radius: 3px; }
    .cache { margin: 0.3em 0; font-size: 0.9rem; font-variant-numeric: tabular-nums; }
    .bar { height: 0.55rem; background: var(--_surface); border: 1px solid var(--_border); border-radius: 999px; overflow: hidden; }
    .bar span { display: block; height: 100%; background: var(--_accent); }
    .formula { overflow-x: auto; overflow-y: hidden; font-size: 0.9rem; }
    .picker { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; margin: 0.9rem 0 0.4rem; }
    .head .name { font-size: 0.8rem; font-weight: 600; display: block; margin-bottom: 0.2rem; }
    .badge { font-weight: 400; padding: 0 0.4em; border-radius: 999px; border: 1px solid var(--_border); white-space: nowrap; }
    .badge.t-induction, .badge.t-previous-token { border-color: var(--_accent); }
    mha-heatmap::part(label) { font-size: 7px; line-height: 1; }
    @container (max-width: 520px) {
      .groups { --mha-cell-size: var(--_narrow); gap: 0.4rem; }
      .groups mha-heatmap::part(label) { display: none; }
      .group { padding: 0.2rem 0.25rem 0.3rem; }
      .groups.shared .group { flex: 1 1 100%; }
      .groups.shared .pair { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0.3rem; }
      .head { padding: 0.15rem; }
      .head mha-heatmap::part(legend) { font-size: 0.65rem; }
    }
  `];

  constructor() {
    super();
    this.index = null;
    this.seed = 0;
    this.bothSeeds = false;
    this.prompt = DEFAULT_PROMPT;
    this.temperature = 0;
    this.steps = 24;
    this.shown = null;
    this.layer = 2;
    this.loading = 'lazy';
    this.scheme = 'viridis';
    this._attrs = new AttrGuard(this);
    this._c = { seed: 0, temperature: 0, steps: 24, shown: null, layer: 2, scheme: 'viridis' };
    const view = this.render;
    this.render = () => html`${this._attrs.view()}${view.call(this)}`;
    this.engine = undefined;
    this.rows = null;
    this.error = null;
    this._phase = 'idle';    // idle (waiting to be seen) → loading → ready
    this._version = 0;
    this._twins = [];        // the shown seed's models: {entry, href, lm, gen, steps}
    this._held = [];         // [{mha, href}] given back on disconnect or reload
    this._gen = 0;
    this._io = null;
    this._key = '';
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

  /** The sentences computed from `rows` (empty before they are measured). */
  get verdict() {
    if (!this.rows) return [];
    const chars = this._probes.reduce((a, t) => a + Array.from(t).length, 0);
    return gqaVerdict(this.verdictRows, this._probes.length, chars, this._probesFrom ? `in ${this._probesFrom}` : 'in the files');
  }

  /**
   * Every twin of the manifest as the verdict judges it: its whole-held-out-set loss as index.json
   * records it (`heldoutBpc`, every seed, whether loaded here or not), its loss on the page's
   * passages where scored here (`live`, else null) and its KV-cache bytes per token from the loaded
   * config of a model with as many K/V heads (empty before the models are scored).
   * @returns {Array<{file: string, kvHeads: number, numHeads: number, seed: number, heldoutBpc: number|null,
   *   live: number|null, perToken: number}>}
   */
  get verdictRows() {
    if (!this.rows) return [];
    const scored = new Map(this.rows.map((r) => [r.file, r]));
    const shape = new Map(this.rows.map((r) => [r.kvHeads, r]));
    return (this._list ?? []).flatMap((m) => {
      const r = scored.get(m.file);
      const like = r ?? shape.get(m.kvHeads);
      if (!like) return [];
      return [{ file: m.file, kvHeads: like.kvHeads, numHeads: like.numHeads, seed: m.seed,
        heldoutBpc: typeof m.heldoutBpc === 'number' ? m.heldoutBpc : null, live: r ? r.live : null, perToken: like.perToken }];
    });
  }

  _prompt() {
    return this.prompt || DEFAULT_PROMPT;
  }

  connectedCallback() {
    super.connectedCallback();
    this._key = '';
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

  updated(changed) {
    super.updated?.(changed);
    watchOverflow(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    unwatchOverflow(this);
    this._io?.disconnect();
    this._io = null;
    this._gen++;
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
      scheme: g.take('scheme', enumAttr('scheme', this.scheme, { dflt: 'viridis', values: ['viridis', 'cividis'] })),
    };
    g.take('loading', enumAttr('loading', this.loading, { dflt: 'lazy', values: ['lazy', 'eager'] }));   // a bad value counts as "lazy"
    g.end();
  }

  willUpdate(changed) {
    this._parseAttrs();
    if (!this.isConnected) return;
    if (this._phase === 'idle' && this.loading === 'eager') this._phase = 'loading';
    if (this._phase === 'idle') return;
    const key = JSON.stringify([this._indexHref, this._c.seed, !!this.bothSeeds]);
    if (key !== this._key || (changed.has('engine') && this._twins.length)) {
      this._key = key;
      this._loadAll();
      return;
    }
    if (this._phase === 'ready' && (changed.has('prompt') || changed.has('temperature') || changed.has('steps'))) this._restartAll();
  }

  _releaseAll() {
    this._run = null;
    for (const t of this._twins) t.gen?.dispose();
    this._twins = [];
    for (const { mha, href } of this._held) releaseModel(mha, href);
    this._held = [];
  }

  async _loadAll() {
    const gen = ++this._gen;
    this._releaseAll();
    this.rows = null;
    this.error = null;
    this._phase = 'loading';
    try {
      const mha = await (this.engine ? Promise.resolve(this.engine) : getEngine());
      const base = this._indexHref;
      const manifest = await modelIndex(base);
      if (gen !== this._gen) return;
      const list = (manifest.gqa ?? []).filter((m) => m && m.file);
      const seed = this._c.seed;
      const mine = list.filter((m) => m.seed === seed);
      if (!mine.length) {
        throw new Error(`${base} lists no grouped-query twins with seed ${seed} (its "gqa" list has ${list.length ? `seeds ${[...new Set(list.map((m) => m.seed))].join(', ')}` : 'no model'})`);
      }
      this._seeds = [...new Set(list.map((m) => m.seed))].sort((a, b) => a - b);
      this._list = list;
      const others = this.bothSeeds ? list.filter((m) => m.seed !== seed) : [];
      const rows = [];
      const twins = [];
      for (const m of [...mine, ...others]) {
        const href = modelFileURL(m.file, base);
        const lm = await acquireModel(mha, href);
        if (gen !== this._gen) { releaseModel(mha, href); return; }
        const keep = mine.includes(m);
        try {
          // every model is scored on the passages of the first; if a file stores others, the sentences say whose
          const probes = lm.metadata.probes ? JSON.parse(lm.metadata.probes).text : null;
          if (m === mine[0]) {
            if (!probes?.length) throw new Error(`the model ${href} stores no held-out passages (__metadata__.probes)`);
            this._probes = probes;
            this._probesFrom = null;
          } else if (JSON.stringify(probes) !== JSON.stringify(this._probes)) {
            this._probesFrom = mine[0].file;
          }
          const c = lm.config;
          const b = kvCacheBytes(c);
          rows.push({ ...m, kvHeads: c.kvHeads ?? c.numHeads, numHeads: c.numHeads, live: heldoutLoss(lm, this._probes), perToken: b.perToken, fullPerToken: b.fullPerToken });
        } catch (e) {
          releaseModel(mha, href);
          throw e;
        }
        if (keep) {
          this._held.push({ mha, href });
          twins.push({ entry: m, href, lm, gen: null, steps: 0 });
        } else {
          releaseModel(mha, href);
        }
        // one model at a time, then the page gets a turn
        await new Promise((r) => setTimeout(r));
        if (gen !== this._gen) return;
      }
      twins.sort((a, b) => (b.lm.config.kvHeads ?? b.lm.config.numHeads) - (a.lm.config.kvHeads ?? a.lm.config.numHeads));
      rows.sort((a, b) => b.kvHeads - a.kvHeads || a.seed - b.seed);
      this._twins = twins;
      this.rows = rows;
      this._phase = 'ready';
      this._restartAll();
      this.dispatchEvent(new CustomEvent('mha-computed', { detail: { rows, verdict: this.verdict }, bubbles: true, composed: true }));
    } catch (e) {
      if (gen !== this._gen) return;
      this._releaseAll();
      this.error = e;
      this._phase = 'ready';
      this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
    }
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
    } catch (e) {
      this.error = e;
    }
  }

  /** Back to the prompt alone. */
  restart() {
    if (this._phase === 'ready') this._restartAll();
  }

  _changed() {
    this.dispatchEvent(new CustomEvent('change', {
      detail: { seed: this._c.seed, bothSeeds: !!this.bothSeeds, shown: this._shownTwin()?.lm.config.kvHeads ?? null, layer: this._layer(), temperature: this._c.temperature },
      bubbles: true, composed: true,
    }));
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
    if (!this.rows) return html`<p class="loading" role="status">Loading and scoring the twins…</p>`;
    return html`
      ${this._scoreView()}
      ${this.error ? html`<p class="error" part="error" role="alert">${errorText(this.error)}</p>` : nothing}
      ${this._generateView()}
      ${this._headsView()}`;
  }

  _scoreView() {
    const rows = this.rows;
    const seed = this._c.seed;
    const seeds = [...new Set(rows.map((r) => r.seed))];
    const lines = this.verdict;
    const whole = rows.every((r) => typeof r.heldoutBpc === 'number');
    const allSeeds = [...new Set([seed, ...(this._seeds ?? [])])].sort((a, b) => a - b);
    return html`
      <div class="row-controls" part="seeds">
        <span id="seed-label">Seed shown</span>
        <span role="group" aria-labelledby="seed-label">
          ${allSeeds.map((s) => html`<button type="button" class="seed" data-seed=${s}
            aria-pressed=${String(s === seed)} @click=${() => { this.seed = s; this._changed(); }}>seed ${s}</button> `)}
        </span>
        <button type="button" class="both" aria-pressed=${String(!!this.bothSeeds)}
          @click=${() => { this.bothSeeds = !this.bothSeeds; this._changed(); }}>Score both seeds</button>
      </div>
      <div class="top">
        <div class="table-box">
        <div class="scroll" tabindex="0" role="region" aria-label="KV-cache bytes per token and held-out loss of the twins">
          <table part="table">
            <caption>KV cache and held-out loss in bits per character (lower is better): on the whole held-out set, as
              measured at training, and on this page’s text, measured here</caption>
            <thead><tr><th scope="col">K/V heads</th>${seeds.length > 1 ? html`<th scope="col">seed</th>` : nothing}
              <th scope="col">bytes per token</th>${whole ? html`<th scope="col">whole set</th>` : nothing}
              <th scope="col">this page</th></tr></thead>
            <tbody>${rows.map((r) => html`<tr data-file=${r.file} data-kv-heads=${r.kvHeads} data-seed=${r.seed}
              data-per-token=${r.perToken} data-live=${r.live}>
              <td>${r.kvHeads} <span class="hint">(${kvName(r.kvHeads, r.numHeads)})</span></td>
              ${seeds.length > 1 ? html`<td>${r.seed}</td>` : nothing}
              <td class="num">${int(r.perToken)}</td>${whole ? html`<td class="num whole">${f3(r.heldoutBpc)}</td>` : nothing}
              <td class="num">${f3(r.live)}</td></tr>`)}</tbody>
          </table>
        </div>
        <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
        </div>
        ${this._chart(rows, seed)}
      </div>
      <div class="verdict" part="verdict" aria-live="polite">
        ${lines.map((s) => html`<p>${s}</p>`)}
        ${this.bothSeeds ? nothing : html`<p class="hint">Press “Score both seeds” to score the other seed’s twins on this
          page’s text too, and see how much two training runs of the same model differ there.</p>`}
      </div>`;
  }

  /** Loss against bytes per token (a log scale: each halving of the cache one step): one dot per model scored (hollow: the other seed). */
  _chart(scored, seed) {
    // the figure the verdict judges: the whole held-out set (every seed of index.json) when listed, else the page's passages
    const all = this.verdictRows;
    const onWhole = all.length > 0 && all.every((r) => typeof r.heldoutBpc === 'number');
    const rows = onWhole ? all.map((r) => ({ ...r, v: r.heldoutBpc })) : scored.map((r) => ({ ...r, v: r.v }));
    const W = 400, H = 220, left = 50, right = 18, top = 14, bottom = 42;
    const xs = rows.map((r) => Math.log2(r.perToken));
    const ys = rows.map((r) => r.v);
    const x0 = Math.min(...xs) - 0.6, x1 = Math.max(...xs) + 0.6;
    let y0 = Math.min(...ys), y1 = Math.max(...ys);
    const pad = Math.max(0.01, (y1 - y0) * 0.25);
    y0 -= pad; y1 += pad;
    const x = (v) => left + ((Math.log2(v) - x0) / (x1 - x0)) * (W - left - right);
    const y = (v) => top + (1 - (v - y0) / (y1 - y0)) * (H - top - bottom);
    const yTicks = [y0 + pad, (y0 + y1) / 2, y1 - pad];
    const xTicks = [...new Set(rows.map((r) => r.perToken))].sort((a, b) => a - b);
    const label = `Chart: bits per character ${onWhole ? 'on the whole held-out set, at training,' : 'on this page’s text'} against KV-cache bytes per token. ${rows.map((r) =>
      `${r.kvHeads} K/V heads, seed ${r.seed}: ${int(r.perToken)} bytes, ${f3(r.v)} bits`).join('; ')}.`;
    return html`<figure class="chart" part="chart">
      <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label}>
        ${yTicks.map((t) => svg`<line class="grid" x1=${left} x2=${W - right} y1=${y(t)} y2=${y(t)}></line>
          <text x=${left - 6} y=${y(t) + 4} text-anchor="end" class="muted">${t.toFixed(2)}</text>`)}
        <line class="axis" x1=${left} x2=${W - right} y1=${H - bottom} y2=${H - bottom}></line>
        <line class="axis" x1=${left} x2=${left} y1=${top} y2=${H - bottom}></line>
        ${xTicks.map((t) => svg`<text x=${x(t)} y=${H - bottom + 15} text-anchor="middle" class="muted">${int(t)}</text>`)}
        <text x=${(left + W - right) / 2} y=${H - 6} text-anchor="middle">KV-cache bytes per token (log scale)</text>
        <text x=${13} y=${(top + H - bottom) / 2} text-anchor="middle" transform=${`rotate(-90 13 ${(top + H - bottom) / 2})`}>bits per character</text>
        ${rows.map((r) => svg`<circle class=${r.seed === seed ? 'pt' : 'pt other'} cx=${x(r.perToken)} cy=${y(r.v)} r="5.5"></circle>`)}
        ${[...new Set(rows.map((r) => r.kvHeads))].map((g) => {
          const pts = rows.filter((r) => r.kvHeads === g);
          const yy = Math.min(...pts.map((r) => y(r.v)));
          return svg`<text x=${x(pts[0].perToken)} y=${Math.max(top + 10, yy - 10)} text-anchor="middle">${g} K/V</text>`;
        })}
      </svg>
      <figcaption class="hint">${onWhole ? 'Whole held-out set, at training' : 'This page’s text'}${rows.some((r) => r.seed !== seed)
        ? `. Filled: seed ${seed}; hollow: the other seed.` : '.'}</figcaption>
    </figure>`;
  }

  _generateView() {
    const t = this._c.temperature;
    const temps = TEMPERATURES.includes(t) ? TEMPERATURES : [...TEMPERATURES, t].sort((a, b) => a - b);
    const prompt = this._prompt();
    const twins = this.twins;
    const maxTotal = Math.max(1, ...twins.map((x) => x.kvBytes.total));
    const c = this._twins[0]?.lm.config;
    return html`
      <div class="controls" part="controls">
        <label class="prompt">Prompt of all three <input type="text" part="prompt" maxlength="60" spellcheck="false"
          .value=${this.prompt ?? ''} @change=${(e) => { this.prompt = e.target.value; this._changed(); }}></label>
        <button type="button" class="step1" @click=${() => this.step(1)}>Generate 1 character</button>
        <button type="button" class="step16" @click=${() => this.step(16)}>Generate 16</button>
        <button type="button" class="reset" @click=${() => this.restart()}>Start again</button>
        <label>temperature <select @change=${(e) => { this.temperature = Number(e.target.value); this._changed(); }}>
          ${temps.map((v) => html`<option value=${v} ?selected=${v === t}>${v === 0 ? '0 (most likely)' : v}</option>`)}
        </select></label>
      </div>
      <p class="hint">Each model writes its own text, one character per step: the step feeds the newest character
        through the model, its keys and values are appended to every layer's cache${c ? `, and after ${c.context} characters the cache
        is refilled with the last ${Math.floor(c.context / 2)}` : ''}.</p>
      <div class="texts" part="texts" aria-live="polite">
        ${twins.map((x) => {
          const b = x.kvBytes;
          return html`<div class="twin" data-kv-heads=${b.kvHeads}>
            <h4>${b.kvHeads} K/V head${b.kvHeads > 1 ? 's' : ''} (${kvName(b.kvHeads, b.heads)})</h4>
            <p class="text"><span class="prompt-text">${prompt}</span>${x.text.length > prompt.length ? html`<mark>${x.text.slice(prompt.length)}</mark>` : nothing}</p>
            <p class="cache" part="cache" data-tokens=${b.tokens} data-per-token=${b.perToken} data-total=${b.total} data-steps=${x.steps}>
              Step ${x.steps}: ${int(b.tokens)} characters cached × ${int(b.perToken)} bytes = <strong>${int(b.total)} bytes</strong></p>
            <div class="bar" aria-hidden="true"><span style=${`width: ${(100 * b.total) / maxTotal}%`}></span></div>
            <div class="formula" tabindex="0" role="region" aria-label=${`Bytes per token, ${b.kvHeads} K/V heads`}>
              ${bytesFormula([2, b.layers, b.kvHeads, b.dK, b.bytesPerValue], b.perToken)} per token</div>
          </div>`;
        })}
      </div>`;
  }

  _headsView() {
    const tw = this._shownTwin();
    if (!tw) return nothing;
    const c = tw.lm.config;
    const g = c.kvHeads ?? c.numHeads;
    const L = this._layer();
    const l = L - 1;
    const text = Array.from(tw.gen?.text ?? this._prompt()).slice(-c.context).join('');
    let r;
    try {
      // one full forward per model and text, kept while neither changes
      if (this._run?.lm !== tw.lm || this._run.text !== text) this._run = { lm: tw.lm, text, r: tw.lm.run(text), views: new Map() };
      r = this._run.r;
    } catch (e) {
      return html`<p class="error" part="error" role="alert">${errorText(e)}</p>`;
    }
    const views = this._run.views;
    const view = (j) => {
      const k = `${l}:${j}`;
      if (!views.has(k)) views.set(k, headView(r.attention[l], j));
      return views.get(k);
    };
    const T = r.tokens.length;
    const labels = r.tokens.map(showChar);
    // each head's type, measured by the runner on the probes stored in the file (none without probes)
    let types = null;
    try { types = tw.lm.heads; } catch { types = null; }
    const side = (px) => Math.max(1, Math.min(8, Math.floor(px / Math.max(T, 1))));
    const cell = side(120);
    return html`
      <div class="picker" part="models" role="group" aria-label="Model whose heads are drawn">
        <span>Heads of</span>
        ${this._twins.map((x) => {
          const gx = x.lm.config.kvHeads ?? x.lm.config.numHeads;
          return html`<button type="button" class="model" data-kv-heads=${gx} aria-pressed=${String(x === tw)}
            @click=${() => { this.shown = gx; this._changed(); }}>${gx} K/V head${gx > 1 ? 's' : ''}</button>`;
        })}
      </div>
      <div class="picker" part="layers" role="group" aria-label="Layer shown">
        <span>Layer</span>
        ${Array.from({ length: c.numLayers }, (_, i) => html`<button type="button" class="layer" data-layer=${i + 1}
          aria-pressed=${String(i === l)} @click=${() => { this.layer = i + 1; this._changed(); }}>${i + 1}</button>`)}
      </div>
      <p class="hint">Layer ${L} of the model with ${g} K/V head${g > 1 ? 's' : ''}, reading its text (the prompt and what it
        wrote, ${T} characters): one map per query head (queries down, keys across), labelled with the type the engine
        measures on the held-out probes stored in the file. ${g === c.numHeads
          ? 'Every query head has its own keys and values: each frame holds one.'
          : `The frames are the ${g} K/V head${g > 1 ? 's' : ''}: the ${c.numHeads / g} query heads in a frame score their own queries against the same keys and mix the same values.`}</p>
      <div class=${`groups ${g === c.numHeads ? 'single' : 'shared'}${cell >= 6 ? ' labels' : ''}`} part="groups" style=${`--_wide: ${cell}px; --_narrow: ${side(100)}px`}>
        ${kvGroups(c.numHeads, g, (j, k) => {
          const type = types?.find((x) => x.layer === l && x.head === j)?.type;
          return html`
          <div class="head" part="head" data-layer=${l} data-head=${j} data-type=${type ?? ''}>
            <span class="name">head ${j + 1}${type ? html` <span class=${`badge t-${type}`}>${type}</span>` : nothing}</span>
            <mha-heatmap part="heatmap" compact no-save scheme=${this._c.scheme} data-layer=${l} data-head=${j}
              label=${`Layer ${L}, query head ${j + 1} (K/V head ${k + 1})${type ? `: ${type}` : ''}`}
              .tokens=${labels} .weights=${view(j)}></mha-heatmap>
          </div>`;
        })}
      </div>`;
  }
}

customElements.get('mha-gqa-twins') || customElements.define('mha-gqa-twins', MhaGqaTwins);

import { html, css, nothing } from 'lit';
import { TrainedModelElement, trainedStyles, showChar, showToken, unitOf, f2 } from './trained-shared.js';
import { numberAttr, intAttr, headListAttr, rawAttr, attrError } from '../base/attr-check.js';
import '../views/mha-heatmap.js';

const TEMPERATURES = [0, 0.7, 1];

/** Models with at most this many heads in all draw every head's row; bigger ones one layer's (GPT-2: 12 of 144). */
export const ROWS_ALL_MAX = 16;

/** The `layer` attribute: "all" or a 1-based layer number → 'all' or 0-based; else the error and the default. */
function layerAttr(raw, n, dflt) {
  if (raw === null || raw === undefined) return { value: dflt };
  const t = String(raw).trim().toLowerCase();
  if (t === 'all') return { value: 'all' };
  if (/^\d+$/.test(t) && Number(t) >= 1 && Number(t) <= n) return { value: Number(t) - 1 };
  return { error: attrError('layer', `"all" or a layer number from 1 to ${n}`, raw), dflt };
}

/**
 * `<mha-generate>` — generation with the KV cache: the trained model continues a prompt one
 * character at a time. Each step feeds only the newest character; the keys and values of the
 * earlier ones are read from each layer's KV cache (CharModel.generator over KVCache.step), and
 * the element draws the newest query's attention over the cache, one row per head (before the
 * first step, a one-line prompt to generate instead of empty rows).
 *
 * @element mha-generate
 *
 * @attr {string} model - URL of a model file; default: the shipped h = 4 model.
 * @attr {string} prompt - The prompt (default "The "); setting it starts again.
 * @attr {number} temperature - Sampling temperature, 0–10: 0 takes the most likely character (default 0.7).
 * @attr {number} seed - Seed of the sampler, 0–2147483647 (default 7).
 * @attr {string} ablate - Heads switched off, 1-based `layer:head` pairs ("2:1 2:3") within the model.
 *
 * A bad attribute value keeps the last valid value (or the default), shows one message naming the
 * attribute, the value and what is allowed, and fires `mha-error`; the attribute stays as written.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the rows.
 * @attr {string} layer - Whose rows are drawn: "all" or a 1-based layer number. Default: "all" for a model of at
 *   most ROWS_ALL_MAX (16) heads in all, else 1 (GPT-2 small: 12 rows, not 144); a select (part `layer`) picks it.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {string} text - Read-only: the prompt and everything generated so far.
 * @prop {number} cacheLength - Read-only: positions in each layer's KV cache.
 *
 * @fires mha-step - `{detail: {text, token, id, p, cacheLength, char}}` after every generated character
 *   (token: its text, id: its vocabulary index; char: the same string as token, its former name).
 * @fires change - `{detail: {temperature}}` when the reader picks another temperature, `{detail: {layer}}` another
 *   layer (0-based, or 'all').
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute) or a model that cannot be loaded (shown in place).
 *
 * @csspart controls - The button row.
 * @csspart step - The "Generate 1 character" and "Generate 10" buttons.
 * @csspart reset - The "Start again" button.
 * @csspart temperature - The temperature select.
 * @csspart layer - The select of the layer whose rows are drawn (a model of more than 16 heads, or `layer` set).
 * @csspart text - The prompt and the generated text (generated part in a `<mark>`).
 * @csspart cache - The KV-cache line.
 * @csspart heatmap - Each head's row of attention weights (none before the first step), all on one colour scale
 *   from 0 to 1 (`scale="shared"`), so rows compare by colour.
 * @csspart hint - The line shown before the first step, in place of the rows.
 * @csspart error - The error message.
 */
export class MhaGenerate extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    prompt: { type: String },
    temperature: { converter: rawAttr },
    seed: { converter: rawAttr },
    ablate: { type: String },
    layer: { converter: { fromAttribute: (v) => v, toAttribute: (v) => (v === null || v === undefined ? null : String(v)) }, reflect: true },
    _last: { state: true },
  };

  static styles = [trainedStyles, css`
    .controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: center; }
    .text { font-family: var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; background: var(--_surface);
      padding: 0.5em 0.8em; border-radius: var(--_radius); }
    mark { background: var(--_accent); color: var(--_accent-fg); border-radius: 3px; }
    .rows { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.2rem 0.8rem; align-items: center;
      --mha-cell-size: 8px; }
    .rows .lbl { font-size: 0.85rem; color: var(--_muted); white-space: nowrap; }
    .rows mha-heatmap { position: relative; overflow-x: auto; max-width: 100%; }
    @container (max-width: 480px) { .rows { grid-template-columns: minmax(0, 1fr); } }
    :host { container-type: inline-size; }
  `];

  constructor() {
    super();
    this.prompt = 'The ';
    /** @type {number|string} */ this.temperature = 0.7;
    /** @type {number|string} */ this.seed = 7;
    this.ablate = '';
    this.layer = null;
    this._layer = 'all';
    this._generator = null;
    this._genKey = '';
    this._last = null;
    this._c = { temperature: 0.7, seed: 7, ablate: [] };
    this._busy = null;       // the work under way in the engine worker (a generator starting, steps)
    this._waiting = 0;       // steps asked for while it ran (at most one request waits)
  }

  /** Resolves once the generator has started and every step asked for is done. */
  get computeComplete() {
    return this.updateComplete.then(async () => { while (this._busy) await this._busy; }).then(() => this.updateComplete);
  }

  /** Runs `f` after the work under way (one chain per element, so steps apply in order). */
  _queue(f) {
    const run = (this._busy ?? Promise.resolve()).then(f).catch((e) => { this.error = e; });
    const mine = (this._busy = run.finally(() => { if (this._busy === mine) this._busy = null; }));
    return mine;
  }

  /** The prompt and everything generated so far. */
  get text() {
    return this._generator?.text ?? this.prompt ?? '';
  }

  /** Positions in each layer's KV cache. */
  get cacheLength() {
    return this._generator?.cacheLength ?? 0;
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    const g = this._attrs;
    g.begin();
    const c = {
      temperature: g.take('temperature', numberAttr('temperature', this.temperature, { dflt: 0.7, min: 0, max: 10 })),
      seed: g.take('seed', intAttr('seed', this.seed, { dflt: 7, min: 0, max: 2147483647 })),
      ablate: this._c.ablate,
    };
    const cfg = this.lm?.config;
    if (cfg) c.ablate = g.take('ablate', headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }));
    // a model of more than ROWS_ALL_MAX heads in all draws one layer's rows at a time (a select picks it)
    if (cfg) this._layer = g.take('layer', layerAttr(this.layer, cfg.numLayers, cfg.numLayers * cfg.numHeads <= ROWS_ALL_MAX ? 'all' : 0));
    g.end();
    this._c = c;
    if (!this.lm) return;
    const key = JSON.stringify([this.prompt, c.temperature, c.seed, c.ablate]);
    if (changed.has('lm') || key !== this._genKey) this._start(key);
  }

  modelReleasing() {
    this._generator?.dispose();
    this._generator = null;
    this._genKey = '';
    this._waiting = 0;
  }

  _start(key = this._genKey) {
    this._generator?.dispose();
    this._generator = null;
    this._last = null;
    this._genKey = key;
    this._waiting = 0;
    const { temperature, seed, ablate } = this._c;
    const lm = this.lm;
    this._queue(async () => {
      if (key !== this._genKey || lm !== this.lm) return;
      let g;
      try {
        g = await lm.generator(this.prompt || 'The ', { temperature, seed, ablate });
      } catch (e) {
        if (key === this._genKey) this.error = e;
        return;
      }
      // a newer prompt, temperature, seed or model made this one stale while it started
      if (key !== this._genKey || lm !== this.lm) { g.dispose(); return; }
      this._generator = g;
      this.error = null;
      this.requestUpdate();
    });
  }

  /**
   * Generates n characters (tokens) in the engine worker; the view follows when they arrive. Asked
   * while steps run, it waits for them (a later request replaces a waiting one).
   * @param {number} n
   * @returns {Promise<void>} resolves once they are shown
   */
  step(n = 1) {
    if (!this._generator && !this._busy) return Promise.resolve();
    if (this._busy) {
      const first = !this._waiting;
      this._waiting = n;
      if (!first) return this._busy;
    } else this._waiting = n;
    return this._queue(async () => {
      const g = this._generator, k = this._waiting;
      this._waiting = 0;
      if (!g || !k) return;
      const r = await g.step(k);
      if (g !== this._generator) return;
      for (const s of r.steps) {
        this.dispatchEvent(new CustomEvent('mha-step', {
          detail: { text: s.text, token: s.token, id: s.id, char: s.token, p: s.p, cacheLength: s.cacheLength }, bubbles: true, composed: true,
        }));
      }
      this._last = r.steps.at(-1) ?? this._last;
    });
  }

  _restart() {
    this._start();
    this.requestUpdate();
  }

  _onLayer(e) {
    this.layer = e.target.value;
    this.dispatchEvent(new CustomEvent('change', { detail: { layer: this.layer === 'all' ? 'all' : Number(this.layer) - 1 }, bubbles: true, composed: true }));
  }

  _onTemperature(e) {
    this.temperature = Number(e.target.value);
    this.dispatchEvent(new CustomEvent('change', { detail: { temperature: this.temperature }, bubbles: true, composed: true }));
  }

  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.lm) return this.loadingView();
    const c = this.lm.config;
    const g = this._generator;
    const prompt = this.prompt || 'The ';
    const text = g?.text ?? prompt;
    const s = this._last;
    const t = this._c.temperature;
    const temps = TEMPERATURES.includes(t) ? TEMPERATURES : [...TEMPERATURES, t].sort((a, b) => a - b);
    const len = s ? s.cacheLength : 0;
    const unit = unitOf(c);
    // a byte-pair model's cache holds tokens: the generator's ids, shown as their pieces
    const ids = unit === 'token' ? (g?._ids ?? []) : null;
    const keys = !s ? [] : ids ? ids.slice(0, -1).slice(-len).map((id) => showToken(this.lm.vocab[id] ?? `<${id}>`))
      : Array.from(text.slice(0, -1)).slice(-len).map(showChar);
    const query = ids ? showToken(this.lm.vocab[ids.at(-2)] ?? '') : showChar(text.at(-2) ?? '');
    // the heads with the labels of the file's probes, or (a model without them, a Hugging Face folder) by number
    let heads = null;
    if (this.lm.headsProbes === 'file') try { heads = this.lm.heads; } catch { heads = null; }
    heads ??= Array.from({ length: c.numLayers * c.numHeads }, (_, i) => ({ layer: Math.floor(i / c.numHeads), head: i % c.numHeads, type: null }));
    const L = this._layer;
    const shown = L === 'all' ? heads : heads.filter((x) => x.layer === L);
    const pick = c.numLayers * c.numHeads > ROWS_ALL_MAX || this.layer != null;
    return html`
      <div class="controls" part="controls">
        <button type="button" part="step" class="step1" @click=${() => this.step(1)} ?disabled=${!g}>Generate 1 ${unit}</button>
        <button type="button" part="step" class="step10" @click=${() => this.step(10)} ?disabled=${!g}>Generate 10</button>
        <button type="button" part="reset" class="reset" @click=${this._restart}>Start again</button>
        <label>temperature <select part="temperature" @change=${this._onTemperature}>
          ${temps.map((v) => html`<option value=${v} ?selected=${v === t}>${v === 0 ? '0 (most likely)' : v}</option>`)}
        </select></label>
        ${pick ? html`<label>rows of <select part="layer" class="layer-select" @change=${this._onLayer}>
          <option value="all" ?selected=${L === 'all'}>all ${c.numLayers} layers</option>
          ${Array.from({ length: c.numLayers }, (_, l) => html`<option value=${l + 1} ?selected=${L === l}>layer ${l + 1}</option>`)}
        </select></label>` : nothing}
      </div>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      <p class="text" part="text"><span class="prompt">${prompt}</span>${text.length > prompt.length
        ? html`<mark>${text.slice(prompt.length)}</mark>` : nothing}</p>
      <p class="cache" part="cache" aria-live="polite">KV cache: ${len} of ${c.context} positions per layer${
        // the newest token is not in the cache yet (it is fed at the next step): a cache shorter than
        // the other positions was refilled. Positions count tokens (a byte-pair model) or characters.
        s && len < (ids ? ids.length : Array.from(text).length) - 1 ? ' (it filled up once and was refilled with the last half of the text)' : ''}.${s
        ? ` Last ${unit}: ${unit === 'token' ? showToken(s.token) : showChar(s.token)} (p = ${f2(s.p)}).` : ''}</p>
      ${s ? nothing : html`<p class="hint empty-rows" part="hint">Generate a ${unit} to see where each head's newest query
        looks in the cache: one row per head.</p>`}
      ${s ? html`<div class="rows">${shown.map((h) => html`
        <span class="lbl">L${h.layer + 1} · head ${h.head + 1}${h.type ? ` (${h.type})` : ''}</span>
        <mha-heatmap part="heatmap" compact no-save scale="shared" scheme=${this._scheme} data-layer=${h.layer} data-head=${h.head}
          label=${`Layer ${h.layer + 1}, head ${h.head + 1}: newest query`}
          .tokens=${[query]} .keyTokens=${keys}
          .weights=${{ data: s.attention[h.layer].data.subarray(h.head * len, (h.head + 1) * len), shape: [1, len] }}></mha-heatmap>`)}
      </div>` : nothing}`;
  }
}

customElements.get('mha-generate') || customElements.define('mha-generate', MhaGenerate);

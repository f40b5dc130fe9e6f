import { html, nothing } from 'lit';
import { scoreText } from '../../src/index.js';
import { AblatableModelElement, formatAblate, f2, kvCacheBytes } from './trained-shared.js';
import {
  showPiece, storySentence, measureRepeat, measureCopyList, labelHeads,
} from '../logic/gqa-story.js';
import { storyStyles, cacheView, layersView, headsView, tableView, aboutView, creditView } from './gqa-story-views.js';
import { DEFAULT_STORIES_URL } from '../models.js';
import { numberAttr, intAttr, headListAttr, rawAttr } from '../base/attr-check.js';
import { Announcer } from '../base/announce.js';
import { PhoneFold } from '../base/phone-fold.js';
import { int } from '../base/shared.js';
import '../views/mha-heatmap.js';

const DEFAULT_PROMPT = 'Once upon a time';
const TEMPERATURES = [0, 0.8, 1];

export {
  showPiece, storySentence, copyBitsPerToken, describeHeads, COPY_LIST, evenInduction, llamaParameters, explainCopying,
} from '../logic/gqa-story.js';
/** The element stops generating when the cache holds this many tokens (its heatmaps are T × T). */
export const MAX_STORY_TOKENS = 256;

/**
 * `<mha-gqa-story>` — grouped-query attention in a real model: Andrej Karpathy's stories260K
 * (llama2.c's smallest "tinyllamas" model, trained on TinyStories by Eldan & Li 2023; MIT licence)
 * writes a story token by token through the engine's KV cache. The element shows
 * - the story and the cache growing: tokens cached, the cache's bytes per token for this model
 *   (2 · layers · K/V heads · d_k · 4 bytes, float32, read from the loaded model's config) and in
 *   total, against what full multi-head attention (as many K/V heads as query heads) would need;
 * - one layer's attention over the cached tokens, its query heads drawn in groups framed by the
 *   K/V head they share (query head j reads K/V head ⌊j / (h/g)⌋);
 * - every head measured with the analysis of the character models (docs/trained-models.md, "Head
 *   analysis"): the position scores and entropy on the story the model wrote (scoreText), the
 *   induction score on a sentence of the story written twice (inductionTargets), the type named
 *   by headType; a switch per head ablates it (its output zeroed before W_O) and the story is
 *   written again with the same number of tokens;
 * - the search for an induction head, explained from measurements (explainCopying): a list of names
 *   written twice (COPY_LIST), where only copying can help, scored like the sentence; what the heads
 *   do instead; the model's size from its config.
 * Every number comes from the engine (`mha.loadModel`, CharModel.run and CharModel.generator);
 * the sentences around them are made from them.
 *
 * @element mha-gqa-story
 *
 * @attr {string} model - URL of a model file with grouped-query attention (`.safetensors`, format
 *   mha-wasm.charlm/1); default: the shipped stories260K, found relative to this module.
 * @attr {string} prompt - The start of the story (default "Once upon a time"); reflects what the
 *   reader types. Setting it starts again.
 * @attr {number} temperature - Sampling temperature, 0–10; 0 (default) takes the most likely token.
 * @attr {number} seed - Seed of the sampler, 0–2147483647 (default 7).
 * @attr {number} steps - Tokens written when the story (re)starts, 0–256 (default 40; 0 shows the prompt alone).
 * @attr {number} layer - The layer whose heads are drawn, 1 to the model's layers (default 1); reflects the reader's choice.
 * @attr {string} ablate - Heads switched off, 1-based `layer:head` pairs ("2:4 3:1") within the model; reflects the switches.
 *
 * A bad attribute value keeps the last valid value (or the default), shows one message naming the
 * attribute, the value and what is allowed, and fires `mha-error`; the attribute stays as written.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {object|null} lm - Read-only: the loaded model (null while loading).
 * @prop {string} text - Read-only: the prompt and everything written so far.
 * @prop {number} cacheLength - Read-only: tokens in each layer's KV cache.
 * @prop {string[]} tokens - Read-only: the pieces of the cached tokens (the heatmaps' labels).
 * @prop {{layers: number, kvHeads: number, heads: number, dK: number, bytesPerValue: number, perToken: number,
 *   fullPerToken: number, tokens: number, total: number, fullTotal: number, reserved: number}|null} kvBytes -
 *   Read-only: the KV cache's bytes for this model (per token, now, with h K/V heads, reserved for the context).
 * @prop {Array<{layer: number, head: number, kvHead: number, type: string, scores: object}>|null} measured -
 *   Read-only: every head's type and scores (position scores and entropy on the story, induction on the repeated sentence).
 * @prop {{sentence: string, first: number, second: number, tokens: number}|null} repeat - Read-only: the
 *   repeated sentence and the bits per token of each copy.
 * @prop {{list: string, first: number, second: number, tokens: number, even: number|null, best: {layer: number, head: number,
 *   induction: number}|null, induction: string[], scores: Array<object>}|null} copy - Read-only: the list test (COPY_LIST
 *   written twice): bits per token of each copy, the best induction score, that of evenly spread attention, the heads
 *   that qualify as induction heads on it.
 * @prop {Array<[number, number]>} ablation - Read-only: the switched-off heads, 0-based.
 * @prop {Error|null} error - Read-only: why the model could not be loaded or run.
 *
 * @fires mha-step - `{detail: {text, piece, id, p, cacheLength}}` after every generated token.
 * @fires mha-computed - `{detail: {text, cacheLength, kvBytes, measured, repeat, ablate}}` after the heads are measured.
 * @fires change - `{detail: {prompt, temperature, layer, ablate}}` when the reader changes one of them.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute) or a model that cannot be loaded (shown in place).
 *
 * @csspart about - The line describing the model.
 * @csspart credit - The model's credit and licence.
 * @csspart controls - The prompt field and the buttons.
 * @csspart prompt - The prompt field.
 * @csspart step - The "Write 1 token" and "Write 16" buttons.
 * @csspart reset - The "Start again" button.
 * @csspart temperature - The temperature select.
 * @csspart text - The story (generated part in a `<mark>`).
 * @csspart cache - The KV-cache box (with `data-*` numbers).
 * @csspart formula - The bytes-per-token formulas.
 * @csspart layers - The layer buttons.
 * @csspart groups - The K/V groups of the shown layer.
 * @csspart group - One K/V head's frame with its query heads.
 * @csspart head - One query head's box (class `off` when switched off).
 * @csspart switch - A head's on/off switch (role="switch").
 * @csspart heatmap - A head's `<mha-heatmap>`.
 * @csspart table - The table of every head's measured type.
 * @csspart summary - The sentences about the measured heads: the first shown, the others in a disclosure that starts closed.
 * @csspart copying - The induction-head search: the list test and what the heads do instead (with `data-*` numbers), in a
 *   disclosure that starts closed.
 * @csspart error - The error message.
 *
 * @cssprop --mha-accent, --mha-fg, --mha-bg, --mha-surface, --mha-border, --mha-field-border, --mha-muted, --mha-mono - Theme.
 */
export class MhaGqaStory extends AblatableModelElement {
  static _defaultModel = DEFAULT_STORIES_URL;

  static properties = {
    ...AblatableModelElement.properties,
    prompt: { type: String, reflect: true },
    temperature: { reflect: true, converter: rawAttr },
    seed: { converter: rawAttr },
    steps: { converter: rawAttr },
    layer: { reflect: true, converter: rawAttr },
    ablate: { type: String, reflect: true },
    measured: { state: true },
    repeat: { state: true },
    copy: { state: true },
    _version: { state: true },
  };

  static styles = storyStyles;

  constructor() {
    super();
    this.prompt = DEFAULT_PROMPT;
    /** @type {number|string} */ this.temperature = 0;
    /** @type {number|string} */ this.seed = 7;
    /** @type {number|string} */ this.steps = 40;
    /** @type {number|string} */ this.layer = 1;
    this.ablate = '';
    this.measured = null;
    this.repeat = null;
    this.copy = null;
    this._copyKey = '';
    this._version = 0;
    this._announcer = new Announcer(this);   // the layer and heads shown, said once a choice settles
    this._fold = new PhoneFold(this);   // the table of every head: open on a wide element, behind its summary line on a phone
    this._gen = null;
    this._genKey = '';
    this._ids = [];
    this._pieces = [];
    this._rows = [];     // per layer: rows[t] = the attention of query t over keys 0…t, [h, t + 1]
    this._promptLen = 0;
    this._written = 0;
    this._last = null;
    this._repeatKey = '';
    this._c = { temperature: 0, seed: 7, steps: 40, layer: 1, ablate: [] };
  }

  /** The switched-off heads as 0-based [layer, head] pairs: the last valid `ablate`. */
  get ablation() {
    const cfg = this.lm?.config;
    const r = cfg ? headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }) : { error: true };
    return (r.error ? this._c.ablate : r.value).map((p) => p.slice());
  }

  /** The prompt and everything written so far. */
  get text() {
    return this._gen?.text ?? this.prompt ?? '';
  }

  /** Tokens in each layer's KV cache. */
  get cacheLength() {
    return this._gen?.cacheLength ?? 0;
  }

  /** The pieces of the tokens whose attention rows are known (the prompt's, then the cache's). */
  get tokens() {
    return this._pieces.slice(0, this._rows[0]?.length ?? 0);
  }

  /** The KV cache's bytes for this model (float32 keys and values of every layer's K/V heads). */
  get kvBytes() {
    const c = this.lm?.config;
    return c ? kvCacheBytes(c, this.cacheLength) : null;
  }

  get _maxTokens() {
    return Math.min(MAX_STORY_TOKENS, this.lm?.config.context ?? MAX_STORY_TOKENS);
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    const g = this._attrs;
    const old = this._c;
    g.begin();
    const c = {
      temperature: g.take('temperature', numberAttr('temperature', this.temperature, { dflt: 0, min: 0, max: 10 })),
      seed: g.take('seed', intAttr('seed', this.seed, { dflt: 7, min: 0, max: 2147483647 })),
      steps: g.take('steps', intAttr('steps', this.steps, { dflt: 40, min: 0, max: MAX_STORY_TOKENS })),
      layer: old.layer,
      ablate: old.ablate,
    };
    const cfg = this.lm?.config;
    if (cfg) {
      c.layer = g.take('layer', intAttr('layer', this.layer, { dflt: 1, min: 1, max: cfg.numLayers }));
      c.ablate = g.take('ablate', headListAttr('ablate', this.ablate, { layers: cfg.numLayers, heads: cfg.numHeads, dflt: [] }));
    }
    g.end();
    this._c = c;
    if (!this.lm) return;
    const key = JSON.stringify([this.prompt, c.temperature, c.seed, formatAblate(this.ablation)]);
    if (changed.has('lm') || key !== this._genKey) {
      // a new prompt or sampler writes `steps` tokens; a new ablation rewrites as many as there were
      const keep = changed.has('lm') || changed.has('prompt') || changed.has('temperature') || changed.has('seed') || !this._genKey;
      this._start(key, keep ? c.steps : this._written);
    }
  }

  modelReleasing() {
    this._gen?.dispose();
    this._gen = null;
    this._genKey = '';
  }

  _promptText() {
    return this.prompt || DEFAULT_PROMPT;
  }

  _start(key, count) {
    this._gen?.dispose();
    this._gen = null;
    this._genKey = key;
    this._last = null;
    this._written = 0;
    const lm = this.lm;
    const { numLayers: L, numHeads: h } = lm.config;
    try {
      const ablate = this.ablation;
      const prompt = this._promptText();
      const r = lm.run(prompt, { ablate });
      const P = r.ids.length;
      if (P >= this._maxTokens) throw new RangeError(`The prompt is ${P} tokens long; this element writes stories of at most ${this._maxTokens} tokens: shorten it.`);
      this._ids = Array.from(r.ids);
      this._pieces = r.tokens.slice();
      this._promptLen = P;
      // the prompt's rows come from reading it whole; every later row is a cache step's newest query
      this._rows = Array.from({ length: L }, (_, l) => Array.from({ length: P }, (_, t) => {
        const row = new Float32Array(h * (t + 1));
        for (let j = 0; j < h; j++) row.set(r.attention[l].data.subarray((j * P + t) * P, (j * P + t) * P + t + 1), j * (t + 1));
        return row;
      }));
      this._gen = lm.generator(prompt, { temperature: this._c.temperature, seed: this._c.seed, ablate });
      this.error = null;
      this._advance(count, false);
    } catch (e) {
      this.error = e;
      this._analyze();
    }
  }

  /** Writes up to n tokens (stopping at the element's limit); events unless quiet. */
  _advance(n, loud = true) {
    const g = this._gen;
    if (!g) return;
    for (let i = 0; i < n && this._ids.length < this._maxTokens; i++) {
      const s = g.step();
      const len = s.cacheLength;
      for (let l = 0; l < this._rows.length; l++) this._rows[l][len - 1] = s.attention[l].data;
      this._ids.push(s.id);
      this._pieces.push(s.token);
      this._written++;
      this._last = s;
      if (loud) {
        this.dispatchEvent(new CustomEvent('mha-step', {
          detail: { text: g.text, piece: s.token, id: s.id, p: s.p, cacheLength: len }, bubbles: true, composed: true,
        }));
      }
    }
    this._analyze();
  }

  /**
   * Writes n more tokens through the KV cache (stops at the element's limit of 256 tokens).
   * @param {number} n
   */
  step(n = 1) {
    if (!this._gen) return;
    this._advance(n);
    // one short line once the clicks settle (the story and the cache box are read where they are)
    this._announcer.say(() => {
      const b = this.kvBytes;
      return `${this._written} token${this._written === 1 ? '' : 's'} written, the last “${showPiece(this._last?.token ?? '')}”; `
        + `KV cache ${int(b?.tokens ?? 0)} tokens, ${int(b?.total ?? 0)} bytes.`;
    });
  }

  /** Back to the prompt alone (the sampler's seed from the start). */
  restart() {
    if (!this.lm) return;
    this._start(this._genKey, 0);
    this._announcer.say('Started again from the prompt: the KV cache is empty.');
  }

  /** The per-layer attention [h, T, T] of the T tokens whose rows are known. */
  _attention() {
    const h = this.lm.config.numHeads;
    return this._rows.map((rows) => {
      const T = rows.length;
      const data = new Float32Array(h * T * T);
      for (let t = 0; t < T; t++) {
        const row = rows[t];
        for (let j = 0; j < h; j++) data.set(row.subarray(j * (t + 1), (j + 1) * (t + 1)), (j * T + t) * T);
      }
      return { data, shape: [h, T, T] };
    });
  }

  _analyze() {
    this._version++;
    const lm = this.lm;
    if (!lm || this.error || !this._rows.length) {
      this.measured = null;
      this.repeat = null;
      this.copy = null;
      this._att = null;
      return;
    }
    const { numHeads: h, kvHeads } = lm.config;
    const group = h / (kvHeads ?? h);
    const ablate = this.ablation;
    this._att = this._attention();
    const T = this._att[0].shape[1];
    const onStory = scoreText(this._att, this._ids.slice(0, T));
    // a sentence the model wrote, written twice: the repeated span of the induction score
    const sentence = storySentence(this.text, this._promptText().length);
    const rkey = JSON.stringify([sentence, formatAblate(ablate)]);
    if (rkey !== this._repeatKey || !this.repeat) {
      this.repeat = measureRepeat(lm, sentence, ablate);
      this._repeatKey = rkey;
    }
    // the list written twice: the same for every story, measured again only when the ablation changes
    const ckey = formatAblate(ablate);
    if (ckey !== this._copyKey || !this.copy) {
      this.copy = measureCopyList(lm, ablate);
      this._copyKey = ckey;
    }
    this.measured = labelHeads(onStory, this.repeat.scores, group);
    this.dispatchEvent(new CustomEvent('mha-computed', {
      detail: { text: this.text, cacheLength: this.cacheLength, kvBytes: this.kvBytes, measured: this.measured, repeat: this.repeat, copy: this.copy, ablate },
      bubbles: true, composed: true,
    }));
  }

  _changed() {
    const off = this.ablation.length;
    this.dispatchEvent(new CustomEvent('change', {
      detail: { prompt: this.prompt, temperature: this._c.temperature, layer: this._layer(), ablate: this.ablation },
      bubbles: true, composed: true,
    }));
    // one short line once the choice settles, with the list test's strongest induction head
    // measured again (the summary and the search's paragraphs are read where they are, not announced)
    this._announcer.say(() => {
      const best = this.copy?.best;
      return `Layer ${this._layer()} shown; ${off ? `${off} head${off > 1 ? 's' : ''} switched off` : 'every head on'}${
        best ? `; strongest induction score ${f2(best.induction)}, layer ${best.layer + 1} head ${best.head + 1}` : ''}.`;
    });
  }

  _layer() {
    const L = this.lm?.config.numLayers ?? 1;
    return Math.min(L, this._c.layer);
  }

  _onPrompt(e) {
    this.prompt = e.target.value;
    this._changed();
  }

  _onTemperature(e) {
    this.temperature = Number(e.target.value);
    this._changed();
  }

  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    const lm = this.lm;
    if (!lm) return this.loadingView('the model');
    const c = lm.config;
    const text = this.text;
    const prompt = this._promptText();
    const t = this._c.temperature;
    const temps = TEMPERATURES.includes(t) ? TEMPERATURES : [...TEMPERATURES, t].sort((a, b) => a - b);
    const full = this._ids.length >= this._maxTokens;
    const s = this._last;
    return html`
      <p class="hint"><span part="about">${aboutView(c, lm.training ?? {})}</span> ${creditView(lm.training ?? {}, this.modelHref)}</p>
      <div class="controls" part="controls">
        <label class="prompt">Prompt <input type="text" part="prompt" maxlength="200" spellcheck="false"
          .value=${this.prompt ?? ''} @change=${this._onPrompt}></label>
        <button type="button" part="step" class="step1" @click=${() => this.step(1)} ?disabled=${!this._gen || full}>Write 1 token</button>
        <button type="button" part="step" class="step16" @click=${() => this.step(16)} ?disabled=${!this._gen || full}>Write 16</button>
        <button type="button" part="reset" class="reset" @click=${() => this.restart()}>Start again</button>
        <label>temperature <select part="temperature" @change=${this._onTemperature}>
          ${temps.map((v) => html`<option value=${v} ?selected=${v === t}>${v === 0 ? '0 (most likely)' : v}</option>`)}
        </select></label>
      </div>
      ${this.error ? html`<p class="error" part="error" role="alert">${this.error.message}</p>` : nothing}
      <div class="story"><div>
      <p class="text" part="text"><span class="prompt-text">${prompt}</span>${text.length > prompt.length
        ? html`<mark>${text.slice(prompt.length)}</mark>` : nothing}</p>
      <p class="hint last">${s ? `Last token written: “${showPiece(s.token)}” (p = ${f2(s.p)}); ${this._written} token${this._written === 1 ? '' : 's'} written` : 'Nothing written yet'}${
        full ? `; the element stops at ${this._maxTokens} tokens` : ''}.</p>
      ${layersView({
        config: c, layer: this._layer(), tokens: this._att?.[0].shape[1] ?? 0, promptTokens: this._promptLen,
        onLayer: (n) => { this.layer = n; this._changed(); },
      })}</div>
      ${cacheView(this.kvBytes, c.context)}</div>
      ${headsView({
        config: c, layer: this._layer(), attention: this._att?.[this._layer() - 1] ?? null, tokens: this.tokens,
        ablation: this.ablation, measured: this.measured, scheme: this._scheme, onToggle: (l, j) => this._toggle(l, j),
      })}
      ${tableView({
        config: c, measured: this.measured, ablation: this.ablation, tokens: this._att?.[0].shape[1] ?? 0,
        repeat: this.repeat, copy: this.copy, open: this._fold.open,
      })}
      ${this._announcer.view()}`;
  }

}

customElements.get('mha-gqa-story') || customElements.define('mha-gqa-story', MhaGqaStory);

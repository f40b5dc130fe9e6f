import { LitElement, html, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, taskEngine, seededMatrix, toHeads, fmt } from '../base/shared.js';
import { tokensAttr } from '../base/attr-check.js';
import { pickLayerAttrs, LayerConfig, taskHandlers, errorsView } from './demo-layer.js';
import { shapeText } from '../views/mha-passport.js';
import '../views/mha-heads.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { Announcer } from '../base/announce.js';
import { PhoneFold, phoneFoldStyles } from '../base/phone-fold.js';

/** Default source (encoder) sentence of `<mha-cross-attention>`. */
export const CROSS_DEFAULT_SOURCE = 'the cat sat on the mat';
/** Default target (decoder) sentence: the French translation of the source. */
export const CROSS_DEFAULT_TARGET = 'le chat est assis sur le tapis';
/** Most tokens per sentence. */
export const CROSS_MAX_TOKENS = 12;

/**
 * The hand-set bilingual lexicon behind the "meaning" dimensions: each entry is one meaning and the
 * English and French words that carry it (lower case). A word may carry two meanings: French
 * "est" is "is", and with "assis" it is "sat" ("le chat est assis" = "the cat sat").
 * @type {{meaning: string, en: string[], fr: string[]}[]}
 */
export const LEXICON = [
  { meaning: 'the', en: ['the'], fr: ['le', 'la', 'les', "l'"] },
  { meaning: 'a', en: ['a', 'an'], fr: ['un', 'une'] },
  { meaning: 'cat', en: ['cat', 'cats'], fr: ['chat', 'chats'] },
  { meaning: 'dog', en: ['dog', 'dogs'], fr: ['chien', 'chiens'] },
  { meaning: 'bird', en: ['bird', 'birds'], fr: ['oiseau', 'oiseaux'] },
  { meaning: 'sit', en: ['sat', 'sit', 'sits'], fr: ['assis', 'assise', 'est'] },
  { meaning: 'be', en: ['is', 'are'], fr: ['est', 'sont'] },
  { meaning: 'on', en: ['on'], fr: ['sur'] },
  { meaning: 'under', en: ['under'], fr: ['sous'] },
  { meaning: 'in', en: ['in'], fr: ['dans'] },
  { meaning: 'mat', en: ['mat'], fr: ['tapis'] },
  { meaning: 'table', en: ['table'], fr: ['table'] },
  { meaning: 'house', en: ['house'], fr: ['maison'] },
  { meaning: 'garden', en: ['garden'], fr: ['jardin'] },
  { meaning: 'red', en: ['red'], fr: ['rouge', 'rouges'] },
  { meaning: 'black', en: ['black'], fr: ['noir', 'noire'] },
  { meaning: 'white', en: ['white'], fr: ['blanc', 'blanche'] },
  { meaning: 'big', en: ['big', 'large'], fr: ['grand', 'grande', 'gros'] },
  { meaning: 'small', en: ['small', 'little'], fr: ['petit', 'petite'] },
  { meaning: 'eat', en: ['eats', 'eat', 'ate'], fr: ['mange', 'mangent'] },
  { meaning: 'fish', en: ['fish'], fr: ['poisson', 'poissons'] },
  { meaning: 'see', en: ['sees', 'see', 'saw'], fr: ['voit', 'vois', 'voient'] },
  { meaning: 'sleep', en: ['sleeps', 'sleep', 'slept'], fr: ['dort', 'dorment'] },
  { meaning: 'and', en: ['and'], fr: ['et'] },
  { meaning: 'I', en: ['i'], fr: ['je'] },
  { meaning: 'you', en: ['you'], fr: ['tu', 'vous'] },
  { meaning: 'he', en: ['he'], fr: ['il'] },
  { meaning: 'she', en: ['she'], fr: ['elle'] },
];

/** The lexicon's meanings of a word (case and trailing punctuation ignored), in lexicon order. */
export function meaningsOf(word) {
  const w = word.toLowerCase().replace(/[.,;:!?]+$/, '');
  return LEXICON.filter((e) => e.en.includes(w) || e.fr.includes(w)).map((e) => e.meaning);
}

/** 32-bit FNV-1a hash of a string (seeds a word's noise). */
function hash(s) {
  let h = 0x811c9dc5;
  for (const ch of s) { h ^= ch.codePointAt(0); h = Math.imul(h, 0x01000193) >>> 0; }
  return h >>> 0;
}

/** Score of a query and key that share one meaning, before the softmax (sharp: e^10 ≈ 22,000). */
export const MATCH_SCORE = 10;
const NOISE = 0.05;
const UNKNOWN_SCALE = 0.5;

/**
 * The hand-set inputs of `<mha-cross-attention>`, as plain data, so a page or a test can run the
 * same layer through the JS API (`layer.forward(xTarget, {key: xSource, value: xSource})`).
 *
 * Meanings: every meaning (of `LEXICON`) carried by a word of either sentence gets one dimension
 * of d_model, in order of first appearance (source first), up to d_k = d_model / h of them (head 1
 * must see all of them). A word's embedding (`[d_model]`) is the sum of its meanings' one-hot
 * vectors divided by √(number of meanings), plus seeded noise N(0, 0.05²) in every dimension
 * (seeded by the word, so the same word always gets the same vector); a word with no meaning in
 * the lexicon (or whose meanings found no dimension) gets a seeded N(0, 0.5²) vector instead.
 * Weights (packed, `[in, out]`, no bias): head 1's W_Q and W_K slices `[d_model, d_k]` copy the
 * meaning dimensions, scaled by s = √(10·√d_k), so a query and a key that share one meaning score
 * ≈ 10 after the 1/√d_k scale and the softmax puts nearly all weight on the translation; the other
 * heads' W_Q, W_K slices and all of W_V and W_O are seeded uniform in ±1.6·√(6 / 2·d_model)
 * (untrained, for contrast). Hand-set to align meanings: not trained.
 * @param {{source: string[], target: string[], dModel: number, heads: number, seed: number}} o
 * @returns {{xTarget: {data, shape}, xSource: {data, shape}, weights: {wQ, wK, wV, wO},
 *   meanings: string[], unknown: string[], dropped: string[]}} meanings: the meaning of each
 *   dimension; unknown: words with no meaning in the lexicon; dropped: meanings that found no
 *   dimension (more than d_k of them)
 */
export function crossAttentionInputs({ source, target, dModel, heads, seed }) {
  const dK = dModel / heads;
  const meanings = [], dropped = [];
  for (const w of [...source, ...target]) {
    for (const m of meaningsOf(w)) {
      if (meanings.includes(m) || dropped.includes(m)) continue;
      (meanings.length < dK ? meanings : dropped).push(m);
    }
  }
  const unknown = [];
  const embed = (words) => {
    const data = new Float32Array(words.length * dModel);
    words.forEach((w, t) => {
      const key = w.toLowerCase();
      const dims = meaningsOf(w).map((m) => meanings.indexOf(m)).filter((i) => i >= 0);
      const noise = seededMatrix((hash(key) ^ seed) >>> 0, 1, dModel).data;
      const row = data.subarray(t * dModel, (t + 1) * dModel);
      if (dims.length) {
        for (let i = 0; i < dModel; i++) row[i] = NOISE * noise[i];
        for (const i of dims) row[i] += 1 / Math.sqrt(dims.length);
      } else {
        for (let i = 0; i < dModel; i++) row[i] = UNKNOWN_SCALE * noise[i];
        if (!unknown.includes(w)) unknown.push(w);
      }
    });
    return { data, shape: [words.length, dModel] };
  };
  const xSource = embed(source), xTarget = embed(target);
  const limit = 1.6 * Math.sqrt(6 / (2 * dModel));
  const rand = (k) => seededMatrix(seed * 1000 + k, dModel, dModel, { kind: 'uniform', limit });
  const s = Math.sqrt(MATCH_SCORE * Math.sqrt(dK));
  const wQ = rand(1), wK = rand(2);
  for (const W of [wQ, wK]) {
    for (let i = 0; i < dModel; i++) for (let j = 0; j < dK; j++) W.data[i * dModel + j] = i === j && i < meanings.length ? s : 0;
  }
  return { xTarget, xSource, weights: { wQ, wK, wV: rand(3), wO: rand(4) }, meanings, unknown, dropped };
}

const q = (t) => `\u201c${t}\u201d`;

/**
 * One sentence per target word, from head 1's weights (`[Tq][Tk]`, from the engine): which source
 * word gets its largest weight, or how it splits between copies of one word, or that it has no
 * translation in the source.
 * @param {number[][]} W head 1's weights
 * @param {string[]} target
 * @param {string[]} source
 * @returns {string[]}
 */
export function crossSentences(W, target, source) {
  return W.map((row, i) => {
    const order = row.map((v, j) => j).sort((a, b) => row[b] - row[a]);
    const j = order[0];
    const same = order.filter((k) => source[k].toLowerCase() === source[j].toLowerCase() && Math.abs(row[k] - row[j]) < 1e-6);
    const shared = meaningsOf(target[i]).filter((m) => meaningsOf(source[j]).includes(m));
    const t = q(target[i]);
    if (!shared.length) {
      return `${t} shares no meaning with any source word: its largest weight, ${row[j].toFixed(2)}, goes to ${q(source[j])}.`;
    }
    if (same.length > 1) {
      return `${t} → ${q(source[j])}: ${same.map((k) => row[k].toFixed(2)).join(' + ')} split equally over the ${same.length} copies of ${q(source[j])} (same word, same vector: nothing here tells the copies apart).`;
    }
    return `${t} → ${q(source[j])}: weight ${row[j].toFixed(2)}.`;
  });
}

/**
 * `<mha-cross-attention>` — queries from one sequence, keys and values from another. A target
 * sentence (the decoder's side, e.g. French) attends over a source sentence (the encoder's side,
 * e.g. English) through the engine: `layer.forward(xTarget, {key: xSource, value: xSource})`,
 * non-causal (the decoder may look at the whole source). Shown: every head's Tq × Tk attention
 * weights (rows = target tokens, columns = source tokens; `<mha-heads>`), the shapes from the
 * engine's passport (`mha.passport({seqLen: Tq, keyLen: Tk, kDim, vDim, ...})`: Q [Tq, d_k],
 * K [Tk, d_k], scores [h, Tq, Tk], output [Tq, d_model]), one computed sentence per target word,
 * and which words have no meaning in the lexicon. The embeddings and head 1's W_Q, W_K are hand-set
 * so that a word and its translation share a "meaning" dimension (`crossAttentionInputs`, `LEXICON`);
 * the element says so: they are not trained. Encoder–decoder attention as in Vaswani et al. 2017, §3.2.3.
 *
 * A bad attribute keeps the last good state, shows a message naming the attribute, the expected
 * and the written value, and fires `mha-error`; the attribute is left as written.
 *
 * @element mha-cross-attention
 *
 * @attr {string} source - Source sentence, space-separated, 1–12 tokens (default "the cat sat on the mat").
 * @attr {string} target - Target sentence, space-separated, 1–12 tokens (default "le chat est assis sur le tapis").
 * @attr {number} heads - num_heads h, a divisor of d-model (default 2); head 1 is the hand-set one.
 * @attr {number} d-model - d_model, 2–128 (default 32); d_k = d_model / h meanings fit in head 1.
 * @attr {number} seed - Seed of the noise and of the untrained weights, 0–1000000 (default 7).
 * @attr {'viridis'|'cividis'} scheme - Color scale of the heatmaps.
 *
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {{source: string[], target: string[], dModel: number, heads: number, seed: number, dK: number,
 *   weights: object, heads3: number[][][], output: object, passport: object, meanings: string[],
 *   unknown: string[], dropped: string[]}|null} result - Read-only: the last run (weights: the
 *   engine's `[h, Tq, Tk]` Tensor; heads3 the same as nested arrays).
 * @prop {Error|null} error - Read-only: the last engine error.
 *
 * @fires mha-computed - `{detail: result}` after every run.
 * @fires mha-error - `{detail: {error}}` for a bad attribute or an engine error (shown in place).
 *
 * @csspart heads - The `<mha-heads>`.
 * @csspart shapes - The shapes table (on a phone, folded behind its caption).
 * @csspart explain - The computed sentences.
 * @csspart unknown - The line naming the words without a meaning.
 * @csspart error - An attribute or engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaCrossAttention extends LitElement {
  static properties = {
    source: { type: String },
    target: { type: String },
    headsAttr: { type: String, attribute: 'heads' },
    dModelAttr: { type: String, attribute: 'd-model' },
    seedAttr: { type: String, attribute: 'seed' },
    scheme: { type: String },
    engine: { attribute: false },
  };

  static styles = [baseStyles, phoneFoldStyles, css`
    :host {
      display: block; background: var(--_bg); border: 1px solid var(--_border);
      border-radius: calc(var(--_radius) * 1.5); padding: 1rem; max-width: 100%; box-sizing: border-box;
    }
    .hand { margin: 0 0 0.8rem; padding: 0.4em 0.8em; border-left: 4px solid var(--_accent); background: var(--_surface); font-size: 0.92em; }
    .scroll {
      overflow-x: auto; max-width: 100%;
    }
    table { border-collapse: collapse; font-size: 0.85rem; }
    .cap { font-weight: 600; font-size: 0.85rem; margin: 1rem 0 0.25em; }
    th, td { text-align: left; padding: 0.25em 0.5em; border-bottom: 1px solid var(--_border); }
    tbody th { white-space: nowrap; }
    td.how { color: var(--_muted); font-family: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); font-size: 0.88em; }
    td.shape { white-space: nowrap; font-family: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); }
    .explain { margin: 0.8rem 0 0; padding: 0.4em 0.8em; background: var(--_surface); border-radius: var(--_radius); font-size: 0.94em; }
    :host { container-type: inline-size; }
    .maps { min-width: 0; }
    .maps .note { contain: inline-size; }   /* the column is as wide as the maps; the note wraps to it */
    mha-heads::part(scale-note) { contain: inline-size; }   /* the maps set the width; the scale's note wraps to it */
    .explain p, .explain li { margin: 0.2em 0; }
    .explain ul { margin: 0.2em 0; padding-left: 1.2em; }
    .note { font-size: 0.88em; color: var(--_muted); margin: 0.6rem 0 0; }
    .loading { color: var(--_muted); font-size: 0.9em; }
    .shapes { min-width: 0; }
    @container (max-width: 519.98px) { details.fold > .cap { display: none; } }   /* folded on a phone: its summary line says it */
    /* the maps, where head 1 looks, the shapes table, then the closing note, one under the other; wider: the maps beside
       where head 1 looks and the closing note beside the table; wider still: the maps and the closing note down the left,
       where head 1 looks and the table down the right */
    .body { display: flex; flex-direction: column; }
    .col { display: contents; }
    .closing { order: 1; }
    @container (min-width: 760px) {
      .body { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 1.5rem; align-items: start;
        grid-template-areas: 'maps explain' 'shapes closing'; }
      .maps { grid-area: maps; }
      .explain { grid-area: explain; margin-top: 0; }
      .shapes { grid-area: shapes; }
      .closing { grid-area: closing; align-self: end; }
    }
    @container (min-width: 1000px) {
      .body { grid-template-areas: none; }
      .col { display: block; min-width: 0; }
      .col:first-child { max-width: 36rem; }
      .shapes .cap { margin-top: 0.8rem; }
      mha-heads { --mha-cell-size: 22px; }
    }
    /* a phone: both maps side by side (smaller cells), each shape a card (its name and shape, then how on a line of its own) */
    @container (max-width: 480px) {
      mha-heads { --mha-cell-size: 16px; --mha-heads-gap: 0.4rem; --mha-head-flex: 1 1 8rem; --mha-head-min-width: 0; }
      table, tbody, tr { display: block; }
      thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
      tbody tr { display: flex; flex-wrap: wrap; gap: 0.1em 0.8em; align-items: baseline; padding: 0.3em 0.2em; border-bottom: 1px solid var(--_border); }
      th, td { display: block; border: 0; padding: 0; }
      tbody th { flex: 1 1 10em; }
      td.how { flex: 1 0 100%; overflow-wrap: anywhere; }
      .scroll { overflow-x: visible; }
    }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    this._announcer = new Announcer(this);
    this._fold = new PhoneFold(this);   // the shapes table: open on a wide element, folded on a phone
    this._shown = false;   // the first result is read with the page, not announced
    this.source = undefined;
    this.target = undefined;
    this.headsAttr = undefined;
    this.dModelAttr = undefined;
    this.seedAttr = undefined;
    this.scheme = 'viridis';
    this.engine = undefined;
    this._layer = new LayerConfig(this);   // the last valid configuration, the scheme, the attribute errors
    this._task = new Task(this, {
      args: () => [this._layer.key, this.engine],
      task: async ([key, engine], { signal }) => {
        if (!key) return null;
        const cfg = this._layer.cfg;
        const mha = await taskEngine(engine, signal);
        const inp = crossAttentionInputs(cfg);
        const { dModel: d, heads: h } = cfg;
        const layer = mha.createLayer({ dModel: d, numHeads: h, kDim: d, vDim: d, bias: false, weights: inp.weights });
        try {
          const fw = layer.forward(inp.xTarget, { key: inp.xSource, value: inp.xSource, needWeights: true });
          const passport = mha.passport({ seqLen: cfg.target.length, keyLen: cfg.source.length, kDim: d, vDim: d, dModel: d, numHeads: h, bias: false });
          return {
            ...cfg, dK: passport.dK, weights: fw.weights, output: fw.output, heads3: toHeads(fw.weights), passport,
            meanings: inp.meanings, unknown: inp.unknown, dropped: inp.dropped,
          };
        } finally {
          layer.dispose();
        }
      },
      // the sentences are read in place; a new result (new tokens) says head 1's first line once it settles
      ...taskHandlers(this, (r) => {
        if (this._shown) this._announcer.say(() => `Head 1: ${crossSentences(r.heads3[0], r.target, r.source)[0] ?? ''}`);
        this._shown = true;
      }),
    });
  }

  /** The last run: the task's value (null before the first run and after an engine error). */
  get result() {
    return this._task.value ?? null;
  }

  /** The engine's error, if the last run failed. */
  get error() {
    return this._task.error ?? null;
  }

  /** Parse the attributes; on success they become the configuration, else the last good one stays. */
  willUpdate() {
    const errors = [];
    const pick = (r) => { if (r.error) errors.push(r.error); return r.value; };
    const source = pick(tokensAttr('source', this.source, { dflt: CROSS_DEFAULT_SOURCE.split(' '), max: CROSS_MAX_TOKENS }));
    const target = pick(tokensAttr('target', this.target, { dflt: CROSS_DEFAULT_TARGET.split(' '), max: CROSS_MAX_TOKENS }));
    const { dModel, heads, seed } = pickLayerAttrs(this, pick, errors, { dModel: 32, dModelMin: 2 });
    this._layer.settle(errors, { source, target, dModel, heads, seed }, this.scheme);
  }

  _shapes(r) {
    const step = (name) => r.passport.steps.find((s) => s.name === name)?.shape;
    const perHead = (name) => step(name)?.slice(1);
    const rows = [
      ['target X (queries)', step('input X'), 'X_tgt, a row per target token'],
      ['source X (keys, values)', [r.source.length, r.dModel], 'X_src, a row per source token'],
      ['Q of one head', perHead('per-head Q'), 'Q_i = X_tgt·W_Q^(i)'],
      ['K of one head', perHead('per-head K'), 'K_i = X_src·W_K^(i)'],
      ['V of one head', perHead('per-head V'), 'V_i = X_src·W_V^(i)'],
      ['scores, all heads', step('per-head scores'), 'S_i = Q_i·K_iᵀ / √d_k'],
      ['attention weights, all heads', step('per-head attention weights'), 'A_i = softmax over the source'],
      ['output', step('output'), 'concat(A_i·V_i)·W_O'],
    ];
    const cap = html`Shapes (from the engine's passport): T<sub>q</sub> = ${r.target.length}, T<sub>k</sub> = ${r.source.length}, d<sub>k</sub> = ${r.dK}`;
    // on a phone the table is folded behind its caption (base/phone-fold.js)
    return html`<details class="fold" ?open=${this._fold.open}><summary>${cap}</summary><p class="cap" id="cap-shapes">${cap}</p>
      <div class="scroll" tabindex="0" role="region" aria-label="shapes"><table part="shapes" aria-labelledby="cap-shapes">
      <thead><tr><th scope="col">tensor</th><th scope="col">shape</th><th scope="col">how</th></tr></thead>
      <tbody>${rows.map(([n, s, f]) => html`<tr><th scope="row">${n}</th><td class="shape" data-shape=${JSON.stringify(s)}>${shapeText(s)}</td><td class="how">${f}</td></tr>`)}</tbody>
    </table></div></details>`;
  }

  render() {
    const r = this.result;
    const names = r ? Array.from({ length: r.heads }, (_, i) => (i === 0 ? 'meanings, hand-set' : 'seeded random')) : null;
    return html`
      <p class="hand">The embeddings and head 1's W<sub>Q</sub>, W<sub>K</sub> are <strong>hand-set to align meanings, not trained</strong>:
        a word and its translation share a "meaning" dimension, and head 1 compares only those dimensions.
        ${r && r.heads > 1 ? 'The other heads keep seeded random weights, for contrast.' : nothing}</p>
      ${errorsView(this._layer.errors, this.error, r)}
      ${this._announcer.view()}
      ${r ? html`<div class="body">
        <div class="col"><div class="maps"><mha-heads part="heads" .weights=${r.weights} .tokens=${r.target} .keyTokens=${r.source} .dK=${r.dK} .headNames=${names} scheme=${this._layer.scheme}></mha-heads>
        <p class="note">Rows: target (decoder) tokens, the queries. Columns: source (encoder) tokens, the keys and values. ${r.target.length} × ${r.source.length}: not square, and no mask.</p></div>
        <p class="note closing">In an encoder–decoder Transformer, this is the decoder's cross-attention: its queries come from the decoder's tokens,
          its keys and values from the encoder's outputs over the source, and no mask is needed because the whole source is known.
          The source attends to itself in the encoder (self-attention); the decoder's own self-attention is causal.</p></div>
        <div class="col"><div class="explain" part="explain">
          <p>Head 1, where each target word looks:</p>
          <ul>${crossSentences(r.heads3[0], r.target, r.source).map((s) => html`<li>${s}</li>`)}</ul>
          ${r.unknown.length ? html`<p part="unknown">No meaning in the lexicon for ${r.unknown.map(q).join(', ')}: ${r.unknown.length > 1 ? 'they get' : 'it gets'} a seeded random vector, so head 1 has nothing to align.</p>` : nothing}
          ${r.dropped.length ? html`<p part="unknown">Only d<sub>k</sub> = ${r.dK} meanings fit in head 1; no dimension for ${r.dropped.map(q).join(', ')} (raise d-model or lower heads).</p>` : nothing}
        </div>
        <div class="shapes">${this._shapes(r)}</div></div></div>`
        : this._layer.errors.length || this.error ? nothing : html`<p class="loading">Loading the engine…</p>`}`;
  }
}

customElements.get('mha-cross-attention') || customElements.define('mha-cross-attention', MhaCrossAttention);

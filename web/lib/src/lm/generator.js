/**
 * Generation with a KV cache per layer (LanguageModel.generator): each step feeds the pending
 * tokens through the caches and samples the next token from the last row of log-probabilities —
 * greedy at temperature 0, else softmax(logits / temperature), optionally truncated to the nucleus
 * (top-p). A generator is a WasmObject (engine/handle.js) owning its caches, owned by its model.
 * @module generator
 */
import { Tensor } from '../engine/tensor.js';
import { WasmObject } from '../engine/handle.js';
import { mulberry32 } from '../engine/weights.js';

/**
 * Top-p (nucleus) truncation of unnormalized weights w (sum s), in place: keeps the most probable
 * tokens until their share of s first reaches p (ties at the boundary all kept), zeroes the rest,
 * and returns the kept sum. Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration".
 * @param {Float64Array} w
 * @param {number} s
 * @param {number} p in (0, 1]
 * @returns {number}
 */
export function nucleus(w, s, p) {
  const order = Array.from(w.keys()).sort((a, b) => w[b] - w[a]);
  let kept = 0, k = 0;
  while (k < order.length && kept < p * s) kept += w[order[k++]];
  while (k < order.length && w[order[k]] === w[order[k - 1]]) kept += w[order[k++]];
  for (; k < order.length; k++) w[order[k]] = 0;
  return kept;
}

/**
 * The next token id from one row of natural-log probabilities.
 * @param {Float32Array} logp [V]
 * @param {number} temperature 0: the most probable id (the first of ties); else a draw from
 *   softmax(logp / temperature)
 * @param {number} topP nucleus share in (0, 1] (1: every token)
 * @param {() => number} rand uniform in [0, 1)
 * @returns {number}
 */
export function sampleToken(logp, temperature, topP, rand) {
  const V = logp.length;
  if (temperature === 0) {
    let id = 0;
    for (let i = 1; i < V; i++) if (logp[i] > logp[id]) id = i;
    return id;
  }
  const w = new Float64Array(V);
  let s = 0;
  for (let i = 0; i < V; i++) { w[i] = Math.exp(logp[i] / temperature); s += w[i]; }
  if (topP < 1) s = nucleus(w, s, topP);
  let u = rand() * s;
  for (let i = 0; i < V; i++) { u -= w[i]; if (u < 0) return i; }
  return V - 1;
}

/**
 * Per layer, the newest query's row of each head from a cache step's attention weights
 * [L, 1, h, n, len]: L tensors [h, len].
 */
function newestRows(weights, L, h, n, len) {
  const attention = [];
  for (let l = 0; l < L; l++) {
    const row = new Float32Array(h * len);
    for (let j = 0; j < h; j++) {
      const at = ((l * h + j) * n + n - 1) * len;
      row.set(weights.subarray(at, at + len), j * len);
    }
    attention.push(Tensor.wrap(row, [h, len]));
  }
  return attention;
}

/**
 * One generation in progress; create with LanguageModel.generator(). Disposed with its model;
 * after dispose() step and reset throw DISPOSED ("this generator was disposed").
 */
export class TokenGenerator extends WasmObject {
  /** @internal */
  constructor(model, prompt, { temperature, topP, seed, headMask }) {
    const pending = model._input(prompt, 'generator');   // checked before anything is allocated
    super(model._core, null, 'generator', model);
    this._m = model;
    this._temperature = temperature;
    this._topP = topP;
    this._seed = seed;
    this._rand = mulberry32(seed);
    this._prompt = prompt;
    this._headMask = headMask;
    try {
      this._cache = model._decoder.createCache(model.config.context, 1, { parent: this, what: 'generator' });
    } catch (e) {
      this.dispose();   // leaves its model's children as they were
      throw e;
    }
    this._pending = pending;   // ids not yet in the caches
    this._ids = Array.from(this._pending);   // every id of the text (byte-pair models decode them together)
    this._text = typeof prompt === 'string' ? prompt : null;   // null: decoded from _ids when read
  }

  /**
   * The prompt and the text of every token generated so far (a prompt of ids: their decoded text).
   * Byte-pair models decode every id together (a character can span tokens), so it is decoded when
   * read, once per step at most, not on every step.
   * @type {string}
   */
  get text() {
    return (this._text ??= this._m.decode(this._ids));
  }

  /** Tokens in each layer's KV cache. */
  get cacheLength() {
    return this._cache.length;
  }

  /**
   * Feeds the pending tokens through the caches and samples the next token. When the caches would
   * pass the context, they are reset and refilled with the last ⌊context/2⌋ tokens.
   * @returns {{token: string, id: number, p: number, cacheLength: number, attention: Tensor[],
   *   char: string}} the new token's text and id, its probability, the cache length after the
   *   step, and per layer the newest query's attention weights [h, cacheLength]; `char` is the
   *   same string as `token` (its name from when every model was character-level)
   * @throws {MHAError} DISPOSED
   */
  step() {
    this._alive('step');
    const m = this._m;
    const { context: C, numHeads: h, numLayers: L } = m.config;
    if (this.cacheLength + this._pending.length > C) {
      this._cache.reset();
      this._pending = typeof this._prompt === 'string' ? m.encode(this.text).slice(-Math.floor(C / 2)) : Int32Array.from(this._ids.slice(-Math.floor(C / 2)));
    }
    const n = this._pending.length;
    const out = this._cache.step(this._pending, { headMask: this._headMask, weights: true, lastOnly: true });
    const attention = newestRows(out.weights, L, h, n, this.cacheLength);
    const id = sampleToken(out.logProbs, this._temperature, this._topP, this._rand);
    const token = m._piece(id);
    this._ids.push(id);
    this._text = m._tok ? null : this.text + token;
    this._pending = Int32Array.of(id);
    return { token, id, p: Math.exp(out.logProbs[id]), cacheLength: this.cacheLength, attention, char: token };
  }

  /** Back to the prompt alone, with the sampler's seed from the start. */
  reset() {
    this._alive('reset');
    this._cache.reset();
    this._pending = this._m._input(this._prompt, 'reset');
    this._ids = Array.from(this._pending);
    this._text = typeof this._prompt === 'string' ? this._prompt : null;
    this._rand = mulberry32(this._seed);
  }
}

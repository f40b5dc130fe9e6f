/**
 * The runner of the lesson's trained character-level transformers (docs/trained-models.md): a
 * safetensors file in, text in, per-head attention, next-character log-probabilities, the loss in
 * bits per character, head ablation and KV-cache generation out.
 *
 * The attention layers (torch.nn.MultiheadAttention in training) run in the wasm engine as causal
 * self-attention; the embeddings, LayerNorms, the ReLU MLP and the output head are a few
 * matrix-vector loops in JS, small next to attention's share of a lesson-sized model's time.
 * Architecture: a pre-LayerNorm decoder (GPT-2, Radford et al. 2019; the residual stream view of
 * Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits").
 * @module model
 */
import { MHAError } from './errors.js';
import { Tensor } from './tensor.js';
import { fromTorch } from './torch.js';
import { mulberry32 } from './weights.js';
import { parseSafetensors, asBytes } from './safetensors.js';
import { analyzeHeads } from './heads.js';

/** The value of `__metadata__.format` this runner reads. */
export const MODEL_FORMAT = 'mha-wasm.charlm/1';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

function parseJSONField(metadata, key) {
  if (typeof metadata[key] !== 'string') throw invalid(`loadModel: __metadata__.${key} is missing`);
  try {
    return JSON.parse(metadata[key]);
  } catch (e) {
    throw invalid(`loadModel: __metadata__.${key} is not JSON (${e.message})`);
  }
}

/** The configuration of a file, checked: every size a positive integer, d_model divisible by h. */
function readConfig(metadata) {
  if (metadata.format !== MODEL_FORMAT) {
    throw invalid(`loadModel: __metadata__.format must be "${MODEL_FORMAT}", got ${JSON.stringify(metadata.format)}`);
  }
  const c = parseJSONField(metadata, 'config');
  if (c === null || typeof c !== 'object') throw invalid('loadModel: __metadata__.config must be a JSON object');
  const cfg = {};
  for (const [key, name, max] of [['vocab_size', 'vocabSize', 65536], ['d_model', 'dModel', 4096],
    ['num_heads', 'numHeads', 256], ['num_layers', 'numLayers', 64], ['d_ff', 'dFF', 65536], ['context', 'context', 65536]]) {
    const v = c[key];
    if (!Number.isInteger(v) || v < 1 || v > max) throw invalid(`loadModel: config.${key} must be an integer in [1, ${max}], got ${JSON.stringify(v)}`);
    cfg[name] = v;
  }
  if (cfg.dModel % cfg.numHeads !== 0) throw invalid(`loadModel: config.num_heads = ${cfg.numHeads} must divide d_model = ${cfg.dModel}`);
  cfg.lnEps = typeof c.ln_eps === 'number' && c.ln_eps > 0 && c.ln_eps < 1 ? c.ln_eps : 1e-5;
  if (!Number.isInteger(c.unk) || c.unk < 0 || c.unk >= cfg.vocabSize) {
    throw invalid(`loadModel: config.unk must be an integer in [0, ${cfg.vocabSize - 1}], got ${JSON.stringify(c.unk)}`);
  }
  cfg.unk = c.unk;
  cfg.dK = cfg.dModel / cfg.numHeads;
  return cfg;
}

/** name → expected shape of every tensor of the architecture. */
function expectedShapes(c) {
  const d = c.dModel;
  const s = {
    'tok_emb.weight': [c.vocabSize, d], 'pos_emb.weight': [c.context, d],
    'ln_f.weight': [d], 'ln_f.bias': [d], 'head.weight': [c.vocabSize, d], 'head.bias': [c.vocabSize],
  };
  for (let l = 0; l < c.numLayers; l++) {
    const p = `layers.${l}.`;
    Object.assign(s, {
      [`${p}ln1.weight`]: [d], [`${p}ln1.bias`]: [d], [`${p}ln2.weight`]: [d], [`${p}ln2.bias`]: [d],
      [`${p}attn.in_proj_weight`]: [3 * d, d], [`${p}attn.in_proj_bias`]: [3 * d],
      [`${p}attn.out_proj.weight`]: [d, d], [`${p}attn.out_proj.bias`]: [d],
      [`${p}mlp.fc.weight`]: [c.dFF, d], [`${p}mlp.fc.bias`]: [c.dFF],
      [`${p}mlp.proj.weight`]: [d, c.dFF], [`${p}mlp.proj.bias`]: [d],
    });
  }
  return s;
}

/** The bytes of a model source: bytes as they are; a URL fetched (a file: URL read from disk in Node). */
async function readSource(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return asBytes(source);
  if (typeof source !== 'string' && !(source instanceof URL)) {
    throw invalid(`loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got ${source === null ? 'null' : typeof source}`);
  }
  const href = String(source);
  if (href.startsWith('file:')) {
    const fs = await import(/* @vite-ignore */ 'node:fs/promises');
    return new Uint8Array(await fs.readFile(new URL(href)));
  }
  let res;
  try {
    res = await fetch(href);
  } catch (e) {
    throw invalid(`loadModel: cannot fetch ${href}: ${e.message}`);
  }
  if (!res.ok) throw invalid(`loadModel: fetching ${href} gave HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** y[T, out] = x[T, in] · Wᵀ + b with W stored [out, in] (torch.nn.Linear). */
function linear(x, T, nIn, W, b, nOut, y = new Float32Array(T * nOut)) {
  for (let t = 0; t < T; t++) {
    const xo = t * nIn;
    for (let o = 0; o < nOut; o++) {
      let s = b[o];
      const wo = o * nIn;
      for (let i = 0; i < nIn; i++) s += x[xo + i] * W[wo + i];
      y[t * nOut + o] = s;
    }
  }
  return y;
}

/** LayerNorm over the last axis (Ba et al. 2016), biased variance, as torch.nn.LayerNorm. */
function layerNorm(x, T, d, w, b, eps, y = new Float32Array(T * d)) {
  for (let t = 0; t < T; t++) {
    const o = t * d;
    let mean = 0;
    for (let i = 0; i < d; i++) mean += x[o + i];
    mean /= d;
    let v = 0;
    for (let i = 0; i < d; i++) { const z = x[o + i] - mean; v += z * z; }
    const inv = 1 / Math.sqrt(v / d + eps);
    for (let i = 0; i < d; i++) y[o + i] = (x[o + i] - mean) * inv * w[i] + b[i];
  }
  return y;
}

/** Row-wise log_softmax of logits [T, V], in place. */
function logSoftmax(z, T, V) {
  for (let t = 0; t < T; t++) {
    const o = t * V;
    let m = -Infinity;
    for (let i = 0; i < V; i++) if (z[o + i] > m) m = z[o + i];
    let s = 0;
    for (let i = 0; i < V; i++) s += Math.exp(z[o + i] - m);
    const lse = m + Math.log(s);
    for (let i = 0; i < V; i++) z[o + i] -= lse;
  }
  return z;
}

/**
 * A loaded character-level model. Create with `mha.loadModel(source)`; free with `dispose()`.
 */
export class CharModel {
  /** @internal */
  constructor(mha, parsed) {
    const { metadata, tensors } = parsed;
    const c = readConfig(metadata);
    const vocab = parseJSONField(metadata, 'vocab');
    if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string' && s.length >= 1 && s.length <= 2)) {
      throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} one-character strings`);
    }
    for (const [name, shape] of Object.entries(expectedShapes(c))) {
      const t = tensors[name];
      if (!t) throw invalid(`loadModel: tensor "${name}" is missing (expected shape [${shape.join(', ')}])`);
      if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
        throw new MHAError('SHAPE_MISMATCH', `loadModel: tensor "${name}": expected shape [${shape.join(', ')}], got [${t.shape.join(', ')}]`);
      }
      for (let i = 0; i < t.data.length; i++) {
        if (!Number.isFinite(t.data[i])) throw new MHAError('NON_FINITE', `loadModel: tensor "${name}" has ${t.data[i]} at flat index ${i}`);
      }
    }
    this._mha = mha;
    /** {vocabSize, dModel, numHeads, numLayers, dFF, context, lnEps, unk, dK} */
    this.config = Object.freeze(c);
    /** The characters of the vocabulary; id = index. */
    this.vocab = Object.freeze(vocab.slice());
    /** The raw `__metadata__` strings of the file. */
    this.metadata = Object.freeze({ ...metadata });
    /** The training record of the file (corpus, license, steps, seconds, held-out bits per character …). */
    this.training = metadata.training ? parseJSONField(metadata, 'training') : {};
    this._probes = metadata.probes ? parseJSONField(metadata, 'probes') : null;
    this._t = Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, v.data]));
    this._index = new Map(vocab.map((ch, i) => [ch, i]));
    this._layers = new Map();   // "l" or "l:j,k" (ablated heads) → Layer
    this._generators = new Set();
    this._heads = null;
    this._disposed = false;
    for (let l = 0; l < c.numLayers; l++) this._layer(l, []);
  }

  _alive(what) {
    if (this._disposed) throw new MHAError('DISPOSED', `${what}: this model was disposed`);
  }

  /** The engine layer of layer l with the given heads switched off (cached). */
  _layer(l, off) {
    const key = off.length ? `${l}:${off.join(',')}` : `${l}`;
    let layer = this._layers.get(key);
    if (layer) return layer;
    const p = `layers.${l}.attn.`;
    const sd = {};
    for (const k of ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']) {
      const t = this._t[p + k];
      sd[k] = { data: t, shape: expectedShapes(this.config)[p + k] };
    }
    const w = fromTorch(sd, { numHeads: this.config.numHeads });
    const { dK, dModel } = this.config;
    for (const j of off) w.wO.data.fill(0, j * dK * dModel, (j + 1) * dK * dModel);  // W_O rows of head j
    layer = this._mha.createLayer({ numHeads: this.config.numHeads, weights: w });
    this._layers.set(key, layer);
    if (off.length) this._evict(l, key);
    return layer;
  }

  /**
   * Frees the ablated variants of layer l other than `keep` and those a live generator uses, so
   * that trying many combinations of switched-off heads holds at most a few layers in memory.
   */
  _evict(l, keep) {
    for (const [k, layer] of this._layers) {
      if (!k.startsWith(`${l}:`) || k === keep) continue;
      if ([...this._generators].some((g) => g._layers.includes(layer))) continue;
      layer.dispose();
      this._layers.delete(k);
    }
  }

  /** Heads switched off per layer, from [[layer, head], ...], checked. */
  _ablation(ablate, what) {
    const { numLayers, numHeads } = this.config;
    const off = Array.from({ length: numLayers }, () => []);
    if (ablate === undefined || ablate === null) return off;
    if (!Array.isArray(ablate)) throw invalid(`${what}: ablate must be an array of [layer, head] pairs, got ${typeof ablate}`);
    for (const pair of ablate) {
      if (!Array.isArray(pair) || pair.length !== 2) throw invalid(`${what}: ablate entries must be [layer, head] pairs, got ${JSON.stringify(pair)}`);
      const [l, j] = pair;
      if (!Number.isInteger(l) || l < 0 || l >= numLayers) throw invalid(`${what}: ablate layer must be an integer in [0, ${numLayers - 1}], got ${JSON.stringify(l)}`);
      if (!Number.isInteger(j) || j < 0 || j >= numHeads) throw invalid(`${what}: ablate head must be an integer in [0, ${numHeads - 1}], got ${JSON.stringify(j)}`);
      if (!off[l].includes(j)) off[l].push(j);
    }
    for (const o of off) o.sort((a, b) => a - b);
    return off;
  }

  /**
   * Character ids of a text; characters outside the vocabulary get id `config.unk`.
   * @param {string} text
   * @returns {Int32Array} [T]
   */
  encode(text) {
    if (typeof text !== 'string') throw invalid(`encode: text must be a string, got ${typeof text}`);
    const chars = Array.from(text);
    const ids = new Int32Array(chars.length);
    for (let i = 0; i < chars.length; i++) ids[i] = this._index.get(chars[i]) ?? this.config.unk;
    return ids;
  }

  /**
   * @param {ArrayLike<number>} ids
   * @returns {string} the characters of the ids
   */
  decode(ids) {
    let s = '';
    for (const id of ids) s += this.vocab[id] ?? '\ufffd';
    return s;
  }

  /** The residual stream after the embeddings: x[t] = tok_emb[id_t] + pos_emb[pos0 + t]. */
  _embed(ids, pos0) {
    const d = this.config.dModel;
    const x = new Float32Array(ids.length * d);
    const te = this._t['tok_emb.weight'];
    const pe = this._t['pos_emb.weight'];
    for (let t = 0; t < ids.length; t++) {
      const a = ids[t] * d;
      const b = (pos0 + t) * d;
      for (let i = 0; i < d; i++) x[t * d + i] = te[a + i] + pe[b + i];
    }
    return x;
  }

  /** x += proj(relu(fc(LN2(x)))) for layer l, T rows. */
  _mlp(l, x, T) {
    const { dModel: d, dFF: f, lnEps } = this.config;
    const p = `layers.${l}.`;
    const t = this._t;
    const m = layerNorm(x, T, d, t[`${p}ln2.weight`], t[`${p}ln2.bias`], lnEps);
    const hdn = linear(m, T, d, t[`${p}mlp.fc.weight`], t[`${p}mlp.fc.bias`], f);
    for (let i = 0; i < hdn.length; i++) if (hdn[i] < 0) hdn[i] = 0;
    const y = linear(hdn, T, f, t[`${p}mlp.proj.weight`], t[`${p}mlp.proj.bias`], d);
    for (let i = 0; i < x.length; i++) x[i] += y[i];
  }

  /** log_softmax(head(LN_f(x))) for T rows: [T, V] natural-log probabilities. */
  _logProbs(x, T) {
    const { dModel: d, vocabSize: V, lnEps } = this.config;
    const t = this._t;
    const z = layerNorm(x, T, d, t['ln_f.weight'], t['ln_f.bias'], lnEps);
    return logSoftmax(linear(z, T, d, t['head.weight'], t['head.bias'], V), T, V);
  }

  /** The k most probable next characters from one row of log-probabilities. */
  _top(logp, offset, k = 5) {
    const V = this.config.vocabSize;
    const idx = Array.from({ length: V }, (_, i) => i).sort((a, b) => logp[offset + b] - logp[offset + a]);
    return idx.slice(0, k).map((i) => ({ char: this.vocab[i], id: i, p: Math.exp(logp[offset + i]) }));
  }

  /**
   * Runs the model on a text.
   * @param {string} text 1 ≤ length ≤ config.context characters
   * @param {{ablate?: Array<[number, number]>}} [opts] heads to switch off, as [layer, head] pairs:
   *   the head's output (before W_O) is set to zero
   * @returns {{tokens: string[], ids: Int32Array, attention: Tensor[], logProbs: Tensor, loss: number|null,
   *   next: Array<{char: string, id: number, p: number}>}} attention: per layer, [h, T, T] causal
   *   attention weights; logProbs [T, V]: row t is log p(next | text[0..t]) (natural log); loss:
   *   mean −log2 p(text[t+1] | text[..t]) over t = 0..T−2, in bits per character (null when T = 1);
   *   next: the 5 most probable characters after the text
   * @throws {MHAError} INVALID_ARGUMENT (text not a string, empty or longer than the context, a bad
   *   ablate pair), DISPOSED
   */
  run(text, opts = {}) {
    this._alive('run');
    if (typeof text !== 'string') throw invalid(`run: text must be a string, got ${typeof text}`);
    const ids = this.encode(text);
    const T = ids.length;
    const { dModel: d, context, vocabSize: V, lnEps } = this.config;
    if (T < 1 || T > context) throw invalid(`run: text must have 1 to ${context} characters (the model's context), got ${T}`);
    const off = this._ablation(opts && opts.ablate, 'run');
    const x = this._embed(ids, 0);
    const attention = [];
    for (let l = 0; l < this.config.numLayers; l++) {
      const p = `layers.${l}.`;
      const a = layerNorm(x, T, d, this._t[`${p}ln1.weight`], this._t[`${p}ln1.bias`], lnEps);
      const r = this._layer(l, off[l]).forward({ data: a, shape: [T, d] }, { causal: true });
      const y = r.output.data;
      for (let i = 0; i < x.length; i++) x[i] += y[i];
      attention.push(r.weights);
      this._mlp(l, x, T);
    }
    const logp = this._logProbs(x, T);
    let loss = null;
    if (T >= 2) {
      let s = 0;
      for (let t = 0; t < T - 1; t++) s -= logp[t * V + ids[t + 1]];
      loss = s / (T - 1) / Math.LN2;
    }
    return {
      tokens: Array.from(text), ids, attention, logProbs: Tensor.wrap(logp, [T, V]), loss,
      next: this._top(logp, (T - 1) * V),
    };
  }

  /**
   * Every head's scores and type on the probe texts stored in the file (docs/trained-models.md,
   * "Head analysis"), computed by this runner; they match the file's `heads` record (training
   * time) within float32 rounding.
   * @returns {Array<{layer: number, head: number, type: string, scores: {previous: number,
   *   twoBack: number, current: number, first: number, induction: number, entropy: number}}>}
   * @throws {MHAError} INVALID_ARGUMENT when the file has no probes; DISPOSED
   */
  get heads() {
    this._alive('heads');
    if (!this._heads) {
      if (!this._probes) throw invalid('heads: the file has no __metadata__.probes to measure the heads on');
      this._heads = analyzeHeads(this._probes, (text) => this.run(text).attention, this.config);
    }
    return this._heads;
  }

  /**
   * Incremental generation with one KV cache per layer: each step feeds the newest character
   * through the caches (the prompt all at once on the first step) and samples the next one.
   * When the caches reach the context, they are reset and refilled with the last ⌊context/2⌋
   * characters (positions restart at 0).
   * @param {string} prompt at least one character
   * @param {{temperature?: number, seed?: number, ablate?: Array<[number, number]>}} [opts]
   *   temperature 0 takes the most probable character; default 1; seed of the sampler (mulberry32)
   * @returns {Generator} `{text, cacheLength, step(), reset(), dispose()}`
   * @throws {MHAError} INVALID_ARGUMENT (empty prompt, a bad temperature or ablate pair), DISPOSED
   */
  generator(prompt, opts = {}) {
    this._alive('generator');
    if (typeof prompt !== 'string' || prompt.length === 0) throw invalid(`generator: prompt must be a non-empty string, got ${JSON.stringify(prompt)}`);
    const temperature = opts.temperature ?? 1;
    if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature)) {
      throw invalid(`generator: temperature must be a finite number ≥ 0, got ${JSON.stringify(opts.temperature)}`);
    }
    const g = new Generator(this, prompt, temperature, opts.seed ?? 0, this._ablation(opts.ablate, 'generator'));
    this._generators.add(g);
    return g;
  }

  /**
   * Generates n characters after a prompt (see generator()).
   * @param {string} prompt
   * @param {number} n characters to add
   * @param {object} [opts] as generator()
   * @returns {{text: string, steps: Array<{char: string, p: number, cacheLength: number}>}}
   */
  generate(prompt, n, opts = {}) {
    if (!Number.isInteger(n) || n < 0) throw invalid(`generate: n must be a non-negative integer, got ${JSON.stringify(n)}`);
    const g = this.generator(prompt, opts);
    try {
      const steps = [];
      for (let i = 0; i < n; i++) {
        const s = g.step();
        steps.push({ char: s.char, p: s.p, cacheLength: s.cacheLength });
      }
      return { text: g.text, steps };
    } finally {
      g.dispose();
    }
  }

  /** Frees every engine layer and KV cache of the model. Idempotent. */
  dispose() {
    if (this._disposed) return;
    for (const g of this._generators) g.dispose();
    for (const layer of this._layers.values()) layer.dispose();
    this._layers.clear();
    this._disposed = true;
  }
}

/** One generation in progress; see CharModel.generator. */
class Generator {
  /** @internal */
  constructor(model, prompt, temperature, seed, off) {
    this._m = model;
    this._temperature = temperature;
    this._seed = seed;
    this._rand = mulberry32(seed);
    this._prompt = prompt;
    const C = model.config.context;
    this._layers = off.map((o, l) => model._layer(l, o));
    this._caches = this._layers.map((layer) => layer.createKVCache({ maxLen: C }));
    /** The prompt and every character generated so far. */
    this.text = prompt;
    this._pending = model.encode(prompt);   // ids not yet in the caches
    if (this._pending.length > C) this._pending = this._pending.slice(this._pending.length - Math.floor(C / 2));
    this._pos = 0;
  }

  /** Tokens in each layer's KV cache. */
  get cacheLength() {
    return this._caches.length ? this._caches[0].length : 0;
  }

  /**
   * Feeds the pending characters through the caches and samples the next character.
   * @returns {{char: string, p: number, cacheLength: number, attention: Tensor[]}} the new
   *   character, its probability, the cache length after the step, and per layer the newest
   *   query's attention weights [h, cacheLength]
   * @throws {MHAError} DISPOSED
   */
  step() {
    if (!this._caches) throw new MHAError('DISPOSED', 'step: this generator was disposed');
    const m = this._m;
    const { dModel: d, context: C, vocabSize: V, lnEps, numHeads: h } = m.config;
    if (this.cacheLength + this._pending.length > C) {
      for (const c of this._caches) c.reset();
      this._pending = m.encode(this.text).slice(-Math.floor(C / 2));
      this._pos = 0;
    }
    const ids = this._pending;
    const n = ids.length;
    const x = m._embed(ids, this._pos);
    const attention = [];
    for (let l = 0; l < this._caches.length; l++) {
      const p = `layers.${l}.`;
      const a = layerNorm(x, n, d, m._t[`${p}ln1.weight`], m._t[`${p}ln1.bias`], lnEps);
      const r = this._caches[l].step({ data: a, shape: [n, d] });
      const y = r.output.data;
      for (let i = 0; i < x.length; i++) x[i] += y[i];
      const len = r.weights.shape[2];
      const row = new Float32Array(h * len);
      for (let j = 0; j < h; j++) row.set(r.weights.data.subarray((j * n + n - 1) * len, (j * n + n) * len), j * len);
      attention.push(Tensor.wrap(row, [h, len]));
      m._mlp(l, x, n);
    }
    this._pos += n;
    const last = m._logProbs(x.subarray((n - 1) * d), 1);
    let id;
    if (this._temperature === 0) {
      id = 0;
      for (let i = 1; i < V; i++) if (last[i] > last[id]) id = i;
    } else {
      const w = new Float64Array(V);
      let s = 0;
      for (let i = 0; i < V; i++) { w[i] = Math.exp(last[i] / this._temperature); s += w[i]; }
      let r = this._rand() * s;
      id = V - 1;
      for (let i = 0; i < V; i++) { r -= w[i]; if (r < 0) { id = i; break; } }
    }
    const char = m.vocab[id];
    this.text += char;
    this._pending = Int32Array.of(id);
    return { char, id, p: Math.exp(last[id]), cacheLength: this.cacheLength, attention };
  }

  /** Back to the prompt alone, with the sampler's seed from the start. */
  reset() {
    if (!this._caches) throw new MHAError('DISPOSED', 'reset: this generator was disposed');
    for (const c of this._caches) c.reset();
    this.text = this._prompt;
    this._pending = this._m.encode(this._prompt);
    if (this._pending.length > this._m.config.context) this._pending = this._pending.slice(-Math.floor(this._m.config.context / 2));
    this._pos = 0;
    this._rand = mulberry32(this._seed);
  }

  /** Frees the KV caches. Idempotent. */
  dispose() {
    if (!this._caches) return;
    for (const c of this._caches) c.dispose();
    this._caches = null;
    this._layers = [];
    this._m._generators.delete(this);
  }
}

/**
 * Loads a model file (see docs/trained-models.md) into the engine.
 * @param {object} mha an instance from createMHA()
 * @param {ArrayBuffer|ArrayBufferView|string|URL} source the file's bytes, or its URL
 * @returns {Promise<CharModel>}
 * @throws {MHAError} INVALID_ARGUMENT (unreadable source, a malformed safetensors file, a missing
 *   tensor or metadata field), SHAPE_MISMATCH (a tensor's shape), NON_FINITE (a NaN/Inf weight)
 */
export async function loadModel(mha, source) {
  const bytes = await readSource(source);
  return new CharModel(mha, parseSafetensors(bytes));
}

/**
 * The runner of the lesson's trained transformers (docs/trained-models.md): a safetensors file in,
 * text in, per-head attention, next-character log-probabilities, the loss in bits per character,
 * head ablation and KV-cache generation out.
 *
 * This file parses the file, tokenizes, samples and orchestrates; every layer numeric (embeddings,
 * norms, attention, MLP, output head, log-softmax) runs in the wasm core's decoder (decoder.js,
 * cpp/include/mha/decoder.hpp). Architecture: a pre-norm decoder (GPT-2, Radford et al. 2019; the
 * residual stream view of Elhage et al. 2021, "A Mathematical Framework for Transformer
 * Circuits"), with the options of current models (RMSNorm, GELU/SwiGLU MLPs, RoPE, grouped-query
 * K/V heads, a tied head) as the file's config says.
 * @module model
 */
import { MHAError } from '../engine/errors.js';
import { Tensor } from '../engine/tensor.js';
import { mulberry32 } from '../engine/weights.js';
import { parseSafetensors, asBytes } from '../formats/safetensors.js';
import { analyzeHeads } from './heads.js';
import { Decoder } from './decoder.js';
import { Llama2cTokenizer } from './bpe.js';
import { readLlama2cTokenizer } from '../formats/llama2c.js';

// The readers of model files and folders (model-folder.js, hf.js) load with the first loadModel:
// a page that only builds layers (the widget, the lesson's first sections) does not download them.
let readersPromise = null;
const readers = () => (readersPromise ??= import('../formats/model-folder.js'));

/**
 * Models whose weights take more than this many bytes (as float32) do not keep a JS copy of them
 * once they are in wasm memory (GPT-2 small: 498 MB). Their one JS reader, copyingScores /
 * ovLogits (copying.js), would need a V × V table per head: out of reach at that size anyway.
 */
export const KEEP_JS_WEIGHTS_BYTES = 64 * 2 ** 20;

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

/** An optional config key: one of `values` (the first is the default). */
function choice(c, key, values) {
  const v = c[key];
  if (v === undefined) return values[0];
  if (!values.includes(v)) throw invalid(`loadModel: config.${key} must be one of ${values.map((x) => JSON.stringify(x)).join(', ')}, got ${JSON.stringify(v)}`);
  return v;
}

/** An optional positive number config key below `max` (exclusive), or its default. */
function positive(c, key, dflt, max) {
  const v = c[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !(v > 0) || !(v < max)) throw invalid(`loadModel: config.${key} must be a number in (0, ${max}), got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The configuration of a file, checked: every size a positive integer, d_model divisible by h,
 * kv_heads dividing h, each architecture option one of its values (docs/trained-models.md,
 * "Architecture options").
 */
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
  cfg.norm = choice(c, 'norm', ['layernorm', 'rmsnorm']);
  // norm_eps; files written before it name the LayerNorm's eps ln_eps
  cfg.normEps = c.norm_eps !== undefined ? positive(c, 'norm_eps', 1e-5, 1) : positive(c, 'ln_eps', 1e-5, 1);
  cfg.lnEps = cfg.normEps;
  cfg.mlp = choice(c, 'mlp', ['relu', 'gelu', 'gelu_tanh', 'swiglu']);
  cfg.bias = choice(c, 'bias', [true, false]);
  cfg.positions = choice(c, 'positions', ['learned', 'rope']);
  cfg.ropeBase = positive(c, 'rope_base', 10000, 1e9);
  cfg.ropeInterleaved = choice(c, 'rope_interleaved', [false, true]);
  cfg.tied = choice(c, 'tied', [false, true]);
  const kv = c.kv_heads === undefined ? cfg.numHeads : c.kv_heads;
  if (!Number.isInteger(kv) || kv < 1 || cfg.numHeads % kv !== 0) {
    throw invalid(`loadModel: config.kv_heads must be a positive integer dividing num_heads = ${cfg.numHeads}, got ${JSON.stringify(c.kv_heads)}`);
  }
  cfg.kvHeads = kv;
  if (!Number.isInteger(c.unk) || c.unk < 0 || c.unk >= cfg.vocabSize) {
    throw invalid(`loadModel: config.unk must be an integer in [0, ${cfg.vocabSize - 1}], got ${JSON.stringify(c.unk)}`);
  }
  cfg.unk = c.unk;
  cfg.tokenizer = choice(c, 'tokenizer', ['characters', 'llama2c']);
  cfg.dK = cfg.dModel / cfg.numHeads;
  return cfg;
}

/**
 * name → expected shape of every tensor of the architecture. inProj: the attention is stored in
 * torch.nn.MultiheadAttention's form (in_proj_weight) rather than as q_proj / k_proj / v_proj.
 */
function expectedShapes(c, inProj) {
  const d = c.dModel, f = c.dFF, kvd = c.kvHeads * c.dK;
  const ln = c.norm === 'layernorm';
  const s = { 'tok_emb.weight': [c.vocabSize, d], 'ln_f.weight': [d] };
  if (c.positions === 'learned') s['pos_emb.weight'] = [c.context, d];
  if (ln) s['ln_f.bias'] = [d];
  if (!c.tied) s['head.weight'] = [c.vocabSize, d];
  if (c.bias) s['head.bias'] = [c.vocabSize];
  for (let l = 0; l < c.numLayers; l++) {
    const p = `layers.${l}.`;
    const add = (name, shape, isBias) => { if (!isBias || c.bias) s[p + name] = shape; };
    s[`${p}ln1.weight`] = [d];
    s[`${p}ln2.weight`] = [d];
    if (ln) { s[`${p}ln1.bias`] = [d]; s[`${p}ln2.bias`] = [d]; }
    if (inProj) {
      add('attn.in_proj_weight', [3 * d, d]);
      add('attn.in_proj_bias', [3 * d], true);
    } else {
      add('attn.q_proj.weight', [d, d]); add('attn.q_proj.bias', [d], true);
      add('attn.k_proj.weight', [kvd, d]); add('attn.k_proj.bias', [kvd], true);
      add('attn.v_proj.weight', [kvd, d]); add('attn.v_proj.bias', [kvd], true);
    }
    add('attn.out_proj.weight', [d, d]); add('attn.out_proj.bias', [d], true);
    if (c.mlp === 'swiglu') {
      add('mlp.gate.weight', [f, d]); add('mlp.gate.bias', [f], true);
      add('mlp.up.weight', [f, d]); add('mlp.up.bias', [f], true);
    } else {
      add('mlp.fc.weight', [f, d]); add('mlp.fc.bias', [f], true);
    }
    add('mlp.proj.weight', [d, f]); add('mlp.proj.bias', [d], true);
  }
  return s;
}

/** W [rows, cols] (PyTorch Linear's [out, in], rows r0 .. r0+n) → row-major [in, out] = Wᵀ, as the core takes it. */
function transposed(data, cols, r0 = 0, n = data.length / cols - r0) {
  const out = new Float32Array(n * cols);
  for (let r = 0; r < n; r++) {
    const src = (r0 + r) * cols;
    for (let i = 0; i < cols; i++) out[i * n + r] = data[src + i];
  }
  return out;
}

/** The decoder's weights in the core's layout ([in, out] matrices) from the file's tensors. */
function decoderWeights(c, t, inProj) {
  const d = c.dModel;
  const layers = [];
  for (let l = 0; l < c.numLayers; l++) {
    const p = `layers.${l}.`;
    const g = (name) => t[p + name] ?? null;
    const lw = { norm1: { weight: g('ln1.weight'), bias: g('ln1.bias') }, norm2: { weight: g('ln2.weight'), bias: g('ln2.bias') } };
    if (inProj) {
      const w = g('attn.in_proj_weight'), b = g('attn.in_proj_bias');
      lw.wQ = transposed(w, d, 0, d); lw.wK = transposed(w, d, d, d); lw.wV = transposed(w, d, 2 * d, d);
      if (b) { lw.bQ = b.subarray(0, d); lw.bK = b.subarray(d, 2 * d); lw.bV = b.subarray(2 * d); }
    } else {
      lw.wQ = transposed(g('attn.q_proj.weight'), d); lw.wK = transposed(g('attn.k_proj.weight'), d); lw.wV = transposed(g('attn.v_proj.weight'), d);
      lw.bQ = g('attn.q_proj.bias'); lw.bK = g('attn.k_proj.bias'); lw.bV = g('attn.v_proj.bias');
    }
    lw.wO = transposed(g('attn.out_proj.weight'), d);
    lw.bO = g('attn.out_proj.bias');
    const fc = c.mlp === 'swiglu' ? 'mlp.gate' : 'mlp.fc';
    lw.wFc = transposed(g(`${fc}.weight`), d);
    lw.bFc = g(`${fc}.bias`);
    lw.wUp = c.mlp === 'swiglu' ? transposed(g('mlp.up.weight'), d) : null;
    lw.bUp = c.mlp === 'swiglu' ? g('mlp.up.bias') : null;
    lw.wProj = transposed(g('mlp.proj.weight'), c.dFF);
    lw.bProj = g('mlp.proj.bias');
    layers.push(lw);
  }
  return {
    tokEmb: t['tok_emb.weight'], posEmb: t['pos_emb.weight'] ?? null,
    normF: { weight: t['ln_f.weight'], bias: t['ln_f.bias'] ?? null },
    head: c.tied ? null : transposed(t['head.weight'], d), headBias: t['head.bias'] ?? null,
    layers,
  };
}

/**
 * The bytes of a model source: bytes as they are; a URL fetched (a file: URL read from disk in
 * Node); counted by `progress` (model-folder.js progressCounter).
 */
async function readSource(source, progress) {
  const { fileBytes, fetchBytes } = await readers();
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const bytes = asBytes(source);
    progress.start('bytes', bytes.length);
    progress.add('bytes', bytes.length);
    progress.end('bytes');
    return bytes;
  }
  if (typeof source !== 'string' && !(source instanceof URL)) {
    throw invalid(`loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got ${source === null ? 'null' : typeof source}`);
  }
  const href = String(source);
  const name = decodeURIComponent(href.split(/[?#]/)[0].split('/').pop() || href);
  if (href.startsWith('file:')) return fileBytes(new URL(href), name, { progress });
  const bytes = await fetchBytes(href, name, { progress }).catch((e) => {
    throw e instanceof MHAError ? new MHAError(e.code, e.message.replace(`loadModel: ${name}: `, 'loadModel: ')) : e;
  });
  return bytes;
}

/**
 * A loaded character-level model. Create with `mha.loadModel(source)`; free with `dispose()`.
 */
export class CharModel {
  /** @internal */
  constructor(mha, parsed) {
    const { metadata, tensors } = parsed;
    // parsed.config / .weights / .tokenizer / .vocab: a model read from another format (model-folder.js)
    const c = parsed.config ? { ...parsed.config } : readConfig(metadata);
    const vocab = parsed.tokenizer !== undefined ? parsed.vocab : parseJSONField(metadata, 'vocab');
    if (parsed.tokenizer !== undefined) {
      this._tok = parsed.tokenizer;
    } else if (c.tokenizer === 'characters') {
      if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string' && Array.from(s).length === 1)) {
        throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} one-character strings`);
      }
    } else {
      // llama2.c's byte-pair tokenizer: vocab holds the pieces (UTF-8), __metadata__.scores their merge scores
      if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string')) {
        throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} strings (the tokenizer's pieces)`);
      }
      const enc = new TextEncoder();
      this._tok = new Llama2cTokenizer({ pieces: vocab.map((p) => enc.encode(p)), scores: parseJSONField(metadata, 'scores') });
    }
    const inProj = !parsed.weights && c.kvHeads === c.numHeads && tensors['layers.0.attn.in_proj_weight'] !== undefined;
    for (const [name, shape] of Object.entries(parsed.weights ? {} : expectedShapes(c, inProj))) {
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
    /**
     * {vocabSize, dModel, numHeads, kvHeads, numLayers, dFF, context, norm, normEps, lnEps (= normEps),
     * mlp, bias, positions, ropeBase, ropeInterleaved, tied, unk, dK}
     */
    this.config = Object.freeze(c);
    /** The tokens of the vocabulary (characters, or the byte-pair tokenizer's pieces); id = index. */
    this.vocab = Object.freeze(vocab.slice());
    /** The raw `__metadata__` strings of the file. */
    this.metadata = Object.freeze({ ...metadata });
    /** The training record of the file (corpus, license, steps, seconds, held-out bits per character …). */
    this.training = parsed.training ?? (metadata.training ? parseJSONField(metadata, 'training') : {});
    this._probes = metadata.probes ? parseJSONField(metadata, 'probes') : null;
    this._index = new Map(vocab.map((ch, i) => [ch, i]));
    this._generators = new Set();
    this._heads = null;
    this._disposed = false;
    const t = parsed.weights ? null : Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, v.data]));
    this._decoder = new Decoder(mha._core, {
      vocabSize: c.vocabSize, numLayers: c.numLayers, dFF: c.dFF, context: c.positions === 'learned' ? c.context : 0,
      norm: c.norm, normEps: c.normEps, mlp: c.mlp, bias: c.bias, tied: c.tied, dModel: c.dModel,
      numHeads: c.numHeads, kvHeads: c.kvHeads, attnBias: c.attnBias ?? c.bias,
      rope: c.positions === 'rope' ? { base: c.ropeBase, interleaved: c.ropeInterleaved } : null,
      weights: parsed.weights ?? decoderWeights(c, t, inProj),
    });
    const w = this._decoder.spec.weights;
    const floats = [w.tokEmb, w.posEmb, w.head, ...w.layers.flatMap((lw) => [lw.wQ, lw.wK, lw.wV, lw.wO, lw.wFc, lw.wUp, lw.wProj])]
      .reduce((n, a) => n + (a ? a.length : 0), 0);
    if (4 * floats > KEEP_JS_WEIGHTS_BYTES) {
      // in wasm now: the JS copies are let go (see KEEP_JS_WEIGHTS_BYTES)
      const mb = (4 * floats / 2 ** 20).toFixed(0);
      Object.defineProperty(this._decoder.spec, 'weights', {
        get() {
          throw invalid(`copyingScores: this model's weights (${mb} MB as float32) are not kept in JS memory once loaded (models over ${KEEP_JS_WEIGHTS_BYTES / 2 ** 20} MB); the copying score reads them, and would need a ${c.vocabSize} × ${c.vocabSize} table per head`);
        },
      });
    }
  }

  _alive(what) {
    if (this._disposed) throw new MHAError('DISPOSED', `${what}: this model was disposed`);
  }

  /**
   * The core's head mask [L·h] (1 = on, 0 = switched off) from [[layer, head], ...], checked; null
   * when no head is switched off.
   */
  _headMask(ablate, what) {
    const { numLayers, numHeads } = this.config;
    if (ablate === undefined || ablate === null) return null;
    if (!Array.isArray(ablate)) throw invalid(`${what}: ablate must be an array of [layer, head] pairs, got ${typeof ablate}`);
    const mask = new Float32Array(numLayers * numHeads).fill(1);
    for (const pair of ablate) {
      if (!Array.isArray(pair) || pair.length !== 2) throw invalid(`${what}: ablate entries must be [layer, head] pairs, got ${JSON.stringify(pair)}`);
      const [l, j] = pair;
      if (!Number.isInteger(l) || l < 0 || l >= numLayers) throw invalid(`${what}: ablate layer must be an integer in [0, ${numLayers - 1}], got ${JSON.stringify(l)}`);
      if (!Number.isInteger(j) || j < 0 || j >= numHeads) throw invalid(`${what}: ablate head must be an integer in [0, ${numHeads - 1}], got ${JSON.stringify(j)}`);
      mask[l * numHeads + j] = 0;
    }
    return ablate.length ? mask : null;
  }

  /**
   * The ids of a run/generator input: a string encoded, or token ids (an array or typed array of
   * integers in [0, vocabSize)) as they are — the input of a model without a tokenizer.
   */
  _input(x, what) {
    if (typeof x === 'string') return this.encode(x);
    if (!Array.isArray(x) && !(ArrayBuffer.isView(x) && !(x instanceof DataView))) {
      throw invalid(`${what}: text must be a string or an array of token ids, got ${x === null ? 'null' : typeof x}`);
    }
    const V = this.config.vocabSize;
    const ids = new Int32Array(x.length);
    for (let i = 0; i < x.length; i++) {
      if (!Number.isInteger(x[i]) || x[i] < 0 || x[i] >= V) throw invalid(`${what}: token id ${i} must be an integer in [0, ${V - 1}], got ${JSON.stringify(x[i])}`);
      ids[i] = x[i];
    }
    return ids;
  }

  /**
   * Token ids of a text. Character models: one id per character, `config.unk` for a character
   * outside the vocabulary. Byte-pair models (`config.tokenizer` 'llama2c'): llama2.c's encode,
   * BOS first (bpe.js).
   * @param {string} text
   * @returns {Int32Array} [T]
   */
  encode(text) {
    if (typeof text !== 'string') throw invalid(`encode: text must be a string, got ${typeof text}`);
    if (this._tok) return Int32Array.from(this._tok.encode(text));
    const chars = Array.from(text);
    const ids = new Int32Array(chars.length);
    for (let i = 0; i < chars.length; i++) ids[i] = this._index.get(chars[i]) ?? this.config.unk;
    return ids;
  }

  /**
   * @param {ArrayLike<number>} ids
   * @returns {string} the text of the ids (byte-pair models: llama2.c's decode)
   */
  decode(ids) {
    if (this._tok) return this._tok.decode(ids);
    let s = '';
    for (const id of ids) s += this.vocab[id] ?? '\ufffd';
    return s;
  }

  /** One token as shown under a heatmap: the character, or the piece (bpe.js piece()). */
  _piece(id) {
    return this._tok ? this._tok.piece(id) : this.vocab[id];
  }

  /** The k most probable next characters from one row of log-probabilities. */
  _top(logp, offset, k = 5) {
    const V = this.config.vocabSize;
    const idx = Array.from({ length: V }, (_, i) => i).sort((a, b) => logp[offset + b] - logp[offset + a]);
    return idx.slice(0, k).map((i) => ({ char: this._piece(i), id: i, p: Math.exp(logp[offset + i]) }));
  }

  /**
   * Runs the model on a text.
   * @param {string|ArrayLike<number>} text 1 ≤ length ≤ config.context characters (tokens), or the
   *   token ids themselves (integers in [0, vocabSize): a model without a tokenizer takes only these)
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
    const ids = this._input(text, 'run');
    const T = ids.length;
    const { context, vocabSize: V } = this.config;
    if (T < 1 || T > context) throw invalid(`run: text must have 1 to ${context} ${this._tok ? 'tokens' : 'characters'} (the model's context), got ${T}`);
    const headMask = this._headMask(opts && opts.ablate, 'run');
    const r = this._decoder.forward(ids, 1, { headMask, weights: true });
    const logp = r.logProbs;
    const { numLayers: L, numHeads: h } = this.config;
    const attention = [];
    for (let l = 0; l < L; l++) attention.push(Tensor.wrap(r.weights.subarray(l * h * T * T, (l + 1) * h * T * T), [h, T, T]));
    let loss = null;
    if (T >= 2) {
      let s = 0;
      for (let t = 0; t < T - 1; t++) s -= logp[t * V + ids[t + 1]];
      loss = s / (T - 1) / Math.LN2;
    }
    return {
      tokens: this._tok || typeof text !== 'string' ? Array.from(ids, (id) => this._piece(id)) : Array.from(text), ids, attention, logProbs: Tensor.wrap(logp, [T, V]), loss,
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
   * @param {string|ArrayLike<number>} prompt at least one character (a byte-pair model: any text,
   *   "" = BOS alone), or at least one token id
   * @param {{temperature?: number, topP?: number, seed?: number, ablate?: Array<[number, number]>}} [opts]
   *   temperature 0 takes the most probable token; default 1; topP in (0, 1]: nucleus sampling
   *   (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration"): only the most probable
   *   tokens whose probabilities (after the temperature) first reach topP together are drawn from,
   *   renormalized; default 1 (every token); seed of the sampler (mulberry32)
   * @returns {Generator} `{text, cacheLength, step(), reset(), dispose()}`
   * @throws {MHAError} INVALID_ARGUMENT (empty prompt, a bad temperature, topP or ablate pair), DISPOSED
   */
  generator(prompt, opts = {}) {
    this._alive('generator');
    // a byte-pair model's prompt may be empty (BOS alone); a character model needs a character
    const idsIn = typeof prompt !== 'string' && prompt !== null && typeof prompt === 'object' && prompt.length > 0;
    if (!idsIn && (typeof prompt !== 'string' || (prompt.length === 0 && !this._tok))) throw invalid(`generator: prompt must be a non-empty string, got ${JSON.stringify(prompt)}`);
    const temperature = opts.temperature ?? 1;
    if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature)) {
      throw invalid(`generator: temperature must be a finite number ≥ 0, got ${JSON.stringify(opts.temperature)}`);
    }
    const topP = opts.topP ?? 1;
    if (typeof topP !== 'number' || !(topP > 0 && topP <= 1)) {
      throw invalid(`generator: topP must be a number in (0, 1], got ${JSON.stringify(opts.topP)}`);
    }
    const g = new Generator(this, prompt, temperature, opts.seed ?? 0, this._headMask(opts.ablate, 'generator'), topP);
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

  /** Frees the model's decoder and KV caches in the engine. Idempotent. */
  dispose() {
    if (this._disposed) return;
    for (const g of this._generators) g.dispose();
    this._decoder.dispose();
    this._disposed = true;
  }
}

/**
 * Top-p (nucleus) truncation of unnormalized weights w (sum s), in place: keeps the most probable
 * tokens until their share of s first reaches p (ties at the boundary all kept), zeroes the rest,
 * and returns the kept sum.
 */
function nucleus(w, s, p) {
  const order = Array.from(w.keys()).sort((a, b) => w[b] - w[a]);
  let kept = 0, k = 0;
  while (k < order.length && kept < p * s) kept += w[order[k++]];
  while (k < order.length && w[order[k]] === w[order[k - 1]]) kept += w[order[k++]];
  for (; k < order.length; k++) w[order[k]] = 0;
  return kept;
}

/** One generation in progress; see CharModel.generator. */
class Generator {
  /** @internal */
  constructor(model, prompt, temperature, seed, headMask, topP) {
    this._m = model;
    this._temperature = temperature;
    this._topP = topP;
    this._seed = seed;
    this._rand = mulberry32(seed);
    this._prompt = prompt;
    this._headMask = headMask;
    const C = model.config.context;
    this._cache = model._decoder.createCache(C);
    this._pending = model._input(prompt, 'generator');   // ids not yet in the caches
    this._ids = Array.from(this._pending);   // every id of the text (byte-pair models decode them together)
    /** The prompt and every character generated so far (a prompt of ids: their decoded text). */
    this.text = typeof prompt === 'string' ? prompt : model.decode(this._ids);
  }

  /** Tokens in each layer's KV cache. */
  get cacheLength() {
    return this._cache ? this._cache.length : 0;
  }

  /**
   * Feeds the pending characters through the caches and samples the next character.
   * @returns {{char: string, p: number, cacheLength: number, attention: Tensor[]}} the new
   *   character, its probability, the cache length after the step, and per layer the newest
   *   query's attention weights [h, cacheLength]
   * @throws {MHAError} DISPOSED
   */
  step() {
    if (!this._cache) throw new MHAError('DISPOSED', 'step: this generator was disposed');
    const m = this._m;
    const { context: C, vocabSize: V, numHeads: h, numLayers: L } = m.config;
    if (this.cacheLength + this._pending.length > C) {
      this._cache.reset();
      this._pending = typeof this._prompt === 'string' ? m.encode(this.text).slice(-Math.floor(C / 2)) : Int32Array.from(this._ids.slice(-Math.floor(C / 2)));
    }
    const n = this._pending.length;
    const r = this._cache.step(this._pending, { headMask: this._headMask, weights: true, lastOnly: true });
    const len = this.cacheLength;
    // per layer, the newest query's row of each head: weights [L, 1, h, n, len]
    const attention = [];
    for (let l = 0; l < L; l++) {
      const row = new Float32Array(h * len);
      for (let j = 0; j < h; j++) {
        const at = ((l * h + j) * n + n - 1) * len;
        row.set(r.weights.subarray(at, at + len), j * len);
      }
      attention.push(Tensor.wrap(row, [h, len]));
    }
    const last = r.logProbs;
    let id;
    if (this._temperature === 0) {
      id = 0;
      for (let i = 1; i < V; i++) if (last[i] > last[id]) id = i;
    } else {
      const w = new Float64Array(V);
      let s = 0;
      for (let i = 0; i < V; i++) { w[i] = Math.exp(last[i] / this._temperature); s += w[i]; }
      if (this._topP < 1) s = nucleus(w, s, this._topP);
      let r = this._rand() * s;
      id = V - 1;
      for (let i = 0; i < V; i++) { r -= w[i]; if (r < 0) { id = i; break; } }
    }
    const char = m._piece(id);
    this._ids.push(id);
    this.text = m._tok ? m.decode(this._ids) : this.text + char;
    this._pending = Int32Array.of(id);
    return { char, id, p: Math.exp(last[id]), cacheLength: this.cacheLength, attention };
  }

  /** Back to the prompt alone, with the sampler's seed from the start. */
  reset() {
    if (!this._cache) throw new MHAError('DISPOSED', 'reset: this generator was disposed');
    this._cache.reset();
    this._pending = this._m._input(this._prompt, 'reset');
    this._ids = Array.from(this._pending);
    this.text = typeof this._prompt === 'string' ? this._prompt : this._m.decode(this._ids);
    this._rand = mulberry32(this._seed);
  }

  /** Frees the KV caches. Idempotent. */
  dispose() {
    if (!this._cache) return;
    this._cache.dispose();
    this._cache = null;
    this._m._generators.delete(this);
  }
}

/** A tokenizer for a model without one: token ids in and out, shown as `<id>`. */
function idsOnlyTokenizer(why) {
  const piece = (id) => `<${id}>`;
  return {
    encode() { throw invalid(`encode: ${why}: give token ids (an array of integers) instead of text`); },
    decode: (ids) => Array.from(ids, piece).join(''),
    piece,
  };
}

/** Adapts an hf-tokenizer.js tokenizer: pieces of ids it has no token for shown as `<id>`. */
function hfTokenizerAdapter(tok) {
  return {
    encode: (text) => tok.encode(text),
    decode: (ids) => { try { return tok.decode(Array.from(ids)); } catch { return Array.from(ids, (i) => { try { return tok.piece(i); } catch { return `<${i}>`; } }).join(''); } },
    piece: (id) => { try { return tok.piece(id); } catch { return `<${id}>`; } },
  };
}

/** The tokenizer files of a Hugging Face folder, as hf-tokenizer.js's tokenizer, or null when it has none. */
async function folderTokenizer(folder, vocabSize) {
  const { HF_LIMITS } = await import('../formats/hf.js');
  const opt = { maxBytes: HF_LIMITS.tokenizerBytes, optional: true };
  const tokenizerJson = await folder.read('tokenizer.json', opt);
  let files;
  if (tokenizerJson) files = { tokenizerJson };
  else {
    const vocabJson = await folder.read('vocab.json', opt);
    const mergesTxt = vocabJson ? await folder.read('merges.txt', opt) : null;
    if (!vocabJson || !mergesTxt) return null;
    files = { vocabJson, mergesTxt };
  }
  const tokenizerConfig = await folder.read('tokenizer_config.json', opt);
  if (tokenizerConfig) files.tokenizerConfig = tokenizerConfig;
  const { hfTokenizer } = await import('../formats/hf-tokenizer.js');   // only for a folder with tokenizer files
  const tok = await hfTokenizer(files);
  if (tok.vocabSize > vocabSize) {
    throw invalid(`loadModel: ${tokenizerJson ? 'tokenizer.json' : 'vocab.json'}: the tokenizer has ids up to ${tok.vocabSize - 1}, beyond the model's vocab_size ${vocabSize} in config.json`);
  }
  return tok;
}

/**
 * Loads a model into the engine. Sources:
 * - this project's model file (docs/trained-models.md): bytes, a URL, a file path in Node;
 * - a Hugging Face model folder (GPT2LMHeadModel, LlamaForCausalLM; hf.js): a URL ending in "/",
 *   a directory path or `file:` URL in Node, a FileSystemDirectoryHandle or a list of Files, holding
 *   config.json, model.safetensors (or model.safetensors.index.json and its shards) and the
 *   tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt);
 * - a llama2.c checkpoint (format version 0 or 1, recognized by its bytes) with, as
 *   `opts.tokenizer`, its tokenizer.bin (bytes, URL or path).
 * A model without a tokenizer loads too: run() and generator() then take token ids (arrays of
 * integers), and tokens show as `<id>`.
 * @param {object} mha an instance from createMHA()
 * @param {ArrayBuffer|ArrayBufferView|string|URL|FileSystemDirectoryHandle|File[]} source
 * @param {{tokenizer?: ArrayBuffer|ArrayBufferView|string|URL, progress?: (p: {file: string, loaded: number,
 *   total: number|null, fraction: number|null}) => void}} [opts] tokenizer: a llama2.c tokenizer.bin;
 *   progress: called as the bytes of each file arrive (read from disk in chunks of 8 MB, fetched
 *   over http, read from Files): `loaded` bytes of every file so far (never decreasing), `total`
 *   the sizes of the files read so far plus the one being read (its size on disk, a File's size,
 *   an http Content-Length; null while unknown: no Content-Length, or a compressed body), which
 *   grows as each next file of a folder starts (config.json, the weights, the tokenizer files), so
 *   `fraction` = loaded / total may step back then; the last event has loaded === total and
 *   fraction 1. Bytes given directly give one event.
 * @returns {Promise<CharModel>} config.tokenizer says which tokenizer it has: 'characters',
 *   'llama2c', 'hf' (hf-tokenizer.js) or 'none' (token ids only); config.family 'gpt2' or 'llama'
 *   for a Hugging Face folder, 'llama2c' for a llama2.c checkpoint
 * @throws {MHAError} INVALID_ARGUMENT (unreadable source, a malformed file, a missing tensor or
 *   metadata field, a refused configuration: each message names the file and the key or tensor),
 *   SHAPE_MISMATCH (a tensor's shape), NON_FINITE (a NaN/Inf weight)
 */
export async function loadModel(mha, source, opts = {}) {
  const { openFolder, readPath, readHFFolder, sniffModelFile, readLlama2cAnyVersion, progressCounter } = await readers();
  const progress = progressCounter(opts ? opts.progress : undefined);
  const folder = await openFolder(source, progress);
  if (folder) {
    const m = await readHFFolder(folder);
    const tok = await folderTokenizer(folder, m.config.vocabSize);
    const tokenizer = tok ? hfTokenizerAdapter(tok) : idsOnlyTokenizer('the model folder has no tokenizer.json (nor vocab.json + merges.txt)');
    const config = { ...m.config, family: m.family, tokenizer: tok ? 'hf' : 'none', unk: null,
      bos: m.hf.bos_token_id ?? tok?.bos ?? null, eos: m.hf.eos_token_id ?? tok?.eos ?? null };
    const vocab = Array.from({ length: config.vocabSize }, (_, i) => tokenizer.piece(i));
    return new CharModel(mha, { metadata: {}, tensors: {}, config, weights: m.weights, tokenizer, vocab,
      training: { source: `Hugging Face model folder ${folder.name}`, files: m.files } });
  }
  const bytes = (await readPath(source, progress)) ?? await readSource(source, progress);
  if (sniffModelFile(bytes) === 'llama2c') {
    const { config: lc, tensors } = readLlama2cAnyVersion(bytes);
    const config = { ...readConfig({ format: MODEL_FORMAT, config: JSON.stringify({ ...lc, unk: 0 }) }), family: 'llama2c' };
    let tokenizer, vocab;
    if (opts && opts.tokenizer !== undefined && opts.tokenizer !== null) {
      const tb = (await readPath(opts.tokenizer, progress)) ?? await readSource(opts.tokenizer, progress);
      const t = new Llama2cTokenizer(readLlama2cTokenizer(tb, { vocabSize: config.vocabSize }));
      tokenizer = { encode: (s) => t.encode(s), decode: (ids) => t.decode(ids), piece: (id) => t.piece(id) };
      config.tokenizer = 'llama2c';
      Object.assign(config, { bos: 1, eos: 2 });
    } else {
      tokenizer = idsOnlyTokenizer('no llama2.c tokenizer was given (loadModel(source, {tokenizer}))');
      config.tokenizer = 'none';
    }
    vocab = Array.from({ length: config.vocabSize }, (_, i) => tokenizer.piece(i));
    return new CharModel(mha, { metadata: {}, tensors, config, tokenizer, vocab,
      training: { source: 'llama2.c checkpoint', trainedWith: 'llama2.c' } });
  }
  return new CharModel(mha, parseSafetensors(bytes));
}

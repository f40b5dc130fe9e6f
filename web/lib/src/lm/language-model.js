/**
 * A loaded language model: text in; per-head attention, next-token log-probabilities, the loss in
 * bits per token, head ablation and KV-cache generation out. Character-level models (the lesson's)
 * and byte-pair models (stories260K, Hugging Face folders) alike: `config.tokenizer` says which.
 *
 * Every layer numeric (embeddings, norms, attention, MLP, output projection, log-softmax) runs in
 * the wasm core's decoder (decoder.js, cpp/include/mha/decoder.hpp), which the model owns as a
 * WasmObject (engine/handle.js) with its generators; this class tokenizes, checks arguments and
 * shapes results. Architecture: a pre-norm decoder (GPT-2, Radford et al. 2019; the
 * residual stream view of Elhage et al. 2021, "A Mathematical Framework for Transformer
 * Circuits"), with the options of current models (RMSNorm, GELU/SwiGLU MLPs, RoPE, grouped-query
 * K/V heads, a tied output projection) as the model's config says. Reading model files is
 * model.js's (loadModel) and formats/'s.
 * @module language-model
 */
import { MHAError } from '../engine/errors.js';
import { Tensor } from '../engine/tensor.js';
import { analyzeHeads, tokenProbes } from './heads.js';
import { Decoder, DecoderStaging } from './decoder.js';
import { widen16 } from '../formats/half.js';
import { TokenGenerator } from './generator.js';
import { WasmObject } from '../engine/handle.js';

/**
 * Models whose weights take more than this many bytes (as float32) do not keep a JS copy of them
 * once they are in wasm memory (GPT-2 small: 498 MB). Their one JS reader, copyingScores /
 * ovLogits (copying.js), would need a V × V table per head: out of reach at that size anyway.
 */
export const KEEP_JS_WEIGHTS_BYTES = 64 * 2 ** 20;

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

/** The decoder spec (decoder.js) of a config and its weights. */
function decoderSpec(c, weights, weightType) {
  return {
    weightType,
    vocabSize: c.vocabSize, numLayers: c.numLayers, dFF: c.dFF, context: c.positions === 'learned' ? c.context : 0,
    norm: c.norm, normEps: c.normEps, mlp: c.mlp, bias: c.bias, tied: c.tied, dModel: c.dModel,
    numHeads: c.numHeads, kvHeads: c.kvHeads, attnBias: c.attnBias ?? c.bias,
    rope: c.positions === 'rope' ? { base: c.ropeBase, interleaved: c.ropeInterleaved } : null,
    weights,
  };
}

/**
 * The JS readers of the weights (the copying score) take float32: a model whose matrices are
 * 16-bit shows them widened, computed on first read.
 */
function widenedWeightsInJS(spec, weightType) {
  const raw = spec.weights;
  let wide = null;
  const widen = (a) => (a instanceof Uint16Array ? widen16(a, weightType) : a);
  Object.defineProperty(spec, 'weights', {
    configurable: true,
    get() {
      if (!wide) {
        wide = { ...raw, tokEmb: widen(raw.tokEmb), lmHead: widen(raw.lmHead),
          layers: raw.layers.map((lw) => ({ ...lw, wQ: widen(lw.wQ), wK: widen(lw.wK), wV: widen(lw.wV), wO: widen(lw.wO),
            wFc: widen(lw.wFc), wGate: widen(lw.wGate), wUp: widen(lw.wUp), wProj: widen(lw.wProj) })) };
      }
      return wide;
    },
  });
}

/**
 * Values of a model's matrices and position table (config: LanguageModel.config's fields): what
 * KEEP_JS_WEIGHTS_BYTES counts, as float32.
 */
function matrixValues(c) {
  const kv = c.kvHeads * c.dK;
  const block = 2 * c.dModel * c.dModel + 2 * c.dModel * kv + (c.mlp === 'swiglu' ? 3 : 2) * c.dModel * c.dFF;
  return c.vocabSize * c.dModel * (c.tied ? 1 : 2) + (c.positions === 'learned' ? c.context * c.dModel : 0) + c.numLayers * block;
}

/** Whether JS keeps a model's weights once they are in wasm memory (KEEP_JS_WEIGHTS_BYTES). */
const keepsWeightsInJS = (c) => 4 * matrixValues(c) <= KEEP_JS_WEIGHTS_BYTES;

/**
 * Lets go of the JS copies of a large model's weights once they are in wasm memory (see
 * KEEP_JS_WEIGHTS_BYTES): reading them afterwards throws an error that says why. Returns whether
 * it did.
 */
function releaseLargeWeights(spec, c) {
  if (keepsWeightsInJS(c)) return false;
  const vocabSize = c.vocabSize;
  const mb = (4 * matrixValues(c) / 2 ** 20).toFixed(0);
  Object.defineProperty(spec, 'weights', {
    get() {
      throw invalid(`copyingScores: this model's weights (${mb} MB as float32) are not kept in JS memory once loaded (models over ${KEEP_JS_WEIGHTS_BYTES / 2 ** 20} MB); the copying score reads them, and would need a ${vocabSize} × ${vocabSize} table per head`);
    },
  });
  return true;
}

/** Sets every array of the weights outside the blocks to null (they are in the core). */
function dropArrays(w) {
  w.tokEmb = w.posEmb = w.lmHead = w.lmHeadBias = null;
  w.normF = { weight: null, bias: null };
}

/**
 * A loaded language model (character-level or byte-pair). Create with `mha.loadModel(source)`;
 * free with `dispose()` (its decoder and every generator's KV caches; a model dropped without it is
 * freed by the FinalizationRegistry, as every WasmObject). Also exported as `CharModel`, its name
 * from when every model it ran was character-level.
 */
export class LanguageModel extends WasmObject {
  /**
   * @internal loadModel (model.js) reads the source and gives its parts
   * @param {object} mha an instance from createMHA()
   * @param {{config: object, vocab: string[], tokenizer: object|null, weights: object,
   *   metadata?: Object<string, string>, training?: object, probes?: object|null,
   *   decoderHandle?: object|null}} parts config:
   *   the fields of `config` below; tokenizer: {encode, decode, piece} (tokenizers.js), null for a
   *   character-level model (one id per character of vocab); weights: decoder.js's spec weights;
   *   decoderHandle: the core's decoder already staged from them (LanguageModel.load), else null
   */
  constructor(mha, { config, vocab, tokenizer, weights, weightType = 'float32', metadata = {}, training = {}, probes = null, decoderHandle = null }) {
    super(mha._core, null, 'model');
    this._mha = mha;
    this._tok = tokenizer;
    /**
     * {vocabSize, dModel, numHeads, kvHeads, numLayers, dFF, context, norm, normEps, mlp, bias,
     * positions, ropeBase, ropeInterleaved, tied, unk, tokenizer, dK; family, bos, eos when known}
     */
    this.config = Object.freeze({ ...config });
    /** The tokens of the vocabulary (characters, or the tokenizer's pieces); id = index. */
    this.vocab = Object.freeze(vocab.slice());
    /** The raw `__metadata__` strings of the file ({} for other formats). */
    this.metadata = Object.freeze({ ...metadata });
    /** The training record of the file (corpus, license, steps, seconds, held-out bits per character …). */
    this.training = training;
    this._probes = probes;
    this._index = new Map(vocab.map((ch, i) => [ch, i]));
    this._heads = null;
    /** How the weight matrices are held in wasm memory: 'float32', 'float16' or 'bfloat16' (loadModel's weightStorage). */
    this.weightType = weightType;
    this._decoder = new Decoder(mha._core, decoderSpec(config, weights, weightType), this, decoderHandle);
    if (!releaseLargeWeights(this._decoder.spec, config) && weightType !== 'float32') widenedWeightsInJS(this._decoder.spec, weightType);
  }

  /**
   * A LanguageModel whose transformer blocks arrive one at a time (a reader that reads a file by
   * ranges, formats/hf.js): the weights outside the blocks go into the core first, then each block
   * as `blocks` gives it. A model over KEEP_JS_WEIGHTS_BYTES lets go of each array once it is in
   * the core (the arrays of `parts.weights` are set to null), so that JS holds one block's weights
   * at a time; a smaller one keeps them (the copying score reads them).
   * @internal loadModel (model.js)
   * @param {object} mha an instance from createMHA()
   * @param {object} parts as the constructor's, `weights.layers` empty
   * @param {AsyncIterable<object>|Iterable<object>} blocks each block's weights in order (decoder.js spec `weights.layers[l]`)
   * @returns {Promise<LanguageModel>}
   * @throws {MHAError} as the constructor; the errors of `blocks` (a reader's); INVALID_ARGUMENT
   *   (a block count other than numLayers)
   */
  static async load(mha, parts, blocks) {
    const { config, weights, weightType = 'float32' } = parts;
    const keep = keepsWeightsInJS(config);
    const building = new DecoderStaging(mha._core, decoderSpec(config, weights, weightType));
    const layers = [];
    let handle;
    try {
      if (!keep) dropArrays(weights);
      for await (const lw of blocks) {
        building.add(lw);
        if (keep) layers.push(lw);
      }
      handle = building.finish();
    } catch (e) {
      building.abort();
      throw e;
    }
    return new LanguageModel(mha, { ...parts, weights: { ...weights, layers }, decoderHandle: handle });
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
   * outside the vocabulary. Byte-pair models: their tokenizer's encode (llama2.c's: BOS first,
   * bpe.js; a Hugging Face folder's: its special tokens, hf-tokenizer.js).
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
   * @returns {string} the text of the ids (byte-pair models: their tokenizer's decode)
   */
  decode(ids) {
    if (this._tok) return this._tok.decode(ids);
    let s = '';
    for (const id of ids) s += this.vocab[id] ?? '\ufffd';
    return s;
  }

  /** One token's text as shown under a heatmap: the character, or the piece (bpe.js piece()). */
  _piece(id) {
    return this._tok ? this._tok.piece(id) : this.vocab[id];
  }

  /** The k most probable next tokens from one row of log-probabilities. */
  _top(logp, offset, k = 5) {
    const V = this.config.vocabSize;
    const idx = Array.from({ length: V }, (_, i) => i).sort((a, b) => logp[offset + b] - logp[offset + a]);
    return idx.slice(0, k).map((i) => {
      const token = this._piece(i);
      return { token, id: i, p: Math.exp(logp[offset + i]), char: token };
    });
  }

  /**
   * Runs the model on a text.
   * @param {string|ArrayLike<number>} text 1 ≤ length ≤ config.context characters (tokens), or the
   *   token ids themselves (integers in [0, vocabSize): a model without a tokenizer takes only these)
   * @param {{ablate?: Array<[number, number]>}} [opts] heads to switch off, as [layer, head] pairs:
   *   the head's output (before W_O) is set to zero
   * @returns {{tokens: string[], ids: Int32Array, attention: Tensor[], logProbs: Tensor, loss: number|null,
   *   next: Array<{token: string, id: number, p: number, char: string}>}} tokens: each token's
   *   text; attention: per layer, [h, T, T] causal attention weights; logProbs [T, V]: row t is
   *   log p(next | text[0..t]) (natural log); loss: mean −log2 p(token[t+1] | tokens[..t]) over
   *   t = 0..T−2, in bits per token (per character for a character model; null when T = 1); next:
   *   the 5 most probable next tokens (`char`: the same string as `token`, its former name)
   * @throws {MHAError} INVALID_ARGUMENT (text not a string, empty or longer than the context, a bad
   *   ablate pair), DISPOSED
   */
  run(text, opts = {}) {
    this._alive('run');
    const ids = this._input(text, 'run');
    const T = ids.length;
    const { context, vocabSize: V, numLayers: L, numHeads: h } = this.config;
    if (T < 1 || T > context) throw invalid(`run: text must have 1 to ${context} ${this._tok ? 'tokens' : 'characters'} (the model's context), got ${T}`);
    const headMask = this._headMask(opts && opts.ablate, 'run');
    const r = this._decoder.forward(ids, 1, { headMask, weights: true }, 'run');
    const logp = r.logProbs;
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
   * Every head's scores and type (docs/trained-models.md, "Head analysis"), computed by this
   * runner on the probe texts stored in this project's model file: they match the file's `heads`
   * record (training time) within float32 rounding. A Hugging Face folder or a llama2.c checkpoint
   * (`config.family` set), which store no probes, is measured on random token ids instead
   * (heads.js tokenProbes: spans of min(24, ⌊context/2⌋) tokens, the induction score on a span
   * written twice), the same on every run; `headsProbes` says which.
   * @returns {Array<{layer: number, head: number, type: string, scores: {previous: number,
   *   twoBack: number, current: number, first: number, induction: number, entropy: number}}>}
   * @throws {MHAError} INVALID_ARGUMENT when a model file has no probes; DISPOSED
   */
  get heads() {
    this._alive('heads');
    if (!this._heads) {
      const kind = this.headsProbes;
      if (kind === null) throw invalid('heads: the file has no __metadata__.probes to measure the heads on');
      const probes = kind === 'file' ? this._probes : tokenProbes(this.config);
      this._heads = analyzeHeads(probes, (text) => this.run(text).attention, this.config);
    }
    return this._heads;
  }

  /**
   * What `heads` is measured on: 'file' (the probe texts of this project's model file),
   * 'random-tokens' (a folder or llama2.c checkpoint: heads.js tokenProbes), or null (a model file
   * without probes: `heads` throws).
   * @returns {'file'|'random-tokens'|null}
   */
  get headsProbes() {
    return this._probes ? 'file' : this.config.family ? 'random-tokens' : null;
  }

  /**
   * Incremental generation with one KV cache per layer (generator.js): each step feeds the newest
   * token through the caches (the prompt all at once on the first step) and samples the next one.
   * When the caches reach the context, they are reset and refilled with the last ⌊context/2⌋
   * tokens (positions restart at 0).
   * @param {string|ArrayLike<number>} prompt at least one character (a byte-pair model: any text,
   *   "" = BOS alone), or at least one token id
   * @param {{temperature?: number, topP?: number, seed?: number, ablate?: Array<[number, number]>}} [opts]
   *   temperature 0 takes the most probable token; default 1; topP in (0, 1]: nucleus sampling
   *   (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration"): only the most probable
   *   tokens whose probabilities (after the temperature) first reach topP together are drawn from,
   *   renormalized; default 1 (every token); seed of the sampler (mulberry32)
   * @returns {TokenGenerator} `{text, cacheLength, step(), reset(), dispose()}`
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
    return new TokenGenerator(this, prompt, { temperature, topP, seed: opts.seed ?? 0, headMask: this._headMask(opts.ablate, 'generator') });
  }

  /**
   * Generates n tokens after a prompt (see generator()).
   * @param {string|ArrayLike<number>} prompt
   * @param {number} n tokens to add
   * @param {object} [opts] as generator()
   * @returns {{text: string, steps: Array<{token: string, id: number, p: number, cacheLength: number,
   *   char: string}>}} each step's token text and id (`char`: the same string as `token`, its former name)
   */
  generate(prompt, n, opts = {}) {
    this._alive('generate');
    if (!Number.isInteger(n) || n < 0) throw invalid(`generate: n must be a non-negative integer, got ${JSON.stringify(n)}`);
    const g = this.generator(prompt, opts);
    try {
      const steps = [];
      for (let i = 0; i < n; i++) {
        const s = g.step();
        steps.push({ token: s.token, id: s.id, p: s.p, cacheLength: s.cacheLength, char: s.token });
      }
      return { text: g.text, steps };
    } finally {
      g.dispose();
    }
  }
}

/**
 * mha-wasm: multi-head attention (Vaswani et al. 2017) computed by a C++/Eigen core compiled to
 * SIMD WebAssembly. Works in Node (≥ 18) and browsers.
 *
 *   import { createMHA } from 'mha-wasm';
 *   const mha = await createMHA();
 *   const layer = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
 *   const { output, weights } = layer.forward(x);   // x [T, 24] → output [T, 24], weights [2, T, T]
 * @module mha-wasm
 */
import { MHAError, coreError, CODES } from './engine/errors.js';
import { loadCore } from './loader.js';
import { stopThreads } from './engine/threads.js';
import { tileName } from './engine/tile.js';
import { Layer, KVCache } from './engine/layer.js';
import { Tensor } from './engine/tensor.js';
import { fromTorch } from './engine/torch.js';
import { VERSION } from './version.js';
import { resolveLayer, intOption, biasOption } from './engine/weights.js';
import { checkFits, stage, heapViews } from './engine/memory.js';
import { initHandle, withStaging } from './engine/handle.js';
import { parseSafetensors } from './formats/safetensors.js';
import { scoreModsOption } from './engine/scoremods.js';
import { argsLayout, configFields, layerWeightFields } from './engine/args.js';
import { loadModel, LanguageModel, CharModel, MODEL_FORMAT } from './lm/model.js';

export { MHAError, Tensor, Layer, KVCache, VERSION, parseSafetensors, LanguageModel, CharModel, MODEL_FORMAT };
export { headType, analyzeHeads, scoreText, inductionTargets, TYPE_THRESHOLD, BROAD_THRESHOLD, INDUCTION_MIN_SPAN } from './lm/heads.js';
export { copyingScores, ovLogits, copyingOf, inductionVerdict, COPYING_THRESHOLD } from './lm/copying.js';
export { eigenvalues } from './lm/eigen.js';
export { ovEigenvalues, eigenPositivity, positivityOf } from './lm/ov-eigen.js';

/** Calls the core's passport (the one place the configuration rules live) with a PassportArgs;
 * o.mods: the score modifiers (scoreModsOption). */
function corePassport(core, o) {
  return withStaging(core, (staging) => {
    const { base } = stage(core, staging, [['args', argsLayout(core, 'passport'), (P) => ({
      ...configFields({ ...o, scale: 0 }, o.mods ?? null, 0, P('slopes')),
      seq_len: o.seqLen || 1, key_len: o.keyLen || 0, batch: o.batch || 0,
    })]], [['slopes', o.mods?.slopes]], 'passport');
    const p = core.passport(base);
    if (p === null) throw coreError(core);
    return p;
  });
}

/** An instance of the wasm module with the API on top. Create it with createMHA(). */
class MHA {
  constructor(core) {
    this._core = core;
    this._setInfo();
  }

  /** Sets `info`: {version, simd, tier, threads, tile} (see MHAInfo in index.d.ts). */
  _setInfo() {
    const core = this._core;
    const rows = core.gemmTileRows();
    /**
     * {version, simd, tier, threads, tile}: simd is true when the module was built with wasm
     * SIMD128; tier is the build that runs: 'relaxed-simd' (fused multiply-adds), 'simd' or
     * 'scalar'; threads is how many threads a forward uses (1 for the single-thread builds); tile
     * is the GEMM register tile, '4x8', '6x8' or '3x12' (tile.js; null for the scalar tier).
     */
    this.info = Object.freeze({
      version: VERSION, simd: core.simd(), tier: core.mhaTier ?? (core.simd() ? 'simd' : 'scalar'), threads: core.numThreads(),
      tile: tileName(rows),
    });
  }

  /**
   * Stops the engine's worker threads (threaded builds); their workers are terminated once the
   * threads have exited (threads.js stopThreads: asynchronously, within 5 s). The engine
   * and its layers, caches and models keep working, on the calling thread (`info.threads` is then
   * 1). Not needed for a Node process to exit: idle workers never keep it alive. Idempotent.
   */
  dispose() {
    if (this._core.PThread) stopThreads(this._core);
    this._setInfo();
  }

  /**
   * Shape passport of one forward: every tensor's shape, the parameter and FLOP counts, from the
   * configuration alone. FLOPs count one multiply-add as 2: projections = Q, K and V projections,
   * scores = Q·Kᵀ over all heads, weighted = A·V over all heads, output = concat·W_O, scoreMods =
   * the score modifiers over B·h·Tq·Tk scores (softcap: 3 per score, a tanh counted as one and two
   * multiplies; ALiBi: 2 per score, one multiply-add; a window adds none and the other counts stay
   * those of dense attention); rope = 3 per rotated element of Q and K; matmul = projections +
   * scores + weighted + output (the matrix products only); softmax = the scaling and softmax of the
   * B·h·Tq·Tk scores, counted as 6 FLOPs per score (1 multiply by 1/√d_k, 1 compare for the row
   * maximum, 1 subtract, 1 exp counted as ONE FLOP, 1 add to the row sum, 1 multiply by the
   * reciprocal) plus 1 per score row for the reciprocal: B·h·Tq·(6·Tk + 1); it grows with h at a
   * fixed dModel while matmul does not. total = matmul + softmax + scoreMods + rope (`matmul`
   * alone counts the matrix products). memory: what one layer's forward materialises (Dao et al. 2022, FlashAttention,
   * avoids writing the scores): scores = B·h·Tq·Tk elements of the score matrix (the attention
   * weights have the same shape), scoreBytes = 4·scores (float32), kvCache = B·Tk·g·(dK + dV)
   * elements of K and V of one layer, kvCacheBytes = 4·kvCache (float32).
   * @param {{seqLen: number, dModel: number, numHeads: number, kvHeads?: number, keyLen?: number,
   *          batch?: number, dK?: number, dV?: number, kDim?: number, vDim?: number, bias?: boolean,
   *          softcap?: number, alibi?: boolean, alibiSlopes?: ArrayLike<number>,
   *          window?: [number, number], rope?: boolean|{dim?: number, base?: number, interleaved?: boolean}}} cfg
   *   (the score modifiers and RoPE as in createLayer)
   * @returns {{dK: number, dV: number, steps: Array<{name: string, shape: number[], formula: string}>,
   *   params: {wQPerHead: number, wQ: number, wK: number, wV: number, wO: number, bias: number,
   *   total: number, singleHeadWQ: number}, flops: {projections: number, scores: number,
   *   weighted: number, output: number, matmul: number, softmax: number, scoreMods: number,
   *   rope: number, total: number}, memory: {scores: number, scoreBytes: number, kvCache: number,
   *   kvCacheBytes: number}}}
   * @throws {MHAError} INVALID_CONFIG (e.g. numHeads not dividing dModel when dK is not given; a bad
   *   softcap, alibiSlopes or window, as createLayer)
   */
  passport(cfg) {
    if (cfg === null || typeof cfg !== 'object') throw new MHAError('INVALID_CONFIG', 'passport: expected an object {seqLen, dModel, numHeads, ...}');
    const o = {};
    for (const k of ['seqLen', 'dModel', 'numHeads']) o[k] = intOption(cfg, k, { required: true });
    for (const k of ['kvHeads', 'keyLen', 'batch', 'dK', 'dV', 'kDim', 'vDim']) o[k] = intOption(cfg, k);
    o.bias = biasOption(cfg);
    o.mods = scoreModsOption(cfg);
    return corePassport(this._core, o);
  }

  /**
   * Creates a layer whose weights live in wasm memory.
   * @param {object} opts
   * @param {number} [opts.dModel] query/output width (inferred from weights.wQ when omitted)
   * @param {number} opts.numHeads h
   * @param {number} [opts.kvHeads] g, dividing h (grouped-query; 1 = multi-query); default h
   * @param {number} [opts.dK] per-head query/key width; default dModel / h
   * @param {number} [opts.dV] per-head value width; default dK
   * @param {number} [opts.kDim] key input width; default dModel
   * @param {number} [opts.vDim] value input width; default dModel
   * @param {boolean} [opts.bias] default true (or, with weights, whether biases are given)
   * @param {number} [opts.scale] score scale; default 1/√d_k
   * @param {object} [opts.weights] packed {wQ [dModel, h·dK], wK [kDim, g·dK], wV [vDim, g·dV],
   *   wO [h·dV, dModel], bQ?, bK?, bV?, bO?} or per-head {heads: [{wQ, wK, wV, bQ?, bK?, bV?}],
   *   wO, bO?}; all [in, out]
   * @param {number} [opts.seed] seed of the Xavier-uniform init used when weights are omitted
   * @param {number} [opts.softcap] logit soft-capping (Gemma 2): scores ← cap·tanh(scores / cap) on
   *   the scaled scores, before masks and softmax; a finite number > 0 (Gemma 2 uses 50). Name as
   *   FlashAttention's `softcap` argument.
   * @param {boolean} [opts.alibi] ALiBi (Press et al. 2022): scores −= m_h·|i − j| for query
   *   position i, key j, with the paper's geometric slopes m_h (2^(−8/h), 2^(−16/h), …; for h not a
   *   power of two, those of the closest power of two n, then every other slope of 2n heads). |i − j|
   *   as FlashAttention's alibi_slopes; under a causal mask it is the paper's −m·(i − j).
   * @param {ArrayLike<number>} [opts.alibiSlopes] ALiBi with these slopes, one per query head
   *   (length numHeads; turns ALiBi on)
   * @param {[number, number]} [opts.window] sliding window (Longformer, Beltagy et al. 2020; Mistral
   *   7B), FlashAttention's window_size: query i attends keys j with i − left ≤ j ≤ i + right;
   *   −1 = unbounded on that side ([w, 0] with causal: Mistral's window of w + 1 tokens). Key tiles
   *   outside the window are not computed, and a KV cache's step does not read them. A query whose
   *   keys are all masked gets weights 0 and output 0.
   *   Positions: query i is at i in a forward, at cache.length + i in a KV-cache step; key j at j.
   * @param {boolean|{dim?: number, base?: number, interleaved?: boolean}} [opts.rope] rotary position
   *   embedding (RoPE; Su et al. 2021, RoFormer §3.4) on Q and K right after their projection: pair p
   *   of a head's first `dim` dims at position m is rotated by m·base^(−2p/dim):
   *   (a, b) ← (a·cos − b·sin, a·sin + b·cos); pairs (x[2p], x[2p+1]) with interleaved (RoFormer,
   *   GPT-J) or (x[p], x[p + dim/2]) without (the default: GPT-NeoX, HF Llama). dim even ≤ dK
   *   (default dK; 0 rotates nothing), base finite > 1 (default 10000). Same positions as above
   *   (cross-attention: queries and keys both from 0); a KV cache stores its keys rotated.
   * @returns {Layer}
   * @throws {MHAError} INVALID_CONFIG (also softcap not finite or ≤ 0, alibiSlopes not of length
   *   numHeads, window not [left, right] with integers ≥ −1, rope.dim odd or > dK, rope.base ≤ 1 or not
   *   finite; the error names the option), SHAPE_MISMATCH
   *   (a weight's shape), NON_FINITE (a weight's NaN/Inf with its index), INVALID_ARGUMENT, OUT_OF_MEMORY
   */
  createLayer(opts) {
    const core = this._core;
    // Refuse weights the heap cannot hold *before* the seeded init builds them in JS (otherwise
    // dModel = 30000 allocates 14 GB of Float32Arrays before failing). The figure is the staged
    // weights plus the core's packed copy of them; only the staged ones are malloc'd here, since
    // mallocing both would leave no room for the core's copy of a layer of ~1/3 of the heap.
    // Layer::create also probes the heap for its packed copy and refuses with OUT_OF_MEMORY
    // (fragmentation can defeat this estimate). Regression: tests/oom.test.mjs.
    const mods = opts !== null && typeof opts === 'object' ? scoreModsOption(opts) : null;
    const { config, packed, headDims } = resolveLayer(opts, (c) => {
      const p = corePassport(core, { ...c, mods });
      checkFits(core, p.params.total * 4 * 2 + 64, 'createLayer');
      return p;
    });
    // The core's LayerArgs, then every array it points to (weights, per-head widths, ALiBi slopes).
    const names = ['wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO'];
    return withStaging(core, (staging) => {
      const { base } = stage(core, staging, [['args', argsLayout(core, 'layer'), (P) => ({
        ...configFields({ ...config, dK: headDims ? 0 : config.dK, dV: headDims ? 0 : config.dV }, mods, P('headDims'), P('slopes')),
        ...layerWeightFields(P),
      })]], [...names.map((k) => [k, packed[k]]), ['headDims', headDims], ['slopes', mods?.slopes]], 'createLayer');
      return new Layer(core, initHandle(core, core.LayerHandle, (hd) => hd.init(base), 'createLayer'), config);
    });
  }

  /**
   * PyTorch nn.MultiheadAttention state dict → createLayer weights (see torch.js).
   * @param {object} stateDict
   * @param {{numHeads: number}} opts
   */
  fromTorch(stateDict, opts) {
    return fromTorch(stateDict, opts);
  }

  /**
   * A PyTorch nn.MultiheadAttention state dict stored as safetensors → createLayer weights.
   * @param {ArrayBuffer|ArrayBufferView} bytes the safetensors file
   * @param {{numHeads: number, prefix?: string}} opts prefix selects one module's keys when the
   *   file holds several (e.g. "layers.0.attn."); without it the keys are matched by suffix
   * @returns {object} the weights of fromTorch (pass as `weights` to createLayer with numHeads)
   * @throws {MHAError} INVALID_ARGUMENT (a malformed file, missing keys), SHAPE_MISMATCH, INVALID_CONFIG
   */
  fromSafetensors(bytes, opts) {
    const { tensors } = parseSafetensors(bytes);
    const prefix = opts && typeof opts.prefix === 'string' ? opts.prefix : '';
    const sd = {};
    for (const [k, v] of Object.entries(tensors)) if (k.startsWith(prefix)) sd[k.slice(prefix.length)] = v;
    return fromTorch(sd, opts);
  }

  /**
   * Loads a trained model: its layers run in this engine; see LanguageModel for run(), heads,
   * generator() and dispose(). Sources (see loadModel in model.js): this project's .safetensors
   * (docs/trained-models.md) as bytes, URL or Node path; a Hugging Face model folder
   * (GPT2LMHeadModel, LlamaForCausalLM: a URL ending in "/", a Node directory path, a
   * FileSystemDirectoryHandle or File list); a llama2.c checkpoint (.bin, versions 0 and 1) with
   * `opts.tokenizer` its tokenizer.bin (or both in one File list); one File is read as that file
   * (formats/sources.js opens every source). `opts.progress({file, loaded, total, fraction})` is called
   * as the bytes of each file arrive (loaded never decreases; total null while a size is unknown;
   * the last event has loaded === total, fraction 1: see loadModel in model.js).
   * `opts.weightStorage`: 'file' (default: a float16 or bfloat16 file's matrices stay 16-bit in
   * wasm memory, half of float32's bytes, with the results of their values widened to float32; a
   * float32 file's stay float32), 'float16' (float32 matrices rounded to float16: half the memory,
   * log-probs off by the weights' rounding) or 'float32' (every matrix widened).
   * @param {ArrayBuffer|ArrayBufferView|string|URL|FileSystemDirectoryHandle|File|FileList|File[]} source
   * @param {{tokenizer?: ArrayBuffer|ArrayBufferView|string|URL|File, progress?: (p: {file: string, loaded: number, total: number|null, fraction: number|null}) => void, weightStorage?: 'file'|'float16'|'float32'}} [opts]
   * @returns {Promise<LanguageModel>}
   * @throws {MHAError} INVALID_ARGUMENT, SHAPE_MISMATCH, NON_FINITE (see loadModel in model.js)
   */
  loadModel(source, opts) {
    return loadModel(this, source, opts);
  }

  /**
   * Wasm memory figures: the figure to budget a page with, and to find leaks. `heapBytes` is the
   * engine's whole wasm memory (the models' weights, layers, KV caches and scratch, plus free space
   * kept for reuse): it only grows (wasm memory never shrinks), and a model loaded after another
   * was disposed reuses the freed space. A browser's `performance.measureUserAgentSpecificMemory()`
   * does not count the wasm heap (it can report a fraction of what the page holds): budget with
   * `heapBytes`.
   * @returns {{heapBytes: number, inUseBytes: number}} heap size and bytes currently malloc'd (bytes)
   */
  memory() {
    return { heapBytes: heapViews(this._core).heapBytes(), inUseBytes: this._core.heapInUse() };
  }
}

/**
 * Loads the wasm module and returns the API.
 * @param {{locateFile?: (path: string, prefix: string) => string, wasmURL?: string|URL,
 *          wasmBinary?: ArrayBuffer|Uint8Array, tier?: 'relaxed-simd'|'simd'|'scalar', simd?: boolean,
 *          threads?: number|'auto', tile?: 'auto'|'4x8'|'6x8'|'3x12'}} [options]
 *   where the .wasm comes from (by default the file next to the loader: read from disk in Node,
 *   fetched in browsers), and which build: the best tier this engine compiles unless `tier`
 *   (or `simd`: true = 'simd', false = 'scalar') forces one; `threads` (default 'auto': the
 *   reported cores, at most 4) loads the tier's threaded build where the runtime allows it (Node;
 *   cross-origin isolated pages) and falls back to one thread elsewhere, silently; `tile`
 *   (default 'auto') the GEMM register tile: 'auto' takes, for the relaxed-simd tier, 6 × 8 on
 *   V8 ≥ 13.6 (Node ≥ 24, Chromium ≥ 136), 3 × 12 on older V8 (Node 20, 22) and 4 × 8 on other
 *   engines and for the simd tier; it changes speed only, never results (tile.js)
 * @returns {Promise<MHA>}
 */
export async function createMHA(options = {}) {
  const core = await loadCore(options);
  return new MHA(core);
}

export { CODES as ERROR_CODES };
export { TIERS } from './loader.js';

/**
 * The deterministic PRNG (mulberry32) behind `createLayer({seed})`: `mulberry32(seed)()` gives
 * floats in [0, 1). Exported so pages can draw reproducible inputs from the same generator.
 */
export { mulberry32 } from './engine/weights.js';

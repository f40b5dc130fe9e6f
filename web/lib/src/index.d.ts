/**
 * mha-wasm: multi-head attention (Vaswani et al. 2017) computed by a C++/Eigen core compiled to
 * SIMD WebAssembly. Works in Node (≥ 18) and browsers.
 *
 * ```ts
 * import { createMHA } from 'mha-wasm';
 * const mha = await createMHA();
 * const layer = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
 * const { output, weights } = layer.forward(x);   // x [T, 24] → output [T, 24], weights [2, T, T]
 * ```
 *
 * Conventions: `y = x·W + b` with every weight `W` stored row-major as `[in, out]`; shapes are
 * written `[B?, Tq, dModel]` where `B?` is present only for batched inputs. Every error the API
 * throws is an {@link MHAError}; after one, the module keeps working.
 * @packageDocumentation
 */

import type { Passport, PassportConfig } from './types/passport.js';
import type { Layer, LayerOptions, TorchStateDict, TorchWeights } from './types/layer.js';
import type { LanguageModel, copyingScores } from './types/model.js';
export * from './types/passport.js';
export * from './types/layer.js';
export * from './types/model.js';

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The `code` of an {@link MHAError}. */
export type MHAErrorCode =
  | 'INVALID_CONFIG'
  | 'SHAPE_MISMATCH'
  | 'NON_FINITE'
  | 'OUT_OF_MEMORY'
  | 'DISPOSED'
  | 'INVALID_ARGUMENT';

/**
 * The one error type the API throws. `code` says what went wrong; the message names the argument,
 * the expected and the actual value (e.g. `query: expected shape [Tq, 24], got [3, 6]`).
 * After an MHAError the module keeps working: the next call succeeds.
 *
 * - `INVALID_CONFIG`: a layer or passport option is invalid (e.g. numHeads not dividing dModel).
 * - `SHAPE_MISMATCH`: a tensor, weight or mask has the wrong shape.
 * - `NON_FINITE`: an input or weight holds NaN or ±Infinity (the message gives its index).
 * - `OUT_OF_MEMORY`: the call needs more than the wasm heap (2 GiB at most) can give;
 *   refused up front, `bytes` is what it would need.
 * - `DISPOSED`: the layer, KV cache, model or generator was disposed.
 * - `INVALID_ARGUMENT`: any other bad argument (wrong type, missing weight, cache full, …).
 */
export class MHAError extends Error {
  /**
   * @param code one of the {@link MHAErrorCode}s
   * @param message names the argument, the expected and the actual value
   * @param details the fields given are copied onto the error
   */
  constructor(code: MHAErrorCode, message: string, details?: { bytes?: number; argument?: string; index?: number[] });
  readonly name: 'MHAError';
  /** What went wrong. */
  code: MHAErrorCode;
  /** For `OUT_OF_MEMORY`: the number of bytes the refused call would need. */
  bytes?: number;
  /** For an error the engine core raised: the argument at fault, in this API's names (e.g.
   * `'query'`, `'keyPaddingMask'`, `'weights.wQ'`, `'numHeads'`). */
  argument?: string;
  /** For `NON_FINITE`: the index of the first bad element in the caller's shape (an unbatched
   * input's index has no batch entry). */
  index?: number[];
}

/**
 * The core's status codes, index = numeric code (`ERROR_CODES[0]` is `'OK'`).
 */
export const ERROR_CODES: readonly ['OK', 'INVALID_CONFIG', 'SHAPE_MISMATCH', 'NON_FINITE', 'OUT_OF_MEMORY', 'DISPOSED', 'INVALID_ARGUMENT'];

/** The package version, e.g. `'0.1.0'` (equal to package.json's). */
export const VERSION: string;

// ---------------------------------------------------------------------------------------------
// Tensors and tensor-like inputs
// ---------------------------------------------------------------------------------------------

/** Nested arrays of `T` of any depth, e.g. `number[][]` for a matrix. Must be rectangular. */
export type NestedArray<T> = ReadonlyArray<T | NestedArray<T>>;

/**
 * A dense row-major tensor: `{data, shape}`. `data.length` must equal the product of `shape`.
 * `Float32Array` data is passed to wasm memory without a JS-side copy; other array-likes are converted.
 */
export interface TensorLike {
  /** Row-major values. */
  readonly data: Float32Array | ArrayLike<number>;
  /** Dimensions, e.g. `[B, T, dModel]`. */
  readonly shape: readonly number[];
}

/**
 * Anything the API accepts as a float tensor: nested arrays of numbers (shape inferred; must be
 * rectangular), a {@link Tensor}, or `{data, shape}`.
 * @throws {MHAError} where consumed: `INVALID_ARGUMENT` (not tensor-like, non-numbers),
 *   `SHAPE_MISMATCH` (ragged nesting, `data.length ≠ ∏shape`)
 */
export type TensorInput = NestedArray<number> | Tensor | TensorLike;

/**
 * A dense row-major float32 tensor; every result of the API is one (copied out of wasm memory).
 * Results of at most 2 KB (512 floats) are views into a shared 16 KB `ArrayBuffer`, as Node's
 * `Buffer` pool does for small buffers: their `data.buffer` is not theirs alone, so copy with
 * `data.slice()` before transferring it to a worker (transferring the shared buffer itself empties
 * the other results that live in it; later calls are not affected).
 */
export class Tensor {
  /**
   * @param data row-major values (converted to a Float32Array when another array-like)
   * @param shape dimensions; `data.length` must equal their product
   * @throws {MHAError} `SHAPE_MISMATCH` when `data.length ≠ ∏shape`
   */
  constructor(data: Float32Array | ArrayLike<number>, shape: readonly number[]);
  /** Row-major values. */
  data: Float32Array;
  /** Dimensions, e.g. `[B, Tq, dModel]`. */
  shape: number[];
  /** Number of elements (`∏shape`). */
  readonly size: number;
  /**
   * The values as nested arrays of numbers: a `[2, 3]` tensor gives `number[][]`; shape `[]`
   * gives a number.
   */
  toArray(): any;
  /**
   * The value at a multi-index, one index per dimension (e.g. `output.get(0, 1)` is row 0,
   * column 1 of a `[T, dModel]` output). Indices are not bounds-checked.
   */
  get(...idx: number[]): number;
}

/**
 * An attention mask, as `torch.nn.MultiheadAttention` takes it:
 * - **boolean** (true = masked, may not attend): nested arrays of booleans, or `{data, shape}`
 *   with `Uint8Array` data (0/1) or `boolean[]` data;
 * - **additive** (added to the scores; `-Infinity` masks): nested arrays of numbers, a
 *   {@link Tensor}, or `{data, shape}` with `Float32Array` or number data.
 */
export type MaskInput =
  | NestedArray<boolean>
  | NestedArray<number>
  | Tensor
  | { readonly data: Uint8Array | Float32Array | ArrayLike<number> | readonly boolean[]; readonly shape: readonly number[] };

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

/**
 * Where the wasm core comes from. By default the `.wasm` next to the loader: read from disk in
 * Node, fetched with `new URL('../wasm/mha_core.wasm', import.meta.url)` in browsers (bundlers
 * such as Vite emit it as an asset). The first of `wasmBinary`, `wasmURL`, `locateFile` given wins.
 */
export interface CreateMHAOptions {
  /**
   * The `.wasm` bytes themselves (e.g. from your own fetch, or `fs.readFile` of
   * `mha-wasm/wasm`). Must match the build: the SIMD build needs an engine with wasm SIMD128.
   */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
  /**
   * The URL of the `.wasm` of the chosen build (http(s), `blob:`, `data:` or, in Node, `file:`),
   * e.g. a CDN copy of `mha_core.wasm` (or of `mha_core_scalar.wasm` with `simd: false`).
   */
  wasmURL?: string | URL;
  /**
   * Emscripten's hook: called with the chosen build's file name (`'mha_core_relaxed.wasm'`,
   * `'mha_core.wasm'` or `'mha_core_scalar.wasm'`) and the default folder URL; returns the URL (in
   * Node also a path) to load it from. Serves every build, so prefer it to `wasmURL` when engines
   * differ.
   */
  locateFile?: (path: string, prefix: string) => string;
  /**
   * Which build: `true` the `'simd'` tier, `false` the `'scalar'` tier (kept from before `tier`).
   * Default: the best tier the engine compiles (relaxed-simd in Chromium ≥ 114, Firefox ≥ 146 and
   * Node ≥ 22; simd in Safari ≥ 16.4 and Node 20; scalar in older engines).
   */
  simd?: boolean;
  /**
   * Forces a build: `'relaxed-simd'` (fused multiply-adds through relaxed SIMD), `'simd'` or
   * `'scalar'`. Default: the best tier this engine compiles (probed with `WebAssembly.validate`
   * on the exact instructions each tier uses). A forced tier the engine lacks is an MHALoadError.
   */
  tier?: Tier;
  /**
   * Threads a forward may use, the calling one included: `'auto'` (default: the cores the runtime
   * reports, at most 4) or a whole number from 1 to 64. More than 1 loads the tier's threaded build
   * (`mha_core_relaxed_mt.*` or `mha_core_mt.*`: wasm, glue and pthread worker script) where the
   * runtime has shared memory and workers: Node, and pages that are cross-origin isolated (COOP
   * `same-origin` + COEP `require-corp`/`credentialless`). Elsewhere, and for the scalar tier, the
   * single-thread build loads with no error and no console output. `'auto'` also means 1 when
   * `wasmBinary` or `wasmURL` is given (the bytes of one build); with an explicit count they must
   * be the threaded build's. Results are bit-identical for every thread count.
   */
  threads?: number | 'auto';
  /**
   * The GEMM register tile (rows × columns of the output held in registers by the micro-kernel
   * every product runs): `'auto'` (default) takes, for the relaxed-simd tier, `'6x8'` on engines
   * known to keep its 12 accumulators in registers (V8 ≥ 13.6: Node ≥ 24, Chromium ≥ 136),
   * `'3x12'` on older V8 (Node 20, 22, Chromium < 136: they spill the 6 × 8 tile), and `'4x8'` on
   * other engines and for the simd tier (whose mul + add runs both larger tiles slower); how much
   * each gains: docs/performance.md, "The register tile per engine".
   * Speed only: every tile gives bit-identical results. Ignored by the scalar tier. Anything else
   * is an MHALoadError.
   */
  tile?: 'auto' | '4x8' | '6x8' | '3x12';
}

/** The builds of the core, best first. */
export type Tier = 'relaxed-simd' | 'simd' | 'scalar';

/** The tiers, best first: `['relaxed-simd', 'simd', 'scalar']`. */
export const TIERS: readonly Tier[];

/** What {@link MHA.info} reports. */
export interface MHAInfo {
  /** The package version. */
  readonly version: string;
  /** True when the loaded module uses wasm SIMD128 (the relaxed-simd and simd tiers). */
  readonly simd: boolean;
  /** The build that runs. */
  readonly tier: Tier;
  /** Threads a forward uses (1: the single-thread build, or after {@link MHA.dispose}). */
  readonly threads: number;
  /** The GEMM register tile in use (see {@link CreateMHAOptions.tile}); null for the scalar tier. */
  readonly tile: '4x8' | '6x8' | '3x12' | null;
}

/**
 * Loads the wasm module and returns the API. Each call instantiates its own module (own heap).
 * @param options where the `.wasm` comes from and which build; see {@link CreateMHAOptions}
 * @throws {Error} (name `MHALoadError`, rejected promise) when an option has the wrong type or the
 *   `.wasm` cannot be fetched or compiled (404, a server that is not allowed to serve it, a SIMD
 *   binary on an engine without SIMD). The message names the source tried; import
 *   `mha-wasm/single` where `.wasm` files cannot be served.
 */
export function createMHA(options?: CreateMHAOptions): Promise<MHA>;

// ---------------------------------------------------------------------------------------------
// The module instance
// ---------------------------------------------------------------------------------------------

/**
 * One event of `loadModel`'s `progress` callback, as the bytes of each file arrive (files read from
 * disk in 8 MB chunks, http bodies as they stream, Files in 8 MB slices).
 */
export interface LoadProgress {
  /** The file being read (config.json, model.safetensors, a shard, vocab.json …; 'bytes' for bytes given). */
  file: string;
  /** Bytes read so far, over every file of the model; never decreases. */
  loaded: number;
  /**
   * The sizes of the files started so far (its size on disk, a File's size, an http Content-Length
   * or Content-Range), or null while a size is unknown (no Content-Length, or a compressed body).
   * It grows when the next file of a folder starts (config.json, the weights' header, the
   * tokenizer; then the weights, block by block), so `fraction` may step back then. The last event
   * has `loaded === total` (bytes of the weights file that no tensor needs count as read).
   */
  total: number | null;
  /** loaded / total (1 at the last event), or null while total is. */
  fraction: number | null;
}

/** An instance of the wasm module with the API on top; create it with {@link createMHA}. */
export interface MHA {
  /** `{version, simd, tier, threads}`: see {@link MHAInfo}. */
  readonly info: MHAInfo;

  /**
   * Stops the worker threads of a threaded engine; their workers are terminated once the threads
   * have exited (asynchronously, within 5 s). The engine keeps working on the calling thread
   * (`info.threads` becomes 1 at once). Idle workers never keep a Node
   * process alive, so calling it is optional. Idempotent.
   */
  dispose(): void;

  /**
   * Shape passport of one forward: every tensor's shape, the parameter and FLOP counts, from the
   * configuration alone (no weights, no wasm memory).
   * @throws {MHAError} `INVALID_CONFIG` (e.g. numHeads not dividing dModel when dK is not given)
   */
  passport(cfg: PassportConfig): Passport;

  /**
   * Creates a layer whose weights live in wasm memory.
   * @throws {MHAError} `INVALID_CONFIG`, `SHAPE_MISMATCH` (a weight's shape, naming it),
   *   `NON_FINITE` (a weight's NaN/Inf with its index), `INVALID_ARGUMENT`, `OUT_OF_MEMORY`
   */
  createLayer(opts: LayerOptions): Layer;

  /**
   * Converts a PyTorch `nn.MultiheadAttention` state dict into `createLayer` weights:
   * `W_Q = in_proj_weight[0:E]ᵀ`, `W_K = in_proj_weight[E:2E]ᵀ`, `W_V = in_proj_weight[2E:3E]ᵀ`,
   * `W_O = out_proj.weightᵀ`.
   * @param opts numHeads, checked to divide E
   * @throws {MHAError} `INVALID_ARGUMENT` (missing keys), `SHAPE_MISMATCH` (naming the key and
   *   shapes), `INVALID_CONFIG` (numHeads not dividing E)
   */
  fromTorch(stateDict: TorchStateDict, opts: { numHeads: number }): TorchWeights;

  /**
   * A PyTorch `nn.MultiheadAttention` state dict stored as safetensors → `createLayer` weights.
   * @param opts numHeads; prefix selects one module's keys (e.g. `"layers.0.attn."`)
   * @throws {MHAError} `INVALID_ARGUMENT` (a malformed file, missing keys), `SHAPE_MISMATCH`, `INVALID_CONFIG`
   */
  fromSafetensors(bytes: ArrayBuffer | ArrayBufferView, opts: { numHeads: number; prefix?: string }): TorchWeights;

  /**
   * Loads a trained model whose layers run in this engine. `source`: this project's .safetensors
   * (docs/trained-models.md) as bytes, URL or Node file path; a Hugging Face model folder
   * (`GPT2LMHeadModel`, `LlamaForCausalLM`: config.json, model.safetensors or a sharded
   * model.safetensors.index.json, tokenizer.json or vocab.json + merges.txt) as a URL ending in "/",
   * a Node directory path or `file:` URL, a `FileSystemDirectoryHandle` or a list of `File`s; or a
   * llama2.c checkpoint (.bin, format version 0 or 1) with `opts.tokenizer` its tokenizer.bin (or
   * both in one list of `File`s). One `File`, or a list of Files without config.json holding one
   * model file, is read as that file. A
   * model without a tokenizer takes token ids (`config.tokenizer` 'none'). `opts.progress` is
   * called as the bytes of each file arrive (see LoadProgress). A model over 64 MB (as float32)
   * keeps no JS copy of its weights once they are in wasm memory (`copyingScores` then refuses it).
   * `opts.weightStorage` says how the weight matrices (embeddings, W_Q, W_K, W_V, W_O, the MLP's,
   * lm_head) are held in wasm memory (`model.weightType` tells the choice): `'file'` (default) keeps
   * a float16 or bfloat16 file's matrices 16-bit, half the memory of float32, with the results of
   * their values widened to float32 (equal to `'float32'` for that file to float32 rounding), and a
   * float32 file's float32; `'float16'` rounds float32 (and bfloat16) matrices to float16 (to
   * nearest: half the memory, log-probs off from the float32 model's by the rounding of each weight,
   * about 2^-11 relative); `'float32'` widens every matrix to float32.
   * @throws {MHAError} `INVALID_ARGUMENT` (unreadable or malformed file, a missing tensor or
   *   metadata field, a refused configuration: the message names the file, the key and the value;
   *   a `progress` that is not a function; an unknown `weightStorage`; with `'float16'`, a weight
   *   beyond ±65504), `SHAPE_MISMATCH` (a tensor's shape), `NON_FINITE` (a NaN/Inf weight)
   */
  loadModel(source: ArrayBuffer | ArrayBufferView | string | URL | FileSystemDirectoryHandle | File | ArrayLike<File>,
    opts?: { tokenizer?: ArrayBuffer | ArrayBufferView | string | URL | File; progress?: (p: LoadProgress) => void;
      weightStorage?: 'file' | 'float16' | 'float32' }): Promise<LanguageModel>;

  /**
   * Wasm memory figures: the figure to budget a page with. `heapBytes` is the engine's whole wasm
   * memory (what the models, layers and KV caches take, plus free space kept for reuse); it only
   * grows, and a model loaded after another is disposed reuses the freed space. A browser's
   * `performance.measureUserAgentSpecificMemory()` does not count it. `inUseBytes`: the bytes
   * malloc'd now.
   */
  memory(): { heapBytes: number; inUseBytes: number };
}

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
 * - `DISPOSED`: the layer or KV cache was disposed.
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
// The passport
// ---------------------------------------------------------------------------------------------

/** The configuration {@link MHA.passport} describes. All counts are positive integers. */
export interface PassportConfig {
  /** Query length `Tq` (tokens). */
  seqLen: number;
  /** Model width `d_model` (query and output width). */
  dModel: number;
  /** Number of heads `h`. */
  numHeads: number;
  /** Key/value heads `g` (grouped-query attention; 1 = multi-query); must divide `h`. Default `h`. */
  kvHeads?: number;
  /** Key length `Tk` (cross-attention). Default `seqLen`. */
  keyLen?: number;
  /** Batch size `B`; when given, shapes get a leading `B`. */
  batch?: number;
  /** Per-head query/key width `d_k`. Default `dModel / numHeads` (which must then divide). */
  dK?: number;
  /** Per-head value width `d_v`. Default `dK`. */
  dV?: number;
  /** Key input width. Default `dModel`. */
  kDim?: number;
  /** Value input width. Default `dModel`. */
  vDim?: number;
  /** Whether the projections have biases (counted in `params`). Default true. */
  bias?: boolean;
  /** The score modifiers, as {@link LayerOptions}: counted in `flops.scoreMods`. */
  softcap?: number;
  /** As {@link LayerOptions.alibi}. */
  alibi?: boolean;
  /** As {@link LayerOptions.alibiSlopes}. */
  alibiSlopes?: ArrayLike<number>;
  /** As {@link LayerOptions.window} (adds no FLOPs: the counts stay those of dense attention). */
  window?: [number, number];
  /** As {@link LayerOptions.rope}: counted in `flops.rope`. */
  rope?: boolean | RopeOptions;
}

/**
 * Rotary position embedding (RoPE; Su et al. 2021, "RoFormer", §3.4). Q and K of every head (K per kv
 * head) are rotated right after their projection: pair `p` of the first `dim` dims at position `m` is
 * `(a, b) ← (a·cos mω_p − b·sin mω_p, a·sin mω_p + b·cos mω_p)`, `ω_p = base^(−2p/dim)`, so the
 * scores depend on positions only through `i − j`.
 */
export interface RopeOptions {
  /** Rotary dimension: even, `0 ≤ dim ≤ dK` (dims beyond it pass through; 0 rotates nothing). Default `dK`. Else INVALID_CONFIG naming `rope.dim`. */
  dim?: number;
  /** θ, the frequency base: finite and > 1. Default 10000. Else INVALID_CONFIG naming `rope.base`. */
  base?: number;
  /** Pairs `(x[2p], x[2p+1])` (true: RoFormer, GPT-J, llama2.c) or `(x[p], x[p + dim/2])` (false, the default: GPT-NeoX, HF Llama). */
  interleaved?: boolean;
}

/** One tensor of the forward, in the order it is computed. */
export interface PassportStep {
  /** The tensor's name, e.g. `'Q'`, `'scores'`, `'concat'`. */
  name: string;
  /** Its shape, e.g. `[2, 5, 5]` for the scores of h = 2, T = 5. */
  shape: number[];
  /** How it is computed, e.g. `'X·W_Q + b_Q'`. */
  formula: string;
}

/** Parameter counts (weights and biases of W_Q, W_K, W_V, W_O). */
export interface PassportParams {
  /** Weights of one head's W_Q slice: `dModel·dK`. */
  wQPerHead: number;
  /** W_Q: `dModel·h·dK`. */
  wQ: number;
  /** W_K: `kDim·g·dK`. */
  wK: number;
  /** W_V: `vDim·g·dV`. */
  wV: number;
  /** W_O: `h·dV·dModel`. */
  wO: number;
  /** All biases: `h·dK + g·dK + g·dV + dModel` (0 without bias). */
  bias: number;
  /** `wQ + wK + wV + wO + bias`. */
  total: number;
  /** W_Q of a single head of full width, `dModel²`, for comparison. */
  singleHeadWQ: number;
}

/** FLOPs of one forward; one multiply-add counts as 2 FLOPs. */
export interface PassportFlops {
  /** The Q, K and V projections. */
  projections: number;
  /** Q·Kᵀ over all heads. */
  scores: number;
  /** A·V over all heads. */
  weighted: number;
  /** concat·W_O. */
  output: number;
  /**
   * The score modifiers over `B·h·Tq·Tk` scores: soft-capping 3 per score (two multiplies and a tanh
   * counted as one), ALiBi 2 per score (one multiply-add); 0 without them.
   */
  scoreMods: number;
  /** RoPE: 3 FLOPs (2 multiplies, 1 add) per rotated element of Q and K: `3·B·(Tq·Σ_i dim_i + Tk·Σ_kv dim_g)`. */
  rope: number;
  /** The matrix products only: `projections + scores + weighted + output`. At a fixed `dModel` it does not depend on `h`. */
  matmul: number;
  /**
   * The scaling and the stable softmax of the `B·h·Tq·Tk` scores: `B·h·Tq·(6·Tk + 1)`. Convention: per
   * score 1 multiply by `1/√dK`, 1 compare for the row maximum, 1 subtract, 1 exp counted as ONE FLOP
   * (a real exp costs tens of instructions), 1 add to the row sum, 1 multiply by the reciprocal; plus
   * 1 per score row for the reciprocal. Grows with `h` at a fixed `dModel`.
   */
  softmax: number;
  /** `matmul + softmax + scoreMods + rope`. */
  total: number;
}

/**
 * Memory one forward of one layer materialises, from the configuration alone. FlashAttention
 * (Dao et al. 2022) computes the same output without writing the scores to slow memory.
 */
export interface PassportMemory {
  /** `B·h·Tq·Tk`: elements of the score matrix (the attention weights have the same shape). */
  scores: number;
  /** `4·scores`: bytes of the scores at float32. */
  scoreBytes: number;
  /** `B·Tk·g·(dK + dV)`: elements of K and V of one layer (what a KV cache holds per layer). */
  kvCache: number;
  /** `4·kvCache`: bytes at float32. */
  kvCacheBytes: number;
}

/** The shape passport: every tensor's shape, the parameter and FLOP counts of one forward. */
export interface Passport {
  /** Resolved per-head query/key width. */
  dK: number;
  /** Resolved per-head value width. */
  dV: number;
  /** Every tensor of the forward, in order. */
  steps: PassportStep[];
  params: PassportParams;
  flops: PassportFlops;
  memory: PassportMemory;
}

// ---------------------------------------------------------------------------------------------
// Layers
// ---------------------------------------------------------------------------------------------

/**
 * Packed weights, all `[in, out]` (`y = x·W + b`); head i owns columns `i·dK … (i+1)·dK - 1` of
 * W_Q (and of W_K/W_V for its K/V head under grouped-query attention). Biases are required when
 * `bias` is on (the default when any is given) and forbidden when it is off.
 */
export interface PackedWeights {
  /** W_Q `[dModel, h·dK]`. */
  wQ: TensorInput;
  /** W_K `[kDim, g·dK]`. */
  wK: TensorInput;
  /** W_V `[vDim, g·dV]`. */
  wV: TensorInput;
  /** W_O `[h·dV, dModel]`. */
  wO: TensorInput;
  /** b_Q `[h·dK]`. */
  bQ?: TensorInput;
  /** b_K `[g·dK]`. */
  bK?: TensorInput;
  /** b_V `[g·dV]`. */
  bV?: TensorInput;
  /** b_O `[dModel]`. */
  bO?: TensorInput;
}

/** One head's projections in the per-head form; widths may differ between heads. */
export interface HeadWeights {
  /** W_Q of this head `[dModel, d_k]`. */
  wQ: TensorInput;
  /** W_K of this head `[kDim, d_k]` (same `d_k` as its wQ). */
  wK: TensorInput;
  /** W_V of this head `[vDim, d_v]`. */
  wV: TensorInput;
  /** b_Q `[d_k]`. */
  bQ?: TensorInput;
  /** b_K `[d_k]`. */
  bK?: TensorInput;
  /** b_V `[d_v]`. */
  bV?: TensorInput;
}

/**
 * Per-head weights: one entry per head (their widths may differ, as in the two-head restaurant
 * example with d_v = 3 and 2), and W_O over the concatenation. Implies `kvHeads = numHeads`.
 */
export interface PerHeadWeights {
  heads: HeadWeights[];
  /** W_O `[Σ d_v, dModel]`. */
  wO: TensorInput;
  /** b_O `[dModel]`. */
  bO?: TensorInput;
}

/** Options of {@link MHA.createLayer}. */
export interface LayerOptions {
  /** Query/output width `d_model`; inferred from `weights` (W_Q's rows) when omitted. */
  dModel?: number;
  /** Number of heads `h`; inferred from `weights.heads.length` in the per-head form. */
  numHeads?: number;
  /** Key/value heads `g`, dividing `h` (grouped-query; 1 = multi-query). Default `h`. */
  kvHeads?: number;
  /** Per-head query/key width. Default `dModel / numHeads`. */
  dK?: number;
  /** Per-head value width. Default `dK`. */
  dV?: number;
  /** Key input width (cross-attention). Default `dModel`. */
  kDim?: number;
  /** Value input width (cross-attention). Default `dModel`. */
  vDim?: number;
  /** Projection biases. Default true, or with `weights`, whether biases are given. */
  bias?: boolean;
  /** Score scale. Default `1/√d_k`. */
  scale?: number;
  /** Packed or per-head weights, all `[in, out]`. Omitted: seeded Xavier-uniform init, zero biases. */
  weights?: PackedWeights | PerHeadWeights;
  /**
   * Seed of the Xavier-uniform init used when `weights` is omitted (default 0): the same seed and
   * dModel give the same packed matrices for every numHeads.
   */
  seed?: number;
  /**
   * Logit soft-capping (Gemma 2, Gemma Team 2024): the scaled scores become `cap·tanh(S / cap)`
   * before the masks and the softmax. A finite number > 0 (Gemma 2: 50); named as FlashAttention's
   * `softcap` argument. Else `MHAError` INVALID_CONFIG with `argument: 'softcap'`.
   */
  softcap?: number;
  /**
   * ALiBi (Press et al. 2022, "Train Short, Test Long"): `S −= m_h·|i − j|` for query position `i`
   * and key `j` (under a causal mask the paper's `−m·(i − j)`; `|i − j|` for non-causal attention as
   * FlashAttention's `alibi_slopes`), with the paper's slopes `2^(−8/h), 2^(−16/h), …, 2^(−8)`; for
   * `h` not a power of two, those of the closest smaller power of two `n`, then every other slope of
   * `2n` heads (the reference implementation).
   */
  alibi?: boolean;
  /** ALiBi with these slopes, one per query head (length `numHeads`, else INVALID_CONFIG naming `alibiSlopes`, the expected and the actual length). Turns ALiBi on. */
  alibiSlopes?: ArrayLike<number>;
  /**
   * Sliding window `[left, right]` (Longformer, Beltagy et al. 2020; Mistral 7B), as FlashAttention's
   * `window_size`: query `i` attends keys `j` with `i − left ≤ j ≤ i + right`; `−1` = unbounded on that
   * side (`[w, 0]` with `causal`: a window of `w + 1` tokens). Key blocks outside it are not computed;
   * a KV-cache step does not read the keys that fell out of it. A query whose keys are all masked gets
   * weights 0 and output 0. Integers ≥ −1, else INVALID_CONFIG naming `window`.
   */
  window?: [number, number];
  /**
   * Rotary position embedding (RoPE; Su et al. 2021, RoFormer): `true` for the defaults (`dim = dK`,
   * `base` 10000, halves) or {@link RopeOptions}. Query `i` is at position `i` (in a KV-cache step
   * `cache.length + i`, and cached keys are stored rotated), key `j` at `j`; in cross-attention both
   * count from 0. Composes with the masks, GQA, the score modifiers and the KV cache.
   */
  rope?: boolean | RopeOptions;
}

/** The resolved configuration of a {@link Layer}. */
export interface LayerConfig {
  readonly dModel: number;
  readonly numHeads: number;
  readonly kvHeads: number;
  /** Per-head query/key width (of head 0 in the per-head form). */
  readonly dK: number;
  /** Per-head value width (of head 0 in the per-head form). */
  readonly dV: number;
  readonly kDim: number;
  readonly vDim: number;
  readonly bias: boolean;
  /**
   * The score scale of every head, or `null` when the heads' scales differ (a per-head layer of
   * unequal `dK` without a `scale` option: each head then uses its own `1/√d_k`, see `headScale`).
   */
  readonly scale: number | null;
  /**
   * Every head's score scale `[numHeads]`: the `scale` option, else `1/√d_k` of that head, as the
   * float32 value the core multiplies the scores by.
   */
  readonly headScale: readonly number[];
  /** Every head's widths in the per-head form; `null` for packed layers. */
  readonly headDims: { readonly dK: readonly number[]; readonly dV: readonly number[] } | null;
  /** The soft-cap, when the layer has one. */
  readonly softcap?: number;
  /** The ALiBi slopes in use (the default ones with `alibi: true`), when the layer has ALiBi. */
  readonly alibiSlopes?: Float32Array;
  /** The window `[left, right]`, when the layer has one. */
  readonly window?: readonly [number, number];
  /** RoPE as resolved, when the layer has it (`dim` −1: each head's own `dK` in a per-head layer of unequal widths). */
  readonly rope?: { readonly dim: number; readonly base: number; readonly interleaved: boolean };
}

/** Options of {@link Layer.forward} (and {@link Layer.trace}, which ignores the weight options). */
export interface ForwardOptions {
  /** Keys `[B?, Tk, kDim]` (cross-attention). Default: the query (self-attention). */
  key?: TensorInput | null;
  /** Values `[B?, Tk, vDim]`. Default: the key. Requires `key`. */
  value?: TensorInput | null;
  /** Mask key j > query i. Default false. */
  causal?: boolean;
  /** `[B, Tk]` (unbatched: `[Tk]` or `[1, Tk]`); boolean true = padded key, or additive. */
  keyPaddingMask?: MaskInput | null;
  /**
   * `[Tq, Tk]` shared by every batch and head, or `[B·h, Tq, Tk]` (index `b·h + head`, as
   * PyTorch) / `[B, h, Tq, Tk]`; boolean (true = masked) or additive.
   */
  attnMask?: MaskInput | null;
  /** Return the attention weights. Default true. */
  needWeights?: boolean;
  /** Average the weights over heads: weights `[B?, Tq, Tk]`. Default false. */
  averageWeights?: boolean;
  /**
   * `[h]` multiplier of each head's output before W_O (the concat's columns of head i times
   * `headMask[i]`): 0 switches a head off (ablation; Michel et al. 2019, "Are Sixteen Heads Really
   * Better than One?"), 1 keeps it. The attention weights of a switched-off head are still
   * returned. Finite numbers (NON_FINITE otherwise, with the index); length h (SHAPE_MISMATCH).
   */
  headMask?: ArrayLike<number> | null;
  /**
   * Caller-owned arrays to write the results into instead of new ones (repeated calls then
   * allocate no result arrays); the returned tensors wrap them. Lengths must be exact: output
   * `B·Tq·dModel`, weights the size of the weights this call returns; the two must not share
   * memory. Not for {@link Layer.trace}.
   */
  out?: ResultBuffers | null;
}

/** Caller-owned result arrays (the `out` option of {@link Layer.forward} and {@link KVCache.step}). */
export interface ResultBuffers {
  /** Receives the output. */
  output?: Float32Array | null;
  /** Receives the attention weights (only with needWeights). */
  weights?: Float32Array | null;
}

/** Result of {@link Layer.forward}. */
export interface ForwardResult {
  /** Output `[B?, Tq, dModel]`. */
  output: Tensor;
  /**
   * Attention weights `[B?, h, Tq, Tk]` (`[B?, Tq, Tk]` with `averageWeights`); absent with
   * `needWeights: false`. A query row whose keys are all masked has weights 0.
   */
  weights?: Tensor;
}

/** One head's intermediates in a {@link TraceResult}. */
export interface HeadTrace {
  /** Q_i `[B?, Tq, d_k]`. */
  q: Tensor;
  /** K of the K/V head it uses `[B?, Tk, d_k]`. */
  k: Tensor;
  /** V of the K/V head it uses `[B?, Tk, d_v]`. */
  v: Tensor;
  /** `Q_i·K_iᵀ·scale` before any mask `[B?, Tq, Tk]` (after the layer's soft-cap and ALiBi, if it has them; a window is a mask). */
  scores: Tensor;
  /** Attention weights (after masks and softmax) `[B?, Tq, Tk]`. */
  weights: Tensor;
  /** `A_i·V_i` `[B?, Tq, d_v]`. */
  output: Tensor;
}

/** Result of {@link Layer.trace}: every intermediate, for teaching. */
export interface TraceResult {
  /** One entry per head. */
  heads: HeadTrace[];
  /** concat(head_0 … head_{h-1}) `[B?, Tq, Σ d_v]`. */
  concat: Tensor;
  /** `concat·W_O + b_O` `[B?, Tq, dModel]`. */
  output: Tensor;
}

/**
 * One multi-head attention layer whose weights live in wasm memory until {@link Layer.dispose}
 * (a FinalizationRegistry frees them if it is dropped undisposed). Create it with
 * {@link MHA.createLayer}.
 *
 * `Q = X_q·W_Q + b_Q, K = X_k·W_K + b_K, V = X_v·W_V + b_V`;
 * `head_i = softmax(Q_i·K_{g(i)}ᵀ·scale + mask)·V_{g(i)}`, `g(i) = ⌊i / (h/g)⌋`;
 * `output = concat(head_0 … head_{h-1})·W_O + b_O`.
 */
export class Layer {
  private constructor();
  /** Resolved configuration (frozen). */
  readonly config: LayerConfig;
  /** True after dispose(). */
  readonly disposed: boolean;

  /**
   * Multi-head attention forward.
   * @param query `[B, Tq, dModel]` or unbatched `[Tq, dModel]`
   * @param opts keys/values for cross-attention, masks, weight options
   * @returns output `[B?, Tq, dModel]`; weights `[B?, h, Tq, Tk]` (or `[B?, Tq, Tk]` averaged)
   *   unless `needWeights: false`
   * @throws {MHAError} `SHAPE_MISMATCH` (query, key, value, masks, an `out` array's length),
   *   `NON_FINITE` (NaN/Inf in an input, with its index), `INVALID_ARGUMENT` (options, `out` arrays
   *   that are not Float32Array), `OUT_OF_MEMORY` (with `bytes`), `DISPOSED`
   */
  forward(query: TensorInput, opts: ForwardOptions & { needWeights: false }): { output: Tensor; weights?: undefined };
  forward(query: TensorInput, opts?: ForwardOptions & { needWeights?: true }): { output: Tensor; weights: Tensor };
  forward(query: TensorInput, opts?: ForwardOptions): ForwardResult;

  /**
   * Forward that returns every intermediate, for teaching.
   * @param query as in {@link Layer.forward}
   * @param opts as in forward (`needWeights`/`averageWeights` are ignored; no `out`)
   * @throws {MHAError} as {@link Layer.forward}
   */
  trace(query: TensorInput, opts?: Omit<ForwardOptions, 'out'>): TraceResult;

  /**
   * A KV cache for incremental (autoregressive) decoding with this layer; self-attention only.
   * Its memory is `2·batch·maxLen·g·d_k·4` bytes (with d_v for V).
   * @throws {MHAError} `INVALID_ARGUMENT` (maxLen/batch not positive integers), `INVALID_CONFIG`
   *   (kDim or vDim ≠ dModel), `OUT_OF_MEMORY`, `DISPOSED`
   */
  createKVCache(opts: KVCacheOptions): KVCache;

  /** Frees the layer's wasm memory and every KV cache made from it. Idempotent. */
  dispose(): void;
}

/** Options of {@link Layer.createKVCache}. */
export interface KVCacheOptions {
  /** Capacity in tokens per sequence (positive integer). */
  maxLen: number;
  /** Number of sequences. Default 1. */
  batch?: number;
}

/** Options of {@link KVCache.step}. */
export interface StepOptions {
  /** Return the attention weights. Default true. */
  needWeights?: boolean;
  /** As {@link ForwardOptions.headMask}. */
  headMask?: ArrayLike<number> | null;
  /**
   * Caller-owned result arrays, as in {@link ForwardOptions.out}. The weights' length
   * `B·h·n·length` grows with every step.
   */
  out?: ResultBuffers | null;
}

/** Result of {@link KVCache.step}. */
export interface StepResult {
  /** Output of the new tokens `[B?, n, dModel]`. */
  output: Tensor;
  /** Weights `[B?, h, n, length]`, where `length` counts the new tokens too; absent with `needWeights: false`. */
  weights?: Tensor;
}

/**
 * Key/value cache for autoregressive decoding: `step(x)` appends the new tokens' K and V and lets
 * them attend causally over every cached token (token t sees 0..t); equals the matching rows of
 * causal self-attention over the whole sequence.
 */
export class KVCache {
  private constructor();
  /** Capacity in tokens per sequence. */
  readonly maxLen: number;
  /** Number of sequences. */
  readonly batch: number;
  /** Tokens cached so far (per sequence); 0 after dispose(). */
  readonly length: number;
  /** True after dispose() (of the cache or of its layer): every method then throws `DISPOSED`. */
  readonly disposed: boolean;
  /**
   * Appends n new tokens and attends from them over the cache.
   * @param x `[n, dModel]` (batch 1) or `[B, n, dModel]`
   * @throws {MHAError} `INVALID_ARGUMENT` past maxLen (naming both), opts not an object,
   *   needWeights not a boolean or `out` arrays not Float32Array; `SHAPE_MISMATCH` (x, an `out`
   *   array's length); `NON_FINITE` (NaN/Inf in x, with its index); `OUT_OF_MEMORY` (with
   *   `bytes`); `DISPOSED`
   */
  step(x: TensorInput, opts: StepOptions & { needWeights: false }): { output: Tensor; weights?: undefined };
  step(x: TensorInput, opts?: StepOptions & { needWeights?: true }): { output: Tensor; weights: Tensor };
  step(x: TensorInput, opts?: StepOptions): StepResult;
  /**
   * Forgets every cached token; keeps the memory.
   * @throws {MHAError} `DISPOSED`
   */
  reset(): void;
  /** Frees the cache's wasm memory. Idempotent. */
  dispose(): void;
}

// ---------------------------------------------------------------------------------------------
// PyTorch
// ---------------------------------------------------------------------------------------------

/**
 * A `torch.nn.MultiheadAttention` state dict, e.g. from
 * `{k: v.tolist() for k, v in m.state_dict().items()}`; keys may carry a module prefix
 * (`"layers.0.attn.in_proj_weight"`). Either `in_proj_weight [3E, E]` or `q_proj_weight [E, E]`,
 * `k_proj_weight [E, kdim]`, `v_proj_weight [E, vdim]`; `out_proj.weight [E, E]`; optionally
 * `in_proj_bias [3E]` with `out_proj.bias [E]`.
 */
export type TorchStateDict = Record<string, TensorInput | null | undefined>;

/** Weights converted from PyTorch (`[out, in]` → `[in, out]`), ready for `createLayer({numHeads, weights})`. */
export interface TorchWeights {
  wQ: Tensor;
  wK: Tensor;
  wV: Tensor;
  wO: Tensor;
  bQ?: Tensor;
  bK?: Tensor;
  bV?: Tensor;
  bO?: Tensor;
}

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
   * The sizes of the files read so far plus the one being read (its size on disk, a File's size,
   * an http Content-Length), or null while that size is unknown (no Content-Length, or a compressed
   * body). It grows when the next file of a folder starts (config.json, the weights, the tokenizer),
   * so `fraction` may step back then. The last event has `loaded === total`.
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
   * llama2.c checkpoint (.bin, format version 0 or 1) with `opts.tokenizer` its tokenizer.bin. A
   * model without a tokenizer takes token ids (`config.tokenizer` 'none'). `opts.progress` is
   * called as the bytes of each file arrive (see LoadProgress). A model over 64 MB (as float32)
   * keeps no JS copy of its weights once they are in wasm memory (`copyingScores` then refuses it).
   * @throws {MHAError} `INVALID_ARGUMENT` (unreadable or malformed file, a missing tensor or
   *   metadata field, a refused configuration: the message names the file, the key and the value;
   *   a `progress` that is not a function), `SHAPE_MISMATCH` (a tensor's shape), `NON_FINITE` (a NaN/Inf weight)
   */
  loadModel(source: ArrayBuffer | ArrayBufferView | string | URL | FileSystemDirectoryHandle | ArrayLike<File>,
    opts?: { tokenizer?: ArrayBuffer | ArrayBufferView | string | URL; progress?: (p: LoadProgress) => void }): Promise<LanguageModel>;

  /** Wasm memory figures, for diagnostics and leak tests: heap size and bytes currently malloc'd. */
  memory(): { heapBytes: number; inUseBytes: number };
}

// ---------------------------------------------------------------------------------------------
// safetensors and trained models
// ---------------------------------------------------------------------------------------------

/**
 * Parses a safetensors file (8-byte header length, JSON header, little-endian data); every
 * tensor (F32, F16, BF16, F64) is converted to float32. Needs no wasm.
 * @throws {MHAError} `INVALID_ARGUMENT` naming the tensor or header field: truncated file, header
 *   length past the end or over 100 MB, bad JSON, unknown dtype, bad shape, offsets outside the
 *   data or not matching the shape, overlapping tensors, non-string metadata
 */
export function parseSafetensors(source: ArrayBuffer | ArrayBufferView): {
  metadata: Record<string, string>;
  tensors: Record<string, Tensor>;
  dtypes: Record<string, 'F32' | 'F16' | 'BF16' | 'F64'>;
};

/** The `__metadata__.format` value of the trained-model files: `"mha-wasm.charlm/1"`. */
export const MODEL_FORMAT: string;

/** A head's type: its strongest pattern when ≥ TYPE_THRESHOLD, else broad or mixed. */
export type HeadType = 'previous-token' | 'two-back' | 'current-token' | 'first-token' | 'induction' | 'broad' | 'mixed';

/** Mean attention on the probes: A[t,t−1], A[t,t−2], A[t,t], A[t,0], the induction score, normalised entropy;
 * inductionProse (the induction score on held-out prose spans written twice) when the file has prose probes. */
export interface HeadScores { previous: number; twoBack: number; current: number; first: number; induction: number; entropy: number;
  inductionProse?: number }

/** One head of a loaded model, 0-based `layer` and `head`: its type and the scores that gave it. */
export interface HeadInfo { layer: number; head: number; type: HeadType; scores: HeadScores }

/** A score of at least this labels a head with its strongest type (0.4). */
export const TYPE_THRESHOLD: number;
/** Without a type, a normalised entropy of at least this labels a head "broad" (0.7). */
export const BROAD_THRESHOLD: number;
/** The type of a head from its scores. */
export function headType(scores: HeadScores): HeadType;
/** Scores every head on probe texts, given a function returning per-layer attention [h, T, T]. */
export function analyzeHeads(probes: { text: string[]; repeat: string[]; repeat_span: number;
    prose_repeat?: string[]; prose_repeat_span?: number },
  attend: (text: string) => Array<{ data: Float32Array; shape: number[] }>,
  config: { numLayers: number; numHeads: number }): HeadInfo[];

/** Characters a span must share with an earlier span for its next character to be an induction target (4). */
export const INDUCTION_MIN_SPAN: number;
/** Query position → the positions after earlier copies of the span of `minSpan` characters ending there. */
export function inductionTargets(ids: ArrayLike<number>, minSpan?: number): Map<number, number[]>;
/** Scores of one text; null where the text does not define the score (induction: no repeated span). */
export interface TextHeadScores {
  previous: number | null; twoBack: number | null; current: number | null; first: number | null;
  induction: number | null; entropy: number | null;
}
/** Every head's scores on one text (per-layer attention [h, T, T] and the text's ids). */
export function scoreText(attention: Array<{ data: Float32Array; shape: number[] }>, ids: ArrayLike<number>):
  Array<{ layer: number; head: number; scores: TextHeadScores; inductionQueries: number }>;

/** A copying score of at least this counts as "copies" (0.5). */
export const COPYING_THRESHOLD: number;
/** One head's copying score: the fraction of the V tokens whose own logit its OV circuit raises highest. */
export interface CopyingScore { layer: number; head: number; score: number; copied: number; total: number; copies: boolean }
/** Every head's copying score (Olsson et al. 2022's copying test on the OV circuit; copying.js), computed once per model. */
export function copyingScores(model: LanguageModel): readonly CopyingScore[];
/** Per head of a layer, the [V, V] logits its output adds when it attends fully to each token (biases left out). */
export function ovLogits(model: LanguageModel, layer: number): Float64Array[];
/** The copying score of a [V, V] OV-logit matrix: rows whose own entry is strictly the largest. */
export function copyingOf(M: ArrayLike<number>, V: number): { score: number; copied: number; total: number };
/** 'induction' only when the head is labelled induction from its attention AND its output copies. */
export function inductionVerdict(info: { type: string }, copying: { copies: boolean }): 'induction' | 'attends-only' | 'copies-only' | 'neither';

/** A model file's configuration as read (docs/trained-models.md, "Architecture options"; defaults filled in). */
export interface LanguageModelConfig {
  vocabSize: number; dModel: number; numHeads: number; numLayers: number; dFF: number; context: number;
  /** K/V heads (grouped-query attention when < numHeads); default numHeads. */
  kvHeads: number;
  norm: 'layernorm' | 'rmsnorm';
  /** eps of every norm (read from a file's `norm_eps`, or `ln_eps` in files written before RMSNorm). */
  normEps: number;
  mlp: 'relu' | 'gelu' | 'gelu_tanh' | 'swiglu';
  /** Linear maps with biases (the MLP's and the head's). */
  bias: boolean;
  /** The attention projections have biases (Hugging Face folders: GPT-2 true, Llama attention_bias); else as bias. */
  attnBias?: boolean;
  /** Learned position table, or rotary position embedding (RoPE) in every attention layer. */
  positions: 'learned' | 'rope';
  ropeBase: number; ropeInterleaved: boolean;
  /** The output head is the token embedding. */
  tied: boolean;
  /**
   * One id per character, llama2.c's byte-pair tokenizer (BOS first), a Hugging Face folder's
   * tokenizer ('hf'), or none ('none': run/generator take token ids).
   */
  tokenizer: 'characters' | 'llama2c' | 'hf' | 'none';
  /** Where the model came from: a Hugging Face folder's family, or a llama2.c checkpoint; absent for this project's files. */
  family?: 'gpt2' | 'llama' | 'llama2c';
  /** Begin/end-of-text ids (Hugging Face and llama2.c models), null when unknown. */
  bos?: number | null; eos?: number | null;
  unk: number | null; dK: number;
}

/** What `LanguageModel.run` returns for a text of T tokens: each token's text (`tokens`) and id (`ids`). */
export interface RunResult {
  tokens: string[];
  ids: Int32Array;
  /** Per layer, the causal attention weights [h, T, T]. */
  attention: Tensor[];
  /** [T, V]: row t is log p(next token | tokens[0..t]), natural log. */
  logProbs: Tensor;
  /** Mean −log2 p(token[t+1] | tokens[..t]) over t = 0..T−2, bits per token (per character for a character model); null when T = 1. */
  loss: number | null;
  /** The 5 most probable next tokens (characters, or byte-pair pieces) after the text. */
  next: Array<NextToken>;
}

/** A token and its probability: `token` its text, `id` its index in the vocabulary. */
export interface NextToken {
  token: string; id: number; p: number;
  /** The same string as `token`: its name from when every model was character-level. */
  char: string;
}

/** One step of a `TokenGenerator`: the token drawn, its probability, and the attention over the cache. */
export interface GeneratorStep extends NextToken {
  /** Tokens in each layer's KV cache after the step. */
  cacheLength: number;
  /** Per layer, the newest query's attention weights [h, cacheLength]. */
  attention: Tensor[];
}

/** One generation in progress (LanguageModel.generator). */
export interface TokenGenerator {
  /** The prompt and the text of every token generated so far. */
  readonly text: string;
  readonly cacheLength: number;
  /** @throws {MHAError} `DISPOSED` */
  step(): GeneratorStep;
  /**
   * Back to the prompt alone, with the sampler's seed from the start.
   * @throws {MHAError} `DISPOSED`
   */
  reset(): void;
  /** Frees the KV caches. Idempotent. */
  dispose(): void;
}

/** How `LanguageModel.generator` and `generate` sample. */
export interface GeneratorOptions {
  /** 0 takes the most probable token; default 1. */
  temperature?: number;
  /**
   * Nucleus sampling (Holtzman et al. 2020): draw only from the most probable tokens whose
   * probabilities first reach `topP` together; in (0, 1], default 1 (every token).
   */
  topP?: number;
  /** Seed of the sampler (mulberry32); default 0. */
  seed?: number;
  /** Heads switched off, as [layer, head] pairs. */
  ablate?: Array<[number, number]>;
}

/**
 * A loaded language model (character-level, or byte-pair like stories260K and Hugging Face
 * folders); create with `mha.loadModel(source)`, free with `dispose()`. Every layer numeric runs
 * in the core.
 */
export class LanguageModel {
  private constructor();
  readonly config: Readonly<LanguageModelConfig>;
  readonly vocab: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
  /** The file's training record: corpus, license, steps, seconds, heldout_bpc, … */
  readonly training: Record<string, unknown>;
  /** Every head's scores and type, measured on the probes stored in the file. */
  readonly heads: HeadInfo[];
  /**
   * Token ids [T] of a text. Character models: one id per character, `config.unk` for one outside
   * the vocabulary; byte-pair models: their tokenizer's encode (llama2.c's puts BOS first).
   */
  encode(text: string): Int32Array;
  /** The text of token ids (byte-pair models: their tokenizer's decode). */
  decode(ids: ArrayLike<number>): string;
  /**
   * @throws {MHAError} `INVALID_ARGUMENT` (text empty or longer than the context, a bad ablate
   *   pair), `DISPOSED`
   */
  run(text: string | ArrayLike<number>, opts?: { ablate?: Array<[number, number]> }): RunResult;
  /** `prompt`: text, or token ids (integers in [0, vocabSize)). */
  generator(prompt: string | ArrayLike<number>, opts?: GeneratorOptions): TokenGenerator;
  /** Generates `n` tokens after a prompt (as `generator`): the whole text and each step's token. */
  generate(prompt: string | ArrayLike<number>, n: number, opts?: GeneratorOptions): { text: string; steps: Array<NextToken & { cacheLength: number }> };
  /** Frees the model's decoder and KV caches in the engine. Idempotent. */
  dispose(): void;
}

/**
 * The same class as LanguageModel, under its first name (from when every model it ran was
 * character-level); code written against `CharModel` keeps working.
 */
export const CharModel: typeof LanguageModel;
/** The instance type of `CharModel`: a LanguageModel. */
export type CharModel = LanguageModel;
/** LanguageModel's config, under its first name. */
export type CharModelConfig = LanguageModelConfig;
/** TokenGenerator, under its first name. */
export type CharGenerator = TokenGenerator;

/**
 * The deterministic PRNG (mulberry32) behind `createLayer({seed})`.
 * @param seed any integer (taken modulo 2^32)
 * @returns a function giving floats in [0, 1)
 */
export function mulberry32(seed: number): () => number;

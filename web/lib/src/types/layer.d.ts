// Types of mha-wasm, re-exported by ../index.d.ts: layers, KV caches and PyTorch weights.
import type { MHA, MHAError, MaskInput, Tensor, TensorInput } from '../index.js';
import type { RopeOptions } from './passport.js';

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
   * side (`[w, 0]` with `causal`: a window of `w + 1` tokens). Key tiles outside it are not computed;
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

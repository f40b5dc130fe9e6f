// Types of mha-wasm, re-exported by ../index.d.ts: the passport of a layer configuration.
import type { MHA } from '../index.js';
import type { LayerOptions } from './layer.js';

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

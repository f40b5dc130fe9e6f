// Types of mha-wasm, re-exported by ../index.d.ts: safetensors, head analysis and trained language models.
import type { MHAError, Tensor } from '../index.js';

// ---------------------------------------------------------------------------------------------
// safetensors and trained models
// ---------------------------------------------------------------------------------------------

/**
 * Parses a safetensors file (8-byte header length, JSON header, little-endian data); every
 * tensor (F32, F16, BF16, F64) is converted to float32, except that `opts.keep16` keeps F16 and
 * BF16 tensors as `Uint16Array`s of their bit patterns. Needs no wasm.
 * @throws {MHAError} `INVALID_ARGUMENT` naming the tensor or header field: truncated file, header
 *   length past the end or over 100 MB, bad JSON, unknown dtype, bad shape, offsets outside the
 *   data or not matching the shape, overlapping tensors, non-string metadata
 */
export function parseSafetensors(source: ArrayBuffer | ArrayBufferView, opts?: { keep16?: boolean }): {
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
/**
 * The eigenvalues of a real n × n matrix (row-major), float64: Householder reduction to Hessenberg
 * form and the shifted double-step QR iteration (EISPACK's orthes and hqr). Complex ones come in
 * conjugate pairs. Throws an MHAError (INVALID_ARGUMENT when A is not n × n, NON_FINITE when a value is not finite).
 */
export function eigenvalues(A: ArrayLike<number>, n: number): { re: Float64Array; im: Float64Array };
/**
 * Per head of a layer, the d_k nonzero eigenvalues of its full OV circuit E·N₁·W_V·W_O·N_F·W_U
 * (the norms' linear parts folded in; Elhage et al. 2021), computed on the d_k × d_k form.
 */
export function ovEigenvalues(model: LanguageModel, layer: number): Array<{ re: Float64Array; im: Float64Array }>;
/** Σλ / Σ|λ| of a spectrum (null when every λ is 0), with both sums. */
export function positivityOf(ev: { re: ArrayLike<number>; im: ArrayLike<number> }): { positivity: number | null; sum: number; absSum: number };
/** One head's eigenvalue positivity Σλ / Σ|λ| of its OV circuit: 1 when every eigenvalue is positive (Elhage et al. 2021). */
export interface EigenPositivity { layer: number; head: number; positivity: number | null; sum: number; absSum: number }
/** Every head's eigenvalue positivity, in (layer, head) order. */
export function eigenPositivity(model: LanguageModel): readonly EigenPositivity[];
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
  /** True after dispose() (of the generator or of its model): step and reset then throw `DISPOSED`. */
  readonly disposed: boolean;
  /** @throws {MHAError} `DISPOSED` */
  step(): GeneratorStep;
  /**
   * Back to the prompt alone, with the sampler's seed from the start.
   * @throws {MHAError} `DISPOSED`
   */
  reset(): void;
  /** Frees the KV caches (a model's dispose() frees its generators' too). Idempotent. */
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
  /** How the weight matrices are held in wasm memory (loadModel's `weightStorage`). */
  readonly weightType: 'float32' | 'float16' | 'bfloat16';
  readonly vocab: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
  /** The file's training record: corpus, license, steps, seconds, heldout_bpc, … */
  readonly training: Record<string, unknown>;
  /**
   * Every head's scores and type, measured on the probes stored in the file; a Hugging Face folder
   * or llama2.c checkpoint (no stored probes) is measured on seeded random token ids (`headsProbes`).
   * @throws {MHAError} `INVALID_ARGUMENT` for a model file without probes
   */
  readonly heads: HeadInfo[];
  /** What `heads` is measured on: the file's probe texts, random token ids, or nothing (`heads` throws). */
  readonly headsProbes: 'file' | 'random-tokens' | null;
  /**
   * True after dispose(): run, generator, generate and heads then throw `DISPOSED` (encode and
   * decode, JS alone, keep working).
   */
  readonly disposed: boolean;
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
  /**
   * Frees the model's decoder and the KV caches of its generators in the engine (a model dropped
   * without it is freed by a FinalizationRegistry). Idempotent.
   */
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

/**
 * mha-wasm/worker: the engine in a dedicated module worker; models load, run and generate there and
 * results come back as transferred buffers. Every computation returns a promise; where no worker can
 * start, createWorkerMHA falls back to an engine on the calling thread with the same surface.
 * @packageDocumentation
 */
import type { MHA, MHAInfo, Tensor, LanguageModel, CreateMHAOptions } from './index.js';

/** `mha.info` of the engine that runs the models, and where it runs. */
export interface WorkerMHAInfo extends MHAInfo {
  /** True in the engine worker; false on the calling thread (the fallback, or mainThreadEngine). */
  worker: boolean;
  /** Why the models run on the calling thread (absent or null in the worker). */
  fallback?: string | null;
}

/** A run's result (LanguageModel.run) as it crosses from the worker, plus what ran. */
export interface RemoteRunResult {
  tokens: string[];
  ids: Int32Array;
  /** Per layer, the attention weights [h, T, T] (null for a layer not asked for with `layers`). */
  attention: Array<Tensor | null>;
  /** [T, vocabSize] natural-log probabilities; null with `logProbs: false`. */
  logProbs: Tensor | null;
  loss: number | null;
  next: Array<{ token: string; id: number; p: number; char: string }>;
  /** What ran: the text (character models) or the token ids. */
  input: string | Int32Array;
  /** The text of what ran. */
  text: string;
  /** scoreText of the attention, with `scores: true`. */
  textScores?: Array<{ layer: number; head: number; scores: Record<string, number | null> }>;
}

/** One generated token as it crosses from the worker. */
export interface RemoteStep {
  token: string;
  id: number;
  p: number;
  cacheLength: number;
  char: string;
  /** Per layer, the newest query's attention weights [h, cacheLength]. */
  attention: Tensor[];
  /** The text after this token. */
  text: string;
}

/** A generation under way in the worker. */
export declare class RemoteGenerator {
  text: string;
  ids: Int32Array;
  cacheLength: number;
  /** n steps (default 1) in one message. */
  step(n?: number): Promise<{ steps: RemoteStep[]; text: string; ids: Int32Array; cacheLength: number }>;
  reset(): Promise<void>;
  dispose(): void;
}

/** A LanguageModel held by the worker; fields are copies, computations promises. */
export declare class RemoteModel {
  readonly config: LanguageModel['config'];
  readonly vocab: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly training: Record<string, unknown>;
  /** As LanguageModel.headsProbes: 'file' when the model carries probe texts. */
  readonly headsProbes: 'file' | 'random-tokens' | null;
  /** LanguageModel.heads measured at load; throws INVALID_ARGUMENT for a model without probes. */
  readonly heads: LanguageModel['heads'];
  /** copyingScores of the model, or null for a model without probes. */
  readonly copying: unknown[] | null;
  readonly remote: boolean;
  /** layers: only these layers' attention crosses (the others are null). */
  run(text: string | ArrayLike<number>, opts?: { ablate?: Array<[number, number]>; most?: number; scores?: boolean; logProbs?: boolean; layers?: number[] | null }): Promise<RemoteRunResult>;
  encode(text: string): Promise<Int32Array>;
  decode(ids: ArrayLike<number>): Promise<string>;
  generate(prompt: string | ArrayLike<number>, n: number, opts?: { temperature?: number; topP?: number; seed?: number; ablate?: Array<[number, number]> }): Promise<{ text: string; steps: Array<{ token: string; id: number; p: number; cacheLength: number; char: string }> }>;
  generator(prompt: string | ArrayLike<number>, opts?: { temperature?: number; topP?: number; seed?: number; ablate?: Array<[number, number]> }): Promise<RemoteGenerator>;
  dispose(): void;
}

/** An engine whose models compute off the calling thread (or, as the fallback, on it). */
export interface WorkerMHA {
  readonly info: WorkerMHAInfo;
  loadModel(source: ArrayBuffer | ArrayBufferView | string | URL | File | File[] | FileList | FileSystemDirectoryHandle,
    opts?: { tokenizer?: ArrayBuffer | ArrayBufferView | string | URL | File; progress?: (p: { file: string; loaded: number; total: number | null; fraction: number | null }) => void;
      weightStorage?: 'file' | 'float16' | 'float32' }): Promise<RemoteModel>;
  memory(): Promise<ReturnType<MHA['memory']>>;
  dispose(): void;
}

/**
 * Starts the engine in a dedicated module worker. Options createMHA takes that can be cloned cross
 * to it; `fallback: false` rejects (MHALoadError) where no worker can start instead of running on the
 * calling thread.
 */
export declare function createWorkerMHA(options?: CreateMHAOptions & { fallback?: boolean }): Promise<WorkerMHA>;

/** The worker surface over an engine on this thread (`why`: kept as info.fallback). */
export declare function mainThreadEngine(mha: MHA, why?: string | null): WorkerMHA & { engine: MHA };

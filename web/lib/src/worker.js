/**
 * mha-wasm/worker: the engine in a dedicated module worker, so that a page's main thread only
 * draws while models load, run and generate.
 *
 *   import { createWorkerMHA } from 'mha-wasm/worker';
 *   const mha = await createWorkerMHA();              // mha.info.worker: true (false: the fallback)
 *   const lm = await mha.loadModel('https://…/gpt2/', { progress });
 *   const r = await lm.run('The cat sat', { ablate: [[0, 1]] });   // r.attention: Tensor[] (transferred)
 *   const g = await lm.generator('Once', { temperature: 0 });
 *   const { steps } = await g.step(10);
 *
 * One worker holds the engine (createMHA) and the only copy of every model's weights; calls cross as
 * messages and are answered in order; results come back as transferred buffers (the worker's
 * copies, handed over without a copy). Where no worker can start (no Worker, a Content-Security-
 * Policy without `worker-src 'self'`, a bundle that dropped the worker file) createWorkerMHA falls
 * back to an engine on the calling thread with the same asynchronous surface (`info.worker` false,
 * `info.fallback` why). `mainThreadEngine(mha)` gives that surface over an engine of your own.
 * @module mha-wasm/worker
 */
import { createMHA, MHAError, Tensor, scoreText, copyingScores, eigenPositivity, ovLogits } from './index.js';

/** Rebuilds an error posted by the worker (an MHAError keeps its code, argument, bytes and index). */
function rebuild(f) {
  if (f.name === 'MHAError' && f.code) {
    const e = new MHAError(f.code, f.message, { argument: f.argument, bytes: f.bytes, index: f.index });
    return e;
  }
  const e = new Error(f.message);
  e.name = f.name;
  return e;
}

/** A `{data, shape}` posted by the worker as a Tensor (null stays null). */
const tensor = (t) => (t ? Tensor.wrap(t.data, t.shape) : t);

/** Options createMHA accepts that can cross to a worker (functions cannot: locateFile stays here). */
function cloneable(options) {
  const out = {};
  for (const [k, v] of Object.entries(options ?? {})) if (typeof v !== 'function' && k !== 'worker' && k !== 'fallback') out[k] = v;
  return out;
}

/** A source for loadModel as the worker can read it: relative URLs made absolute against the page. */
function portable(source) {
  if (source instanceof URL) return source.href;
  if (typeof source === 'string' && typeof document !== 'undefined' && !/^[a-z][a-z0-9+.-]*:/i.test(source)) {
    return new URL(source, document.baseURI).href;
  }
  if (source instanceof ArrayBuffer) return source.slice(0);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice();
  return source;
}

/** The transferable buffers of a loadModel source (its own copies made by portable). */
const transfers = (...xs) => xs.flatMap((x) => (x instanceof ArrayBuffer ? [x] : ArrayBuffer.isView(x) ? [x.buffer] : []));

/** The connection to one engine worker: numbered requests, their answers and progress events. */
class Channel {
  constructor(worker) {
    this.worker = worker;
    this.pending = new Map();   // id → {resolve, reject, progress}
    this.nextId = 1;
    this.failed = null;
    worker.onmessage = ({ data: m }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.progress) { try { p.progress?.(m.progress); } catch { /* the listener's own error */ } return; }
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value); else p.reject(rebuild(m.error));
    };
    const fail = (e) => {
      const err = new Error(`the engine worker stopped: ${e?.message ?? 'its script could not be loaded or run'}`);
      err.name = 'MHALoadError';
      this.failed = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.onerror = (e) => { e.preventDefault?.(); fail(e); };
    worker.onmessageerror = fail;
  }

  /** Sends a request; resolves with its answer. */
  request(msg, { transfer = [], progress } = {}) {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, progress });
      this.worker.postMessage({ ...msg, id }, transfer);
    });
  }
}

/** A run's result as the worker posted it, with Tensors again. */
function runResult(r) {
  return { ...r, attention: r.attention.map((t) => (t ? tensor(t) : null)), logProbs: tensor(r.logProbs) };
}

/** A generator step batch with Tensors again. */
function stepsResult(r) {
  return { ...r, steps: r.steps.map((s) => ({ ...s, attention: s.attention.map(tensor) })) };
}

/**
 * A generation under way in the worker (from RemoteModel.generator): `text`, `ids` and
 * `cacheLength` as of its last answer; every method returns a promise.
 */
export class RemoteGenerator {
  /** @internal */
  constructor(ch, fields) {
    this._ch = ch;
    this._id = fields.generator;
    this._set(fields);
  }

  _set(f) {
    /** The prompt and every token generated so far. */
    this.text = f.text;
    /** Every id of the text. */
    this.ids = f.ids;
    this._ids = Array.from(f.ids);
    /** Tokens in each layer's KV cache. */
    this.cacheLength = f.cacheLength;
  }

  /**
   * n steps of TokenGenerator.step() in the worker.
   * @param {number} [n] 1 by default
   * @returns {Promise<{steps: Array<{token: string, id: number, p: number, cacheLength: number,
   *   attention: Tensor[], text: string}>, text: string, ids: Int32Array, cacheLength: number}>}
   *   each step's newest attention rows per layer ([h, cacheLength], transferred)
   * @throws {MHAError} DISPOSED
   */
  async step(n = 1) {
    const r = stepsResult(await this._ch.request({ op: 'call', generator: this._id, method: 'step', args: [n] }));
    this._set(r);
    return r;
  }

  /** Empties the caches (TokenGenerator.reset). @returns {Promise<void>} */
  async reset() {
    this._set(await this._ch.request({ op: 'call', generator: this._id, method: 'reset' }));
  }

  /** Frees the generator's KV caches in the worker. Idempotent. */
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    this._ch.request({ op: 'call', generator: this._id, method: 'dispose' }).catch(() => {});
  }
}

/**
 * A LanguageModel living in the engine worker. Its fields are copies (config, vocab, metadata,
 * training, heads); its computations are promises answered by the worker.
 */
export class RemoteModel {
  /** @internal */
  constructor(ch, f) {
    this._ch = ch;
    this._id = f.model;
    /** As LanguageModel.config. */
    this.config = Object.freeze(f.config);
    /** As LanguageModel.vocab. */
    this.vocab = Object.freeze(f.vocab);
    /** As LanguageModel.metadata. */
    this.metadata = Object.freeze(f.metadata);
    /** As LanguageModel.training. */
    this.training = f.training;
    /** As LanguageModel.headsProbes: 'file' when the model carries probe texts (`heads` then holds their labels). */
    this.headsProbes = f.headsProbes;
    this._heads = f.heads;
    this._headsError = f.headsError;
    /** copyingScores of the model, computed in the worker at load (null for a model without probes). */
    this.copying = f.copying;
    /** True: computations cross to the engine worker. */
    this.remote = true;
  }

  /**
   * LanguageModel.heads, measured in the worker when the model loaded (a model with probe texts).
   * @throws {MHAError} INVALID_ARGUMENT when the model carries no probe texts (`headsProbes` is not 'file')
   */
  get heads() {
    if (this._headsError) throw rebuild(this._headsError);
    return this._heads;
  }

  _call(method, args) {
    return this._ch.request({ op: 'call', model: this._id, method, args });
  }

  /**
   * LanguageModel.run in the worker.
   * @param {string|ArrayLike<number>} text as LanguageModel.run; with `most`, a text is first cut to
   *   its first `most` characters (tokens, after encoding)
   * @param {{ablate?: Array<[number, number]>, most?: number, scores?: boolean, logProbs?: boolean, layers?: number[]|null}} [opts]
   *   scores: add `textScores` (scoreText of every layer's attention, computed in the worker);
   *   logProbs false: leave out the [T, V] log-probabilities; layers: only these layers' attention
   *   crosses (0-based; the others are null in `attention`), default every layer
   * @returns {Promise<object>} run's result, plus `input` (what ran) and `text` (its text)
   */
  async run(text, opts = {}) {
    return runResult(await this._call('run', [typeof text === 'string' ? text : Int32Array.from(text), opts]));
  }

  /** LanguageModel.encode in the worker. @returns {Promise<Int32Array>} */
  encode(text) { return this._call('encode', [text]); }

  /** LanguageModel.decode in the worker. @returns {Promise<string>} */
  decode(ids) { return this._call('decode', [Int32Array.from(ids)]); }

  /** LanguageModel.generate in the worker. @returns {Promise<{text: string, steps: object[]}>} */
  generate(prompt, n, opts = {}) { return this._call('generate', [prompt, n, opts]); }

  /**
   * copyingScores(model) and eigenPositivity(model), computed in the worker.
   * @returns {Promise<{copying: Array<{layer: number, head: number, score: number, copied: number, total: number}>,
   *   positivity: Array<{layer: number, head: number, positivity: number|null, sum: number, absSum: number}>}>}
   * @throws {MHAError} as copyingScores and eigenPositivity
   */
  ovCircuit() { return this._call('ovCircuit', []); }

  /**
   * ovLogits(model, layer) in the worker.
   * @param {number} layer 0-based
   * @returns {Promise<Float64Array[]>} per head j, [V, V] row-major (transferred)
   * @throws {MHAError} as ovLogits
   */
  ovLogits(layer) { return this._call('ovLogits', [layer]); }

  /**
   * LanguageModel.generator in the worker.
   * @returns {Promise<RemoteGenerator>}
   */
  async generator(prompt, opts = {}) {
    return new RemoteGenerator(this._ch, await this._call('generator', [prompt, opts]));
  }

  /** Frees the model in the worker. Idempotent. */
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    this._call('dispose', []).catch(() => {});
  }
}

/** The engine worker: createMHA in a dedicated module worker. Create it with createWorkerMHA(). */
class WorkerEngine {
  /** @internal */
  constructor(worker, ch, info) {
    this._worker = worker;
    this._ch = ch;
    /** mha.info of the worker's engine, with `worker: true`. */
    this.info = Object.freeze({ ...info, worker: true });
  }

  /**
   * mha.loadModel in the worker: the source is read there (a URL relative to the page is made
   * absolute first; bytes are copied across; File, File lists and directory handles are cloned).
   * @param {ArrayBuffer|ArrayBufferView|string|URL|File|File[]|FileList|FileSystemDirectoryHandle} source
   * @param {{tokenizer?: ArrayBuffer|ArrayBufferView|string|URL, progress?: Function}} [opts]
   * @returns {Promise<RemoteModel>}
   * @throws {MHAError} as mha.loadModel
   */
  async loadModel(source, opts = {}) {
    const src = portable(typeof FileList !== 'undefined' && source instanceof FileList ? Array.from(source) : source);
    const msg = { op: 'load', source: src };
    if (opts.tokenizer !== undefined) msg.tokenizer = portable(opts.tokenizer);
    if (opts.weightStorage !== undefined) msg.weightStorage = opts.weightStorage;
    const f = await this._ch.request(msg, { transfer: transfers(src, msg.tokenizer), progress: opts.progress });
    return new RemoteModel(this._ch, f);
  }

  /** mha.memory() of the worker's engine. @returns {Promise<object>} */
  memory() { return this._ch.request({ op: 'memory' }); }

  /** Frees every model and stops the worker. */
  dispose() {
    this._ch.request({ op: 'dispose' }).finally(() => this._worker.terminate()).catch(() => {});
  }
}

/** A LanguageModel of an engine on this thread behind RemoteModel's asynchronous surface. */
class LocalModel {
  constructor(lm) {
    this._lm = lm;
    this.config = lm.config;
    this.vocab = lm.vocab;
    this.metadata = lm.metadata;
    this.training = lm.training;
    this.headsProbes = lm.headsProbes;
    this.remote = false;
  }

  get heads() { return this._lm.heads; }

  /** copyingScores of the model (computed on first use). */
  get copying() { return (this._copying ??= copyingScores(this._lm)); }

  async run(text, o = {}) {
    const lm = this._lm, c = lm.config;
    let x = text;
    if (o.most && typeof text === 'string') {
      x = !c.tokenizer || c.tokenizer === 'characters' || c.tokenizer === 'none' ? Array.from(text).slice(0, o.most).join('') : lm.encode(text).slice(0, o.most);
    } else if (o.most) x = Int32Array.from(text).slice(0, o.most);
    const r = lm.run(x, { ablate: o.ablate });
    const out = { ...r, input: x, text: typeof x === 'string' ? x : lm.decode(x) };
    if (o.scores) out.textScores = scoreText(r.attention, r.ids);
    return out;
  }

  async encode(text) { return this._lm.encode(text); }
  async decode(ids) { return this._lm.decode(ids); }
  async generate(prompt, n, o) { return this._lm.generate(prompt, n, o); }
  async ovCircuit() { return { copying: copyingScores(this._lm), positivity: eigenPositivity(this._lm) }; }
  async ovLogits(layer) { return ovLogits(this._lm, layer); }

  async generator(prompt, o = {}) {
    const g = this._lm.generator(prompt, o);
    const wrap = {
      text: g.text, ids: Int32Array.from(g._ids), _ids: g._ids.slice(), cacheLength: g.cacheLength,
      _set() { wrap.text = g.text; wrap.ids = Int32Array.from(g._ids); wrap._ids = g._ids.slice(); wrap.cacheLength = g.cacheLength; },
      async step(n = 1) {
        const steps = [];
        for (let i = 0; i < n; i++) steps.push({ ...g.step(), text: g.text });
        wrap._set();
        return { steps, text: g.text, ids: wrap.ids, cacheLength: g.cacheLength };
      },
      async reset() { g.reset(); wrap._set(); },
      dispose() { g.dispose(); },
    };
    return wrap;
  }

  dispose() { this._lm.dispose(); }
}

/**
 * RemoteModel's asynchronous surface over an engine on this thread: what createWorkerMHA falls
 * back to, and how an element runs on an engine a page gave it.
 * @param {object} mha an engine from createMHA()
 * @param {string|null} [why] why no worker runs (kept as `info.fallback`)
 * @returns {{info: object, loadModel: Function, memory: Function, dispose: Function, engine: object}}
 */
export function mainThreadEngine(mha, why = null) {
  return {
    engine: mha,
    info: Object.freeze({ ...mha.info, worker: false, fallback: why }),
    async loadModel(source, opts) { return new LocalModel(await mha.loadModel(source, opts)); },
    async memory() { return mha.memory(); },
    dispose() { mha.dispose?.(); },
  };
}

/**
 * The engine in a dedicated module worker.
 * @param {{tier?: string, threads?: number, fallback?: boolean, locateFile?: Function}} [options]
 *   createMHA's options (those that can be cloned cross to the worker; `locateFile` and
 *   `wasmBinary` are used only by the fallback); fallback (default true): where no worker can
 *   start, resolve with mainThreadEngine(await createMHA(options)) instead of rejecting
 * @returns {Promise<WorkerEngine|ReturnType<typeof mainThreadEngine>>} `info.worker` says which
 * @throws {Error} MHALoadError when the worker cannot start and `fallback` is false
 */
export async function createWorkerMHA(options = {}) {
  let worker = null;
  try {
    if (typeof Worker !== 'function') throw new Error('this environment has no Worker');
    // the literal form bundlers (Vite, webpack 5, Parcel) recognize and emit as a worker chunk
    worker = new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module' });
    const ch = new Channel(worker);
    const info = await ch.request({ op: 'init', options: cloneable(options) });
    return new WorkerEngine(worker, ch, info);
  } catch (e) {
    worker?.terminate();
    if (options.fallback === false) {
      const err = new Error(`the engine worker could not start: ${e.message}`);
      err.name = 'MHALoadError';
      throw err;
    }
    const { fallback: _f, worker: _w, ...rest } = options;
    return mainThreadEngine(await createMHA(rest), e.message);
  }
}

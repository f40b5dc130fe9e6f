/**
 * The lifecycle every JS object backed by wasm memory shares (Layer, KVCache, LanguageModel,
 * TokenGenerator, the decoder and its cache): the embind handle (if the object has one) and a
 * staging area owned together, freed once by dispose() or, for an object dropped without it, by a
 * FinalizationRegistry; children (the caches of a layer or decoder, a model's decoder and
 * generators, a generator's cache) disposed with their parent, the newest first; the disposed check
 * every method starts with; the core's status turned into an MHAError; every core call staged by
 * memory.js's stage().
 *
 * After dispose(): every method throws MHAError `DISPOSED` whose message starts with the method's
 * name (`"step: this KV cache was disposed"`); dispose() itself is idempotent; the properties stay
 * readable (`disposed` is true, a cache's `length` is 0).
 * @module handle
 */
import { MHAError, coreError } from './errors.js';
import { Staging, stage } from './memory.js';

/** Frees the wasm side of objects dropped without dispose(). */
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => { try { held.release(); } catch { /* module gone */ } })
  : null;

/** Frees `staging` and deletes `handle` (null: none), at most once. */
function releaser(handle, staging) {
  let done = false;
  return {
    release() {
      if (done) return;
      done = true;
      staging.free();
      handle?.delete();
    },
  };
}

/**
 * Creates an embind handle of class `Handle` and runs its init; on failure deletes it and throws the
 * core's error.
 * @param {object} core the Emscripten module
 * @param {Function} Handle an embind class of the core (e.g. core.KVCacheHandle)
 * @param {(handle: object) => number} init calls the handle's init, returns its status (0 = ok)
 * @param {string} method the API call, prefixed to the error message
 * @returns {object} the initialized handle (the caller owns it)
 * @throws {MHAError} the core's error
 */
export function initHandle(core, Handle, init, method) {
  const handle = new Handle();
  let status;
  try {
    status = init(handle);
  } catch (e) {
    handle.delete();
    throw e;
  }
  if (status !== 0) {
    const err = coreError(core, method);
    handle.delete();
    throw err;
  }
  return handle;
}

/**
 * Runs `fn` with a staging area of its own, freed when `fn` returns or throws: the memory of a
 * one-off core call (createLayer's and the decoder's init, passport), which the core copies.
 * @template T
 * @param {object} core the Emscripten module
 * @param {(staging: Staging) => T} fn stages and runs the call (memory.js, stage())
 * @returns {T}
 */
export function withStaging(core, fn) {
  const staging = new Staging(core);
  try {
    return fn(staging);
  } finally {
    staging.free();
  }
}

/**
 * Base of the objects that own wasm memory (see the module comment for the behaviour after dispose()).
 * @internal
 */
export class WasmObject {
  /**
   * @param {object} core the Emscripten module
   * @param {object|null} handle the embind handle (initialized), owned from now on; null for an
   *   object whose wasm memory is its children's (a model: its decoder; a generator: its cache)
   * @param {string} noun names the object in DISPOSED messages ("layer", "KV cache", "model", "generator")
   * @param {WasmObject|null} [parent] disposes this object with itself (a cache's layer or decoder,
   *   a generator's model)
   */
  constructor(core, handle, noun, parent = null) {
    this._core = core;
    this._handle = handle;
    this._noun = noun;
    this._parent = parent;
    this._children = new Set();
    this._disposed = false;
    /** Wasm memory reused across this object's calls (inputs, results, argument structs). */
    this._staging = new Staging(core);
    this._release = releaser(handle, this._staging);
    // An object without a handle stages through its children (its own staging stays empty): they
    // are registered themselves, so it needs no entry of its own.
    if (handle !== null) registry?.register(this, this._release, this);
    parent?._children.add(this);
  }

  /** True after dispose(). */
  get disposed() { return this._disposed; }

  /**
   * Throws DISPOSED, naming `method`, once this object is disposed.
   * @param {string} method the API call
   * @throws {MHAError} DISPOSED
   */
  _alive(method) {
    if (this._disposed) throw new MHAError('DISPOSED', `${method}: this ${this._noun} was disposed`);
  }

  /**
   * Throws the core's last error, prefixed with `method`, unless `status` is 0.
   * @param {number} status a core call's result
   * @param {string} method the API call
   * @param {boolean} [batched=true] whether the caller's input had a batch dimension (coreError)
   */
  _check(status, method, batched = true) {
    if (status !== 0) throw coreError(this._core, method, batched);
  }

  /**
   * Stages one core call in this object's staging memory (memory.js, stage()).
   * @param {Array} args [name, layout, values(P)] of each argument struct
   * @param {Array} regions [name, content] (stageLayout)
   * @param {string} method names the call in errors
   * @param {{fits?: string, extraBytes?: number}} [opts]
   * @returns {{base: number, lay: object, P: (name: string) => number}}
   */
  _stage(args, regions, method, opts) {
    return stage(this._core, this._staging, args, regions, method, opts);
  }

  /** Frees the wasm memory of this object and of its children (the newest first). Idempotent. */
  dispose() {
    if (this._disposed) return;
    for (const c of [...this._children].reverse()) c.dispose();
    this._children.clear();
    if (this._handle !== null) registry?.unregister(this);
    this._release.release();
    this._handle = null;
    this._disposed = true;
    this._parent?._children.delete(this);
  }
}

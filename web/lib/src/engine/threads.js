/**
 * Threads for the wasm core: how many to run, whether this runtime can, and (Node) the Worker
 * class Emscripten's pthreads get.
 *
 * The threaded builds (`mha_core_relaxed_mt.*`, `mha_core_mt.*`) share one wasm memory between
 * the calling thread and `threads − 1` Emscripten pthread workers, started while the module loads.
 * They need `SharedArrayBuffer` and wasm threads: Node always has them; a browser page has them
 * only when cross-origin isolated (COOP `same-origin` + COEP `require-corp` or `credentialless`:
 * `crossOriginIsolated === true`). Elsewhere the single-thread build loads, silently.
 * @module threads
 */
import { loadError } from './errors.js';

/**
 * Node: imports a built-in module (`nodeBuiltin('os')` is `import('node:os')`). The specifier is
 * made at run time so that no bundler tries to resolve it for a browser build (esbuild fails on a
 * literal `node:` import with platform 'browser'; Vite and webpack warn); the browser never calls it.
 * @param {string} name e.g. 'os', 'fs/promises'
 * @returns {Promise<object>}
 */
export function nodeBuiltin(name) {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ `node:${name}`);
}

/** `'auto'` never starts more than this many threads (the calling one included). */
export const MAX_AUTO_THREADS = 4;

const isNode = typeof process === 'object' && process !== null && !!(process.versions && process.versions.node) &&
  typeof window === 'undefined';

/**
 * True when this runtime can run the threaded build: Node (worker_threads and SharedArrayBuffer),
 * or a cross-origin isolated page or worker.
 * @returns {boolean}
 */
export function threadsSupported() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  if (isNode) return true;
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function';
}

/** The logical cores the runtime reports (≥ 1). */
async function reportedCores() {
  if (isNode) {
    const os = await nodeBuiltin('os');
    return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length || 1;
  }
  const n = globalThis.navigator && globalThis.navigator.hardwareConcurrency;
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/**
 * The number of threads to start for createMHA's `threads` option.
 * - `'auto'` (the default): in Node, the cores the runtime reports (the pool's threads sleep when
 *   they have no work, and the pool runs alone while other work holds the cores, so a busy core costs
 *   little: docs/performance.md, "A pool that sleeps"); in a browser, one fewer (the page's own
 *   thread and the browser's compositor keep a core: the page's thread may not sleep, so as the
 *   pool's caller it polls while it waits for a worker's last task; docs/performance.md, "Threads in a page");
 *   at most MAX_AUTO_THREADS; 1 where threads are unavailable, or when the caller supplied the .wasm
 *   (`wasmBinary`, `wasmURL`: bytes of one specific build).
 * - a whole number ≥ 1: that many where threads are available, else 1 (never an error: a page
 *   that is not isolated runs the single-thread build).
 * @param {{threads?: number|'auto', wasmBinary?: any, wasmURL?: any}} options
 * @returns {Promise<number>}
 * @throws {Error} named MHALoadError: threads neither 'auto' nor a whole number in [1, 64]
 */
export async function resolveThreads(options) {
  const { threads = 'auto' } = options;
  if (threads !== 'auto' && !(Number.isInteger(threads) && threads >= 1 && threads <= 64)) {
    throw loadError(`threads must be 'auto' or a whole number from 1 to 64, got ${typeof threads === 'string' ? JSON.stringify(threads) : String(threads)}`);
  }
  if (!threadsSupported()) return 1;
  if (threads !== 'auto') return threads;
  if (options.wasmBinary != null || options.wasmURL != null) return 1;
  const cores = await reportedCores();
  return Math.max(1, Math.min(MAX_AUTO_THREADS, isNode ? cores : cores - 1));
}

/**
 * A URL beside this module, made from a name known only at run time: bundlers follow
 * `new URL('literal', import.meta.url)` and emit the file; for Node-only files they must not.
 * @param {string} file
 * @returns {URL}
 */
export function besideThisModule(file) {
  return new URL(/* @vite-ignore */ /* webpackIgnore: true */ file, import.meta.url);
}

let liveWorkers = 0;

/**
 * Node: pthread workers started by this module's engines and not yet exited (diagnostics: the
 * tests check that dispose() leaves none behind).
 * @returns {number}
 */
export function liveNodeWorkers() {
  return liveWorkers;
}

/**
 * Node: a class with the part of the web Worker interface Emscripten's pthread code uses
 * (`onmessage`, `onerror`, `postMessage`, `terminate`), over node:worker_threads. Each runs
 * thread-worker.js, which gives Emscripten's worker script the globals it expects.
 * `unref()` lets the process exit while the workers wait for work.
 * @returns {Promise<Function>}
 */
export async function nodeWorkerClass() {
  const { Worker } = await nodeBuiltin('worker_threads');
  // Node only: a URL made at run time (and the ignore comments) keep bundlers from emitting the file as a
  // browser asset (webpack's and Parcel's minifiers reject its top-level await).
  const bootstrap = besideThisModule('./thread-worker.js');
  return class NodeWorker {
    constructor(url) {
      this.onmessage = null;
      this.onerror = null;
      // No per-worker flags: V8's (e.g. --experimental-wasm-relaxed-simd) already hold for the whole
      // process, and inheriting the process's (the default) fails on some, e.g. --input-type.
      this._w = new Worker(bootstrap, { workerData: { script: String(url) }, execArgv: [] });
      this._w.on('message', (data) => { if (this.onmessage) this.onmessage({ data }); });
      this._w.on('error', (e) => { if (this.onerror) this.onerror(e); });
      liveWorkers++;
      this._w.on('exit', () => { liveWorkers--; });
    }
    postMessage(data, transfer) { this._w.postMessage(data, transfer); }
    terminate() { return this._w.terminate(); }
    unref() { this._w.unref(); }
  };
}

/**
 * Lets Node exit while the pool's workers wait for work (after they are loaded and started).
 * @param {object} core the Emscripten module of a threaded build
 */
export function unrefWorkers(core) {
  const P = core.PThread;
  if (!P) return;
  for (const w of [...P.unusedWorkers, ...P.runningWorkers]) if (typeof w.unref === 'function') w.unref();
}

/** How long stopThreads waits for the threads to finish exiting before it terminates their workers. */
const EXIT_WAIT_MS = 5000;

/**
 * Stops the pool: the core's threads leave their loops (setThreads(1) returns once they have), and
 * each worker is terminated once its thread has finished exiting, i.e. once Emscripten has taken
 * it back as an unused worker (it does so on the event loop, from the thread's exit message).
 * Terminating a worker whose thread still runs its exit path (which frees its thread-local data)
 * could kill it while it holds the allocator's lock, and the next malloc or free of the page's
 * thread would then wait forever; so the terminations run asynchronously, at most EXIT_WAIT_MS later.
 * @param {object} core the Emscripten module of a threaded build
 */
export function stopThreads(core) {
  core.setThreads(1);
  const P = core.PThread;
  if (!P) return;
  const deadline = Date.now() + EXIT_WAIT_MS;
  const sweep = () => {
    if (P.runningWorkers.length === 0 || Date.now() > deadline) {
      P.terminateAllThreads();
      return;
    }
    const timer = setTimeout(sweep, 1);
    if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();  // Node: never keeps the process alive
  };
  sweep();
}

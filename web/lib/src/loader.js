/**
 * Loads the wasm core (Emscripten's ES module) in Node and in browsers.
 *
 * Three builds ("tiers") of the same core, best first:
 * - `relaxed-simd`: `mha_core_relaxed.wasm`, SIMD128 plus relaxed SIMD's `f32x4.relaxed_madd`
 *   (a fused multiply-add under V8) in every GEMM and dot-product kernel;
 * - `simd`: `mha_core.wasm`, SIMD128 with separate multiplies and adds;
 * - `scalar`: `mha_core_scalar.wasm`, for engines without SIMD128 (Safari < 16.4, Chrome < 91,
 *   Firefox < 89).
 * At load time `WebAssembly.validate` is asked about tiny probe modules that hold the exact
 * instructions each tier uses (not a proxy: an engine may accept one relaxed opcode and not
 * another), and the best tier the engine accepts is loaded; `{tier}` forces one (and fails with a
 * clear MHALoadError where the engine lacks it), `{simd: true|false}` forces `simd` or `scalar`.
 * Each build has its own Emscripten glue; the glue of a tier is imported only when it is used (a
 * bundler makes it a lazy chunk).
 *
 * Where the .wasm comes from, in order:
 * 1. `wasmBinary`: the bytes themselves (ArrayBuffer or a typed array);
 * 2. `wasmURL`: the URL of the .wasm of the chosen build (string or URL; http(s), blob:, data:);
 * 3. `locateFile(file, prefix)`: Emscripten's hook, called with the file name of the chosen build
 *    (`'mha_core_relaxed.wasm'`, `'mha_core.wasm'` or `'mha_core_scalar.wasm'`), returns its URL;
 * 4. default: the file next to this module, `new URL('../wasm/mha_core.wasm', import.meta.url)`:
 *    read from disk in Node (Emscripten's own loader would fetch() a file path and fail), fetched
 *    in browsers (bundlers that understand `new URL(..., import.meta.url)`, such as Vite, webpack 5,
 *    Parcel 2 and Rollup with a URL plugin, emit it as an asset).
 * @module loader
 */
import createSIMDCore from '../wasm/mha_core.mjs';
import { loadError } from './engine/errors.js';
import { resolveThreads, nodeWorkerClass, unrefWorkers, nodeBuiltin } from './engine/threads.js';
import { chooseTileRows } from './engine/tile.js';

/** (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)), as in wasm-feature-detect. */
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

/**
 * (module (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2
 * f32x4.relaxed_madd)): the one relaxed-SIMD instruction the relaxed tier uses, in its final
 * encoding 0xfd 0x85 0x02 (the pre-standard f32x4.relaxed_fma, 0xfd 0xaf 0x01, is refused by
 * engines that ship relaxed SIMD).
 */
const RELAXED_MADD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0,
  10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11,
]);

function validates(bytes) {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(bytes);
  } catch {
    return false;
  }
}

/**
 * True when this JS engine compiles wasm SIMD128 (the simd tier's instruction set).
 * @returns {boolean}
 */
export function simdSupported() {
  return validates(SIMD_PROBE);
}

/**
 * True when this JS engine compiles SIMD128 and `f32x4.relaxed_madd` (the relaxed-simd tier's).
 * @returns {boolean}
 */
export function relaxedSimdSupported() {
  return simdSupported() && validates(RELAXED_MADD_PROBE);
}

/** The tiers, best first. */
export const TIERS = Object.freeze(['relaxed-simd', 'simd', 'scalar']);

/** Whether the engine compiles a tier, and what it lacks otherwise. */
const SUPPORT = {
  'relaxed-simd': { ok: relaxedSimdSupported, lacks: 'relaxed SIMD (f32x4.relaxed_madd)' },
  simd: { ok: simdSupported, lacks: 'wasm SIMD128' },
  scalar: { ok: () => true, lacks: '' },
};

const isNode = typeof process === 'object' && process !== null && !!(process.versions && process.versions.node) &&
  typeof window === 'undefined';

/** The three builds: file name, URL next to this module (literal, for bundlers), glue factory. */
const BUILDS = {
  'relaxed-simd': {
    file: 'mha_core_relaxed.wasm',
    url: () => new URL('../wasm/mha_core_relaxed.wasm', import.meta.url),
    factory: async () => (await import('../wasm/mha_core_relaxed.mjs')).default,
  },
  simd: {
    file: 'mha_core.wasm',
    url: () => new URL('../wasm/mha_core.wasm', import.meta.url),
    factory: async () => createSIMDCore,
  },
  scalar: {
    file: 'mha_core_scalar.wasm',
    url: () => new URL('../wasm/mha_core_scalar.wasm', import.meta.url),
    factory: async () => (await import('../wasm/mha_core_scalar.mjs')).default,
  },
};

/**
 * The threaded builds of the SIMD tiers (threads.js): wasm and glue, each a literal
 * `new URL(…, import.meta.url)` so that bundlers emit them as assets (the workers import the glue
 * by URL, so it is an asset too, beside the lazy chunk `factory` makes). The browser's pthread
 * workers run pthread-worker.js (startPoolWorker below); Node's run Emscripten's worker script
 * (`worker`, beside the wasm) through thread-worker.js.
 */
const MT_BUILDS = {
  'relaxed-simd': {
    file: 'mha_core_relaxed_mt.wasm',
    worker: 'mha_core_relaxed_mt.worker.js',
    url: () => new URL('../wasm/mha_core_relaxed_mt.wasm', import.meta.url),
    glueURL: () => new URL('../wasm/mha_core_relaxed_mt.mjs', import.meta.url),
    factory: async () => (await import('../wasm/mha_core_relaxed_mt.mjs')).default,
  },
  simd: {
    file: 'mha_core_mt.wasm',
    worker: 'mha_core_mt.worker.js',
    url: () => new URL('../wasm/mha_core_mt.wasm', import.meta.url),
    glueURL: () => new URL('../wasm/mha_core_mt.mjs', import.meta.url),
    factory: async () => (await import('../wasm/mha_core_mt.mjs')).default,
  },
};

/** How long the browser's pthread workers may take to load before the single-thread build is used instead. */
export const POOL_START_TIMEOUT_MS = 10_000;

/**
 * Browser: one pthread worker, started from the package's own worker script. The literal
 * `new Worker(new URL('…', import.meta.url))` is the pattern Vite, webpack 5 and Parcel 2 bundle as a
 * worker and emit as a file of the page's origin, so a CSP of `default-src 'self'` allows it (no
 * blob: or data: worker).
 * @returns {Worker}
 */
function startPoolWorker() {
  return new Worker(new URL('../wasm/mha_pthread_worker.js', import.meta.url), { name: 'mha-pthread' });
}

/**
 * Browser: a Worker-like class for Emscripten's pthread pool (Module.mhaWorker, see
 * cpp/bindings/pthread_pre.js) whose workers report a failure to load (a blocked or missing
 * script: an `error` event before the glue's `loaded`) to `onFail` instead of Emscripten's handler,
 * which would throw it uncaught and leave the module waiting forever.
 * @param {(err: Error) => void} onFail
 * @param {Worker[]} started every worker made is pushed here (to terminate them after a failure)
 * @param {Array<{worker: Worker, failed: Error|null}>} spare workers started early (earlyPoolWorkers),
 *   handed out first
 */
function browserPoolWorkerClass(onFail, started, spare) {
  return class PoolWorker {
    constructor() {
      this.onmessage = null;
      this.onerror = null;
      const early = spare.shift();
      const w = early ? early.worker : startPoolWorker();
      if (!early) started.push(w);
      this._w = w;
      this._loaded = false;
      if (early && early.failed) onFail(early.failed);
      w.onmessage = (e) => {
        if (e.data && e.data.cmd === 'mhaLoadFailed') { onFail(new Error(`a pthread worker could not load the glue: ${e.data.text}`)); return; }
        if (e.data && e.data.cmd === 'loaded') this._loaded = true;
        if (this.onmessage) this.onmessage(e);
      };
      w.onerror = (e) => {
        if (!this._loaded) {
          e.preventDefault();
          onFail(workerLoadError(e));
        } else if (this.onerror) {
          this.onerror(e);
        }
      };
      w.onmessageerror = () => onFail(new Error('a pthread worker could not receive the wasm module'));
    }
    postMessage(data, transfer) { this._w.postMessage(data, transfer); }
    terminate() { this._w.terminate(); }
  };
}

/** Browser: the error of a pool worker whose script did not load (an `error` event before `loaded`). */
function workerLoadError(e) {
  return new Error(`a pthread worker failed to load (${e.message || 'its script was refused or not found'}; ` +
    'the page must serve web/lib/wasm/mha_pthread_worker.js, or the bundler\'s copy of it, from its own origin, ' +
    "and a Content-Security-Policy must allow it: worker-src 'self' or script-src 'self')");
}

/**
 * Browser: the pool's workers, started before the glue is imported and the wasm compiled (a worker
 * takes a few hundred milliseconds to boot on a busy machine; this overlaps it with the page's
 * own loading), each told to import the glue at once (`preload`). Emscripten's pool then takes
 * them (browserPoolWorkerClass). A failure to load before that is kept and reported when it does;
 * a Worker constructor that throws stops the early start (Emscripten's own start then meets it).
 * @param {number} n
 * @param {string} glueURL
 * @param {Worker[]} started each worker is pushed here too
 * @returns {Array<{worker: Worker, failed: Error|null}>}
 */
function earlyPoolWorkers(n, glueURL, started) {
  const spare = [];
  for (let i = 0; i < n; i++) {
    let worker;
    try {
      worker = startPoolWorker();
    } catch {
      break;
    }
    started.push(worker);
    const early = { worker, failed: null };
    worker.onerror = (e) => {
      e.preventDefault();
      early.failed = workerLoadError(e);
    };
    worker.onmessage = (e) => {
      if (e.data && e.data.cmd === 'mhaLoadFailed') early.failed = new Error(`a pthread worker could not load the glue: ${e.data.text}`);
    };
    worker.postMessage({ cmd: 'preload', url: glueURL });
    spare.push(early);
  }
  return spare;
}

/** Node: the bytes at a file: URL (read from disk) or another URL (fetched). */
async function readInNode(url) {
  try {
    if (url.startsWith('file:')) {
      const fs = await nodeBuiltin('fs/promises');
      return new Uint8Array(await fs.readFile(new URL(url)));
    }
    const res = await fetch(url);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    throw loadError(`cannot read the wasm core at ${url}: ${e.message}`, e);
  }
}

/**
 * Which tier to load: `tier` when given, else `simd` (true → 'simd', false → 'scalar'), else the
 * best of `available` that the engine compiles.
 * @param {{tier?: string, simd?: boolean, wasmBinary?: any}} options
 * @param {readonly string[]} [available] the tiers this entry can load, best first
 * @returns {'relaxed-simd'|'simd'|'scalar'}
 * @throws {Error} named MHALoadError: an unknown tier, simd not a boolean, a forced tier the
 *   engine lacks (unless wasmBinary is given: the bytes are then checked by WebAssembly.validate)
 */
export function chooseTier(options = {}, available = TIERS) {
  const { tier, simd } = options;
  if (tier !== undefined && !available.includes(tier)) {
    throw loadError(`tier must be one of ${available.map((t) => `'${t}'`).join(', ')}, got ${JSON.stringify(tier)}`);
  }
  if (simd !== undefined && typeof simd !== 'boolean') {
    throw loadError(`simd must be a boolean (true: the SIMD128 build, false: the non-SIMD build), got ${String(simd)}`);
  }
  const chosen = tier ?? (simd === undefined ? available.find((t) => SUPPORT[t].ok()) : simd ? 'simd' : 'scalar');
  if (!SUPPORT[chosen].ok() && options.wasmBinary === undefined) {
    // Forced on an engine without it: a clear message instead of a CompileError.
    const what = tier !== undefined ? `tier: '${tier}'` : 'simd: true';
    throw loadError(`${what}, but this engine does not support ${SUPPORT[chosen].lacks}; omit ${tier !== undefined ? 'tier' : 'simd'} to choose automatically`);
  }
  return chosen;
}

/**
 * The bytes of a `wasmBinary` option, checked: a view of the same memory (not a copy).
 * @param {ArrayBuffer|ArrayBufferView} wasmBinary
 * @returns {Uint8Array}
 * @throws {Error} named MHALoadError: not an ArrayBuffer or typed array, no "\0asm" header, or bytes
 *   this engine cannot compile (the message lists the builds of the tiers it supports)
 */
function wasmBinaryBytes(wasmBinary) {
  let bytes;
  if (wasmBinary instanceof ArrayBuffer) bytes = new Uint8Array(wasmBinary);
  else if (ArrayBuffer.isView(wasmBinary)) bytes = new Uint8Array(wasmBinary.buffer, wasmBinary.byteOffset, wasmBinary.byteLength);
  else throw loadError(`wasmBinary must be an ArrayBuffer or a typed array (e.g. Uint8Array), got ${typeof wasmBinary}`);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw loadError(`wasmBinary is not a WebAssembly module (${bytes.length} bytes, no "\\0asm" header)`);
  }
  if (!WebAssembly.validate(bytes)) {
    throw loadError(`wasmBinary does not compile on this engine (pass the bytes of the tier it supports: ${TIERS.filter((t) => SUPPORT[t].ok()).map((t) => BUILDS[t].file).join(', ')})`);
  }
  return bytes;
}

/**
 * Where the .wasm of `build` comes from (the order of the module docstring: wasmBinary, wasmURL,
 * locateFile, the file next to this module), as Emscripten module options: `wasmBinary` (the
 * bytes: given, or read here in Node, whose glue has no I/O of its own) and `locateFile` (always
 * set: the glue computes new URL('mha_core.wasm', import.meta.url) unless it is, which throws where
 * import.meta.url is a blob: URL, as in anywidget and notebooks).
 * @param {{wasmBinary?: ArrayBuffer|ArrayBufferView, wasmURL?: string|URL,
 *          locateFile?: (path: string, prefix: string) => string}} options
 * @param {object} build an entry of BUILDS or MT_BUILDS
 * @returns {Promise<{opts: object, what: string}>} the options, and the source as error messages name it
 * @throws {Error} named MHALoadError: an option of the wrong type, bytes that are not a module this
 *   engine compiles, a file Node cannot read
 */
async function wasmSource({ wasmBinary, wasmURL, locateFile }, build) {
  const opts = {};
  let what;
  if (wasmBinary !== undefined && wasmBinary !== null) {
    opts.wasmBinary = wasmBinaryBytes(wasmBinary);
    what = `wasmBinary (${opts.wasmBinary.length} bytes)`;
  } else if (wasmURL !== undefined && wasmURL !== null) {
    if (typeof wasmURL !== 'string' && !(wasmURL instanceof URL)) {
      throw loadError(`wasmURL must be a string or a URL, got ${typeof wasmURL}`);
    }
    const url = String(wasmURL);
    if (isNode) {
      // Node: read file: URLs from disk and fetch the others ourselves (the web glue has no Node I/O).
      opts.wasmBinary = await readInNode(url);
    } else {
      opts.locateFile = () => url;
    }
    what = url;
  } else if (locateFile !== undefined && locateFile !== null) {
    if (typeof locateFile !== 'function') throw loadError(`locateFile must be a function (file, prefix) => url, got ${typeof locateFile}`);
    if (isNode) {
      // Node: resolve it here and read the bytes (a URL, or a file path) ourselves.
      const loc = String(locateFile(build.file, new URL('.', build.url()).href));
      const href = /^[a-z][a-z0-9+.-]*:/i.test(loc) && !/^[a-z]:[\\/]/i.test(loc) ? loc : (await nodeBuiltin('url')).pathToFileURL(loc).href;
      opts.wasmBinary = await readInNode(href);
      what = loc;
    } else {
      opts.locateFile = (path, prefix) => String(locateFile(path, prefix));   // path: the chosen build's file
      what = `locateFile('${build.file}')`;
    }
  } else {
    const url = build.url();
    if (isNode && url.protocol === 'file:') opts.wasmBinary = await readInNode(url.href);
    else opts.locateFile = () => url.href;
    what = url.href;
  }
  if (!opts.locateFile) opts.locateFile = (path) => path;
  return { opts, what };
}

/**
 * Adds to the Emscripten module options `opts` the threads − 1 pthread workers of a threaded
 * build, loaded before the module resolves (they import the glue by URL): in Node, worker_threads
 * with the worker script next to this module; in browsers, the package's pool worker.
 * @param {object} opts module options from wasmSource (its locateFile is wrapped in Node)
 * @param {object} build an entry of MT_BUILDS
 * @param {number} threads ≥ 2
 * @returns {Promise<{started: Worker[], failed: Promise<never>, fail: (e: Error) => void}|null>}
 *   browsers: the pool, whose `failed` rejects when a worker cannot start (or `fail` is called) and
 *   whose `started` lists the workers to terminate then; Node: null
 */
async function addPool(opts, build, threads) {
  opts.mhaPoolSize = threads - 1;
  opts.mainScriptUrlOrBlob = build.glueURL().href;
  if (isNode) {
    opts.mhaWorker = await nodeWorkerClass();
    const wasmLocate = opts.locateFile;
    // a Node-only file named at run time: bundlers must not follow it
    const workerURL = new URL(/* @vite-ignore */ /* webpackIgnore: true */ `../wasm/${build.worker}`, import.meta.url).href;
    opts.locateFile = (path, prefix) => (path === build.worker ? workerURL : wasmLocate(path, prefix));
    return null;
  }
  const pool = { started: [] };
  pool.failed = new Promise((_, reject) => { pool.fail = reject; });
  pool.failed.catch(() => {});
  const spare = earlyPoolWorkers(threads - 1, opts.mainScriptUrlOrBlob, pool.started);
  opts.mhaWorker = browserPoolWorkerClass((e) => pool.fail(e), pool.started, spare);
  return pool;
}

/**
 * @param {{locateFile?: (path: string, prefix: string) => string, wasmURL?: string|URL,
 *          wasmBinary?: ArrayBuffer|ArrayBufferView, simd?: boolean, tier?: string,
 *          threads?: number|'auto', tile?: 'auto'|'4x8'|'6x8'|'3x12'}} [options] `tile`: see tile.js
 *   chooseTileRows; `threads`: see threads.js resolveThreads; more than
 *   one loads the tier's threaded build (wasmBinary / wasmURL must then be that build's bytes,
 *   `mha_core_relaxed_mt.wasm` or `mha_core_mt.wasm`; locateFile is also asked for its worker script)
 * @returns {Promise<object>} the Emscripten module instance, its tier in `mhaTier`, its thread
 *   count in `mhaThreads`; its GEMM register tile is set (the core's gemmTileRows() reports it)
 * @throws {Error} named MHALoadError: bad option types, a .wasm that cannot be fetched or compiled
 */
export async function loadCore(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw loadError(`createMHA options must be an object {locateFile?, wasmURL?, wasmBinary?, tier?, simd?, threads?, tile?}, got ${options === null ? 'null' : typeof options}`);
  }
  const tier = chooseTier(options);
  const tileRows = chooseTileRows(options.tile, tier);
  let threads = await resolveThreads(options);
  if (!MT_BUILDS[tier]) threads = 1;   // the scalar tier has no threaded build
  const build = threads > 1 ? MT_BUILDS[tier] : BUILDS[tier];
  const { opts, what } = await wasmSource(options, build);
  const pool = threads > 1 ? await addPool(opts, build, threads) : null;   // browser: its failure and workers
  let factory;
  try {
    factory = await build.factory();
  } catch (e) {
    if (pool) for (const w of pool.started) w.terminate();   // the workers started early
    throw e;
  }
  let timer = null;
  try {
    let core;
    if (pool) {
      timer = setTimeout(() => pool.fail(new Error(`the ${threads - 1} pthread worker(s) did not load within ${POOL_START_TIMEOUT_MS / 1000} s`)), POOL_START_TIMEOUT_MS);
      try {
        core = await Promise.race([factory(opts), pool.failed]);
      } catch (e) {
        // the threaded build could not start its workers: the single-thread build, with the reason
        for (const w of pool.started) w.terminate();
        const msg = e && e.message ? e.message : String(e);
        console.warn(`mha-wasm: running one thread instead of ${threads}: ${msg}`);
        const one = await loadCore({ ...options, threads: 1 });
        one.mhaThreadsError = msg;
        return one;
      }
    } else {
      core = await factory(opts);
    }
    core.mhaTier = tier;
    core.setGemmTileRows(tileRows);  // a no-op in the scalar tier, which has no register tile
    core.mhaThreads = threads > 1 ? core.setThreads(threads) : 1;
    if (threads > 1 && isNode) unrefWorkers(core);
    return core;
  } catch (e) {
    const msg = e && e.message ? e.message : String(e);
    throw loadError(`could not load the wasm core from ${what}: ${msg}. A server must send .wasm files with ` +
      'status 200 (and ideally Content-Type: application/wasm); otherwise pass wasmURL, locateFile or wasmBinary ' +
      'to createMHA, or import mha-wasm/single (the .wasm embedded in JS).', e);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

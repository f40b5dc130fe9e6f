/**
 * Browser only: the script of one pthread worker of the threaded core (`mha_core_relaxed_mt`,
 * `mha_core_mt`), in place of Emscripten's `*_mt.worker.js`. scripts/build-web.mjs copies it to
 * `web/lib/wasm/mha_pthread_worker.js`, and loader.js starts it with a literal
 * `new Worker(new URL('../../wasm/mha_pthread_worker.js', import.meta.url))`, the pattern Vite, webpack 5
 * and Parcel 2 recognise: they bundle it as a worker and emit it as a file of the page's origin.
 * (Emscripten's own script, referenced by a plain `new URL(…)`, is 2.3 KB: Vite inlines it as a data:
 * URL, a worker from which has an opaque origin and cannot import the glue, and as a blob: URL it is
 * refused by a CSP without `worker-src blob:`.)
 *
 * `preload` {url} (ours, sent by loader.js as soon as the worker exists, before the page has
 * compiled the wasm): starts importing the glue from `url`, so that `load` finds it imported.
 *
 * Same protocol as Emscripten's worker script of this build (Emscripten 3.1.x, `-pthread`):
 * `load` {wasmModule, wasmMemory, urlOrBlob}: imports the glue from `urlOrBlob` (the glue's own
 * asset URL, set by loader.js as `mainScriptUrlOrBlob`) and instantiates the module on the shared
 * memory, then the glue posts `loaded`; `run` {start_routine, arg, threadInfoStruct, time}: runs the
 * thread; `cancel`, `processThreadQueue`, `processProxyingQueue` as Emscripten's. A classic worker
 * (no import or export here): the glue takes its worker path where `importScripts` exists.
 * @module pthread-worker
 */
'use strict';
let Module = {};
let initializedJS = false;
let preloaded = null;   // {url, glue: Promise of the glue's exports} from `preload`

function threadPrintErr(...args) {
  console.error(args.join(' '));
}
self.alert = (...args) => postMessage({ cmd: 'alert', text: args.join(' '), threadId: Module._pthread_self() });

Module.instantiateWasm = (info, receiveInstance) => {
  const instance = new WebAssembly.Instance(Module.wasmModule, info);
  receiveInstance(instance);
  Module.wasmModule = null;
  return instance.exports;
};

/** Imports the glue (a URL known only at run time: bundlers must leave this import as it is). */
function importGlue(url) {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ url);
}

self.onmessage = (e) => {
  try {
    const d = e.data;
    if (d.cmd === 'preload') {
      preloaded = { url: d.url, glue: importGlue(d.url) };
      preloaded.glue.catch(() => {});   // reported when `load` uses it
    } else if (d.cmd === 'load') {
      Module.wasmModule = d.wasmModule;
      Module.wasmMemory = d.wasmMemory;
      Module.buffer = Module.wasmMemory.buffer;
      Module.ENVIRONMENT_IS_PTHREAD = true;
      if (!d.urlOrBlob) throw new Error('mha-wasm pthread worker: no glue URL (mainScriptUrlOrBlob) in the load message');
      (preloaded && preloaded.url === d.urlOrBlob ? preloaded.glue : importGlue(d.urlOrBlob))
        .then((exports) => {
          // Parcel compiles the glue behind new URL(…) into a script of its own format, with no default export
          if (typeof exports.default !== 'function') throw new Error(`the glue at ${d.urlOrBlob} is not the Emscripten module (no default export): a bundler transformed it`);
          return exports.default(Module);
        })
        .then((instance) => { Module = instance; })
        // reported to the page's loader (loader.js), which then runs one thread; never an uncaught error
        .catch((err) => postMessage({ cmd: 'mhaLoadFailed', text: String(err && err.message ? err.message : err) }));
    } else if (d.cmd === 'run') {
      Module.__performance_now_clock_drift = performance.now() - d.time;
      Module.__emscripten_thread_init(d.threadInfoStruct, 0, 0, 1);
      Module.establishStackSpace();
      Module.PThread.receiveObjectTransfer(d);
      Module.PThread.threadInit();
      if (!initializedJS) {
        Module.___embind_register_native_and_builtin_types();
        initializedJS = true;
      }
      try {
        const result = Module.invokeEntryPoint(d.start_routine, d.arg);
        if (Module.keepRuntimeAlive()) Module.PThread.setExitStatus(result);
        else Module.__emscripten_thread_exit(result);
      } catch (ex) {
        if (ex !== 'unwind') {
          if (ex instanceof Module.ExitStatus) {
            if (!Module.keepRuntimeAlive()) Module.__emscripten_thread_exit(ex.status);
          } else {
            throw ex;
          }
        }
      }
    } else if (d.cmd === 'cancel') {
      if (Module._pthread_self()) Module.__emscripten_thread_exit(-1);
    } else if (d.target === 'setimmediate') {
      // nothing: the glue's setImmediate polyfill
    } else if (d.cmd === 'processThreadQueue') {
      if (Module._pthread_self()) Module._emscripten_current_thread_process_queued_calls();
    } else if (d.cmd === 'processProxyingQueue') {
      if (Module._pthread_self()) Module._emscripten_proxy_execute_queue(d.queue);
    } else {
      threadPrintErr(`mha-wasm pthread worker received an unknown command ${d.cmd}`);
    }
  } catch (ex) {
    threadPrintErr(`mha-wasm pthread worker: uncaught exception: ${ex}`);
    if (ex && ex.stack) threadPrintErr(ex.stack);
    if (Module.__emscripten_thread_crashed) Module.__emscripten_thread_crashed();
    throw ex;
  }
};

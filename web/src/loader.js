/**
 * Loads the wasm core (Emscripten's ES module) in Node and in browsers.
 *
 * In Node the .wasm bytes are read from disk next to the loader (Emscripten's own loader would
 * try fetch() on a file path); in browsers the .wasm is fetched from the URL next to this module
 * (a bundler that understands `new URL(..., import.meta.url)` emits it as an asset).
 * @module loader
 */
import createMHACore from '../wasm/mha_core.mjs';

const isNode = typeof process === 'object' && process !== null && !!(process.versions && process.versions.node) &&
  typeof window === 'undefined';

/**
 * @param {{locateFile?: (path: string, prefix: string) => string, wasmURL?: string|URL,
 *          wasmBinary?: ArrayBuffer|Uint8Array}} [options]
 * @returns {Promise<object>} the Emscripten module instance
 */
export async function loadCore(options = {}) {
  const opts = {};
  if (options.wasmBinary) {
    opts.wasmBinary = options.wasmBinary;
  } else if (options.wasmURL) {
    const url = String(options.wasmURL);
    opts.locateFile = () => url;
  } else if (options.locateFile) {
    opts.locateFile = options.locateFile;
  } else {
    const url = new URL('../wasm/mha_core.wasm', import.meta.url);
    if (isNode && url.protocol === 'file:') {
      const fs = await import(/* @vite-ignore */ 'node:fs/promises');
      opts.wasmBinary = await fs.readFile(url);
    } else {
      opts.locateFile = () => url.href;
    }
  }
  return createMHACore(opts);
}

/**
 * mha-wasm/single: the same API as mha-wasm, with the .wasm embedded in JavaScript (base64), for
 * hosts that cannot serve .wasm files (course platforms, CDNs with a wrong MIME type, file
 * uploads that only accept .js). No .wasm is fetched, no data: URI either (CSP-safe).
 *
 *   import { createMHA } from 'mha-wasm/single';
 *   const mha = await createMHA();
 *
 * The SIMD build is in this module graph (~262 kB of base64, ~150 kB gzipped); the non-SIMD
 * build is imported only on engines without wasm SIMD128.
 * @module mha-wasm/single
 */
import { createMHA as createFromOptions } from './index.js';
import { chooseBuild } from './loader.js';
import simdBase64 from '../wasm/mha_core.wasm.mjs';

export * from './index.js';

/** Decodes base64 to bytes (atob exists in browsers, workers and Node ≥ 16). */
function decode(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * Loads the embedded wasm module and returns the API (as mha-wasm's createMHA).
 * @param {{simd?: boolean, wasmBinary?: ArrayBuffer|ArrayBufferView, wasmURL?: string|URL,
 *          locateFile?: (path: string, prefix: string) => string}} [options] simd forces a build;
 *   a wasmBinary, wasmURL or locateFile given here is used instead of the embedded bytes
 * @returns {Promise<import('./index.js').MHA>}
 */
export async function createMHA(options = {}) {
  if (options === null || typeof options !== 'object') return createFromOptions(options);
  if (options.wasmBinary != null || options.wasmURL != null || options.locateFile != null) return createFromOptions(options);
  const build = chooseBuild(options);
  const b64 = build === 'simd' ? simdBase64 : (await import('../wasm/mha_core_nosimd.wasm.mjs')).default;
  return createFromOptions({ ...options, simd: build === 'simd', wasmBinary: decode(b64) });
}

/**
 * mha-wasm/single: the same API as mha-wasm, with the .wasm embedded in JavaScript (base64), for
 * hosts that cannot serve .wasm files (course platforms, CDNs with a wrong MIME type, file
 * uploads that only accept .js). No .wasm is fetched, no data: URI either (CSP-safe).
 *
 *   import { createMHA } from 'mha-wasm/single';
 *   const mha = await createMHA();
 *
 * The simd tier is in this module graph (~262 kB of base64, ~150 kB gzipped); the scalar tier is
 * imported only on engines without wasm SIMD128. The relaxed-simd tier is not embedded (it would
 * add its own ~260 kB of base64): this entry runs the simd tier where the default entry would
 * pick relaxed-simd.
 * @module mha-wasm/single
 */
import { createMHA as createFromOptions } from './index.js';
import { chooseTier } from './loader.js';
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
 * @param {{tier?: 'simd'|'scalar', simd?: boolean, wasmBinary?: ArrayBuffer|ArrayBufferView, wasmURL?: string|URL,
 *          locateFile?: (path: string, prefix: string) => string}} [options] tier or simd forces a build;
 *   a wasmBinary, wasmURL or locateFile given here is used instead of the embedded bytes
 * @returns {Promise<import('./index.js').MHA>}
 */
export async function createMHA(options = {}) {
  if (options === null || typeof options !== 'object') return createFromOptions(options);
  if (options.wasmBinary != null || options.wasmURL != null || options.locateFile != null) return createFromOptions(options);
  const tier = chooseTier(options, ['simd', 'scalar']);
  const b64 = tier === 'simd' ? simdBase64 : (await import('../wasm/mha_core_scalar.wasm.mjs')).default;
  return createFromOptions({ ...options, simd: undefined, tier, wasmBinary: decode(b64) });
}

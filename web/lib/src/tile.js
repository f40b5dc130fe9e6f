/**
 * The GEMM register tile for the wasm engine this runs on (cpp/include/mha/tile.hpp).
 *
 * Every product of a forward (the projections, Q·Kᵀ, P·V, W_O) runs one micro-kernel over a tile
 * of C of 4 or 6 rows × 8 columns, held in 8 or 12 f32x4 accumulators. The 6 × 8 tile is faster
 * only where the engine's register allocator keeps all 12 accumulators in registers, and only with
 * fused multiply-adds: V8 13.6 (Node 24, Chromium 136) and later run a relaxed-simd forward 12–17 %
 * faster with it, V8 11–12 (Node 20, 22) spill and run it about 25 % slower (docs/performance.md,
 * "The register tile per engine"). Both tiles
 * compute every output element with the same multiply-add chain, so the choice changes speed only:
 * results are bit-identical.
 * @module tile
 */
import { loadError } from './errors.js';

/** V8 from which the 6 × 8 tile is used: 13.6, the oldest measured to keep its accumulators in registers. */
const V8_6X8 = [13, 6];
/** The same boundary as a Chromium major version (Chromium 136 ships V8 13.6). */
const CHROMIUM_6X8 = 136;

/** The tiles `createMHA({tile})` accepts. */
export const TILES = Object.freeze(['4x8', '6x8']);

/**
 * Whether this engine is known to run the 6 × 8 tile faster: V8 ≥ 13.6 read from Node's or Deno's
 * version, or a Chromium-based browser ≥ 136 from its user-agent brands (or user-agent string).
 * Other engines (Firefox, Safari, older V8) keep the 4 × 8 tile, which no engine spills.
 * @param {object} [env] for tests: `{v8?: string, brands?: {brand: string, version: string}[], userAgent?: string}`
 *   instead of the running engine's
 * @returns {boolean}
 */
export function engineRuns6x8(env = runningEngine()) {
  if (env.v8) {
    const [major, minor] = env.v8.split('.').map(Number);
    return major > V8_6X8[0] || (major === V8_6X8[0] && minor >= V8_6X8[1]);
  }
  const brand = env.brands?.find((b) => b.brand === 'Chromium');
  if (brand) return Number(brand.version) >= CHROMIUM_6X8;
  const m = /\bChrom(?:e|ium)\/(\d+)/.exec(env.userAgent ?? '');
  return m !== null && Number(m[1]) >= CHROMIUM_6X8;
}

/** The running engine's version facts, as engineRuns6x8 reads them. */
function runningEngine() {
  const g = globalThis;
  const v8 = g.process?.versions?.v8 ?? g.Deno?.version?.v8;
  if (v8) return { v8: String(v8) };
  const nav = g.navigator;
  return { brands: nav?.userAgentData?.brands, userAgent: nav?.userAgent };
}

/**
 * Rows of the register tile for `createMHA({tile})`.
 * @param {'auto'|'4x8'|'6x8'} [tile='auto'] 'auto': 6 for the relaxed-simd tier where
 *   engineRuns6x8(), else 4 (the simd tier's multiply-add is a mul and an add, whose product needs
 *   a 16th register in a 6 × 8 tile: it measured 4 % slower there)
 * @param {string} [tier] the tier being loaded
 * @returns {4|6}
 * @throws {Error} named MHALoadError: a tile other than 'auto', '4x8' or '6x8'
 */
export function chooseTileRows(tile = 'auto', tier = 'relaxed-simd') {
  if (tile === 'auto') return tier === 'relaxed-simd' && engineRuns6x8() ? 6 : 4;
  if (!TILES.includes(tile)) {
    throw loadError(`tile must be 'auto', ${TILES.map((t) => `'${t}'`).join(' or ')}, got ${JSON.stringify(tile)}`);
  }
  return tile === '6x8' ? 6 : 4;
}

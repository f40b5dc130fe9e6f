/**
 * The GEMM register tile for the wasm engine this runs on (cpp/include/mha/tile.hpp).
 *
 * Every product of a forward (the projections, Q·Kᵀ, P·V, W_O) runs one micro-kernel over a tile
 * of C held in f32x4 accumulators: 4 rows × 8 columns (8 accumulators), 6 × 8 (12) or 3 × 12 (9).
 * Which is fastest depends on the engine's register allocator, and the two larger tiles pay only
 * with fused multiply-adds (the relaxed-simd tier):
 * - V8 13.6 (Node 24, Chromium 136) and later keep all 12 accumulators of the 6 × 8 tile in
 *   registers and run a forward faster with it than with 4 × 8;
 * - V8 11–12 (Node 20, 22) hoist every broadcast of an iteration ahead of its multiply-adds, spill
 *   the 6 × 8 tile (slower than 4 × 8) and run the 3 × 12 tile (9 accumulators, 3 broadcasts,
 *   3 B vectors) faster than 4 × 8;
 * - engines that were not measured (Firefox, Safari) keep 4 × 8, which no engine spills.
 * (How much faster: docs/performance.md, "The register tile per engine".) Every tile computes each output element
 * with the same multiply-add chain, so the choice changes speed only: results are bit-identical.
 * @module tile
 */
import { loadError } from './errors.js';

/** V8 from which the 6 × 8 tile is used: 13.6, the oldest measured to keep its accumulators in registers. */
const V8_6X8 = [13, 6];
/** The same boundary as a Chromium major version (Chromium 136 ships V8 13.6). */
const CHROMIUM_6X8 = 136;

/** The tiles `createMHA({tile})` accepts, and the rows each passes to the core's setGemmTileRows. */
const ROWS = Object.freeze({ '4x8': 4, '6x8': 6, '3x12': 3 });

/** The tiles `createMHA({tile})` accepts. */
export const TILES = Object.freeze(Object.keys(ROWS));

/**
 * The tile this engine is known to run fastest with the relaxed-simd tier: '6x8' for V8 ≥ 13.6
 * (Node's or Deno's V8 version, or a Chromium-based browser ≥ 136 from its user-agent brands or
 * user-agent string), '3x12' for older V8 (Node, Deno, Chromium-based browsers), '4x8' for any
 * other engine.
 * @param {object} [env] for tests: `{v8?: string, brands?: {brand: string, version: string}[], userAgent?: string}`
 *   instead of the running engine's
 * @returns {'4x8'|'6x8'|'3x12'}
 */
export function engineTile(env = runningEngine()) {
  if (env.v8) {
    const [major, minor] = env.v8.split('.').map(Number);
    return major > V8_6X8[0] || (major === V8_6X8[0] && minor >= V8_6X8[1]) ? '6x8' : '3x12';
  }
  const brand = env.brands?.find((b) => b.brand === 'Chromium');
  const m = /\bChrom(?:e|ium)\/(\d+)/.exec(env.userAgent ?? '');
  const chromium = brand ? Number(brand.version) : m ? Number(m[1]) : null;
  if (chromium === null || !Number.isFinite(chromium)) return '4x8';
  return chromium >= CHROMIUM_6X8 ? '6x8' : '3x12';
}

/** The running engine's version facts, as engineTile reads them. */
function runningEngine() {
  const g = globalThis;
  const v8 = g.process?.versions?.v8 ?? g.Deno?.version?.v8;
  if (v8) return { v8: String(v8) };
  const nav = g.navigator;
  return { brands: nav?.userAgentData?.brands, userAgent: nav?.userAgent };
}

/**
 * Rows of the register tile for `createMHA({tile})`, as the core's setGemmTileRows takes them
 * (3 stands for the 3 × 12 tile).
 * @param {'auto'|'4x8'|'6x8'|'3x12'} [tile='auto'] 'auto': engineTile() for the relaxed-simd tier,
 *   '4x8' for the simd tier (its multiply-add is a mul and an add, whose product needs one more
 *   register, and both larger tiles measured slower there: docs/performance.md, "The register
 *   tile per engine")
 * @param {string} [tier] the tier being loaded
 * @returns {3|4|6}
 * @throws {Error} named MHALoadError: a tile other than 'auto', '4x8', '6x8' or '3x12'
 */
export function chooseTileRows(tile = 'auto', tier = 'relaxed-simd') {
  if (tile === 'auto') return ROWS[tier === 'relaxed-simd' ? engineTile() : '4x8'];
  if (!TILES.includes(tile)) {
    throw loadError(`tile must be 'auto', ${TILES.slice(0, -1).map((t) => `'${t}'`).join(', ')} or '${TILES.at(-1)}', got ${JSON.stringify(tile)}`);
  }
  return ROWS[tile];
}

/**
 * The tile's name for the rows the core reports (setGemmTileRows / gemmTileRows).
 * @param {number} rows 3, 4 or 6; 0 (the scalar tier) gives null
 * @returns {'4x8'|'6x8'|'3x12'|null}
 */
export function tileName(rows) {
  return TILES.find((t) => ROWS[t] === rows) ?? null;
}

/**
 * The score modifiers of a layer: logit soft-capping, ALiBi and a sliding window. Options of
 * createLayer (layer properties, as in Gemma 2, BLOOM/MPT and Mistral); a KV cache of the layer
 * inherits them. On the scaled scores S = Q_i·K_gᵀ·scale of query i (at position i, or
 * cache.length + i in a KV-cache step) and key j, in this order, before the masks and the softmax:
 *
 *   softcap      S ← cap·tanh(S / cap)          Gemma 2 (Gemma Team 2024, "logit soft-capping")
 *   alibi        S ← S − m_h·|i − j|            Press et al. 2022, "Train Short, Test Long" (ALiBi)
 *   window       key j masked unless i − left ≤ j ≤ i + right (−1 = unbounded on that side):
 *                Beltagy et al. 2020 (Longformer), Mistral 7B; FlashAttention's window_size
 *
 * JS checks the types here (what only JS values can get wrong); the value rules (cap > 0, one slope
 * per head, window sides ≥ −1) are the core's (mha::resolve), which names the option.
 * @module scoremods
 */
import { MHAError } from './errors.js';

/**
 * Reads the score-modifier options of createLayer or passport.
 * @param {object} o options
 * @returns {{softcap: number|undefined, alibi: 0|1|2, slopes: Float32Array|null,
 *   window: [number, number]}|null} null when no modifier is given
 * @throws {MHAError} INVALID_CONFIG naming the option: softcap not a number, alibi not a boolean,
 *   alibiSlopes not an array of numbers (or given with alibi: false), window not [left, right] integers
 */
export function scoreModsOption(o) {
  const { softcap, alibi, alibiSlopes, window } = o;
  if (softcap === undefined && alibi === undefined && alibiSlopes === undefined && window === undefined) return null;
  if (softcap !== undefined && typeof softcap !== 'number') {
    throw new MHAError('INVALID_CONFIG', `softcap must be a finite number > 0 (the cap of cap·tanh(scores / cap)), got ${JSON.stringify(softcap)}`, { argument: 'softcap' });
  }
  if (alibi !== undefined && typeof alibi !== 'boolean') {
    throw new MHAError('INVALID_CONFIG', `alibi must be a boolean, got ${JSON.stringify(alibi)}`, { argument: 'alibi' });
  }
  let slopes = null;
  if (alibiSlopes !== undefined) {
    const ok = alibiSlopes instanceof Float32Array || alibiSlopes instanceof Float64Array ||
      (Array.isArray(alibiSlopes) && alibiSlopes.every((x) => typeof x === 'number'));
    if (!ok) throw new MHAError('INVALID_CONFIG', `alibiSlopes must be an array or Float32Array of numbers (one per query head), got ${describe(alibiSlopes)}`, { argument: 'alibiSlopes' });
    if (alibi === false) throw new MHAError('INVALID_CONFIG', 'alibiSlopes was given with alibi: false: leave alibi out (slopes turn ALiBi on) or drop alibiSlopes', { argument: 'alibiSlopes' });
    slopes = Float32Array.from(alibiSlopes);
  }
  let win = [-1, -1];
  if (window !== undefined) {
    if (!Array.isArray(window) || window.length !== 2 || !window.every((x) => Number.isInteger(x) && Math.abs(x) < 2 ** 31)) {
      throw new MHAError('INVALID_CONFIG', `window must be [left, right], two integers ≥ 0 or −1 (unbounded), got ${describe(window)}`, { argument: 'window' });
    }
    win = [window[0], window[1]];
  }
  return { softcap, alibi: slopes ? 2 : alibi ? 1 : 0, slopes, window: win };
}

function describe(v) {
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length})`;
  try { return JSON.stringify(v) ?? String(v); } catch { return String(v); }
}

/** Bytes of the block writeScoreMods writes for these options (the core's block and the slopes). */
export function scoreModsBytes(core, mods) {
  return mods ? core.scoreModsLayout().bytes + 4 * (mods.slopes ? mods.slopes.length : 0) : 0;
}

/**
 * Writes the core's ScoreModsBlock (cpp/bindings/embind.cpp; field offsets from scoreModsLayout())
 * and the slopes after it, at byte offset `at` (4-byte aligned). Returns `at`, or 0 when mods is null.
 */
export function writeScoreMods(core, mods, at) {
  if (!mods) return 0;
  const { bytes, fields: f } = core.scoreModsLayout();
  const i32 = core.HEAP32, f32 = core.HEAPF32;
  i32[(at + f.softcap_on) >> 2] = mods.softcap !== undefined ? 1 : 0;
  f32[(at + f.softcap) >> 2] = mods.softcap !== undefined ? mods.softcap : 0;
  i32[(at + f.alibi) >> 2] = mods.alibi;
  i32[(at + f.window_left) >> 2] = mods.window[0];
  i32[(at + f.window_right) >> 2] = mods.window[1];
  i32[(at + f.slopes) >> 2] = mods.slopes ? at + bytes : 0;
  i32[(at + f.alibi_count) >> 2] = mods.slopes ? mods.slopes.length : 0;
  if (mods.slopes) f32.set(mods.slopes, (at + bytes) >> 2);
  return at;
}

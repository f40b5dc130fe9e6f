/**
 * The score modifiers of a layer: logit soft-capping, ALiBi and a sliding window, and the rotary
 * position embedding (`rope`, see ropeOption), carried to the core in the same argument struct. Options of
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
  const { softcap, alibi, alibiSlopes, window, rope } = o;
  if (softcap === undefined && alibi === undefined && alibiSlopes === undefined && window === undefined &&
      rope === undefined) return null;
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
  return { softcap, alibi: slopes ? 2 : alibi ? 1 : 0, slopes, window: win, rope: ropeOption(rope) };
}

/**
 * Reads the `rope` option: rotary position embedding (RoPE; Su et al. 2021, "RoFormer: Enhanced
 * Transformer with Rotary Position Embedding", §3.4). Q and K of every head are rotated right after
 * their projection: pair p of the first `dim` dims of a head (p = 0 … dim/2 − 1) at position m is
 *   (a, b) ← (a·cos(m·ω_p) − b·sin(m·ω_p), a·sin(m·ω_p) + b·cos(m·ω_p)),  ω_p = base^(−2p/dim),
 * so q_mᵀk_n depends on m − n only. Pairs: (x[2p], x[2p+1]) with `interleaved: true` (RoFormer,
 * GPT-J, llama2.c), (x[p], x[p + dim/2]) otherwise (GPT-NeoX, HF Llama's rotate_half; the default,
 * as FlashAttention's apply_rotary_emb). Dims ≥ dim pass through.
 * @param {boolean|{dim?: number, base?: number, interleaved?: boolean}|undefined} rope true = the
 *   defaults (dim = dK, base 10000, halves); false / undefined = off
 * @returns {{dim: number, base: number, interleaved: boolean}|null} dim −1 = dK
 * @throws {MHAError} INVALID_CONFIG naming `rope`, `rope.dim`, `rope.base` or `rope.interleaved`
 *   for values of the wrong type (the value rules — dim even and ≤ dK, base finite and > 1 — are the core's)
 */
function ropeOption(rope) {
  if (rope === undefined || rope === false) return null;
  if (rope === true) return { dim: -1, base: 10000, interleaved: false };
  if (rope === null || typeof rope !== 'object' || Array.isArray(rope)) {
    throw new MHAError('INVALID_CONFIG', `rope must be true, false or {dim?, base?, interleaved?}, got ${describe(rope)}`, { argument: 'rope' });
  }
  for (const k of Object.keys(rope)) {
    if (!['dim', 'base', 'interleaved'].includes(k)) throw new MHAError('INVALID_CONFIG', `rope has no option ${JSON.stringify(k)} (expected dim, base, interleaved)`, { argument: 'rope' });
  }
  const { dim, base, interleaved } = rope;
  if (dim !== undefined && !(Number.isInteger(dim) && Math.abs(dim) < 2 ** 31)) {
    throw new MHAError('INVALID_CONFIG', `rope.dim (RoPE's rotary dimension) must be an even integer ≥ 0 and ≤ dK, got ${describe(dim)}`, { argument: 'rope.dim' });
  }
  if (dim !== undefined && dim < 0) {
    throw new MHAError('INVALID_CONFIG', `rope.dim (RoPE's rotary dimension) must be an even integer ≥ 0 and ≤ dK, got ${dim}`, { argument: 'rope.dim' });
  }
  if (base !== undefined && typeof base !== 'number') {
    throw new MHAError('INVALID_CONFIG', `rope.base (RoPE's θ) must be a finite number > 1, got ${describe(base)}`, { argument: 'rope.base' });
  }
  if (interleaved !== undefined && typeof interleaved !== 'boolean') {
    throw new MHAError('INVALID_CONFIG', `rope.interleaved must be a boolean, got ${describe(interleaved)}`, { argument: 'rope.interleaved' });
  }
  return { dim: dim ?? -1, base: base ?? 10000, interleaved: interleaved ?? false };
}

function describe(v) {
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length})`;
  try { return JSON.stringify(v) ?? String(v); } catch { return String(v); }
}

/**
 * The score-modifier and RoPE fields of the core's argument structs (embind.cpp,
 * MHA_CONFIG_FIELDS) for these options (null: none).
 * @param {ReturnType<typeof scoreModsOption>} mods
 * @param {number} slopesAt byte offset of mods.slopes in wasm memory (0 without slopes)
 * @returns {object} {softcap_on, softcap, alibi, alibi_slopes, alibi_count, window_left,
 *   window_right, rope_on, rope_dim, rope_base, rope_interleaved}
 */
export function scoreModsFields(mods, slopesAt) {
  return {
    softcap_on: mods?.softcap !== undefined ? 1 : 0,
    softcap: mods?.softcap ?? 0,
    alibi: mods ? mods.alibi : 0,
    alibi_slopes: mods?.slopes ? slopesAt : 0,
    alibi_count: mods?.slopes ? mods.slopes.length : 0,
    window_left: mods ? mods.window[0] : -1,
    window_right: mods ? mods.window[1] : -1,
    rope_on: mods?.rope ? 1 : 0,
    rope_dim: mods?.rope ? mods.rope.dim : -1,
    rope_base: mods?.rope ? mods.rope.base : 10000,
    rope_interleaved: mods?.rope?.interleaved ? 1 : 0,
  };
}

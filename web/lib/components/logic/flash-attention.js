// The tiled online softmax of FlashAttention (Dao et al. 2022; the accumulator as in FlashAttention-2,
// Dao 2023), replayed step by step for one head: the keys are read in tiles of B_c, and each query
// row keeps only a running maximum m, a running sum ℓ of exponentials and a running, unnormalised
// weighted sum of values; every new tile rescales what was kept by exp(m_old − m_new). After the last
// tile, output = accumulator / ℓ, which is softmax(Q·Kᵀ/√d_k)·V exactly (up to rounding). No DOM
// and no Lit: <mha-flash-attention> shows these numbers, tests/flash-attention.test.mjs checks them
// against a full softmax computed independently.
import { MHAError } from '../../src/index.js';

const bad = (argument, msg) => new MHAError('INVALID_ARGUMENT', `${argument}: ${msg}`, { argument });

/**
 * @typedef {object} FlashRow One query row after a tile.
 * @property {number[]} scores this tile's scores q·kⱼ/√d_k, one per key of the tile
 * @property {number} mPrev the running maximum before the tile (−Infinity before the first)
 * @property {number} m the running maximum after it
 * @property {number} rescale exp(mPrev − m): the factor applied to what was kept (0 before the first tile)
 * @property {number} l the running sum of exp(s − m) over the keys read so far
 * @property {number[]} acc the running sum of exp(s − m)·v over the keys read so far, [d_v]
 */

/**
 * Replays the tiled online softmax of one head.
 * @param {number[][]} q queries [T_q, d_k]
 * @param {number[][]} k keys [T_k, d_k]
 * @param {number[][]} v values [T_k, d_v]
 * @param {number} tile B_c, keys per tile (a whole number ≥ 1; the last tile may be shorter)
 * @returns {{scale: number, tiles: Array<{from: number, to: number, rows: FlashRow[]}>, output: number[][]}}
 *   scale = 1/√d_k; tiles[t] covers keys from … to−1; output [T_q, d_v] = acc / ℓ after the last tile
 * @throws {MHAError} INVALID_ARGUMENT naming `q`, `k`, `v` or `tile` (empty, ragged, mismatched widths, bad tile)
 */
export function onlineSoftmax(q, k, v, tile) {
  const rows = (a, name) => {
    if (!Array.isArray(a) || !a.length || !a.every((r) => Array.isArray(r) && r.length === a[0].length && r.length > 0)) {
      throw bad(name, 'expected a non-empty matrix (nested arrays of equal length)');
    }
    return a;
  };
  rows(q, 'q'); rows(k, 'k'); rows(v, 'v');
  if (k[0].length !== q[0].length) throw bad('k', `expected rows of d_k = ${q[0].length} numbers (the width of q), got ${k[0].length}`);
  if (v.length !== k.length) throw bad('v', `expected ${k.length} rows (one per key), got ${v.length}`);
  if (!Number.isInteger(tile) || tile < 1) throw bad('tile', `expected a whole number of keys ≥ 1, got ${tile}`);
  const dK = q[0].length, dV = v[0].length, Tk = k.length;
  const scale = 1 / Math.sqrt(dK);
  let state = q.map(() => ({ m: -Infinity, l: 0, acc: new Array(dV).fill(0) }));
  const tiles = [];
  for (let from = 0; from < Tk; from += tile) {
    const to = Math.min(Tk, from + tile);
    state = state.map((st, i) => {
      const scores = [];
      for (let j = from; j < to; j++) {
        let s = 0;
        for (let c = 0; c < dK; c++) s += q[i][c] * k[j][c];
        scores.push(s * scale);
      }
      const m = Math.max(st.m, ...scores);
      const rescale = st.m === -Infinity ? 0 : Math.exp(st.m - m);
      let l = st.l * rescale;
      const acc = st.acc.map((a) => a * rescale);
      scores.forEach((s, n) => {
        const p = Math.exp(s - m);
        l += p;
        for (let c = 0; c < dV; c++) acc[c] += p * v[from + n][c];
      });
      return { scores, mPrev: st.m, m, rescale, l, acc };
    });
    tiles.push({ from, to, rows: state });
  }
  return { scale, tiles, output: state.map((st) => st.acc.map((a) => a / st.l)) };
}

/**
 * The numbers written to the accelerator's main memory for the scores of one layer's forward, full
 * softmax against tiles: the full softmax writes the T_q × T_k grid of every head (h·T_q·T_k); the
 * tiled one writes only m and ℓ per query row of each head (2·h·T_q, what the backward pass needs),
 * while each tile of scores (T_q × B_c per head at most) stays in fast on-chip memory and is
 * overwritten by the next.
 * @param {{tq: number, tk: number, heads: number, tile: number}} s
 * @returns {{full: number, tiled: number, onChip: number}} counts of numbers
 */
export function scoreMemory({ tq, tk, heads, tile }) {
  return { full: heads * tq * tk, tiled: 2 * heads * tq, onChip: tq * Math.min(tile, tk) };
}

// The size of the KV cache, written once: every element that shows it (<mha-kv-calculator>, the cost
// ledger, the grouped-query trained views) computes it here. Each cached token keeps one key (d_k
// values) and one value (d_v values) per K/V head per layer: L · B · T · g · (d_k + d_v) values,
// 2 · L · B · T · g · d_k when d_v = d_k, as the engine's passport counts it (memory.kvCache, per layer).

/**
 * @typedef {object} KvCacheShape
 * @property {number} [layers] L, layers that cache (default 1)
 * @property {number} [batch] B, sequences (default 1)
 * @property {number} [tokens] T, cached tokens per sequence (default 1: the size per token)
 * @property {number} kvHeads g, key/value heads (g = h for multi-head attention)
 * @property {number} dK d_k, width of a key
 * @property {number} [dV] d_v, width of a value (default d_k)
 * @property {number} [bytesPerValue] bytes of one stored value (default 1: the count of values)
 */

/**
 * The factors of the KV cache's size, in the order the lessons write them:
 * `[2, L, B, T, g, d_k, bytes]` when d_v = d_k, else `[L, B, T, g, d_k + d_v, bytes]`.
 * @param {KvCacheShape} s
 * @returns {number[]}
 */
export function kvCacheFactors({ layers = 1, batch = 1, tokens = 1, kvHeads, dK, dV = dK, bytesPerValue = 1 }) {
  return dV === dK
    ? [2, layers, batch, tokens, kvHeads, dK, bytesPerValue]
    : [layers, batch, tokens, kvHeads, dK + dV, bytesPerValue];
}

/**
 * The KV cache's size: L · B · T · g · (d_k + d_v) · bytes per value.
 * @param {KvCacheShape} s
 * @returns {number} bytes (the number of cached values when bytesPerValue is 1)
 */
export function kvCacheSize(s) {
  return kvCacheFactors(s).reduce((a, b) => a * b, 1);
}

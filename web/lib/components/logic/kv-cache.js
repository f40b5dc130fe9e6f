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

/**
 * What the KV calculator says when the context T goes beyond the context a model was trained on:
 * the cache it shows is then one the model would never hold, so the sentence says so and gives the
 * cache at the model's own context (the cache grows linearly in T). Null when T fits, or when the
 * model publishes no context.
 * @param {{name: string, context?: number}} model a model of models-data.js
 * @param {number} T the context asked for, tokens
 * @param {number} bytes the cache at T, bytes
 * @param {(b: number) => string} formatBytes how bytes are written
 * @returns {{context: number, bytesAtContext: number, text: string}|null}
 */
export function contextNote(model, T, bytes, formatBytes) {
  const ctx = model?.context;
  if (!ctx || T <= ctx) return null;
  const bytesAtContext = (bytes / T) * ctx;
  const n = (v) => v.toLocaleString('en-US');
  return {
    context: ctx, bytesAtContext,
    text: `T = ${n(T)} is beyond the ${n(ctx)} tokens ${model.name} was trained to read: it never holds this cache. ` +
      `At its own context the cache is ${formatBytes(bytesAtContext)}.`,
  };
}

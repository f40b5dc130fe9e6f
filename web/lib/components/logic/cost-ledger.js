// The figures of <mha-cost-ledger> and of the weights line of <mha-kv-calculator>, computed from
// the engine's passport (mha.passport) and a model's published sizes (models-data.js). No DOM and no
// Lit here, so Node tests import it directly.
//
// Every attention figure is the engine's: params.total (W_Q, W_K, W_V, W_O and their biases),
// flops.{matmul, softmax, total}, memory.scores for one layer, multiplied by the number of layers
// and the bytes per value; the KV cache is kv-cache.js's formula (the count of the engine's
// memory.kvCache, tests/kv-cache.test.mjs). The rest of a model (MLP, embeddings, norms) is counted
// here from its published sizes, as documented on modelWeights().
import { kvCacheSize } from './kv-cache.js';

/** Largest values the ledger accepts (attributes and controls). */
export const LEDGER_LIMITS = Object.freeze({
  context: 1048576, batch: 4096, layers: 1000, dModel: 65536, heads: 65536, dtypeBytes: 8,
});

/**
 * Parameters of a model outside its attention layers, from its published sizes (models-data.js):
 * per layer the MLP (`gelu`: W_1 [d, d_FF] + b_1 + W_2 [d_FF, d] + b_2 = 2·d·d_FF + d_FF + d;
 * `swiglu`: W_gate, W_up [d, d_FF] and W_down [d_FF, d], no biases = 3·d·d_FF) and two norms
 * (LayerNorm 2·d each, RMSNorm d each); once: the token embedding vocab·d, the output projection
 * vocab·d unless tied, learned position embeddings positions·d, the final norm.
 * @param {{dModel: number, layers: number, dFF: number, mlp: 'gelu'|'swiglu', vocab: number,
 *   tied: boolean, positions?: number, norm: 'layernorm'|'rmsnorm'}} m
 * @returns {{mlpPerLayer: number, normsPerLayer: number, embeddings: number, unembedding: number,
 *   positions: number, finalNorm: number}} parameter counts
 */
export function nonAttentionParams(m) {
  const d = m.dModel;
  const mlpPerLayer = m.mlp === 'swiglu' ? 3 * d * m.dFF : 2 * d * m.dFF + m.dFF + d;
  const norm = m.norm === 'rmsnorm' ? d : 2 * d;
  return {
    mlpPerLayer,
    normsPerLayer: 2 * norm,
    embeddings: m.vocab * d,
    unembedding: m.tied ? 0 : m.vocab * d,
    positions: (m.positions ?? 0) * d,
    finalNorm: norm,
  };
}

/**
 * The whole model's parameter count: layers·(attention + MLP + norms) + embeddings (+ output
 * projection when untied) + positions + final norm. `attentionPerLayer` is the engine's
 * passport params.total. GPT-2 small: 124,439,808; GPT-3 175B: 174,604,259,328; LLaMA-2 70B:
 * 68,976,648,192 (the published totals).
 * @param {object} m a model of models-data.js with dFF, mlp, vocab, tied, positions, norm
 * @param {number} attentionPerLayer parameters of one attention layer (mha.passport(...).params.total)
 * @param {number} [layers] default m.layers
 */
export function modelParams(m, attentionPerLayer, layers = m.layers) {
  const n = nonAttentionParams(m);
  return layers * (attentionPerLayer + n.mlpPerLayer + n.normsPerLayer) + n.embeddings + n.unembedding + n.positions + n.finalNorm;
}

/**
 * The cost ledger of a configuration: weights, KV cache, attention-score memory and the FLOPs of one
 * forward over `context` tokens of `batch` sequences, the softmax counted (the engine's convention:
 * 6 FLOPs per score, exp counted as one, + 1 per score row).
 * @param {object} mha an engine from createMHA()
 * @param {{dModel: number, heads: number, kvHeads: number, layers: number, context: number,
 *   batch: number, dtypeBytes: number, bias?: boolean, model?: object|null}} c model: a preset of
 *   models-data.js whose MLP and embeddings are counted (null: the attention layers only)
 * @returns {object} {passport, dK, attention: {params, bytesPerLayer, bytes}, weights: {params,
 *   bytes, complete}, kvCache: {elements, bytes}, scores: {elements, bytesPerLayer, bytesAllLayers},
 *   flops: {matmul, softmax, attention, mlp, unembedding, total, perToken}} — params and elements
 *   are counts, bytes at dtypeBytes per value; flops for the whole forward (all layers)
 * @throws {MHAError} INVALID_CONFIG from mha.passport (e.g. kvHeads not dividing heads)
 */
export function costLedger(mha, c) {
  const cfg = { seqLen: c.context, batch: c.batch, dModel: c.dModel, numHeads: c.heads, kvHeads: c.kvHeads };
  if (c.bias === false) cfg.bias = false;
  const p = mha.passport(cfg);
  const L = c.layers, bytes = c.dtypeBytes, B = c.batch, T = c.context;
  const attnParams = p.params.total;
  const kv = { layers: L, batch: B, tokens: T, kvHeads: c.kvHeads ?? c.heads, dK: p.dK, dV: p.dV };
  const m = c.model ?? null;
  const weightsParams = m ? modelParams({ ...m, dModel: c.dModel }, attnParams, L) : L * attnParams;
  let mlp = 0, unembedding = 0;
  if (m) {
    mlp = L * 2 * B * T * (m.mlp === 'swiglu' ? 3 : 2) * c.dModel * m.dFF;
    unembedding = 2 * B * T * c.dModel * m.vocab;
  }
  const attention = L * p.flops.total;
  const total = attention + mlp + unembedding;
  return {
    passport: p,
    dK: p.dK,
    attention: { params: attnParams, bytesPerLayer: attnParams * bytes, bytes: L * attnParams * bytes },
    weights: { params: weightsParams, bytes: weightsParams * bytes, complete: !!m },
    kvCache: { elements: kvCacheSize(kv), bytes: kvCacheSize({ ...kv, bytesPerValue: bytes }) },
    scores: { elements: p.memory.scores, bytesPerLayer: p.memory.scores * bytes, bytesAllLayers: L * p.memory.scores * bytes },
    flops: {
      projections: L * (p.flops.projections + p.flops.output),
      matmul: L * p.flops.matmul, softmax: L * p.flops.softmax, attention, mlp, unembedding, total,
      perToken: total / (B * T),
    },
  };
}

/**
 * The head counts offered for a d_model: its divisors that are powers of two, plus the given ones
 * (a preset's and the current h), keeping d_k ≥ min(16, d_model / 8) (so 1, 2, 4, 8 for d_model = 24).
 * @param {number} dModel
 * @param {...(number|undefined)} keep head counts always offered
 * @returns {number[]} ascending
 */
export function headChoices(dModel, ...keep) {
  const minDk = Math.min(16, dModel / 8);
  const out = new Set();
  for (let h = 1; h <= dModel; h *= 2) if (dModel % h === 0 && dModel / h >= minDk) out.add(h);
  for (const h of keep) if (h) out.add(h);
  return [...out].sort((a, b) => a - b);
}

/**
 * K/V heads that go with a new h: the group size h/g of the old pair is kept when it divides the new
 * h (so at g = h every h stays standard MHA, and LLaMA-2's groups of 8 stay groups of 8); when the
 * new h is smaller than the group, a single K/V head (multi-query).
 * @param {number} hNew
 * @param {number} hOld
 * @param {number} gOld
 * @returns {number} g for hNew
 */
export function kvFor(hNew, hOld, gOld) {
  const group = hOld / gOld;
  if (Number.isInteger(group) && hNew % group === 0) return hNew / group;
  return 1;
}

/**
 * The ledger's table of one configuration at every offered h, d_model fixed. g follows h so that
 * each K/V head keeps serving the same h/g query heads: K and V then stay g·d_k = d_model·g/h wide,
 * and the projection FLOPs are the same in every row (the claim of the lesson's section 3, for
 * grouped-query layers too). h smaller than the group cannot keep it and is left out.
 * @param {object} mha an engine from createMHA()
 * @param {object} cfg costLedger's configuration, with presetHeads (a preset's h, always offered when it fits)
 * @returns {{group: number, rows: Array<{h: number, g: number, dK?: number, projections?: number,
 *   softmax?: number, scores?: number, scoreBytes?: number, kvBytes?: number, error?: Error}>}}
 */
export function ledgerByHeads(mha, cfg) {
  const group = cfg.heads / cfg.kvHeads;
  const rows = [];
  for (const h of headChoices(cfg.dModel, cfg.presetHeads, cfg.heads)) {
    if (Number.isInteger(group) && h % group) continue;
    const g = h === cfg.heads ? cfg.kvHeads : kvFor(h, cfg.heads, cfg.kvHeads);
    try {
      const q = costLedger(mha, { ...cfg, heads: h, kvHeads: g });
      rows.push({ h, g, dK: q.dK, projections: q.flops.projections, softmax: q.flops.softmax, scores: q.scores.elements, scoreBytes: q.scores.bytesPerLayer, kvBytes: q.kvCache.bytes });
    } catch (err) {
      rows.push({ h, g, error: err });
    }
  }
  return { group, rows };
}

/** "1.34 GB": decimal units (1 GB = 10⁹ bytes). */
export function bytesText(b) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let i = 0, v = b;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return `${v.toFixed(i === 0 ? 0 : v < 10 ? 2 : 1)} ${units[i]}`;
}

/** "2.67 GFLOP" etc.: FLOPs in decimal units. */
export function flopsText(f) {
  const units = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let i = 0, v = f;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return `${v.toFixed(i === 0 ? 0 : v < 10 ? 2 : 1)} ${units[i]}FLOP`;
}

/** A ratio in words: "103×", "1.6×". */
function times(r) {
  return `${r >= 10 ? Math.round(r).toLocaleString('en-US') : r.toFixed(1)}×`;
}

/**
 * One sentence comparing the three memories of a ledger, computed from its numbers: which is
 * largest, by how much, and whether one layer's scores outweigh the whole KV cache.
 * @param {ReturnType<typeof costLedger>} r
 * @returns {string}
 */
export function memorySentence(r) {
  const items = [
    { key: 'weights', label: r.weights.complete ? 'the weights' : 'the projection weights', bytes: r.weights.bytes },
    { key: 'kv', label: 'the KV cache', bytes: r.kvCache.bytes },
    { key: 'scores', label: "one layer's attention scores", bytes: r.scores.bytesPerLayer },
  ].sort((a, b) => b.bytes - a.bytes);
  const [a, b, c] = items;
  let s = `Largest: ${a.label} (${bytesText(a.bytes)}), ${times(a.bytes / b.bytes)} ${b.label} (${bytesText(b.bytes)})` +
    ` and ${times(a.bytes / c.bytes)} ${c.label} (${bytesText(c.bytes)}).`;
  if (r.scores.bytesPerLayer > r.kvCache.bytes) {
    s += ` One layer's scores alone outweigh the whole KV cache: that is the matrix FlashAttention (Dao et al. 2022) never writes to the accelerator's main memory.`;
  }
  return s;
}

/**
 * One sentence on the FLOPs: the softmax's share of the attention layers' FLOPs and of the forward.
 * @param {ReturnType<typeof costLedger>} r
 */
export function flopsSentence(r) {
  const f = r.flops;
  const pct = (x) => {
    const v = 100 * x;
    return `${v >= 99.5 && v < 100 ? v.toFixed(2) : v >= 1 ? v.toPrecision(3) : v.toPrecision(2)} %`;
  };
  let s = `The softmax is ${pct(f.softmax / f.attention)} of the attention FLOPs`;
  s += f.mlp ? ` and ${pct(f.softmax / f.total)} of the whole forward;` : ';';
  s += ` the matrix products are ${pct(f.matmul / f.attention)} of the attention FLOPs.`;
  return s;
}

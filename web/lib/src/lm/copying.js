/**
 * Copying scores of attention heads: does a head's output raise the logit of the token it attends
 * to? That is the second half of what makes an induction head (Olsson et al. 2022, "In-context
 * Learning and Induction Heads", section 2: an induction head attends to the token after an
 * earlier copy of the current one AND copies it, "increasing the logit of the attended-to token").
 * The attention half is the induction score of heads.js; this module measures the copying half on
 * the head's OV circuit (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits":
 * the logits a head adds when it attends to token s are row s of W_E · W_V^h · W_O^h · W_U).
 *
 * Definition (the one the lesson uses). For every token s of the vocabulary, let the head attend
 * fully to s (a single key, so its attention weight is 1) with s's token embedding as the key's
 * residual stream, and follow the model's own path to the logits:
 *
 *   x_s  = norm1_l(E[s])                      the layer's pre-norm (LayerNorm: centre, divide by
 *                                             the standard deviation, times its weight; RMSNorm:
 *                                             divide by the root mean square, times its weight)
 *   o_s  = x_s · W_V^{(h)} · W_O^{(h)}         the head's value slice and its rows of W_O, computed by
 *                                             the engine (a layer with only this head switched on)
 *   ℓ_s  = normF_lin(o_s) · W_U                the final norm's linear part (LayerNorm: centre, times
 *                                             its weight; RMSNorm: times its weight), then the
 *                                             unembedding (the output projection lm_head, or Eᵀ when tied)
 *
 * The head copies s when ℓ_s[s] is the largest of the V logits (strictly). The copying score is
 * the fraction of the V tokens it copies: 1 for a head that always raises the logit of what it
 * reads, about 1/V by chance, 0 for a head that maps each token to another one.
 *
 * Left out, as Elhage et al. leave them out of the OV circuit: the biases (norm biases, b_V, b_O,
 * the output head's bias), which add the same vector whatever token the head attends to, and the
 * final norm's division by the spread of o_s, a positive factor per row that changes no row's
 * largest entry; positions (the token alone; RoPE acts on queries and keys, not values); and the
 * rest of the residual stream (other layers' outputs), so a layer-2 head is scored on the token
 * embedding it would read directly.
 * @module copying
 */
import { MHAError } from '../engine/errors.js';

/** A copying score of at least this (the head raises the attended token's own logit highest for
 * at least half the vocabulary) counts as "copies". */
export const COPYING_THRESHOLD = 0.5;

/** Scores per model, computed once (a model's weights do not change). */
const cache = new WeakMap();

/** The model's engine and weights in the core's layout ([in, out] matrices). */
function parts(model) {
  if (!model || typeof model !== 'object' || !model._decoder || !model.config) {
    throw new MHAError('INVALID_ARGUMENT', `copyingScores: model must be a LanguageModel (CharModel) from mha.loadModel, got ${model === null ? 'null' : typeof model}`);
  }
  model._alive('copyingScores');
  return { mha: model._mha, c: model.config, w: model._decoder.spec.weights };
}

/** norm(x) without its bias: LayerNorm (x − mean) / √(var + eps) · γ; RMSNorm x / √(mean x² + eps) · γ. */
function normNoBias(x, gamma, kind, eps, out) {
  const d = x.length;
  let mean = 0;
  if (kind === 'layernorm') { for (let i = 0; i < d; i++) mean += x[i]; mean /= d; }
  let ss = 0;
  for (let i = 0; i < d; i++) ss += (x[i] - mean) ** 2;
  const inv = 1 / Math.sqrt(ss / d + eps);
  for (let i = 0; i < d; i++) out[i] = (x[i] - mean) * inv * gamma[i];
  return out;
}

/**
 * The OV logits of every head of one layer: for head j and source token s, the logits the head's
 * output adds when it attends fully to s (see the module's definition).
 * @param {object} model a LanguageModel (mha.loadModel)
 * @param {number} layer 0-based layer
 * @returns {Float64Array[]} per head j, [V, V] row-major: entry [s, t] = ℓ_s[t]
 * @throws {MHAError} INVALID_ARGUMENT (not a model, layer out of range), DISPOSED
 */
export function ovLogits(model, layer) {
  const { mha, c, w } = parts(model);
  if (!Number.isInteger(layer) || layer < 0 || layer >= c.numLayers) {
    throw new MHAError('INVALID_ARGUMENT', `ovLogits: layer must be an integer in [0, ${c.numLayers - 1}], got ${JSON.stringify(layer)}`);
  }
  const { vocabSize: V, dModel: d, numHeads: h, kvHeads: g } = c;
  const lw = w.layers[layer];
  // x_s = norm1(E[s]) for every s, as a batch of V one-token sequences [V, 1, d]
  const X = new Float32Array(V * d);
  const x64 = new Float64Array(d);
  for (let s = 0; s < V; s++) {
    normNoBias(w.tokEmb.subarray(s * d, (s + 1) * d), lw.norm1.weight, c.norm, c.normEps, x64);
    X.set(x64, s * d);
  }
  // the engine: this layer's W_V and W_O (W_Q, W_K do not matter with one key), no biases
  const kv = g * c.dK;
  const eng = mha.createLayer({
    dModel: d, numHeads: h, kvHeads: g, bias: false,
    weights: { wQ: { data: lw.wQ, shape: [d, d] }, wK: { data: lw.wK, shape: [d, kv] }, wV: { data: lw.wV, shape: [d, kv] }, wO: { data: lw.wO, shape: [d, d] } },
  });
  const out = [];
  try {
    const U = w.lmHead;  // [d, V], or null when tied (then E [V, d])
    const y = new Float64Array(d);
    for (let j = 0; j < h; j++) {
      const headMask = new Float32Array(h);
      headMask[j] = 1;
      const o = eng.forward({ data: X, shape: [V, 1, d] }, { headMask, needWeights: false }).output.data;
      const M = new Float64Array(V * V);
      for (let s = 0; s < V; s++) {
        let mean = 0;
        if (c.norm === 'layernorm') { for (let i = 0; i < d; i++) mean += o[s * d + i]; mean /= d; }
        for (let i = 0; i < d; i++) y[i] = (o[s * d + i] - mean) * w.normF.weight[i];
        const row = s * V;
        if (U) {
          for (let i = 0; i < d; i++) {
            const yi = y[i];
            if (yi === 0) continue;
            const u = i * V;
            for (let t = 0; t < V; t++) M[row + t] += yi * U[u + t];
          }
        } else {
          for (let t = 0; t < V; t++) {
            let a = 0;
            for (let i = 0; i < d; i++) a += y[i] * w.tokEmb[t * d + i];
            M[row + t] = a;
          }
        }
      }
      out.push(M);
    }
  } finally {
    eng.dispose();
  }
  return out;
}

/**
 * The copying score of a [V, V] OV-logit matrix: the fraction of rows s whose own entry [s, s] is
 * strictly the largest of the row.
 * @param {ArrayLike<number>} M [V, V] row-major
 * @param {number} V
 * @returns {{score: number, copied: number, total: number}}
 */
export function copyingOf(M, V) {
  let copied = 0;
  for (let s = 0; s < V; s++) {
    const own = M[s * V + s];
    let top = true;
    for (let t = 0; t < V && top; t++) if (t !== s && M[s * V + t] >= own) top = false;
    if (top) copied++;
  }
  return { score: copied / V, copied, total: V };
}

/**
 * Every head's copying score (see the module's definition), computed once per model.
 * @param {object} model a LanguageModel (mha.loadModel)
 * @returns {Array<{layer: number, head: number, score: number, copied: number, total: number,
 *   copies: boolean}>} in (layer, head) order; score = copied / total (total = V); copies =
 *   score ≥ COPYING_THRESHOLD
 * @throws {MHAError} INVALID_ARGUMENT (not a model), DISPOSED
 */
export function copyingScores(model) {
  const hit = cache.get(model);
  if (hit) { parts(model); return hit; }
  const { c } = parts(model);
  const out = [];
  for (let l = 0; l < c.numLayers; l++) {
    ovLogits(model, l).forEach((M, j) => {
      const r = copyingOf(M, c.vocabSize);
      out.push(Object.freeze({ layer: l, head: j, ...r, copies: r.score >= COPYING_THRESHOLD }));
    });
  }
  Object.freeze(out);
  cache.set(model, out);
  return out;
}

/**
 * Whether a head is an induction head by both of Olsson et al.'s tests: its attention (labelled
 * "induction" on the probes: its induction score is its strongest pattern and reaches
 * TYPE_THRESHOLD) and its output (copying score ≥ COPYING_THRESHOLD).
 * @param {{type: string}} info the head's entry of LanguageModel.heads
 * @param {{copies: boolean}} copying the head's entry of copyingScores
 * @returns {'induction'|'attends-only'|'copies-only'|'neither'} 'induction' only when both hold
 */
export function inductionVerdict(info, copying) {
  const attends = info.type === 'induction';
  if (attends && copying.copies) return 'induction';
  if (attends) return 'attends-only';
  return copying.copies ? 'copies-only' : 'neither';
}

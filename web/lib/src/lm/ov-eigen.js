/**
 * Elhage et al.'s copying measure of a head ("A Mathematical Framework for Transformer Circuits",
 * 2021, "Copying / primarily positive eigenvalues"): the eigenvalues of the head's full OV circuit
 * W_U·W_O^h·W_V^h·W_E, a V × V map from the token attended to the logits it raises. A head that
 * copies maps a token to itself, a positive eigenvalue; its positivity Σλ / Σ|λ| is 1 for a head
 * whose eigenvalues are all positive, −1 for all negative, near 0 for a head with no tendency
 * either way (complex λ count by their modulus in Σ|λ| and cancel in Σλ).
 *
 * The matrix here is the path copying.js follows (row vectors, the core's [in, out] layout), with
 * the norms' linear parts in place, as interpretability code folds them (LayerNorm: centre, times
 * its weight; RMSNorm: times its weight):
 *
 *   M = E·N₁ · W_V^h·W_O^h · N_F·W_U        N₁ = C·diag(γ₁), N_F = C·diag(γ_F), C = I − 11ᵀ/d
 *                                           (C = I for RMSNorm)
 *
 * It is copying.js's OV-logit matrix without the division of each row by its token's spread (a
 * positive factor per row, which changes no row's largest entry but would change eigenvalues).
 * M has rank at most d_k, and its nonzero eigenvalues are those of the d_k × d_k matrix
 * W_O^h·(N_F·W_U·E·N₁)·W_V^h (for A = E·N₁·W_V^h and B = W_O^h·N_F·W_U, AB and BA share their
 * nonzero eigenvalues), which is what is computed.
 * @module ov-eigen
 */
import { MHAError } from '../engine/errors.js';
import { eigenvalues } from './eigen.js';

/** The model's config and weights in the core's layout ([in, out] matrices). */
function parts(model) {
  if (!model || typeof model !== 'object' || !model._decoder || !model.config) {
    throw new MHAError('INVALID_ARGUMENT', `ovEigenvalues: model must be a LanguageModel (CharModel) from mha.loadModel, got ${model === null ? 'null' : typeof model}`);
  }
  model._alive('ovEigenvalues');
  return { c: model.config, w: model._decoder.spec.weights };
}

/** R = N_F·W_U·E·N₁ [d, d] for one layer (N₁ = that layer's pre-attention norm). */
function readBack(c, w, layer) {
  const { vocabSize: V, dModel: d } = c;
  const centre = c.norm === 'layernorm';
  const E = w.tokEmb, gF = w.normF.weight, g1 = w.layers[layer].norm1.weight;
  const U = (i, t) => (w.lmHead ? w.lmHead[i * V + t] : E[t * d + i]);
  // P = N_F·W_U [d, V]: row i = γ_F[i]·U[i] minus the mean over i of γ_F·U (the centring)
  const P = new Float64Array(d * V);
  for (let i = 0; i < d; i++) for (let t = 0; t < V; t++) P[i * V + t] = gF[i] * U(i, t);
  if (centre) {
    for (let t = 0; t < V; t++) {
      let m = 0;
      for (let i = 0; i < d; i++) m += P[i * V + t];
      m /= d;
      for (let i = 0; i < d; i++) P[i * V + t] -= m;
    }
  }
  // Q = E·N₁ [V, d]: each embedding centred, times γ₁
  const Q = new Float64Array(V * d);
  for (let t = 0; t < V; t++) {
    let m = 0;
    if (centre) { for (let b = 0; b < d; b++) m += E[t * d + b]; m /= d; }
    for (let b = 0; b < d; b++) Q[t * d + b] = (E[t * d + b] - m) * g1[b];
  }
  const R = new Float64Array(d * d);
  for (let a = 0; a < d; a++) {
    for (let t = 0; t < V; t++) {
      const pa = P[a * V + t];
      for (let b = 0; b < d; b++) R[a * d + b] += pa * Q[t * d + b];
    }
  }
  return R;
}

/**
 * The nonzero part of the spectrum of every head's OV circuit in one layer (see the module).
 * @param {object} model a LanguageModel (mha.loadModel) that keeps its weights in JS
 * @param {number} layer 0-based layer
 * @returns {Array<{re: Float64Array, im: Float64Array}>} per head, its d_k eigenvalues (the V × V
 *   matrix's others are 0)
 * @throws {MHAError} INVALID_ARGUMENT (not a model, layer out of range), DISPOSED
 */
export function ovEigenvalues(model, layer) {
  const { c, w } = parts(model);
  if (!Number.isInteger(layer) || layer < 0 || layer >= c.numLayers) {
    throw new MHAError('INVALID_ARGUMENT', `ovEigenvalues: layer must be an integer in [0, ${c.numLayers - 1}], got ${JSON.stringify(layer)}`);
  }
  const { dModel: d, numHeads: h, kvHeads: g, dK: dk } = c;
  const R = readBack(c, w, layer);
  const { wV, wO } = w.layers[layer];  // wV [d, g·dk], wO [d, d] (rows j·dk … of head j)
  const kv = g * dk;
  const out = [];
  for (let j = 0; j < h; j++) {
    const vo = Math.floor(j / (h / g)) * dk;
    // RV = R·W_V^h [d, dk], then K = W_O^h·RV [dk, dk]
    const RV = new Float64Array(d * dk);
    for (let a = 0; a < d; a++) {
      for (let b = 0; b < d; b++) {
        const r = R[a * d + b];
        for (let k = 0; k < dk; k++) RV[a * dk + k] += r * wV[b * kv + vo + k];
      }
    }
    const K = new Float64Array(dk * dk);
    for (let p = 0; p < dk; p++) {
      for (let a = 0; a < d; a++) {
        const o = wO[(j * dk + p) * d + a];
        for (let k = 0; k < dk; k++) K[p * dk + k] += o * RV[a * dk + k];
      }
    }
    out.push(eigenvalues(K, dk));
  }
  return out;
}

/**
 * Σλ / Σ|λ| of a spectrum: 1 when every eigenvalue is positive, −1 when every one is negative.
 * @param {{re: ArrayLike<number>, im: ArrayLike<number>}} ev
 * @returns {{positivity: number|null, sum: number, absSum: number}} positivity null when every λ is 0
 */
export function positivityOf(ev) {
  let sum = 0, absSum = 0;
  for (let i = 0; i < ev.re.length; i++) { sum += ev.re[i]; absSum += Math.hypot(ev.re[i], ev.im[i]); }
  return { positivity: absSum > 0 ? sum / absSum : null, sum, absSum };
}

/**
 * Every head's eigenvalue positivity (Elhage et al. 2021), in (layer, head) order.
 * @param {object} model a LanguageModel (mha.loadModel) that keeps its weights in JS
 * @returns {Array<{layer: number, head: number, positivity: number|null, sum: number, absSum: number}>}
 * @throws {MHAError} INVALID_ARGUMENT (not a model), DISPOSED
 */
export function eigenPositivity(model) {
  const { c } = parts(model);
  const out = [];
  for (let l = 0; l < c.numLayers; l++) {
    ovEigenvalues(model, l).forEach((ev, j) => out.push(Object.freeze({ layer: l, head: j, ...positivityOf(ev) })));
  }
  return Object.freeze(out);
}

/**
 * Loading a trained PyTorch torch.nn.MultiheadAttention into our weight convention.
 * @module torch
 */
import { MHAError } from './errors.js';
import { Tensor, toFloat32, expectShape, formatShape as fmt } from './tensor.js';

/** Transposes a row-major [rows, cols] matrix (PyTorch Linear.weight [out, in] → our [in, out]). */
function transpose(data, rows, cols, rowStart = 0) {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[(rowStart + r) * cols + c];
  }
  return out;
}

/** Finds a state-dict entry by exact key or by a dotted suffix (e.g. "layers.0.attn.in_proj_weight"). */
function entry(sd, key) {
  if (key in sd) return sd[key];
  const k = Object.keys(sd).find((x) => x.endsWith('.' + key));
  return k === undefined ? undefined : sd[k];
}

/**
 * Converts a PyTorch `nn.MultiheadAttention` state dict into createLayer weights ([in, out]).
 *
 * Accepted keys (optionally with a module prefix such as "attn."):
 *   in_proj_weight [3E, E] and in_proj_bias [3E]  (kdim = vdim = E), or
 *   q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim] (+ in_proj_bias);
 *   out_proj.weight [E, E], out_proj.bias [E].
 * W_Q = in_proj_weight[0:E]ᵀ, W_K = in_proj_weight[E:2E]ᵀ, W_V = in_proj_weight[2E:3E]ᵀ,
 * W_O = out_proj.weightᵀ (torch.nn.functional.multi_head_attention_forward).
 * Values may be nested arrays or {data, shape}.
 * @param {object} stateDict the state dict, e.g. from `{k: v.tolist() for k, v in m.state_dict().items()}`
 * @param {{numHeads: number}} opts numHeads is checked to divide E
 * @returns {{wQ: Tensor, wK: Tensor, wV: Tensor, wO: Tensor, bQ?: Tensor, bK?: Tensor, bV?: Tensor, bO?: Tensor}}
 *   pass it as `weights` to createLayer({numHeads, weights}) (dModel, kDim, vDim are inferred)
 * @throws {MHAError} INVALID_ARGUMENT (missing keys), SHAPE_MISMATCH (naming the key and shapes),
 *   INVALID_CONFIG (numHeads not dividing E)
 */
export function fromTorch(stateDict, opts = {}) {
  if (stateDict === null || typeof stateDict !== 'object') {
    throw new MHAError('INVALID_ARGUMENT', `fromTorch: stateDict must be an object, got ${stateDict === null ? 'null' : typeof stateDict}`);
  }
  const ow = entry(stateDict, 'out_proj.weight');
  if (ow === undefined) throw new MHAError('INVALID_ARGUMENT', 'fromTorch: stateDict has no "out_proj.weight"');
  const wo = toFloat32(ow, 'out_proj.weight');
  if (wo.shape.length !== 2 || wo.shape[0] !== wo.shape[1]) {
    throw new MHAError('SHAPE_MISMATCH', `out_proj.weight: expected shape [E, E], got ${fmt(wo.shape)}`);
  }
  const E = wo.shape[0];
  const h = opts.numHeads;
  if (h !== undefined && (!Number.isInteger(h) || h < 1 || E % h !== 0)) {
    throw new MHAError('INVALID_CONFIG', `fromTorch: numHeads must be a positive integer dividing E = ${E}, got ${String(h)}`);
  }
  const out = {};
  const ipw = entry(stateDict, 'in_proj_weight');
  if (ipw !== undefined && ipw !== null) {
    const w = toFloat32(ipw, 'in_proj_weight');
    expectShape(w, [3 * E, E], 'in_proj_weight');
    out.wQ = new Tensor(transpose(w.data, E, E, 0), [E, E]);
    out.wK = new Tensor(transpose(w.data, E, E, E), [E, E]);
    out.wV = new Tensor(transpose(w.data, E, E, 2 * E), [E, E]);
  } else {
    for (const [key, name] of [['q_proj_weight', 'wQ'], ['k_proj_weight', 'wK'], ['v_proj_weight', 'wV']]) {
      const raw = entry(stateDict, key);
      if (raw === undefined) throw new MHAError('INVALID_ARGUMENT', `fromTorch: stateDict has neither "in_proj_weight" nor "${key}"`);
      const w = toFloat32(raw, key);
      expectShape(w, [E, null], key);
      out[name] = new Tensor(transpose(w.data, E, w.shape[1]), [w.shape[1], E]);
    }
  }
  out.wO = new Tensor(transpose(wo.data, E, E), [E, E]);
  const ipb = entry(stateDict, 'in_proj_bias');
  const ob = entry(stateDict, 'out_proj.bias');
  if (ipb != null) {
    const b = toFloat32(ipb, 'in_proj_bias');
    expectShape(b, [3 * E], 'in_proj_bias');
    out.bQ = new Tensor(b.data.slice(0, E), [E]);
    out.bK = new Tensor(b.data.slice(E, 2 * E), [E]);
    out.bV = new Tensor(b.data.slice(2 * E), [E]);
    if (ob == null) throw new MHAError('INVALID_ARGUMENT', 'fromTorch: "in_proj_bias" given but no "out_proj.bias"');
    const bo = toFloat32(ob, 'out_proj.bias');
    expectShape(bo, [E], 'out_proj.bias');
    out.bO = new Tensor(bo.data.slice(), [E]);
  } else if (ob != null) {
    throw new MHAError('INVALID_ARGUMENT', 'fromTorch: "out_proj.bias" given but no "in_proj_bias"');
  }
  return out;
}

/**
 * The core's argument blocks of a layer's configuration (embind.cpp: LayerBlock, PassportBlock):
 * their layouts, asked once per module, and the configuration fields as the blocks name them. Used
 * by createLayer and passport (index.js) and by the decoder (decoder.js), whose init block points
 * to a LayerBlock for its attention.
 * @module blocks
 */
import { scoreModsFields } from './scoremods.js';

/** The layouts of the core's argument blocks (embind.cpp: layerLayout(), passportLayout()), asked once per module. */
const blockLayouts = new WeakMap();
export function blockLayout(core, name) {
  let l = blockLayouts.get(core);
  if (!l) blockLayouts.set(core, (l = { layer: core.layerLayout(), passport: core.passportLayout() }));
  return l[name];
}

/**
 * The configuration fields of the core's argument blocks (MHA_CONFIG_FIELDS in embind.cpp).
 * @param {object} c {dModel, numHeads, kvHeads?, dK?, dV?, kDim?, vDim?, bias?, scale?} (0 or absent:
 *   the core's default)
 * @param {object|null} mods scoreModsOption's result
 * @param {number} headDims byte offset of the int32 per-head widths (0: none)
 * @param {number} slopes byte offset of mods.slopes (0: none)
 */
export function configFields(c, mods, headDims, slopes) {
  return {
    d_model: c.dModel, num_heads: c.numHeads, kv_heads: c.kvHeads || 0, d_k: c.dK || 0, d_v: c.dV || 0,
    k_dim: c.kDim || 0, v_dim: c.vDim || 0, bias: c.bias !== false ? 1 : 0, scale: c.scale || 0, head_dims: headDims,
    ...scoreModsFields(mods, slopes),
  };
}

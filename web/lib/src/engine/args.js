/**
 * The core's argument blocks of a layer's configuration (embind.cpp: LayerBlock, PassportBlock):
 * their layouts, asked once per module, and the configuration fields as the blocks name them. Used
 * by createLayer and passport (index.js) and by the decoder (decoder.js), whose init block points
 * to a LayerBlock for its attention.
 * @module blocks
 */
import { scoreModsFields } from './scoremods.js';
import { coreTables } from './core-tables.js';

/**
 * The layout of one of the core's argument blocks (core-tables.js: asked once per module).
 * @param {object} core the Emscripten module
 * @param {'layer'|'passport'|'forward'|'kvStep'|'decoder'} name the block (decoder: {init, layer, call})
 * @returns {{bytes: number, fields: object, kinds?: object}}
 */
export function blockLayout(core, name) {
  return coreTables(core)[name];
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

/** The weight fields of the core's LayerBlock and the API's names of the weights they point to. */
const LAYER_WEIGHTS = Object.freeze({ w_q: 'wQ', w_k: 'wK', w_v: 'wV', w_o: 'wO', b_q: 'bQ', b_k: 'bK', b_v: 'bV', b_o: 'bO' });

/**
 * The weight fields of a LayerBlock (MHA_WEIGHT_FIELDS in embind.cpp: w_q … b_o).
 * @param {(name: string) => number} ptrOf byte offset of the API's weight `name` (wQ … bO), 0 when
 *   absent; omitted: every field 0 (a block that carries only a configuration, as the decoder's)
 * @returns {object} {w_q: byte offset, …}
 */
export function layerWeightFields(ptrOf = () => 0) {
  const out = {};
  for (const [field, name] of Object.entries(LAYER_WEIGHTS)) out[field] = ptrOf(name);
  return out;
}

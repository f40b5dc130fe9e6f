/**
 * The core's argument structs ("args": the arguments of one core call as fields in wasm memory,
 * cpp/bindings/embind.cpp and embind_decoder.cpp): their layouts, asked once per module, and the
 * fields of a layer's configuration and weights as LayerArgs and PassportArgs name them. Used by
 * createLayer and passport (index.js) and by the decoder (decoder.js), whose DecoderInitArgs points
 * to a LayerArgs for its attention.
 * @module args
 */
import { scoreModsFields } from './scoremods.js';
import { coreTables } from './core-tables.js';

/**
 * The layout of one of the core's argument structs (core-tables.js: asked once per module).
 * @param {object} core the Emscripten module
 * @param {'layer'|'passport'|'forward'|'kvStep'|'decoder'} name LayerArgs, PassportArgs,
 *   LayerForwardArgs, KVStepArgs, or the decoder's {init, block, call}
 * @returns {{bytes: number, fields: object, kinds: object}}
 */
export function argsLayout(core, name) {
  return coreTables(core)[name];
}

/**
 * The configuration fields of LayerArgs and PassportArgs (MHA_CONFIG_FIELDS in embind.cpp).
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

/** The weight fields of LayerArgs and the API's names of the weights they point to. */
const LAYER_WEIGHTS = Object.freeze({ w_q: 'wQ', w_k: 'wK', w_v: 'wV', w_o: 'wO', b_q: 'bQ', b_k: 'bK', b_v: 'bV', b_o: 'bO' });

/**
 * The weight fields of a LayerArgs (MHA_WEIGHT_FIELDS in embind.cpp: w_q … b_o).
 * @param {(name: string) => number} ptrOf byte offset of the API's weight `name` (wQ … bO), 0 when
 *   absent; omitted: every field 0 (a LayerArgs that carries only a configuration, as the decoder's)
 * @returns {object} {w_q: byte offset, …}
 */
export function layerWeightFields(ptrOf = () => 0) {
  const out = {};
  for (const [field, name] of Object.entries(LAYER_WEIGHTS)) out[field] = ptrOf(name);
  return out;
}

/**
 * What a Hugging Face model folder's JSON files mean: `config.json` mapped onto the options of the
 * core's decoder (docs/trained-models.md, "Architecture options"; the families are described in
 * hf.js), and the shard index `model.safetensors.index.json`. Both are untrusted input: sizes, types
 * and ranges are checked before anything is allocated from them (HF_LIMITS); everything the core
 * does not have is refused with an MHAError naming the file, the key and its value (rope_scaling
 * variants, sliding windows, Qwen2's Q/K/V-only biases, other head dims …): never a wrong answer.
 * @module hf-config
 */
import { MHAError } from '../engine/errors.js';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', `loadModel: ${msg}`);
const j = (v) => { try { return JSON.stringify(v) ?? String(v); } catch { return String(v); } };
const short = (v) => { const s = j(v); return s.length > 80 ? `${s.slice(0, 77)}...` : s; };

/**
 * Limits on untrusted folder files: bytes of config.json, of the shard index, of a tokenizer file;
 * the number of shards; the largest accepted value of each size in a config.
 */
export const HF_LIMITS = Object.freeze({
  configBytes: 1 << 20, indexBytes: 32 << 20, tokenizerBytes: 64 << 20, shards: 4096,
  vocab: 1 << 18, dModel: 16384, numHeads: 256, numLayers: 256, dFF: 1 << 17, context: 1 << 17,
});

/**
 * Parses an untrusted JSON file into an object.
 * @param {Uint8Array} bytes
 * @param {string} file its name, for the errors
 * @param {number} maxBytes
 * @returns {object}
 * @throws {MHAError} INVALID_ARGUMENT: too large, not UTF-8 JSON, not an object
 */
export function parseJSONFile(bytes, file, maxBytes) {
  if (bytes.length > maxBytes) throw invalid(`${file}: file size must be at most ${maxBytes} bytes, got ${bytes.length}`);
  let v;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw invalid(`${file}: must be UTF-8 JSON (${e.message})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(`${file}: must be a JSON object, got ${Array.isArray(v) ? 'an array' : short(v)}`);
  return v;
}

/** Reads config keys with checks; every error names config.json, the key and the value. */
class Keys {
  constructor(c, file = 'config.json') { this.c = c; this.file = file; }
  has(k) { return this.c[k] !== undefined && this.c[k] !== null; }
  err(k, want) { return invalid(`${this.file}: ${k} must be ${want}, got ${short(this.c[k])}`); }
  int(k, max, dflt) {
    const v = this.c[k];
    if ((v === undefined || v === null) && dflt !== undefined) return dflt;
    if (!Number.isSafeInteger(v) || v < 1 || v > max) throw this.err(k, `an integer in [1, ${max}]`);
    return v;
  }
  num(k, lo, hi, dflt) {
    const v = this.c[k];
    if ((v === undefined || v === null) && dflt !== undefined) return dflt;
    if (typeof v !== 'number' || !(v > lo) || !(v < hi)) throw this.err(k, `a number in (${lo}, ${hi})`);
    return v;
  }
  bool(k, dflt) {
    const v = this.c[k];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'boolean') throw this.err(k, 'true or false');
    return v;
  }
  /** A key whose only supported value is `ok` (absent = ok): anything else refused with `why`. */
  only(k, ok, why) {
    if (this.c[k] !== undefined && this.c[k] !== ok) throw invalid(`${this.file}: ${k} = ${short(this.c[k])} is not supported: ${why}`);
  }
}

/** model_type values of families that are refused, with the reason. */
const REFUSED_TYPES = {
  mistral: 'Mistral\'s sliding-window attention is not in the core (a Mistral without it is a LlamaForCausalLM)',
  mixtral: 'mixture-of-experts MLPs are not in the core',
  qwen2: 'Qwen2 has biases on Q, K and V but not on the output projection; the core\'s attention bias covers all four',
  qwen3: 'Qwen3 normalizes Q and K per head (q_norm, k_norm), which the core does not',
  gemma: 'Gemma scales the embeddings and uses GELU-gated MLPs and (1 + w) RMSNorm weights, which the core does not',
  gemma2: 'Gemma 2 soft-caps logits and alternates sliding windows, which the core does not',
  phi: 'Phi runs attention and MLP in parallel with partial rotary embeddings, which the core does not',
  phi3: 'Phi-3 packs qkv and gate_up and may use sliding windows and rope_scaling, not mapped here',
  gpt_neox: 'GPT-NeoX runs attention and MLP in parallel with partial rotary embeddings, which the core does not',
  gptj: 'GPT-J runs attention and MLP in parallel, which the core does not',
  falcon: 'Falcon runs attention and MLP in parallel, which the core does not',
  opt: 'OPT\'s learned positions are offset by 2 and it has a projection around the decoder, not mapped here',
  bert: 'BERT is an encoder (bidirectional attention), not a causal language model',
};
/** Why a model_type is refused, or undefined (own keys only: "toString" is not a family). */
const refusedWhy = (type) => (Object.hasOwn(REFUSED_TYPES, type) ? REFUSED_TYPES[type] : undefined);

/**
 * The family and the decoder configuration a Hugging Face config.json means, checked.
 * @param {object} json the parsed config.json (untrusted)
 * @returns {{family: 'gpt2'|'llama', config: object, hf: object}} config: the model runner's
 *   configuration (LanguageModel.config's fields: vocabSize, dModel, numHeads, kvHeads, numLayers, dFF,
 *   context, norm, normEps, mlp, bias, attnBias, positions, ropeBase, ropeInterleaved, tied, dK)
 * @throws {MHAError} INVALID_ARGUMENT naming config.json, the key and its value: an unknown or
 *   refused family, a size out of range, an option the core does not have
 */
export function hfConfig(json) {
  const k = new Keys(json);
  const archs = json.architectures;
  if (archs !== undefined && (!Array.isArray(archs) || archs.length > 16 || !archs.every((a) => typeof a === 'string'))) {
    throw k.err('architectures', 'an array of strings');
  }
  if (json.model_type !== undefined && typeof json.model_type !== 'string') throw k.err('model_type', 'a string');
  const type = json.model_type;
  let family = null;
  if (archs && archs.length) {
    if (archs.length !== 1) throw invalid(`config.json: architectures = ${short(archs)} is not supported: one architecture expected`);
    if (archs[0] === 'GPT2LMHeadModel') family = 'gpt2';
    else if (archs[0] === 'LlamaForCausalLM') family = 'llama';
  } else if (type === 'gpt2' || type === 'llama') family = type;
  if (!family) {
    const why = refusedWhy(type) ?? 'the families read are GPT2LMHeadModel and LlamaForCausalLM';
    if (archs && archs.length) throw invalid(`config.json: architectures = ${short(archs)} is not supported: ${why}`);
    throw invalid(`config.json: model_type = ${short(type)} is not supported: ${why}`);
  }
  if (type !== undefined && type !== family) {
    throw invalid(`config.json: model_type = ${short(type)} is not supported with architectures ${short(archs)}: ${refusedWhy(type) ?? `expected "${family}"`}`);
  }
  const L = HF_LIMITS;
  let cfg;
  if (family === 'gpt2') {
    const d = k.int('n_embd', L.dModel), h = k.int('n_head', L.numHeads);
    if (d % h !== 0) throw invalid(`config.json: n_head = ${h} must divide n_embd = ${d}`);
    const act = json.activation_function ?? 'gelu_new';
    const ACT = { gelu_new: 'gelu_tanh', gelu_pytorch_tanh: 'gelu_tanh', gelu: 'gelu', relu: 'relu' };
    if (typeof act !== 'string' || !Object.prototype.hasOwnProperty.call(ACT, act)) {
      throw invalid(`config.json: activation_function = ${short(act)} is not supported: one of ${Object.keys(ACT).join(', ')}`);
    }
    k.only('scale_attn_weights', true, 'the core scales scores by 1/sqrt(d_k)');
    k.only('scale_attn_by_inverse_layer_idx', false, 'the core has no per-layer score scaling');
    k.only('add_cross_attention', false, 'cross-attention layers are not part of the decoder');
    cfg = {
      vocabSize: k.int('vocab_size', L.vocab), dModel: d, numHeads: h, kvHeads: h, numLayers: k.int('n_layer', L.numLayers),
      dFF: k.int('n_inner', L.dFF, 4 * d), context: k.int('n_positions', L.context, k.has('n_ctx') ? k.int('n_ctx', L.context) : undefined),
      norm: 'layernorm', normEps: k.num('layer_norm_epsilon', 0, 1, 1e-5), mlp: ACT[act], bias: true, attnBias: true,
      positions: 'learned', ropeBase: 10000, ropeInterleaved: false, tied: k.bool('tie_word_embeddings', true),
    };
  } else {
    const d = k.int('hidden_size', L.dModel), h = k.int('num_attention_heads', L.numHeads);
    if (d % h !== 0) throw invalid(`config.json: num_attention_heads = ${h} must divide hidden_size = ${d}`);
    const g = k.int('num_key_value_heads', L.numHeads, h);
    if (h % g !== 0) throw invalid(`config.json: num_key_value_heads = ${g} must divide num_attention_heads = ${h}`);
    if (k.has('head_dim') && json.head_dim !== d / h) {
      throw invalid(`config.json: head_dim = ${short(json.head_dim)} is not supported: the core's heads have d_k = hidden_size / num_attention_heads = ${d / h}`);
    }
    if ((d / h) % 2 !== 0) throw invalid(`config.json: hidden_size / num_attention_heads = ${d / h} must be even (RoPE rotates pairs)`);
    k.only('hidden_act', 'silu', 'the core\'s gated MLP is SwiGLU (silu)');
    k.only('rope_scaling', null, 'the core\'s RoPE has no scaling (linear, dynamic, yarn, llama3 …); a model that needs it would give wrong answers past its trained positions');
    k.only('sliding_window', null, 'sliding-window attention is not in the core');
    k.only('use_sliding_window', false, 'sliding-window attention is not in the core');
    k.only('partial_rotary_factor', 1, 'the core rotates the whole head');
    k.only('attn_logit_softcapping', null, 'logit soft-capping is not in the core');
    k.only('final_logit_softcapping', null, 'logit soft-capping is not in the core');
    const attnBias = k.bool('attention_bias', false), mlpBias = k.bool('mlp_bias', false);
    cfg = {
      vocabSize: k.int('vocab_size', L.vocab), dModel: d, numHeads: h, kvHeads: g, numLayers: k.int('num_hidden_layers', L.numLayers),
      dFF: k.int('intermediate_size', L.dFF), context: k.int('max_position_embeddings', L.context, 2048),
      norm: 'rmsnorm', normEps: k.num('rms_norm_eps', 0, 1, 1e-6), mlp: 'swiglu', bias: mlpBias, attnBias,
      positions: 'rope', ropeBase: k.num('rope_theta', 0, 1e12, 10000), ropeInterleaved: false, tied: k.bool('tie_word_embeddings', false),
    };
  }
  cfg.dK = cfg.dModel / cfg.numHeads;
  const hf = {};
  for (const key of ['bos_token_id', 'eos_token_id']) {
    const v = json[key];
    if (Number.isInteger(v) && v >= 0 && v < cfg.vocabSize) hf[key] = v;
  }
  return { family, config: cfg, hf };
}

/**
 * Checks an untrusted `model.safetensors.index.json` and returns its shard files.
 * @param {object} index the parsed file
 * @returns {{weightMap: Map<string, string>, shards: string[]}} tensor name → shard file; the
 *   distinct shard files in order of first appearance
 * @throws {MHAError} INVALID_ARGUMENT naming the file and field: weight_map not an object of strings,
 *   a shard name that is not a plain `.safetensors` file name in the folder (no `/`, `\`, `..`),
 *   more than HF_LIMITS.shards shards
 */
export function hfShardIndex(index) {
  const F = 'model.safetensors.index.json';
  const wm = index.weight_map;
  if (wm === null || typeof wm !== 'object' || Array.isArray(wm)) throw invalid(`${F}: weight_map must be an object {tensor name: shard file}, got ${short(wm)}`);
  const weightMap = new Map();
  const shards = [];
  for (const [name, file] of Object.entries(wm)) {
    if (typeof file !== 'string') throw invalid(`${F}: weight_map["${name.slice(0, 80)}"] must be a file name, got ${short(file)}`);
    if (!/^[A-Za-z0-9_.-]{1,200}\.safetensors$/.test(file) || file.startsWith('.')) {
      throw invalid(`${F}: weight_map["${name.slice(0, 80)}"] must be a .safetensors file name in the folder (letters, digits, _ . -), got ${short(file)}`);
    }
    if (!shards.includes(file)) {
      shards.push(file);
      if (shards.length > HF_LIMITS.shards) throw invalid(`${F}: weight_map must name at most ${HF_LIMITS.shards} shard files`);
    }
    weightMap.set(name, file);
  }
  if (!shards.length) throw invalid(`${F}: weight_map must name at least one tensor`);
  return { weightMap, shards };
}

/**
 * Hugging Face checkpoints as they are published: a model folder's `config.json` and the tensors of
 * its `model.safetensors` (or of the shards a `model.safetensors.index.json` names) mapped onto the
 * options of the core's decoder (docs/trained-models.md, "Architecture options") — no new math.
 *
 * Families (from `config.json`'s `architectures`, else `model_type`):
 * - `GPT2LMHeadModel` (Radford et al. 2019; transformers' modeling_gpt2.py): LayerNorm
 *   (`layer_norm_epsilon`), learned positions (`wpe`, `n_positions`), `c_attn` packing Q|K|V,
 *   `Conv1D` weights stored [in, out] (already the core's layout), GELU (`activation_function`
 *   "gelu_new" = the tanh form), biases on every linear map, `lm_head` tied to `wte`.
 * - `LlamaForCausalLM` (Touvron et al. 2023; modeling_llama.py; TinyLlama, SmolLM and kin): RMSNorm
 *   (`rms_norm_eps`), SwiGLU (`hidden_act` "silu"), RoPE with `rope_theta` on the halves layout
 *   (`rotate_half`: pairs (x[i], x[i + d_k/2])), grouped-query K/V (`num_key_value_heads`),
 *   `tie_word_embeddings`, optional `attention_bias` / `mlp_bias`; `nn.Linear` weights [out, in],
 *   transposed here.
 *
 * Everything else is refused with an MHAError naming the file, the key and its value (rope_scaling
 * variants, sliding windows, Qwen2's Q/K/V-only biases, other head dims …): never a wrong answer.
 * The config and the shard index are untrusted input: sizes, types and ranges are checked before
 * anything is allocated from them (HF_LIMITS).
 * @module hf
 */
import { MHAError } from '../engine/errors.js';
import { transposed, columns } from './matrices.js';

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
  /** A key whose only supported value is `ok` (absent = `dflt`): anything else refused with `why`. */
  only(k, ok, why, dflt = ok) {
    const v = this.c[k] === undefined ? dflt : this.c[k];
    const same = Array.isArray(ok) ? ok.some((o) => o === v) : v === ok;
    if (!same) throw invalid(`${this.file}: ${k} = ${short(this.c[k])} is not supported: ${why}`);
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
    const why = REFUSED_TYPES[type] ?? 'the families read are GPT2LMHeadModel and LlamaForCausalLM';
    if (archs && archs.length) throw invalid(`config.json: architectures = ${short(archs)} is not supported: ${why}`);
    throw invalid(`config.json: model_type = ${short(type)} is not supported: ${why}`);
  }
  if (type !== undefined && type !== family) {
    throw invalid(`config.json: model_type = ${short(type)} is not supported with architectures ${short(archs)}: ${REFUSED_TYPES[type] ?? `expected "${family}"`}`);
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
    k.only('add_cross_attention', false, 'cross-attention blocks are not part of the decoder');
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
 * name → expected shape of every tensor of the family (the names of transformers' state dicts;
 * GPT-2 files may lack the `transformer.` prefix, which hfTensorName strips).
 * @param {'gpt2'|'llama'} family
 * @param {object} c hfConfig().config
 * @returns {Object<string, number[]>}
 */
export function hfExpectedShapes(family, c) {
  const d = c.dModel, f = c.dFF, V = c.vocabSize, s = {};
  if (family === 'gpt2') {
    Object.assign(s, { 'wte.weight': [V, d], 'wpe.weight': [c.context, d], 'ln_f.weight': [d], 'ln_f.bias': [d] });
    if (!c.tied) s['lm_head.weight'] = [V, d];
    for (let l = 0; l < c.numLayers; l++) {
      const p = `h.${l}.`;
      Object.assign(s, {
        [`${p}ln_1.weight`]: [d], [`${p}ln_1.bias`]: [d], [`${p}ln_2.weight`]: [d], [`${p}ln_2.bias`]: [d],
        [`${p}attn.c_attn.weight`]: [d, 3 * d], [`${p}attn.c_attn.bias`]: [3 * d],
        [`${p}attn.c_proj.weight`]: [d, d], [`${p}attn.c_proj.bias`]: [d],
        [`${p}mlp.c_fc.weight`]: [d, f], [`${p}mlp.c_fc.bias`]: [f],
        [`${p}mlp.c_proj.weight`]: [f, d], [`${p}mlp.c_proj.bias`]: [d],
      });
    }
  } else {
    const kv = c.kvHeads * c.dK;
    Object.assign(s, { 'model.embed_tokens.weight': [V, d], 'model.norm.weight': [d] });
    if (!c.tied) s['lm_head.weight'] = [V, d];
    for (let l = 0; l < c.numLayers; l++) {
      const p = `model.layers.${l}.`;
      const lin = (name, out, inn, bias) => { s[`${p}${name}.weight`] = [out, inn]; if (bias) s[`${p}${name}.bias`] = [out]; };
      s[`${p}input_layernorm.weight`] = [d];
      s[`${p}post_attention_layernorm.weight`] = [d];
      lin('self_attn.q_proj', d, d, c.attnBias); lin('self_attn.k_proj', kv, d, c.attnBias);
      lin('self_attn.v_proj', kv, d, c.attnBias); lin('self_attn.o_proj', d, d, c.attnBias);
      lin('mlp.gate_proj', f, d, c.bias); lin('mlp.up_proj', f, d, c.bias); lin('mlp.down_proj', d, f, c.bias);
    }
  }
  return s;
}

/**
 * A stored tensor name in the naming of hfExpectedShapes, or null for a buffer that is not a
 * weight (GPT-2's causal-mask `attn.bias` / `attn.masked_bias`, Llama's `rotary_emb.inv_freq`).
 */
export function hfTensorName(family, name) {
  if (family === 'gpt2') {
    const n = name.startsWith('transformer.') ? name.slice('transformer.'.length) : name;
    if (/^h\.\d+\.attn\.(bias|masked_bias)$/.test(n)) return null;
    return n;
  }
  if (/\.rotary_emb\.inv_freq$/.test(name)) return null;
  return name;
}

/**
 * The core decoder's weights (decoder.js: matrices row-major [in, out]) from a family's tensors.
 * @param {'gpt2'|'llama'} family
 * @param {object} c hfConfig().config
 * @param {Object<string, Float32Array>} t tensors by hfExpectedShapes names, shapes checked; the
 *   matrices split or transposed here are deleted from t as they are (so that a large model holds
 *   one float32 copy of each, not two)
 * @returns {object} Decoder spec `weights`
 */
export function hfDecoderWeights(family, c, t) {
  const d = c.dModel, f = c.dFF, V = c.vocabSize, kv = c.kvHeads * c.dK;
  const layers = [];
  // the core's `bias` covers the MLP's maps and the head; neither family has a head bias: zeros
  const lmHeadBias = c.bias ? new Float32Array(V) : null;
  if (family === 'gpt2') {
    for (let l = 0; l < c.numLayers; l++) {
      const g = (n) => t[`h.${l}.${n}`];
      const w = g('attn.c_attn.weight'), b = g('attn.c_attn.bias');   // Conv1D [d, 3d]: Q | K | V columns
      delete t[`h.${l}.attn.c_attn.weight`];   // split below: its float32 copy is not kept
      layers.push({
        norm1: { weight: g('ln_1.weight'), bias: g('ln_1.bias') }, norm2: { weight: g('ln_2.weight'), bias: g('ln_2.bias') },
        wQ: columns(w, d, 3 * d, 0, d), wK: columns(w, d, 3 * d, d, d), wV: columns(w, d, 3 * d, 2 * d, d),
        bQ: b.subarray(0, d), bK: b.subarray(d, 2 * d), bV: b.subarray(2 * d),
        wO: g('attn.c_proj.weight'), bO: g('attn.c_proj.bias'),
        wFc: g('mlp.c_fc.weight'), bFc: g('mlp.c_fc.bias'), wUp: null, bUp: null,
        wProj: g('mlp.c_proj.weight'), bProj: g('mlp.c_proj.bias'),
      });
    }
    const lmHead = c.tied ? null : transposed(t['lm_head.weight'], d);
    delete t['lm_head.weight'];
    return {
      tokEmb: t['wte.weight'], posEmb: t['wpe.weight'], normF: { weight: t['ln_f.weight'], bias: t['ln_f.bias'] },
      lmHead, lmHeadBias, layers,
    };
  }
  for (let l = 0; l < c.numLayers; l++) {
    // each [out, in] matrix is dropped from t once transposed: one float32 copy at a time, not two
    const g = (n) => { const k = `model.layers.${l}.${n}`, v = t[k] ?? null; if (n.endsWith('proj.weight')) delete t[k]; return v; };
    layers.push({
      norm1: { weight: g('input_layernorm.weight'), bias: null }, norm2: { weight: g('post_attention_layernorm.weight'), bias: null },
      wQ: transposed(g('self_attn.q_proj.weight'), d), wK: transposed(g('self_attn.k_proj.weight'), d),
      wV: transposed(g('self_attn.v_proj.weight'), d), wO: transposed(g('self_attn.o_proj.weight'), d),
      bQ: g('self_attn.q_proj.bias'), bK: g('self_attn.k_proj.bias'), bV: g('self_attn.v_proj.bias'), bO: g('self_attn.o_proj.bias'),
      wFc: transposed(g('mlp.gate_proj.weight'), d), bFc: g('mlp.gate_proj.bias'),
      wUp: transposed(g('mlp.up_proj.weight'), d), bUp: g('mlp.up_proj.bias'),
      wProj: transposed(g('mlp.down_proj.weight'), f), bProj: g('mlp.down_proj.bias'),
    });
  }
  const lmHead = c.tied ? null : transposed(t['lm_head.weight'], d);
  delete t['lm_head.weight'];
  return {
    tokEmb: t['model.embed_tokens.weight'], posEmb: null, normF: { weight: t['model.norm.weight'], bias: null },
    lmHead, lmHeadBias, layers,
  };
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

// formats/hf-config.js value by value, without an engine: what a Hugging Face config.json means
// (every field of the decoder configuration for the golden folders' configs, the defaults of absent
// keys, each limit's last accepted value and first refused one) and the exact MHAError of each
// refusal (naming config.json, the key, the expected range and the value, cut at 80 characters);
// parseJSONFile's size, encoding and shape checks; the shard index's file names and limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { HF_LIMITS, parseJSONFile, hfConfig, hfShardIndex } from '../web/lib/src/formats/hf-config.js';
import { MHAError } from '../web/lib/src/engine/errors.js';

const read = (name) => JSON.parse(fs.readFileSync(new URL(`golden-hf/${name}/config.json`, import.meta.url), 'utf8'));
const LLAMA = read('llama-gqa-tied');
const GPT2 = read('gpt2-tied-gelu-new');
const enc = (s) => new TextEncoder().encode(s);

/** Asserts fn throws an INVALID_ARGUMENT MHAError whose message is exactly `message`. */
function refused(fn, message) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof MHAError, `expected an MHAError, got ${e}`);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.equal(e.message, message);
    return true;
  });
}

test('the golden folders\' configs: every field of the decoder configuration', () => {
  assert.deepEqual(hfConfig(LLAMA), {
    family: 'llama', hf: { bos_token_id: 1, eos_token_id: 2 },
    config: {
      vocabSize: 40, dModel: 32, numHeads: 4, kvHeads: 2, numLayers: 2, dFF: 48, context: 24, norm: 'rmsnorm', normEps: 1e-6,
      mlp: 'swiglu', bias: false, attnBias: false, positions: 'rope', ropeBase: 10000, ropeInterleaved: false, tied: true, dK: 8,
    },
  });
  assert.deepEqual(hfConfig(GPT2), {
    family: 'gpt2', hf: { bos_token_id: 0, eos_token_id: 0 },
    config: {
      vocabSize: 40, dModel: 16, numHeads: 4, kvHeads: 4, numLayers: 2, dFF: 64, context: 16, norm: 'layernorm', normEps: 1e-5,
      mlp: 'gelu_tanh', bias: true, attnBias: true, positions: 'learned', ropeBase: 10000, ropeInterleaved: false, tied: true, dK: 4,
    },
  });
  for (const name of ['gpt2-relu-bf16', 'gpt2-untied-gelu-f16', 'llama-bias-untied-bf16', 'llama-mqa-f16-sharded']) {
    const j = read(name);
    const { family, config } = hfConfig(j);
    assert.equal(family, j.model_type, name);
    assert.equal(config.vocabSize, j.vocab_size, name);
  }
});

test('defaults of absent keys, and the family from model_type alone', () => {
  const llama = { model_type: 'llama', hidden_size: 64, num_attention_heads: 4, num_hidden_layers: 1, intermediate_size: 96, vocab_size: 10 };
  assert.deepEqual(hfConfig(llama).config, {
    vocabSize: 10, dModel: 64, numHeads: 4, kvHeads: 4, numLayers: 1, dFF: 96, context: 2048, norm: 'rmsnorm', normEps: 1e-6,
    mlp: 'swiglu', bias: false, attnBias: false, positions: 'rope', ropeBase: 10000, ropeInterleaved: false, tied: false, dK: 16,
  });
  assert.equal(hfConfig(llama).family, 'llama');
  assert.deepEqual(hfConfig(llama).hf, {});
  const both = hfConfig({ ...llama, attention_bias: true, mlp_bias: true, rope_theta: 5e5, rms_norm_eps: 1e-5, tie_word_embeddings: true, num_key_value_heads: 1, head_dim: 16 }).config;
  assert.deepEqual([both.attnBias, both.bias, both.ropeBase, both.normEps, both.tied, both.kvHeads], [true, true, 5e5, 1e-5, true, 1]);
  // the keys whose only supported value is their default may be given it
  assert.equal(hfConfig({ ...llama, hidden_act: 'silu', rope_scaling: null, sliding_window: null, use_sliding_window: false, partial_rotary_factor: 1 }).family, 'llama');
  const gpt2 = { model_type: 'gpt2', n_embd: 8, n_head: 2, n_layer: 1, vocab_size: 5, n_ctx: 12 };
  assert.deepEqual(hfConfig(gpt2).config, {
    vocabSize: 5, dModel: 8, numHeads: 2, kvHeads: 2, numLayers: 1, dFF: 32, context: 12, norm: 'layernorm', normEps: 1e-5,
    mlp: 'gelu_tanh', bias: true, attnBias: true, positions: 'learned', ropeBase: 10000, ropeInterleaved: false, tied: true, dK: 4,
  });
  assert.equal(hfConfig({ ...gpt2, n_positions: 7 }).config.context, 7, 'n_positions before n_ctx');
  assert.equal(hfConfig({ ...gpt2, n_inner: null, n_ctx: undefined, n_positions: 3 }).config.dFF, 32, 'n_inner null: 4 · n_embd');
  for (const [act, mlp] of [['gelu_new', 'gelu_tanh'], ['gelu_pytorch_tanh', 'gelu_tanh'], ['gelu', 'gelu'], ['relu', 'relu']]) {
    assert.equal(hfConfig({ ...gpt2, activation_function: act }).config.mlp, mlp, act);
  }
  assert.deepEqual([hfConfig({ ...gpt2, tie_word_embeddings: false, n_inner: 20, layer_norm_epsilon: 0.5 }).config].map((c) => [c.tied, c.dFF, c.normEps]), [[false, 20, 0.5]]);
  refused(() => hfConfig({ ...gpt2, n_ctx: undefined }), 'loadModel: config.json: n_positions must be an integer in [1, 131072], got undefined');
});

test('bos and eos ids kept only when they are ids of the vocabulary', () => {
  const hf = (bos, eos) => hfConfig({ ...LLAMA, bos_token_id: bos, eos_token_id: eos }).hf;
  assert.deepEqual(hf(0, 39), { bos_token_id: 0, eos_token_id: 39 });
  assert.deepEqual(hf(-1, 40), {});
  assert.deepEqual(hf(1.5, '2'), {});
  assert.deepEqual(hf(null, [2]), {});
});

test('sizes: the last accepted value of each limit and the first refused, each message exact', () => {
  const L = HF_LIMITS;
  assert.deepEqual({ ...L }, { configBytes: 1 << 20, indexBytes: 32 << 20, tokenizerBytes: 64 << 20, shards: 4096,
    vocab: 262144, dModel: 16384, numHeads: 256, numLayers: 256, dFF: 131072, context: 131072 });
  const ok = (change) => hfConfig({ ...LLAMA, ...change }).config;
  assert.equal(ok({ vocab_size: L.vocab }).vocabSize, L.vocab);
  assert.equal(ok({ vocab_size: 1, bos_token_id: 0, eos_token_id: 0 }).vocabSize, 1);
  assert.equal(ok({ num_hidden_layers: L.numLayers }).numLayers, L.numLayers);
  assert.equal(ok({ intermediate_size: L.dFF }).dFF, L.dFF);
  assert.equal(ok({ max_position_embeddings: L.context }).context, L.context);
  assert.equal(ok({ hidden_size: L.dModel, num_attention_heads: 256, num_key_value_heads: 256 }).numHeads, 256);
  for (const [key, max] of [['vocab_size', L.vocab], ['num_hidden_layers', L.numLayers], ['intermediate_size', L.dFF],
    ['max_position_embeddings', L.context], ['hidden_size', L.dModel], ['num_attention_heads', L.numHeads], ['num_key_value_heads', L.numHeads]]) {
    for (const bad of [max + 1, 0, -1, 2.5, '8', true, [4]]) {
      refused(() => hfConfig({ ...LLAMA, [key]: bad }), `loadModel: config.json: ${key} must be an integer in [1, ${max}], got ${JSON.stringify(bad)}`);
    }
  }
  refused(() => hfConfig({ ...LLAMA, vocab_size: 2 ** 53 }), 'loadModel: config.json: vocab_size must be an integer in [1, 262144], got 9007199254740992');
  // null is absent: the default
  assert.deepEqual([ok({ rms_norm_eps: null, rope_theta: null, tie_word_embeddings: null, attention_bias: null, max_position_embeddings: null }).normEps,
    ok({ rope_theta: null }).ropeBase, ok({ tie_word_embeddings: null }).tied, ok({ max_position_embeddings: null }).context], [1e-6, 10000, false, 2048]);
  assert.equal(hfConfig({ ...GPT2, layer_norm_epsilon: null }).config.normEps, 1e-5);
  for (const [key, hi] of [['rms_norm_eps', 1], ['rope_theta', 1e12]]) {
    for (const bad of [0, -1e-9, hi, NaN, Infinity, '1e-6', null]) {
      if (bad === null) continue;   // null takes the default
      refused(() => hfConfig({ ...LLAMA, [key]: bad }), `loadModel: config.json: ${key} must be a number in (0, ${hi}), got ${JSON.stringify(bad) ?? String(bad)}`);
    }
  }
  assert.equal(ok({ rope_theta: 1e12 - 1e-4 * 1e12 }).ropeBase, 1e12 - 1e8);
  assert.equal(ok({ rms_norm_eps: 0.999 }).normEps, 0.999);
  assert.equal(ok({ rms_norm_eps: Number.MIN_VALUE }).normEps, Number.MIN_VALUE);
  refused(() => hfConfig({ ...GPT2, layer_norm_epsilon: 1 }), 'loadModel: config.json: layer_norm_epsilon must be a number in (0, 1), got 1');
  refused(() => hfConfig({ ...GPT2, n_embd: 16385 }), 'loadModel: config.json: n_embd must be an integer in [1, 16384], got 16385');
  refused(() => hfConfig({ ...GPT2, n_head: 257 }), 'loadModel: config.json: n_head must be an integer in [1, 256], got 257');
  refused(() => hfConfig({ ...GPT2, n_inner: 131073 }), 'loadModel: config.json: n_inner must be an integer in [1, 131072], got 131073');
  refused(() => hfConfig({ ...GPT2, n_positions: undefined, n_ctx: 131073 }), 'loadModel: config.json: n_ctx must be an integer in [1, 131072], got 131073');
  refused(() => hfConfig({ ...GPT2, n_layer: 0 }), 'loadModel: config.json: n_layer must be an integer in [1, 256], got 0');
  refused(() => hfConfig({ ...GPT2, vocab_size: 262145 }), 'loadModel: config.json: vocab_size must be an integer in [1, 262144], got 262145');
  refused(() => hfConfig({ ...GPT2, tie_word_embeddings: 0 }), 'loadModel: config.json: tie_word_embeddings must be true or false, got 0');
  refused(() => hfConfig({ ...LLAMA, mlp_bias: 'no' }), 'loadModel: config.json: mlp_bias must be true or false, got "no"');
});

test('divisibility and head size: each refusal names both keys and their values', () => {
  refused(() => hfConfig({ ...LLAMA, num_attention_heads: 3 }), 'loadModel: config.json: num_attention_heads = 3 must divide hidden_size = 32');
  refused(() => hfConfig({ ...LLAMA, num_attention_heads: 8, num_key_value_heads: 3 }), 'loadModel: config.json: num_key_value_heads = 3 must divide num_attention_heads = 8');
  refused(() => hfConfig({ ...LLAMA, num_attention_heads: 32, num_key_value_heads: 1 }), 'loadModel: config.json: hidden_size / num_attention_heads = 1 must be even (RoPE rotates pairs)');
  refused(() => hfConfig({ ...LLAMA, hidden_size: 36, num_attention_heads: 4, num_key_value_heads: 1 }), 'loadModel: config.json: hidden_size / num_attention_heads = 9 must be even (RoPE rotates pairs)');
  refused(() => hfConfig({ ...LLAMA, head_dim: '8' }), 'loadModel: config.json: head_dim = "8" is not supported: the core\'s heads have d_k = hidden_size / num_attention_heads = 8');
  assert.equal(hfConfig({ ...LLAMA, head_dim: 8 }).config.dK, 8);
  assert.equal(hfConfig({ ...LLAMA, head_dim: null }).config.dK, 8);
  refused(() => hfConfig({ ...GPT2, n_head: 3 }), 'loadModel: config.json: n_head = 3 must divide n_embd = 16');
});

test('families: architectures and model_type, each refusal exact', () => {
  const A = (archs, type) => ({ ...LLAMA, architectures: archs, model_type: type });
  refused(() => hfConfig(A(['LlamaForCausalLM', 'GPT2LMHeadModel'], 'llama')),
    'loadModel: config.json: architectures = ["LlamaForCausalLM","GPT2LMHeadModel"] is not supported: one architecture expected');
  refused(() => hfConfig(A(Array(17).fill('LlamaForCausalLM'), 'llama')), `loadModel: config.json: architectures must be an array of strings, got ${JSON.stringify(Array(17).fill('LlamaForCausalLM')).slice(0, 77)}...`);
  refused(() => hfConfig(A(Array(16).fill('LlamaForCausalLM'), 'llama')), `loadModel: config.json: architectures = ${JSON.stringify(Array(16).fill('LlamaForCausalLM')).slice(0, 77)}... is not supported: one architecture expected`);
  refused(() => hfConfig(A(['LlamaForCausalLM', 3], 'llama')), 'loadModel: config.json: architectures must be an array of strings, got ["LlamaForCausalLM",3]');
  refused(() => hfConfig(A(undefined, 7)), 'loadModel: config.json: model_type must be a string, got 7');
  refused(() => hfConfig(A(['Qwen2ForCausalLM'], undefined)), 'loadModel: config.json: architectures = ["Qwen2ForCausalLM"] is not supported: the families read are GPT2LMHeadModel and LlamaForCausalLM');
  refused(() => hfConfig(A(['BertModel'], 'bert')), 'loadModel: config.json: architectures = ["BertModel"] is not supported: BERT is an encoder (bidirectional attention), not a causal language model');
  refused(() => hfConfig(A(undefined, undefined)), 'loadModel: config.json: model_type = undefined is not supported: the families read are GPT2LMHeadModel and LlamaForCausalLM');
  refused(() => hfConfig(A([], 'mixtral')), 'loadModel: config.json: model_type = "mixtral" is not supported: mixture-of-experts MLPs are not in the core');
  refused(() => hfConfig(A(['GPT2LMHeadModel'], 'llama')), 'loadModel: config.json: model_type = "llama" is not supported with architectures ["GPT2LMHeadModel"]: expected "gpt2"');
  refused(() => hfConfig(A(['LlamaForCausalLM'], 'phi')), 'loadModel: config.json: model_type = "phi" is not supported with architectures ["LlamaForCausalLM"]: Phi runs attention and MLP in parallel with partial rotary embeddings, which the core does not');
  refused(() => hfConfig(A(['LlamaForCausalLM'], 'toString')), 'loadModel: config.json: model_type = "toString" is not supported with architectures ["LlamaForCausalLM"]: expected "llama"');
  refused(() => hfConfig(A(undefined, 'constructor')), 'loadModel: config.json: model_type = "constructor" is not supported: the families read are GPT2LMHeadModel and LlamaForCausalLM');
  assert.equal(hfConfig(A([], 'llama')).family, 'llama', 'an empty architectures list: model_type decides');
  assert.equal(hfConfig(A(['LlamaForCausalLM'], undefined)).family, 'llama');
  assert.equal(hfConfig({ ...GPT2, architectures: undefined }).family, 'gpt2');
  refused(() => hfConfig({ ...GPT2, activation_function: 'toString' }), 'loadModel: config.json: activation_function = "toString" is not supported: one of gelu_new, gelu_pytorch_tanh, gelu, relu');
  refused(() => hfConfig({ ...GPT2, activation_function: 1 }), 'loadModel: config.json: activation_function = 1 is not supported: one of gelu_new, gelu_pytorch_tanh, gelu, relu');
  refused(() => hfConfig({ ...LLAMA, use_sliding_window: null }), 'loadModel: config.json: use_sliding_window = null is not supported: sliding-window attention is not in the core');
  refused(() => hfConfig({ ...LLAMA, attn_logit_softcapping: 50 }), 'loadModel: config.json: attn_logit_softcapping = 50 is not supported: logit soft-capping is not in the core');
  refused(() => hfConfig({ ...LLAMA, final_logit_softcapping: 30 }), 'loadModel: config.json: final_logit_softcapping = 30 is not supported: logit soft-capping is not in the core');
  refused(() => hfConfig({ ...LLAMA, hidden_act: 'x'.repeat(100) }), `loadModel: config.json: hidden_act = "${'x'.repeat(76)}... is not supported: the core's gated MLP is SwiGLU (silu)`);
  // a value whose JSON is 80 characters is shown whole, 81 cut to 77 and "..."
  refused(() => hfConfig({ ...LLAMA, hidden_act: 'x'.repeat(78) }), `loadModel: config.json: hidden_act = "${'x'.repeat(78)}" is not supported: the core's gated MLP is SwiGLU (silu)`);
  refused(() => hfConfig({ ...LLAMA, hidden_act: 'x'.repeat(79) }), `loadModel: config.json: hidden_act = "${'x'.repeat(76)}... is not supported: the core's gated MLP is SwiGLU (silu)`);
  refused(() => hfConfig({ ...GPT2, activation_function: ['relu'] }), 'loadModel: config.json: activation_function = ["relu"] is not supported: one of gelu_new, gelu_pytorch_tanh, gelu, relu');
  for (const [key, value, why] of [
    ['scale_attn_weights', false, 'the core scales scores by 1/sqrt(d_k)'],
    ['scale_attn_by_inverse_layer_idx', true, 'the core has no per-layer score scaling'],
    ['add_cross_attention', true, 'cross-attention layers are not part of the decoder'],
  ]) refused(() => hfConfig({ ...GPT2, [key]: value }), `loadModel: config.json: ${key} = ${value} is not supported: ${why}`);
  refused(() => hfConfig({ ...LLAMA, partial_rotary_factor: 0.5 }), 'loadModel: config.json: partial_rotary_factor = 0.5 is not supported: the core rotates the whole head');
  refused(() => hfConfig({ ...LLAMA, rope_scaling: { type: 'linear' } }), 'loadModel: config.json: rope_scaling = {"type":"linear"} is not supported: the core\'s RoPE has no scaling (linear, dynamic, yarn, llama3 …); a model that needs it would give wrong answers past its trained positions');
  refused(() => hfConfig({ ...LLAMA, sliding_window: 4096 }), 'loadModel: config.json: sliding_window = 4096 is not supported: sliding-window attention is not in the core');
  // every refused family by model_type alone, with its reason
  for (const [type, why] of Object.entries({
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
  })) refused(() => hfConfig({ model_type: type }), `loadModel: config.json: model_type = "${type}" is not supported: ${why}`);
  // a value JSON cannot write is named as String() names it
  refused(() => hfConfig({ ...LLAMA, vocab_size: 10n }), 'loadModel: config.json: vocab_size must be an integer in [1, 262144], got 10');
});

test('parseJSONFile: the size limit (inclusive), UTF-8 JSON, an object', () => {
  assert.deepEqual(parseJSONFile(enc('{"a": [1]}'), 'x.json', 10), { a: [1] });
  refused(() => parseJSONFile(enc('{"a": [1]} '), 'x.json', 10), 'loadModel: x.json: file size must be at most 10 bytes, got 11');
  assert.throws(() => parseJSONFile(enc('{"a": '), 'x.json', 100), (e) => e.code === 'INVALID_ARGUMENT' && /^loadModel: x\.json: must be UTF-8 JSON \(.+\)$/.test(e.message));
  assert.throws(() => parseJSONFile(Uint8Array.of(0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d), 'x.json', 100), (e) => /^loadModel: x\.json: must be UTF-8 JSON \(.+\)$/.test(e.message));
  refused(() => parseJSONFile(enc('[1]'), 'x.json', 100), 'loadModel: x.json: must be a JSON object, got an array');
  refused(() => parseJSONFile(enc('null'), 'x.json', 100), 'loadModel: x.json: must be a JSON object, got null');
  refused(() => parseJSONFile(enc('"s"'), 'x.json', 100), 'loadModel: x.json: must be a JSON object, got "s"');
  refused(() => parseJSONFile(enc('12'), 'x.json', 100), 'loadModel: x.json: must be a JSON object, got 12');
});

test('hfShardIndex: tensor → shard, shards in order of first appearance, each refusal exact', () => {
  const F = 'model.safetensors.index.json';
  const { weightMap, shards } = hfShardIndex({ weight_map: { a: 'm-2.safetensors', b: 'm-1.safetensors', c: 'm-2.safetensors' } });
  assert.deepEqual([...weightMap], [['a', 'm-2.safetensors'], ['b', 'm-1.safetensors'], ['c', 'm-2.safetensors']]);
  assert.deepEqual(shards, ['m-2.safetensors', 'm-1.safetensors']);
  refused(() => hfShardIndex({ weight_map: null }), `loadModel: ${F}: weight_map must be an object {tensor name: shard file}, got null`);
  refused(() => hfShardIndex({ weight_map: ['a'] }), `loadModel: ${F}: weight_map must be an object {tensor name: shard file}, got ["a"]`);
  refused(() => hfShardIndex({ weight_map: 's' }), `loadModel: ${F}: weight_map must be an object {tensor name: shard file}, got "s"`);
  refused(() => hfShardIndex({ weight_map: {} }), `loadModel: ${F}: weight_map must name at least one tensor`);
  refused(() => hfShardIndex({ weight_map: { ['n'.repeat(90)]: null } }), `loadModel: ${F}: weight_map["${'n'.repeat(80)}"] must be a file name, got null`);
  refused(() => hfShardIndex({ weight_map: { ['n'.repeat(90)]: 'a/b.safetensors' } }), `loadModel: ${F}: weight_map["${'n'.repeat(80)}"] must be a .safetensors file name in the folder (letters, digits, _ . -), got "a/b.safetensors"`);
  const name = (file) => `loadModel: ${F}: weight_map["t"] must be a .safetensors file name in the folder (letters, digits, _ . -), got ${JSON.stringify(file)}`;
  for (const bad of ['.safetensors', '.hidden.safetensors', 'a/b.safetensors', '../a.safetensors', 'a.safetensors.bak', 'x.safetensors\n', 'a b.safetensors', `${'a'.repeat(201)}.safetensors`]) {
    refused(() => hfShardIndex({ weight_map: { t: bad } }), name(bad).replace(JSON.stringify(bad), JSON.stringify(bad).length > 80 ? `${JSON.stringify(bad).slice(0, 77)}...` : JSON.stringify(bad)));
  }
  assert.deepEqual(hfShardIndex({ weight_map: { t: `${'a'.repeat(200)}.safetensors` } }).shards, [`${'a'.repeat(200)}.safetensors`]);
  assert.deepEqual(hfShardIndex({ weight_map: { t: 'A-z_0.9.safetensors' } }).shards, ['A-z_0.9.safetensors']);
  const many = (n) => ({ weight_map: Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, `s${i}.safetensors`])) });
  assert.equal(hfShardIndex(many(HF_LIMITS.shards)).shards.length, 4096);
  refused(() => hfShardIndex(many(HF_LIMITS.shards + 1)), `loadModel: ${F}: weight_map must name at most 4096 shard files`);
});

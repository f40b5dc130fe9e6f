// Model folders and llama2.c files are untrusted input (web/lib/src/formats/hf.js, hf-config.js): every
// refused configuration with its message (an MHAError naming the file, the key and the value), the
// tensor checks (missing, misshapen, unexpected, NaN), the shard index (path traversal, wrong types,
// a tensor absent from its shard), size limits, and a seeded fuzz of every file kind — truncations,
// byte flips, wrong types, huge numbers — in which every outcome is a load or an MHAError whose
// message names the file; never another exception, never a hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { mulberry32 } from '../web/lib/src/engine/weights.js';
import { HF_LIMITS } from '../web/lib/src/formats/hf.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden-hf');
const mha = await createMHA({ threads: 1 });

/** A folder's files as {name: Uint8Array}. */
const filesOf = (name) => Object.fromEntries(fs.readdirSync(path.join(dir, name)).map((f) => [f, new Uint8Array(fs.readFileSync(path.join(dir, name, f)))]));
const LLAMA = filesOf('llama-gqa-tied');
const GPT2 = filesOf('gpt2-tied-gelu-new');
const SHARDED = filesOf('llama-mqa-f16-sharded');
const enc = (o) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
const json = (b) => JSON.parse(new TextDecoder().decode(b));
/** loadModel over an in-memory File list. */
const load = (files) => mha.loadModel(Object.entries(files).map(([n, b]) => new File([b], n)));
const withConfig = (files, change) => ({ ...files, 'config.json': enc({ ...json(files['config.json']), ...change }) });

/** Asserts that loading rejects with an MHAError of `code` whose message matches every pattern. */
async function refused(files, patterns, code = 'INVALID_ARGUMENT') {
  await assert.rejects(load(files), (e) => {
    assert.ok(e instanceof MHAError, `expected an MHAError, got ${e && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, e.message);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

test('refused configurations: each MHAError names config.json, the key and its value, and says why', async () => {
  const cases = [
    [{ rope_scaling: { type: 'linear', factor: 2 } }, [/config\.json: rope_scaling = \{"type":"linear","factor":2\} is not supported/, /no scaling/]],
    [{ rope_scaling: { rope_type: 'llama3', factor: 8 } }, [/rope_scaling/, /llama3/]],
    [{ sliding_window: 4096 }, [/config\.json: sliding_window = 4096 is not supported/, /sliding-window/]],
    [{ use_sliding_window: true }, [/use_sliding_window = true/]],
    [{ hidden_act: 'gelu' }, [/config\.json: hidden_act = "gelu" is not supported/, /SwiGLU/]],
    [{ head_dim: 16 }, [/config\.json: head_dim = 16 is not supported/, /d_k = hidden_size \/ num_attention_heads = 8/]],
    [{ partial_rotary_factor: 0.5 }, [/partial_rotary_factor = 0\.5/]],
    [{ num_key_value_heads: 3 }, [/config\.json: num_key_value_heads = 3 must divide num_attention_heads = 4/]],
    [{ architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2' }, [/config\.json: architectures = \["Qwen2ForCausalLM"\] is not supported/, /Q, K and V but not on the output/]],
    [{ architectures: ['MistralForCausalLM'], model_type: 'mistral' }, [/MistralForCausalLM/, /sliding-window/]],
    [{ architectures: undefined, model_type: 'gemma' }, [/config\.json: model_type = "gemma" is not supported/, /Gemma/]],
    [{ architectures: ['LlamaForCausalLM'], model_type: 'qwen2' }, [/model_type = "qwen2"/]],
    [{ architectures: 'LlamaForCausalLM' }, [/config\.json: architectures must be an array of strings, got "LlamaForCausalLM"/]],
    [{ hidden_size: '32' }, [/config\.json: hidden_size must be an integer in \[1, 16384\], got "32"/]],
    [{ vocab_size: 1e12 }, [/config\.json: vocab_size must be an integer in \[1, 262144\], got 1000000000000/]],
    [{ num_hidden_layers: -2 }, [/num_hidden_layers must be an integer/, /-2/]],
    [{ max_position_embeddings: 2 ** 40 }, [/max_position_embeddings must be an integer in \[1, 131072\]/]],
    [{ rms_norm_eps: 0 }, [/config\.json: rms_norm_eps must be a number in \(0, 1\), got 0/]],
    [{ rope_theta: 'big' }, [/rope_theta must be a number/]],
    [{ tie_word_embeddings: 'yes' }, [/config\.json: tie_word_embeddings must be true or false, got "yes"/]],
    [{ attention_bias: 1 }, [/attention_bias must be true or false, got 1/]],
  ];
  for (const [change, patterns] of cases) await refused(withConfig(LLAMA, change), patterns);
  for (const [change, patterns] of [
    [{ activation_function: 'swish' }, [/config\.json: activation_function = "swish" is not supported/, /gelu_new/]],
    [{ scale_attn_by_inverse_layer_idx: true }, [/scale_attn_by_inverse_layer_idx = true is not supported/]],
    [{ scale_attn_weights: false }, [/scale_attn_weights = false/]],
    [{ add_cross_attention: true }, [/add_cross_attention = true/]],
    [{ n_head: 5 }, [/config\.json: n_head = 5 must divide n_embd = 16/]],
    [{ layer_norm_epsilon: -1 }, [/layer_norm_epsilon must be a number in \(0, 1\), got -1/]],
  ]) await refused(withConfig(GPT2, change), patterns);
});

test('files: missing, not JSON, not an object, too large; PyTorch .bin weights are not read', async () => {
  const { 'config.json': _, ...noConfig } = LLAMA;
  await refused(noConfig, [/config\.json: missing in the model folder/]);
  const { 'model.safetensors': __, ...noWeights } = LLAMA;
  await refused(noWeights, [/model\.safetensors: missing/, /model\.safetensors\.index\.json/, /\.bin weights are not read/]);
  await refused({ ...LLAMA, 'config.json': enc('{"hidden_size": 32,') }, [/config\.json: must be UTF-8 JSON/]);
  await refused({ ...LLAMA, 'config.json': enc('[1, 2]') }, [/config\.json: must be a JSON object, got an array/]);
  await refused({ ...LLAMA, 'config.json': new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }, [/config\.json: must be UTF-8 JSON/]);
  const big = new Uint8Array(HF_LIMITS.configBytes + 1).fill(0x20);
  await refused({ ...LLAMA, 'config.json': big }, [/config\.json: file size must be at most 1048576 bytes, got 1048577/]);
  await refused({ ...LLAMA, 'model.safetensors': enc('<!doctype html><title>404</title>') }, [/loadModel: model\.safetensors: safetensors:/]);
});

test('tensors: missing, misshapen, unexpected and non-finite ones are named with their file', async () => {
  const { parseSafetensors } = await import('../web/lib/src/index.js');
  const { encodeSafetensors } = await import('./helpers/safetensors.mjs');
  const { tensors } = parseSafetensors(LLAMA['model.safetensors']);
  const w = (t) => ({ ...LLAMA, 'model.safetensors': encodeSafetensors({}, t) });
  const noK = { ...tensors };
  delete noK['model.layers.1.self_attn.k_proj.weight'];
  await refused(w(noK), [/tensor "model\.layers\.1\.self_attn\.k_proj\.weight" is missing from model\.safetensors/, /\[16, 32\]/]);
  await refused(w({ ...tensors, 'model.layers.0.mlp.up_proj.weight': { data: new Float32Array(40 * 32), shape: [40, 32] } }),
    [/model\.safetensors: tensor "model\.layers\.0\.mlp\.up_proj\.weight": expected shape \[48, 32\]/, /got \[40, 32\]/], 'SHAPE_MISMATCH');
  await refused(w({ ...tensors, 'model.layers.0.self_attn.q_norm.weight': { data: new Float32Array(8), shape: [8] } }),
    [/model\.safetensors: tensor "model\.layers\.0\.self_attn\.q_norm\.weight" is not part of a LlamaForCausalLM of this config\.json/]);
  // an untied head in the file of a tied config: refused, not silently ignored
  await refused(w({ ...tensors, 'lm_head.weight': { data: new Float32Array(40 * 32), shape: [40, 32] } }), [/"lm_head\.weight" is not part of/]);
  const nan = new Float32Array(tensors['model.norm.weight'].data);
  nan[5] = NaN;
  await refused(w({ ...tensors, 'model.norm.weight': { data: nan, shape: [32] } }), [/model\.safetensors: tensor "model\.norm\.weight" has NaN at flat index 5/], 'NON_FINITE');
});

test('shard index: types, file names inside the folder only, a tensor absent from its shard', async () => {
  const F = 'model.safetensors.index.json';
  const index = json(SHARDED[F]);
  const withIndex = (ix) => ({ ...SHARDED, [F]: enc(ix) });
  await refused(withIndex({ weight_map: [] }), [/model\.safetensors\.index\.json: weight_map must be an object/]);
  await refused(withIndex({}), [/weight_map must be an object/, /undefined/]);
  await refused(withIndex({ weight_map: {} }), [/weight_map must name at least one tensor/]);
  for (const bad of ['../model-00001-of-00002.safetensors', '/etc/passwd.safetensors', 'sub/x.safetensors', '..safetensors', 'model.bin', 'a\\b.safetensors']) {
    await refused(withIndex({ weight_map: { ...index.weight_map, 'model.norm.weight': bad } }),
      [/model\.safetensors\.index\.json: weight_map\["model\.norm\.weight"\] must be a \.safetensors file name in the folder/]);
  }
  await refused(withIndex({ weight_map: { ...index.weight_map, 'model.norm.weight': 7 } }), [/weight_map\["model\.norm\.weight"\] must be a file name, got 7/]);
  const moved = { ...index.weight_map };
  const name = 'model.norm.weight';
  moved[name] = moved[name] === 'model-00001-of-00002.safetensors' ? 'model-00002-of-00002.safetensors' : 'model-00001-of-00002.safetensors';
  await refused(withIndex({ weight_map: moved }), [new RegExp(`${moved[name].replace(/\./g, '\\.')}: tensor "model\\.norm\\.weight" is missing \\(model\\.safetensors\\.index\\.json places it in this shard\\)`)]);
  const { 'model-00002-of-00002.safetensors': _, ...noShard } = SHARDED;
  await refused(noShard, [/model-00002-of-00002\.safetensors: not among the chosen files/]);
});

test('llama2.c headers: version 2, a bad shared_classifier, out-of-range fields, a wrong length, each named', async () => {
  const v1 = (fields = {}, extra = 0) => {
    const h = { d: 8, f: 16, L: 1, H: 2, G: 1, V: 6, S: 4, shared: 1, version: 1, ...fields };
    const kv = (h.d / h.H) * h.G;
    const floats = 2 * h.L * h.d + h.d + h.V * h.d + h.L * (2 * h.d * h.d + 2 * kv * h.d + 3 * h.f * h.d);
    const b = new Uint8Array(256 + 4 * floats + extra);
    const dv = new DataView(b.buffer);
    dv.setUint32(0, 0x616b3432, true); dv.setInt32(4, h.version, true);
    [h.d, h.f, h.L, h.H, h.G, h.V, h.S].forEach((v, i) => dv.setInt32(8 + 4 * i, v, true));
    b[36] = h.shared;
    return b;
  };
  const rejects = (bytes, re) => assert.rejects(mha.loadModel(bytes), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && re.test(e.message));
  const ok = await mha.loadModel(v1());
  assert.deepEqual([ok.config.dModel, ok.config.numHeads, ok.config.kvHeads, ok.config.tied], [8, 2, 1, true]);
  ok.dispose();
  await rejects(v1({ version: 2 }), /llama2c checkpoint: header version must be 1 .*got 2/);
  await rejects(v1({ shared: 7 }), /header shared_classifier must be 0 or 1, got 7/);
  const huge = v1();
  new DataView(huge.buffer).setInt32(8, 2 ** 30, true);
  await rejects(huge, /llama2c checkpoint: header dim must be in 1\.\.65536, got 1073741824/);
  await rejects(v1({}, 4), /llama2c checkpoint: file length must be \d+ bytes for the version-1 header/);
  await rejects(v1({ G: 3 }), /n_kv_heads must divide n_heads/);
  await rejects(v1().subarray(0, 100), /at least 256 bytes/);
  // the tokenizer of a llama2.c checkpoint is checked against the model's vocab_size
  const d = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/stories260K');
  const bin = new Uint8Array(fs.readFileSync(path.join(d, 'stories260K.bin')));
  await assert.rejects(mha.loadModel(bin, { tokenizer: fs.readFileSync(path.join(d, 'tok512.bin')).subarray(0, 1000) }),
    (e) => e instanceof MHAError && /llama2c tokenizer: token \d+'s/.test(e.message));
});

/** Every outcome of a fuzzed load: a model (disposed) or an MHAError naming a file. */
async function outcome(files, what) {
  let lm;
  try {
    lm = await load(files);
  } catch (e) {
    assert.ok(e instanceof MHAError, `${what}: ${e && e.constructor.name}: ${e && e.message}`);
    assert.match(e.message, /^loadModel: .*(config\.json|model\.safetensors|model-0000\d-of-00002\.safetensors|index\.json|tensor ")/, `${what}: ${e.message}`);
    return 'refused';
  }
  lm.dispose();
  return 'loaded';
}

test('fuzz: truncations, byte flips, wrong types and huge numbers in every file kind give a load or a named MHAError', async () => {
  const rand = mulberry32(1234);
  const int = (n) => Math.floor(rand() * n);
  const counts = { loaded: 0, refused: 0 };
  const WEIRD = [null, true, -1, 0, 0.5, 1e308, -1e308, 2 ** 53 + 2, '12', '', [], [1, 2], {}, { a: 1 }, 'LlamaForCausalLM', ['GPT2LMHeadModel', 'x']];
  for (const [label, base] of [['llama', LLAMA], ['gpt2', GPT2], ['sharded', SHARDED]]) {
    const cfg = json(base['config.json']);
    const keys = Object.keys(cfg);
    for (let i = 0; i < 40; i++) {   // wrong types and huge numbers, key by key
      const k = keys[int(keys.length)];
      const v = WEIRD[int(WEIRD.length)];
      counts[await outcome(withConfig(base, { [k]: v }), `${label} config ${k} = ${JSON.stringify(v)}`)]++;
    }
    for (const file of Object.keys(base)) {
      const bytes = base[file];
      for (let i = 0; i < 12; i++) {   // truncations
        const n = int(bytes.length);
        counts[await outcome({ ...base, [file]: bytes.subarray(0, n) }, `${label} ${file} truncated to ${n}`)]++;
      }
      for (let i = 0; i < 12; i++) {   // byte flips (the header region of safetensors files more often)
        const b = bytes.slice();
        const at = file.endsWith('.safetensors') && rand() < 0.7 ? int(Math.min(b.length, 8 + new DataView(b.buffer).getUint32(0, true))) : int(b.length);
        b[at] ^= 1 << int(8);
        counts[await outcome({ ...base, [file]: b }, `${label} ${file} byte ${at} flipped`)]++;
      }
    }
  }
  assert.ok(counts.refused > 100 && counts.loaded > 10, JSON.stringify(counts));
});

// formats/hf.js's read() without an engine, over an in-memory folder written here that records
// every file it is asked for: where each tensor goes (GPT-2's packed Q|K|V cut by columns, its bias
// by thirds; Llama's nn.Linear weights transposed), the buffers that are skipped and names that
// only look like them, the 16-bit type kept and `matrices16`, 16-bit Inf/NaN named per dtype, the
// shard a tensor is taken from, the exact messages of missing and misshapen tensors and of read
// errors, which tokenizer files are asked for (and none a folder lacks), bos/eos, and `training`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { read } from '../web/lib/src/formats/hf.js';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { gpt2TokenizerJson } from '../web/lib/src/formats/hf-tokenizer.js';

const enc = (s) => new TextEncoder().encode(typeof s === 'string' ? s : JSON.stringify(s));

/**
 * A safetensors file: tensors {name: {dtype: 'F32'|'F16'|'BF16', shape, data}} (F32 data as numbers,
 * 16-bit data as bit patterns), in the order given.
 */
function safetensors(tensors) {
  const header = {};
  let off = 0;
  for (const [name, { dtype, shape, data }] of Object.entries(tensors)) {
    const len = data.length * (dtype === 'F32' ? 4 : 2);
    header[name] = { dtype, shape, data_offsets: [off, off + len] };
    off += len;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const bytes = new Uint8Array(8 + json.length + off);
  const dv = new DataView(bytes.buffer);
  dv.setBigUint64(0, BigInt(json.length), true);
  bytes.set(enc(json), 8);
  let at = 8 + json.length;
  for (const { dtype, data } of Object.values(tensors)) {
    for (const v of data) {
      if (dtype === 'F32') { dv.setFloat32(at, v, true); at += 4; } else { dv.setUint16(at, v, true); at += 2; }
    }
  }
  return bytes;
}

/**
 * An in-memory folder (sources.js's ModelFolder) over {name: bytes}; `listed`: whether it has a
 * listing (`files`), as a directory or a File list has, or not, as a URL folder; `asked` records
 * every whole read (name) and ranged read ([name, offset, length]).
 */
function folder(files, { listed = true, sizeOf = (f) => files[f].length, failAt = null } = {}) {
  const asked = [];
  return {
    asked, name: 'the folder', main: null, files: listed ? Object.keys(files) : null,
    async read(file, { optional = false, offset, length } = {}) {
      asked.push(offset === undefined ? file : [file, offset, length]);
      const b = files[file];
      if (!b) {
        if (optional) return null;
        throw new MHAError('INVALID_ARGUMENT', `loadModel: ${file}: not in the folder`);
      }
      if (failAt !== null && offset !== undefined && offset >= failAt) throw new MHAError('INVALID_ARGUMENT', `loadModel: ${file}: cannot read it: EIO`);
      return offset === undefined ? b : b.subarray(offset, offset + length);
    },
    size: async (file) => sizeOf(file),
    done() {},
    absent: (file) => `no ${file} here`,
  };
}
const wholeReads = (f) => f.asked.filter((a) => typeof a === 'string');

const seq = (n, k = 1) => Array.from({ length: n }, (_, i) => (i + 1) * k);
// GPT-2: d = 4, 2 heads, 1 block, context 3, vocabulary 5
const GPT2_CONFIG = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_embd: 4, n_head: 2, n_layer: 1, n_positions: 3, vocab_size: 5 };
function gpt2Tensors(prefix = '') {
  const t = (shape, k) => ({ dtype: 'F32', shape, data: seq(shape.reduce((a, b) => a * b), k) });
  return Object.fromEntries(Object.entries({
    'wte.weight': t([5, 4], 1), 'wpe.weight': t([3, 4], 2), 'ln_f.weight': t([4], 3), 'ln_f.bias': t([4], 4),
    'h.0.ln_1.weight': t([4], 5), 'h.0.ln_1.bias': t([4], 6), 'h.0.ln_2.weight': t([4], 7), 'h.0.ln_2.bias': t([4], 8),
    'h.0.attn.c_attn.weight': t([4, 12], 1), 'h.0.attn.c_attn.bias': t([12], -1),
    'h.0.attn.c_proj.weight': t([4, 4], 9), 'h.0.attn.c_proj.bias': t([4], 10),
    'h.0.mlp.c_fc.weight': t([4, 16], 11), 'h.0.mlp.c_fc.bias': t([16], 12),
    'h.0.mlp.c_proj.weight': t([16, 4], 13), 'h.0.mlp.c_proj.bias': t([4], 14),
  }).map(([k, v]) => [prefix + k, v]));
}
// Llama: hidden 4, 2 heads (d_k 2), 1 KV head, 1 block, MLP 6, vocabulary 5, untied
const LLAMA_CONFIG = { architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 4, num_attention_heads: 2, num_key_value_heads: 1,
  num_hidden_layers: 1, intermediate_size: 6, vocab_size: 5, tie_word_embeddings: false };
/** Llama's tensors, every one of `dtype` unless `types` names another for a tensor (16-bit values: small float16 patterns). */
function llamaTensors(dtype = 'F32', types = {}) {
  const t = (name, shape, k) => {
    const d = types[name] ?? dtype;
    const n = shape.reduce((a, b) => a * b);
    return [name, { dtype: d, shape, data: d === 'F32' ? seq(n, k) : Array.from({ length: n }, (_, i) => 0x3c00 + i) }];
  };
  return Object.fromEntries([
    t('model.embed_tokens.weight', [5, 4], 1), t('model.norm.weight', [4], 2), t('lm_head.weight', [5, 4], 3),
    t('model.layers.0.input_layernorm.weight', [4], 4), t('model.layers.0.post_attention_layernorm.weight', [4], 5),
    t('model.layers.0.self_attn.q_proj.weight', [4, 4], 6), t('model.layers.0.self_attn.k_proj.weight', [2, 4], 7),
    t('model.layers.0.self_attn.v_proj.weight', [2, 4], 8), t('model.layers.0.self_attn.o_proj.weight', [4, 4], 9),
    t('model.layers.0.mlp.gate_proj.weight', [6, 4], 10), t('model.layers.0.mlp.up_proj.weight', [6, 4], 11),
    t('model.layers.0.mlp.down_proj.weight', [4, 6], 12),
  ]);
}
const gpt2Folder = (tensors = gpt2Tensors(), extra = {}, opts) => folder({ 'config.json': enc(GPT2_CONFIG), 'model.safetensors': safetensors(tensors), ...extra }, opts);
const llamaFolder = (tensors = llamaTensors(), extra = {}, opts) => folder({ 'config.json': enc(LLAMA_CONFIG), 'model.safetensors': safetensors(tensors), ...extra }, opts);
const blocksOf = async (r) => { const out = []; for await (const b of r.blocks) out.push(b); return out; };
const f32 = (a) => Float32Array.from(a);

/** Asserts read(f) rejects with an MHAError of `code` whose message is exactly `message`. */
async function refused(f, message, code = 'INVALID_ARGUMENT') {
  await assert.rejects(async () => { const r = await read(f); await blocksOf(r); }, (e) => {
    assert.ok(e instanceof MHAError, `expected an MHAError, got ${e?.name}: ${e?.message}`);
    assert.equal(e.message, message);
    assert.equal(e.code, code);
    return true;
  });
}

test('GPT-2: every tensor where the core takes it; c_attn cut into Q | K | V by columns, its bias by thirds; the prefix and buffers skipped', async () => {
  const tensors = gpt2Tensors('transformer.');
  // causal-mask buffers, of this block and of a block number with two digits: skipped
  tensors['transformer.h.0.attn.bias'] = { dtype: 'F32', shape: [1], data: [1] };
  tensors['h.0.attn.masked_bias'] = { dtype: 'F32', shape: [1], data: [-1e4] };
  tensors['h.10.attn.bias'] = { dtype: 'F32', shape: [1], data: [1] };
  const f = gpt2Folder(tensors);
  const r = await read(f);
  assert.deepEqual([r.fileType, r.matrices16, r.config.family, r.config.tokenizer, r.config.bos, r.config.eos, r.config.unk], [null, false, 'gpt2', 'none', null, null, null]);
  const w = r.weights;
  assert.deepEqual(w.tokEmb, f32(seq(20)));
  assert.deepEqual(w.posEmb, f32(seq(12, 2)));
  assert.deepEqual(w.normF, { weight: f32(seq(4, 3)), bias: f32(seq(4, 4)) });
  assert.equal(w.lmHead, null);
  assert.deepEqual(w.lmHeadBias, new Float32Array(5));
  assert.deepEqual(w.layers, []);
  const [b, ...more] = await blocksOf(r);
  assert.equal(more.length, 0);
  // c_attn [4, 12] holds 1 … 48 row by row: Q is columns 0–3, K 4–7, V 8–11
  const cols = (c0) => f32([0, 1, 2, 3].flatMap((row) => [0, 1, 2, 3].map((c) => row * 12 + c0 + c + 1)));
  assert.deepEqual([b.wQ, b.wK, b.wV], [cols(0), cols(4), cols(8)]);
  assert.deepEqual([b.bQ, b.bK, b.bV], [f32(seq(4, -1)), f32(seq(12, -1).slice(4, 8)), f32(seq(12, -1).slice(8))]);
  assert.deepEqual([b.wO, b.bO, b.wFc, b.bFc, b.wProj, b.bProj], [f32(seq(16, 9)), f32(seq(4, 10)), f32(seq(64, 11)), f32(seq(16, 12)), f32(seq(64, 13)), f32(seq(4, 14))]);
  assert.deepEqual([b.norm1, b.norm2], [{ weight: f32(seq(4, 5)), bias: f32(seq(4, 6)) }, { weight: f32(seq(4, 7)), bias: f32(seq(4, 8)) }]);
  assert.deepEqual([b.wGate, b.bGate, b.wUp, b.bUp], [null, null, null, null]);
  assert.deepEqual(r.training, { source: 'Hugging Face model folder the folder', files: ['config.json', 'model.safetensors'] });
  assert.deepEqual(r.tokenizer, { type: 'none', why: 'the model folder has no tokenizer.json (nor vocab.json + merges.txt)' });
  // names that only look like buffers are tensors the config does not have
  for (const name of ['xh.0.attn.bias', 'h.0.attn.bias.extra', 'h.x.attn.bias']) {
    await refused(gpt2Folder({ ...gpt2Tensors(), [name]: { dtype: 'F32', shape: [1], data: [1] } }),
      `loadModel: model.safetensors: tensor "${name}" is not part of a GPT2LMHeadModel of this config.json (an option the config does not declare?)`);
  }
});

test('Llama: nn.Linear weights transposed, no bias fields, the rotary buffer skipped (and only it)', async () => {
  const tensors = { ...llamaTensors(), 'model.layers.0.self_attn.rotary_emb.inv_freq': { dtype: 'F32', shape: [1], data: [1] } };
  const r = await read(llamaFolder(tensors));
  const w = r.weights;
  assert.deepEqual(w.normF, { weight: f32(seq(4, 2)), bias: null });
  assert.equal(w.lmHeadBias, null);
  assert.deepEqual(w.lmHead, f32([3, 15, 27, 39, 51, 6, 18, 30, 42, 54, 9, 21, 33, 45, 57, 12, 24, 36, 48, 60]));   // [5, 4] → [4, 5]
  const [b] = await blocksOf(r);
  assert.deepEqual(b.wK, f32([7, 35, 14, 42, 21, 49, 28, 56]));   // k_proj [2, 4] → [4, 2]
  assert.deepEqual([b.bQ, b.bK, b.bV, b.bO, b.bFc, b.bGate, b.bUp, b.bProj, b.wFc], [null, null, null, null, null, null, null, null, null]);
  assert.deepEqual(b.norm1, { weight: f32(seq(4, 4)), bias: null });
  await refused(llamaFolder({ ...llamaTensors(), 'model.layers.0.self_attn.rotary_emb.inv_freq_x': { dtype: 'F32', shape: [1], data: [1] } }),
    'loadModel: model.safetensors: tensor "model.layers.0.self_attn.rotary_emb.inv_freq_x" is not part of a LlamaForCausalLM of this config.json (an option the config does not declare?)');
});

test('16-bit files: the first 16-bit type met kept, the other widened; matrices16 only when every matrix is of it', async () => {
  const r16 = await read(llamaFolder(llamaTensors('F16')));
  assert.deepEqual([r16.fileType, r16.matrices16], ['float16', true]);
  assert.deepEqual(r16.weights.tokEmb, Uint16Array.from(seq(20), (_, i) => 0x3c00 + i));
  assert.ok(r16.weights.normF.weight instanceof Uint16Array);
  // bfloat16 norms in a float16 folder: widened (0x3c00 + i as bfloat16 is 2^-7 · (1 + i/128))
  const mixed = await read(llamaFolder(llamaTensors('F16', { 'model.norm.weight': 'BF16', 'model.layers.0.input_layernorm.weight': 'BF16' })));
  assert.deepEqual([mixed.fileType, mixed.matrices16], ['float16', true]);
  assert.deepEqual(mixed.weights.normF.weight, f32([0, 1, 2, 3].map((i) => 2 ** -7 * (1 + i / 128))));
  const [b] = await blocksOf(mixed);
  assert.deepEqual(b.norm1.weight, f32([0, 1, 2, 3].map((i) => 2 ** -7 * (1 + i / 128))));
  assert.ok(b.wQ instanceof Uint16Array && b.norm2.weight instanceof Uint16Array);
  // one float32 matrix, or one bfloat16 matrix: not every matrix is float16
  for (const [name, type] of [['model.layers.0.mlp.up_proj.weight', 'F32'], ['lm_head.weight', 'BF16']]) {
    const r = await read(llamaFolder(llamaTensors('F16', { [name]: type })));
    assert.deepEqual([r.fileType, r.matrices16], ['float16', false], name);
  }
  // 16-bit norms, float32 matrices; float32 only
  const norms = await read(llamaFolder(llamaTensors('F32', { 'model.norm.weight': 'BF16' })));
  assert.deepEqual([norms.fileType, norms.matrices16], ['bfloat16', false]);
  const f = await read(llamaFolder(llamaTensors('F32')));
  assert.deepEqual([f.fileType, f.matrices16], [null, false]);
  // a bfloat16 folder: 0x7c00 is a finite bfloat16 (2^121), read as it is
  const bt = llamaTensors('BF16');
  bt['model.embed_tokens.weight'].data[0] = 0x7c00;
  const bf = await read(llamaFolder(bt));
  assert.deepEqual([bf.fileType, bf.matrices16], ['bfloat16', true]);
  assert.equal(bf.weights.tokEmb[0], 0x7c00);
});

test('16-bit Inf and NaN named by their value and flat index, read per the tensor\'s dtype', async () => {
  const withValue = (dtype, bits) => {
    const t = llamaTensors(dtype);
    t['model.norm.weight'].data[2] = bits;
    return llamaFolder(t);
  };
  await refused(withValue('BF16', 0x7f80), 'loadModel: model.safetensors: tensor "model.norm.weight" has Infinity at flat index 2', 'NON_FINITE');
  await refused(withValue('BF16', 0xff81), 'loadModel: model.safetensors: tensor "model.norm.weight" has NaN at flat index 2', 'NON_FINITE');
  await refused(withValue('F16', 0xfc00), 'loadModel: model.safetensors: tensor "model.norm.weight" has -Infinity at flat index 2', 'NON_FINITE');
  const t = llamaTensors('F32');
  t['model.layers.0.mlp.down_proj.weight'].data[23] = Infinity;
  await refused(llamaFolder(t), 'loadModel: model.safetensors: tensor "model.layers.0.mlp.down_proj.weight" has Infinity at flat index 23', 'NON_FINITE');
});

test('headers: a missing tensor names every weights file, a misshapen one both shapes', async () => {
  const noNorm = llamaTensors();
  delete noNorm['model.norm.weight'];
  await refused(llamaFolder(noNorm), 'loadModel: tensor "model.norm.weight" is missing from model.safetensors (expected shape [4] for this config.json)');
  const flat = llamaTensors();
  flat['model.embed_tokens.weight'] = { dtype: 'F32', shape: [20], data: seq(20) };
  await refused(llamaFolder(flat), 'loadModel: model.safetensors: tensor "model.embed_tokens.weight": expected shape [5, 4] for this config.json, got [20]', 'SHAPE_MISMATCH');
  const short = llamaTensors();   // a shape whose first sizes agree, one size fewer
  short['model.embed_tokens.weight'] = { dtype: 'F32', shape: [5], data: seq(5) };
  await refused(llamaFolder(short), 'loadModel: model.safetensors: tensor "model.embed_tokens.weight": expected shape [5, 4] for this config.json, got [5]', 'SHAPE_MISMATCH');
  const wide = llamaTensors();
  wide['model.layers.0.self_attn.k_proj.weight'] = { dtype: 'F32', shape: [4, 4], data: seq(16) };
  await refused(llamaFolder(wide), 'loadModel: model.safetensors: tensor "model.layers.0.self_attn.k_proj.weight": expected shape [2, 4] for this config.json, got [4, 4]', 'SHAPE_MISMATCH');
});

test('shards: each tensor from the shard the index names (a copy in another shard ignored); a missing one names every file', async () => {
  const all = llamaTensors();
  const names = Object.keys(all);
  const first = Object.fromEntries(names.slice(0, 6).map((n) => [n, all[n]]));
  const second = Object.fromEntries(names.slice(6).map((n) => [n, all[n]]));
  second['model.norm.weight'] = { dtype: 'F32', shape: [4], data: [9, 9, 9, 9] };   // a stale copy
  const index = { weight_map: Object.fromEntries(names.map((n, i) => [n, i < 6 ? 'a.safetensors' : 'b.safetensors'])) };
  const files = { 'config.json': enc(LLAMA_CONFIG), 'model.safetensors.index.json': enc(index), 'a.safetensors': safetensors(first), 'b.safetensors': safetensors(second) };
  const r = await read(folder(files));
  assert.deepEqual(r.weights.normF.weight, f32(seq(4, 2)));
  assert.deepEqual(r.training.files, ['config.json', 'model.safetensors.index.json', 'a.safetensors', 'b.safetensors']);
  await blocksOf(r);
  const lost = { ...index.weight_map };
  delete lost['lm_head.weight'];
  const noHead = { ...first };
  delete noHead['lm_head.weight'];
  await refused(folder({ ...files, 'model.safetensors.index.json': enc({ weight_map: lost }), 'a.safetensors': safetensors(noHead) }),
    'loadModel: tensor "lm_head.weight" is missing from model.safetensors.index.json, a.safetensors, b.safetensors (expected shape [5, 4] for this config.json)');
});

test('read errors: a folder\'s own MHAError unchanged, a file that ends before its header says named, config.json missing', async () => {
  // a read error of the weights (after the header): the folder's message as it is
  const f = gpt2Folder(gpt2Tensors(), {}, { failAt: 64 });
  await refused(f, 'loadModel: model.safetensors: cannot read it: EIO');
  // the file is shorter than the size the folder gave: safetensors' message, named with the file
  const bytes = safetensors(gpt2Tensors());
  const short = folder({ 'config.json': enc(GPT2_CONFIG), 'model.safetensors': bytes.subarray(0, bytes.length - 8) }, { sizeOf: (n) => (n === 'model.safetensors' ? bytes.length : 10) });
  await assert.rejects(async () => { const r = await read(short); await blocksOf(r); },
    (e) => e instanceof MHAError && /^loadModel: model\.safetensors: safetensors: the file ends at byte \d+, before byte \d+ that its header promises/.test(e.message));
  // not a safetensors file: the parser's message, named with the file
  await assert.rejects(read(folder({ 'config.json': enc(GPT2_CONFIG), 'model.safetensors': enc('<!doctype html>') })),
    (e) => e instanceof MHAError && e.message.startsWith('loadModel: model.safetensors: safetensors: '));
  const noConfig = folder({ 'model.safetensors': bytes });
  await refused(noConfig, 'loadModel: config.json: missing in the model folder the folder (no config.json here; a Hugging Face model folder holds config.json and model.safetensors)');
  delete noConfig.absent;
  await refused(noConfig, 'loadModel: config.json: missing in the model folder the folder (absent; a Hugging Face model folder holds config.json and model.safetensors)');
  await refused(folder({ 'config.json': enc(GPT2_CONFIG) }), 'loadModel: model.safetensors: missing in the model folder the folder, and no model.safetensors.index.json (PyTorch .bin weights are not read: convert them to safetensors)');
});

// a byte-level BPE of 5 tokens: ids 0–4; <|endoftext|> is 4
const VOCAB = enc({ a: 0, b: 1, ab: 2, 'Ġ': 3, '<|endoftext|>': 4 });
const MERGES = enc('#version: 0.2\na b\n');
// the same tokenizer as one tokenizer.json (hf-tokenizer.test.mjs checks gpt2TokenizerJson against GPT-2's files)
const TOKENIZER_JSON = enc(gpt2TokenizerJson({ a: 0, b: 1, ab: 2, 'Ġ': 3, '<|endoftext|>': 4 }, 'a b\n'));

test('tokenizer files: which are asked for, listed or not, per family; one of GPT-2\'s pair without the other refused', async () => {
  const weights = ['config.json', 'model.safetensors'];
  const asked = (f) => wholeReads(f).filter((n) => !weights.includes(n));
  // GPT-2, listed with its pair: the pair, nothing else
  const pair = gpt2Folder(undefined, { 'vocab.json': VOCAB, 'merges.txt': MERGES });
  const r = await read(pair);
  assert.deepEqual(asked(pair), ['vocab.json', 'merges.txt']);
  assert.equal(r.tokenizer.type, 'hf');
  assert.deepEqual(r.tokenizer.tokenizer.encode('ab b'), [2, 3, 1]);
  assert.deepEqual([r.config.tokenizer, r.config.bos, r.config.eos], ['hf', 4, 4]);
  // not listed (a URL): GPT-2 asks for its pair first, and for no tokenizer_config.json
  const url = gpt2Folder(undefined, { 'vocab.json': VOCAB, 'merges.txt': MERGES }, { listed: false });
  await read(url);
  assert.deepEqual(asked(url), ['vocab.json', 'merges.txt']);
  // GPT-2 listed with tokenizer.json and the pair: tokenizer.json, then tokenizer_config.json only when listed
  const both = gpt2Folder(undefined, { 'tokenizer.json': TOKENIZER_JSON, 'vocab.json': VOCAB, 'merges.txt': MERGES });
  await read(both);
  assert.deepEqual(asked(both), ['tokenizer.json']);
  const cfg = gpt2Folder(undefined, { 'vocab.json': VOCAB, 'merges.txt': MERGES, 'tokenizer_config.json': enc({ bos_token: 'a', eos_token: 'b' }) });
  const rc = await read(cfg);
  assert.deepEqual(asked(cfg), ['vocab.json', 'merges.txt', 'tokenizer_config.json']);
  assert.deepEqual([rc.tokenizer.tokenizer.bos, rc.tokenizer.tokenizer.eos], [0, 1]);
  // GPT-2 not listed, with tokenizer.json only: vocab.json asked (absent), then tokenizer.json and its config
  const tj = gpt2Folder(undefined, { 'tokenizer.json': TOKENIZER_JSON }, { listed: false });
  assert.equal((await read(tj)).tokenizer.type, 'hf');
  assert.deepEqual(asked(tj), ['vocab.json', 'tokenizer.json', 'tokenizer_config.json']);
  // GPT-2 not listed and without tokenizer files: vocab.json, then tokenizer.json, each asked once
  const bare = gpt2Folder(undefined, {}, { listed: false });
  assert.equal((await read(bare)).tokenizer.type, 'none');
  assert.deepEqual(asked(bare), ['vocab.json', 'tokenizer.json']);
  // Llama not listed and without tokenizer files: tokenizer.json, then vocab.json; no tokenizer
  const none = llamaFolder(undefined, {}, { listed: false });
  assert.equal((await read(none)).tokenizer.type, 'none');
  assert.deepEqual(asked(none), ['tokenizer.json', 'vocab.json']);
  // Llama listed with tokenizer.json: it and no request for an unlisted tokenizer_config.json
  const ll = llamaFolder(undefined, { 'tokenizer.json': TOKENIZER_JSON });
  await read(ll);
  assert.deepEqual(asked(ll), ['tokenizer.json']);
  const pairText = 'a GPT-2 tokenizer is vocab.json and merges.txt together (or one tokenizer.json)';
  await refused(gpt2Folder(undefined, { 'merges.txt': MERGES }), `loadModel: vocab.json: missing in the model folder the folder (no vocab.json here), which has merges.txt: ${pairText}`);
  await refused(gpt2Folder(undefined, { 'vocab.json': VOCAB }), `loadModel: merges.txt: missing in the model folder the folder (no merges.txt here), which has vocab.json: ${pairText}`);
  await refused(gpt2Folder(undefined, { 'vocab.json': VOCAB }, { listed: false }), `loadModel: merges.txt: missing in the model folder the folder (no merges.txt here), which has vocab.json: ${pairText}`);
});

test('tokenizer errors begin "loadModel: " and name the file; ids beyond vocab_size refused; bos/eos from config.json first', async () => {
  await refused(gpt2Folder(undefined, { 'tokenizer.json': enc({ model: null }) }), 'loadModel: tokenizer.json: model must be an object, got null');
  const big = enc({ a: 0, b: 1, ab: 2, 'Ġ': 3, '<|endoftext|>': 5 });
  await refused(gpt2Folder(undefined, { 'vocab.json': big, 'merges.txt': MERGES }), 'loadModel: vocab.json: the tokenizer has ids up to 5, beyond the model\'s vocab_size 5 in config.json');
  const bigJson = JSON.parse(new TextDecoder().decode(TOKENIZER_JSON));
  bigJson.added_tokens.push({ id: 7, content: '<x>', special: true });
  await refused(gpt2Folder(undefined, { 'tokenizer.json': enc(bigJson) }), 'loadModel: tokenizer.json: the tokenizer has ids up to 7, beyond the model\'s vocab_size 5 in config.json');
  const withIds = (ids) => folder({ 'config.json': enc({ ...GPT2_CONFIG, ...ids }), 'model.safetensors': safetensors(gpt2Tensors()), 'vocab.json': VOCAB, 'merges.txt': MERGES });
  const a = await read(withIds({ bos_token_id: 1, eos_token_id: 0 }));
  assert.deepEqual([a.config.bos, a.config.eos], [1, 0]);
  const b = await read(withIds({ bos_token_id: 9 }));   // not an id of the vocabulary: the tokenizer's
  assert.deepEqual([b.config.bos, b.config.eos], [4, 4]);
});

// loadModel's weightStorage and 16-bit weights in the core (formats/half.js, cpp/src/half.hpp,
// the 16-bit kernels): a float16 or bfloat16 folder's matrices stay 16-bit in wasm memory and give
// the log-probs and attention of the same values widened to float32 (weightStorage 'float32'), on
// every tier, for a forward and for KV-cache steps (one row: the kernels' matrix-vector path); a
// float32 folder loaded with 'float16' gives, when its values are float16 values, the float32
// model's results; the 16-bit model takes about half the wasm memory. Bad options and bad 16-bit
// values are refused with the error they name. The JS readers of a 16-bit model (the copying
// score) see its weights widened to float32.
//
// The models are made here: a tied GPT-2 (vocabulary 50, not a multiple of the 8-column panels)
// and an untied Llama with grouped-query attention, their weights random float16 values
// (11-bit mantissas times powers of two, so the same numbers are exact in float32, float16 and
// bfloat16 when their mantissas fit 8 bits) encoded to bits by this file's own encoder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMHA } from '../web/lib/src/index.js';
import { mulberry32 } from '../web/lib/src/engine/weights.js';
import { copyingScores } from '../web/lib/src/lm/copying.js';

const TOL = 1e-5;   // log-probs, attention: 16-bit storage against the widened float32 model

/** Bits of a value m·2^e (|m| < 2048 an integer, the value a normal float16 or 0) as float16 and bfloat16. */
function bitsOf(v) {
  if (v === 0) return { f16: 0, bf16: 0 };
  const s = v < 0 ? 1 : 0;
  let a = Math.abs(v), E = 0;
  while (a >= 2) { a /= 2; E++; }
  while (a < 1) { a *= 2; E--; }
  const frac = a - 1;   // exact: a has at most 11 significant bits
  const f16 = (s << 15) + ((E + 15) << 10) + Math.round(frac * 1024);   // a rounding carry moves into the exponent
  const bf16 = (s << 15) + ((E + 127) << 7) + Math.round(frac * 128);
  return { f16, bf16 };
}

/**
 * n random values exactly representable in float16 (and, with `bf`, in bfloat16: 8-bit mantissas):
 * sign · mantissa · 2^e over scale·[2^-6, 2), one in 16 zero. 1 + that for norm weights (`one`).
 */
function values(rand, n, scale, { bf = false, one = false } = {}) {
  const out = new Float64Array(n);
  const bits = bf ? 8 : 11;
  for (let i = 0; i < n; i++) {
    if (!one && rand() < 1 / 16) continue;
    const m = (1 << (bits - 1)) + Math.floor(rand() * (1 << (bits - 1)));   // [2^(b-1), 2^b)
    const e = -Math.floor(rand() * 6);
    const v = (m / (1 << (bits - 1))) * 2 ** e * scale * (rand() < 0.5 ? -1 : 1);
    out[i] = one ? 1 + Math.round(v * 64) / 256 : v;   // 1 ± multiples of 2^-8
  }
  return out;
}

/** A safetensors file of `tensors` {name: {data: Float64Array, shape}} stored as dtype F32, F16 or BF16. */
function safetensors(tensors, dtype) {
  const item = dtype === 'F32' ? 4 : 2;
  const header = {};
  let off = 0;
  for (const [n, t] of Object.entries(tensors)) {
    header[n] = { dtype, shape: t.shape, data_offsets: [off, off + t.data.length * item] };
    off += t.data.length * item;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((json.length + 8) % 8)) % 8);
  const bytes = new Uint8Array(8 + json.length + off);
  const dv = new DataView(bytes.buffer);
  dv.setUint32(0, json.length, true);
  bytes.set(new TextEncoder().encode(json), 8);
  let at = 8 + json.length;
  for (const t of Object.values(tensors)) {
    for (const v of t.data) {
      if (dtype === 'F32') { dv.setFloat32(at, v, true); at += 4; continue; }
      const b = bitsOf(v);
      dv.setUint16(at, dtype === 'F16' ? b.f16 : b.bf16, true);
      at += 2;
    }
  }
  return bytes;
}

/** The tensors and config.json of a tied GPT-2 or an untied GQA Llama with random weights. */
function makeModel(family, seed, bf, { width = 16, vocab = 50 } = {}) {
  const rand = mulberry32(seed);
  const t = {};
  const add = (name, shape, scale, one) => { t[name] = { shape, data: values(rand, shape.reduce((a, b) => a * b, 1), scale, { bf, one }) }; };
  if (family === 'gpt2') {
    const d = width, V = vocab, P = 24, L = 2;
    add('wte.weight', [V, d], 0.5); add('wpe.weight', [P, d], 0.25);
    for (let l = 0; l < L; l++) {
      const p = `h.${l}.`;
      add(`${p}ln_1.weight`, [d], 0.1, true); add(`${p}ln_1.bias`, [d], 0.1);
      add(`${p}attn.c_attn.weight`, [d, 3 * d], 0.5); add(`${p}attn.c_attn.bias`, [3 * d], 0.1);
      add(`${p}attn.c_proj.weight`, [d, d], 0.5); add(`${p}attn.c_proj.bias`, [d], 0.1);
      add(`${p}ln_2.weight`, [d], 0.1, true); add(`${p}ln_2.bias`, [d], 0.1);
      add(`${p}mlp.c_fc.weight`, [d, 4 * d], 0.5); add(`${p}mlp.c_fc.bias`, [4 * d], 0.1);
      add(`${p}mlp.c_proj.weight`, [4 * d, d], 0.25); add(`${p}mlp.c_proj.bias`, [d], 0.1);
    }
    add('ln_f.weight', [d], 0.1, true); add('ln_f.bias', [d], 0.1);
    return { tensors: t, config: { n_embd: d, n_head: 2, n_layer: L, n_positions: P, activation_function: 'gelu_new',
      layer_norm_epsilon: 1e-5, vocab_size: V, architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', bos_token_id: 0, eos_token_id: 0 } };
  }
  const d = 16, V = 37, F = 24, L = 2, kv = 2, dk = 4;
  add('model.embed_tokens.weight', [V, d], 0.5);
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}.`;
    add(`${p}input_layernorm.weight`, [d], 0.1, true); add(`${p}post_attention_layernorm.weight`, [d], 0.1, true);
    add(`${p}self_attn.q_proj.weight`, [d, d], 0.5); add(`${p}self_attn.k_proj.weight`, [kv * dk, d], 0.5);
    add(`${p}self_attn.v_proj.weight`, [kv * dk, d], 0.5); add(`${p}self_attn.o_proj.weight`, [d, d], 0.5);
    add(`${p}mlp.gate_proj.weight`, [F, d], 0.5); add(`${p}mlp.up_proj.weight`, [F, d], 0.5); add(`${p}mlp.down_proj.weight`, [d, F], 0.5);
  }
  add('model.norm.weight', [d], 0.1, true); add('lm_head.weight', [V, d], 0.5);
  return { tensors: t, config: { hidden_size: d, num_attention_heads: 4, num_key_value_heads: kv, num_hidden_layers: L,
    intermediate_size: F, max_position_embeddings: 24, rms_norm_eps: 1e-6, rope_theta: 10000, tie_word_embeddings: false,
    vocab_size: V, architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu', bos_token_id: 1, eos_token_id: 2 } };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-weight-storage-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a model folder; returns its path. */
function folder(name, model, dtype) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(model.config));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensors(model.tensors, dtype));
  return dir;
}

const maxDiff = (a, b) => { let m = 0; for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i])); return m; };

/** A forward of 20 ids and 6 KV-cache steps (a 4-token prompt, then one token each) of a loaded model. */
function outputs(lm) {
  const V = lm.config.vocabSize;
  const ids = Array.from({ length: 20 }, (_, i) => (i * 7 + 3) % V);
  const r = lm.run(ids);
  const g = lm.generator(ids.slice(0, 4), { temperature: 0 });
  const steps = [];
  for (let i = 0; i < 6; i++) steps.push(g.step());
  g.dispose();
  return { logProbs: r.logProbs.data, attention: r.attention.map((a) => a.data), steps };
}

function assertClose(a, b, what) {
  const dl = maxDiff(a.logProbs, b.logProbs);
  assert.ok(dl <= TOL, `${what}: forward log-probs max |Δ| ${dl}`);
  for (let l = 0; l < a.attention.length; l++) {
    const da = maxDiff(a.attention[l], b.attention[l]);
    assert.ok(da <= TOL, `${what}: attention of layer ${l} max |Δ| ${da}`);
  }
  for (let i = 0; i < a.steps.length; i++) {
    assert.equal(a.steps[i].id, b.steps[i].id, `${what}: step ${i} picks another token`);
    assert.ok(Math.abs(a.steps[i].p - b.steps[i].p) <= TOL, `${what}: step ${i} p ${a.steps[i].p} vs ${b.steps[i].p}`);
    for (let l = 0; l < a.steps[i].attention.length; l++) {
      assert.ok(maxDiff(a.steps[i].attention[l].data, b.steps[i].attention[l].data) <= TOL, `${what}: step ${i} attention ${l}`);
    }
  }
}

const gpt2 = makeModel('gpt2', 11, false), gpt2bf = makeModel('gpt2', 12, true), llama = makeModel('llama', 13, true);
const dirs = {
  gpt2F16: folder('gpt2-f16', gpt2, 'F16'), gpt2F32: folder('gpt2-f32', gpt2, 'F32'),
  gpt2BF16: folder('gpt2-bf16', gpt2bf, 'BF16'), llamaBF16: folder('llama-bf16', llama, 'BF16'),
  llamaF16: folder('llama-f16', llama, 'F16'), llamaF32: folder('llama-f32', llama, 'F32'),
};

for (const tier of ['relaxed-simd', 'simd', 'scalar']) {
  test(`${tier}: 16-bit folders stay 16-bit and match their widened float32 model; float32 loaded as float16 matches`, async () => {
    const mha = await createMHA({ tier, threads: 1 });
    const load = async (dir, weightStorage) => {
      const lm = await mha.loadModel(dir, weightStorage ? { weightStorage } : undefined);
      const out = outputs(lm);
      const type = lm.weightType;
      lm.dispose();
      return { out, type };
    };
    for (const [name, dir, type] of [['gpt2 float16', dirs.gpt2F16, 'float16'], ['gpt2 bfloat16', dirs.gpt2BF16, 'bfloat16'],
      ['llama bfloat16', dirs.llamaBF16, 'bfloat16'], ['llama float16', dirs.llamaF16, 'float16']]) {
      const kept = await load(dir);
      const wide = await load(dir, 'float32');
      assert.equal(kept.type, type, `${name}: weightType`);
      assert.equal(wide.type, 'float32');
      assertClose(kept.out, wide.out, `${tier} ${name}`);
    }
    // float32 files: float32 unless asked; 'float16' of float16 values gives the float32 results
    for (const [name, dir] of [['gpt2', dirs.gpt2F32], ['llama', dirs.llamaF32]]) {
      const f32 = await load(dir);
      const f16 = await load(dir, 'float16');
      assert.equal(f32.type, 'float32');
      assert.equal(f16.type, 'float16');
      assertClose(f16.out, f32.out, `${tier} ${name} float32 file as float16`);
    }
  });
}

test("a 16-bit model's JS readers see its weights widened to float32: the copying scores equal the float32 model's", async () => {
  const mha = await createMHA({ tier: 'simd', threads: 1 });
  const kept = await mha.loadModel(dirs.gpt2F16);
  const wide = await mha.loadModel(dirs.gpt2F16, { weightStorage: 'float32' });
  assert.equal(kept.weightType, 'float16');
  assert.ok(kept._decoder.spec.weights.layers[0].wQ instanceof Float32Array, 'widened on read');
  assert.deepEqual(copyingScores(kept), copyingScores(wide));
  kept.dispose();
  wide.dispose();
});

test('a 16-bit model takes about half the wasm memory of the same model as float32', async () => {
  const mha = await createMHA({ tier: 'simd', threads: 1 });
  const inUse = async (dir, weightStorage) => {
    const before = mha.memory().inUseBytes;
    const lm = await mha.loadModel(dir, { weightStorage });
    const bytes = mha.memory().inUseBytes - before;
    lm.dispose();
    return bytes;
  };
  // a wider model, so that the matrices are most of what the decoder holds
  const big = makeModel('gpt2', 21, false, { width: 64, vocab: 500 });
  const dir = folder('gpt2-wide-f16', big, 'F16');
  const half = await inUse(dir, 'file');
  const full = await inUse(dir, 'float32');
  assert.ok(half > 0 && full > 0);
  assert.ok(half / full < 0.6, `16-bit model ${half} bytes against float32 ${full}: ratio ${(half / full).toFixed(3)}`);
});

test('weightStorage is checked; a float16 weight beyond its range and a 16-bit NaN are refused by name', async () => {
  const mha = await createMHA({ tier: 'simd', threads: 1 });
  await assert.rejects(mha.loadModel(dirs.gpt2F32, { weightStorage: 'half' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /weightStorage must be one of 'file', 'float16', 'float32', got "half"/.test(e.message));
  const huge = makeModel('gpt2', 31, false);
  huge.tensors['h.1.mlp.c_fc.weight'].data[5] = 70000;
  await assert.rejects(mha.loadModel(folder('gpt2-huge-f32', huge, 'F32'), { weightStorage: 'float16' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /wFc holds 70000 at flat index 5, beyond the float16 range/.test(e.message));
  // a float16 NaN (0x7e00) in a matrix
  const dir = folder('gpt2-nan-f16', gpt2, 'F16');
  const file = path.join(dir, 'model.safetensors');
  const bytes = fs.readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString());
  const at = 8 + n + header['h.0.attn.c_proj.weight'].data_offsets[0] + 2 * 3;
  bytes.writeUInt16LE(0x7e00, at);
  fs.writeFileSync(file, bytes);
  await assert.rejects(mha.loadModel(dir),
    (e) => e.code === 'NON_FINITE' && /tensor "h\.0\.attn\.c_proj\.weight" has NaN at flat index 3/.test(e.message));
});

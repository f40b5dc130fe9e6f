// Copying scores (web/lib/src/lm/copying.js): the OV logits the engine computes equal a float64
// reference written from the file's tensors in PyTorch's layout (its own reading of q/k/v_proj and
// out_proj, grouped-query K/V heads, LayerNorm and RMSNorm, tied and untied output heads); on tiny
// models built by hand the answer is known by construction (a head whose W_V·W_O is the identity on
// the token directions copies every token, one whose W_O permutes them copies none, and the
// biases, which the definition leaves out, would change the answer if they were read); the
// shipped h = 4 model's scores; errors and memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, parseSafetensors, MHAError } from '../web/lib/src/index.js';
import { ovLogits, copyingOf, copyingScores, inductionVerdict, COPYING_THRESHOLD } from '../web/lib/src/lm/copying.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { mulberry32 } from '../web/lib/src/engine/weights.js';

const mha = await createMHA();
const modelsDir = new URL('../web/lib/models/', import.meta.url);

/**
 * The definition in float64 from a file's tensors as PyTorch stores them ([out, in]): per head j,
 * M[s, t] = normF_lin(W_O[:, j] · W_V[kv(j)] · norm1(E[s])) · W_U[t], biases left out.
 */
function reference(parsed, layer) {
  const c = JSON.parse(parsed.metadata.config);
  const t = (n) => parsed.tensors[n]?.data ?? null;
  const V = c.vocab_size, d = c.d_model, h = c.num_heads, g = c.kv_heads ?? h, dk = d / h;
  const rms = c.norm === 'rmsnorm';
  const eps = c.norm_eps ?? c.ln_eps ?? 1e-5;
  const p = `layers.${layer}.`;
  const E = t('tok_emb.weight');
  const inProj = t(`${p}attn.in_proj_weight`);
  const Wv = inProj ? inProj.subarray(2 * d * d) : t(`${p}attn.v_proj.weight`);   // [g·dk, d]
  const Wo = t(`${p}attn.out_proj.weight`);                                         // [d, d]
  const g1 = t(`${p}ln1.weight`), gf = t('ln_f.weight');
  const U = c.tied ? E : t('head.weight');                                            // [V, d]
  const out = [];
  for (let j = 0; j < h; j++) {
    const kvh = Math.floor(j / (h / g));
    const M = new Float64Array(V * V);
    for (let s = 0; s < V; s++) {
      const e = Array.from(E.subarray(s * d, (s + 1) * d));
      const mu = rms ? 0 : e.reduce((a, b) => a + b, 0) / d;
      const sd = Math.sqrt(e.reduce((a, b) => a + (b - mu) ** 2, 0) / d + eps);
      const x = e.map((v, i) => ((v - mu) / sd) * g1[i]);
      const v = Array.from({ length: dk }, (_, k) => x.reduce((a, xi, i) => a + Wv[(kvh * dk + k) * d + i] * xi, 0));
      const o = Array.from({ length: d }, (_, i) => v.reduce((a, vk, k) => a + Wo[i * d + j * dk + k] * vk, 0));
      const mo = rms ? 0 : o.reduce((a, b) => a + b, 0) / d;
      const y = o.map((oi, i) => (oi - mo) * gf[i]);
      for (let u = 0; u < V; u++) M[s * V + u] = y.reduce((a, yi, i) => a + U[u * d + i] * yi, 0);
    }
    out.push(M);
  }
  return out;
}

/** Largest |a − b| relative to the largest |b|. */
function relDiff(a, b) {
  let m = 0, s = 0;
  for (let i = 0; i < a.length; i++) { m = Math.max(m, Math.abs(a[i] - b[i])); s = Math.max(s, Math.abs(b[i])); }
  return m / s;
}

/**
 * A one-layer model of V = 4 tokens, d_model = 8, h = 2 heads of d_k = 4 (or `kvHeads` K/V heads),
 * built so that the answer is known: E[s] = e_s (the first 4 coordinates carry the token), both
 * heads' W_V read those 4 coordinates, head 1's W_O writes them back in place (W_V·W_O = identity
 * on the token directions: it copies), head 2's W_O writes coordinate k to (k + 1) mod 4 (a
 * permutation: it maps every token to the next one), and the output head reads the token
 * coordinates (W_U = [I_4 | 0]). Every bias is set so that, read, it would decide the answer: the
 * output head's bias favours token 0 by 100, b_V and b_O push token 3's direction, the norms'
 * biases too. W_Q, W_K and the MLP are random (they take no part).
 */
function constructed({ norm = 'layernorm', tied = false, kvHeads = 2, gains = true } = {}) {
  const V = 4, d = 8, h = 2, dk = 4, f = 8;
  const rand = mulberry32(7);
  const rnd = (n, s = 0.3) => Float32Array.from({ length: n }, () => (rand() * 2 - 1) * s);
  const zeros = (n) => new Float32Array(n);
  const E = zeros(V * d);
  for (let s = 0; s < V; s++) E[s * d + s] = 1;
  const T = {};
  const put = (name, data, shape) => { T[name] = { data, shape }; };
  put('tok_emb.weight', E, [V, d]);
  // positive gains that differ per coordinate (they scale, they must not reorder)
  const gain = () => Float32Array.from({ length: d }, (_, i) => (gains ? 0.8 + 0.05 * (i % 4) : 1));
  const bias = (n, at, v) => { const b = zeros(n); b[at] = v; return b; };
  put('ln_f.weight', gain(), [d]);
  if (norm === 'layernorm') put('ln_f.bias', bias(d, 3, 50), [d]);
  if (!tied) {
    const U = zeros(V * d);
    for (let t = 0; t < V; t++) U[t * d + t] = 1;
    put('head.weight', U, [V, d]);
  }
  put('head.bias', bias(V, 0, 100), [V]);
  const p = 'layers.0.';
  put(`${p}ln1.weight`, gain(), [d]);
  put(`${p}ln2.weight`, gain(), [d]);
  if (norm === 'layernorm') { put(`${p}ln1.bias`, bias(d, 3, 40), [d]); put(`${p}ln2.bias`, rnd(d), [d]); }
  put(`${p}attn.q_proj.weight`, rnd(d * d), [d, d]); put(`${p}attn.q_proj.bias`, rnd(d), [d]);
  put(`${p}attn.k_proj.weight`, rnd(kvHeads * dk * d), [kvHeads * dk, d]); put(`${p}attn.k_proj.bias`, rnd(kvHeads * dk), [kvHeads * dk]);
  // W_V [out = kv·dk, in = d]: each K/V head reads the token coordinates 0..3
  const Wv = zeros(kvHeads * dk * d);
  for (let kv = 0; kv < kvHeads; kv++) for (let k = 0; k < dk; k++) Wv[(kv * dk + k) * d + k] = 1;
  put(`${p}attn.v_proj.weight`, Wv, [kvHeads * dk, d]);
  put(`${p}attn.v_proj.bias`, Float32Array.from({ length: kvHeads * dk }, (_, i) => (i % dk === 3 ? 30 : 0)), [kvHeads * dk]);
  // W_O [out = d, in = h·dk]: head 0 writes v_k to coordinate k, head 1 to coordinate (k + 1) mod 4
  const Wo = zeros(d * d);
  for (let k = 0; k < dk; k++) { Wo[k * d + k] = 1; Wo[((k + 1) % 4) * d + dk + k] = 1; }
  put(`${p}attn.out_proj.weight`, Wo, [d, d]);
  put(`${p}attn.out_proj.bias`, bias(d, 3, 60), [d]);
  put(`${p}mlp.fc.weight`, rnd(f * d), [f, d]); put(`${p}mlp.fc.bias`, rnd(f), [f]);
  put(`${p}mlp.proj.weight`, rnd(d * f), [d, f]); put(`${p}mlp.proj.bias`, rnd(d), [d]);
  const config = { vocab_size: V, d_model: d, num_heads: h, num_layers: 1, d_ff: f, context: 8, unk: 3, norm, mlp: 'relu',
    bias: true, positions: 'rope', tied, kv_heads: kvHeads };
  return encodeSafetensors({ format: 'mha-wasm.charlm/1', config: JSON.stringify(config), vocab: JSON.stringify(['a', 'b', 'c', 'd']) }, T);
}

async function withModel(bytes, fn) {
  const lm = await mha.loadModel(bytes);
  try {
    return await fn(lm, parseSafetensors(bytes));
  } finally {
    lm.dispose();
  }
}

for (const variant of [{}, { norm: 'rmsnorm' }, { tied: true }, { kvHeads: 1 }, { norm: 'rmsnorm', tied: true, kvHeads: 1 }]) {
  test(`by construction (${JSON.stringify(variant)}): the identity head copies every token, the permutation head none; the engine's OV logits equal the float64 reference`, async () => {
    await withModel(constructed(variant), (lm, parsed) => {
      const got = ovLogits(lm, 0);
      const want = reference(parsed, 0);
      assert.equal(got.length, 2);
      for (let j = 0; j < 2; j++) {
        assert.equal(got[j].length, 16);
        assert.ok(relDiff(got[j], want[j]) < 1e-6, `head ${j}: ${relDiff(got[j], want[j])}`);
      }
      // known by construction: head 0's row s peaks at s, head 1's at s + 1 (mod 4)
      for (let s = 0; s < 4; s++) {
        const row = (j) => Array.from(got[j].subarray(s * 4, s * 4 + 4));
        assert.equal(row(0).indexOf(Math.max(...row(0))), s, `head 0 row ${s}: ${row(0)}`);
        assert.equal(row(1).indexOf(Math.max(...row(1))), (s + 1) % 4, `head 1 row ${s}: ${row(1)}`);
      }
      const scores = copyingScores(lm);
      assert.deepEqual(scores.map((x) => ({ ...x })), [
        { layer: 0, head: 0, score: 1, copied: 4, total: 4, copies: true },
        { layer: 0, head: 1, score: 0, copied: 0, total: 4, copies: false },
      ]);
      assert.equal(copyingScores(lm), scores, 'computed once per model');
    });
  });
}

test('the definition\'s closed form on the constructed model: with LayerNorm, unit gains, row s of head 0 is (δ_st − 3/16)/σ', async () => {
  await withModel(constructed({ gains: false }), (lm) => {
    const [M0, M1] = ovLogits(lm, 0);
    const sigma = Math.sqrt((1 / 8) * (7 / 8) + 1e-5);   // std of a one-hot vector of 8, plus eps
    for (let s = 0; s < 4; s++) {
      for (let t = 0; t < 4; t++) {
        // x = (e_s − 1/8)/σ on coordinates 0..3, centring the output over 8 coordinates subtracts 1/(16σ)
        const want = ((s === t ? 1 : 0) - 1 / 8 - 1 / 16) / sigma;
        assert.ok(Math.abs(M0[s * 4 + t] - want) < 1e-5, `head 0 [${s}, ${t}]: ${M0[s * 4 + t]} vs ${want}`);
        const want1 = (((s + 1) % 4 === t ? 1 : 0) - 1 / 8 - 1 / 16) / sigma;
        assert.ok(Math.abs(M1[s * 4 + t] - want1) < 1e-5, `head 1 [${s}, ${t}]`);
      }
    }
  });
});

test('copyingOf: strict top of the row; ties do not count', () => {
  assert.deepEqual(copyingOf([2, 1, 3, 0], 2), { score: 0.5, copied: 1, total: 2 });
  assert.deepEqual(copyingOf([1, 1, 1, 1], 2), { score: 0, copied: 0, total: 2 });
  assert.deepEqual(copyingOf([1, 0, 0, 1], 2), { score: 1, copied: 2, total: 2 });
});

test('the shipped h = 4 model (seed 0): engine = float64 reference for every head; the two induction-labelled heads of layer 2 copy, no other head does', async () => {
  const bytes = fs.readFileSync(new URL('charlm-h4-s0.safetensors', modelsDir));
  await withModel(bytes, (lm, parsed) => {
    const V = lm.config.vocabSize;
    const scores = copyingScores(lm);
    for (let l = 0; l < lm.config.numLayers; l++) {
      const got = ovLogits(lm, l);
      const want = reference(parsed, l);
      for (let j = 0; j < lm.config.numHeads; j++) {
        assert.ok(relDiff(got[j], want[j]) < 1e-5, `L${l + 1} head ${j + 1}: ${relDiff(got[j], want[j])}`);
        assert.equal(scores[l * lm.config.numHeads + j].copied, copyingOf(want[j], V).copied, `L${l + 1} head ${j + 1}`);
      }
    }
    const line = scores.map((s) => `L${s.layer + 1}H${s.head + 1} ${s.score.toFixed(2)}`).join(', ');
    // measured: L2H1 0.88 (85 of 97), L2H2 0.82 (80 of 97), L2H4 0.39, every other head ≤ 0.03
    assert.deepEqual(scores.filter((s) => s.copies).map((s) => [s.layer, s.head]), [[1, 0], [1, 1]], line);
    assert.deepEqual(scores.map((s) => s.copied), [3, 1, 0, 0, 85, 80, 0, 38], line);
    const verdicts = lm.heads.map((hd, i) => inductionVerdict(hd, scores[i]));
    assert.deepEqual(verdicts, ['neither', 'neither', 'neither', 'neither', 'induction', 'induction', 'neither', 'neither']);
  });
});

test('a grouped-query model (2 K/V heads for 8 query heads): engine = reference with query head j reading K/V head ⌊j / 4⌋', async () => {
  const bytes = fs.readFileSync(new URL('gqa-kv2-s0.safetensors', modelsDir));
  await withModel(bytes, (lm, parsed) => {
    assert.equal(lm.config.kvHeads, 2);
    const got = ovLogits(lm, 1);
    const want = reference(parsed, 1);
    for (let j = 0; j < 8; j++) assert.ok(relDiff(got[j], want[j]) < 1e-5, `head ${j + 1}: ${relDiff(got[j], want[j])}`);
  });
});

test('inductionVerdict: "induction" only when the attention label and the copying test both hold', () => {
  const yes = { copies: true }, no = { copies: false };
  assert.equal(inductionVerdict({ type: 'induction' }, yes), 'induction');
  assert.equal(inductionVerdict({ type: 'induction' }, no), 'attends-only');
  assert.equal(inductionVerdict({ type: 'current-token' }, yes), 'copies-only');
  assert.equal(inductionVerdict({ type: 'previous-token' }, no), 'neither');
  assert.equal(COPYING_THRESHOLD, 0.5);
});

test('errors: not a model, a layer out of range, a disposed model; no wasm memory kept', async () => {
  assert.throws(() => copyingScores(null), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && /CharModel/.test(e.message));
  assert.throws(() => copyingScores({}), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT');
  const before = mha.memory().inUseBytes;
  const lm = await mha.loadModel(constructed());
  const loaded = mha.memory().inUseBytes;
  assert.throws(() => ovLogits(lm, 1), (e) => e.code === 'INVALID_ARGUMENT' && e.message === 'ovLogits: layer must be an integer in [0, 0], got 1');
  assert.throws(() => ovLogits(lm, 0.5), (e) => e.code === 'INVALID_ARGUMENT');
  ovLogits(lm, 0);
  assert.equal(mha.memory().inUseBytes, loaded, 'the engine layer of ovLogits is freed');
  copyingScores(lm);
  lm.dispose();
  assert.equal(mha.memory().inUseBytes, before);
  assert.throws(() => copyingScores(lm), (e) => e.code === 'DISPOSED');
  assert.throws(() => ovLogits(lm, 0), (e) => e.code === 'DISPOSED');
});

// The decoder models of the extended file format (docs/trained-models.md, "Architecture options":
// norm, norm_eps, mlp, bias, positions/RoPE, kv_heads, tied, the in_proj and q/k/v_proj forms)
// against tests/golden-decoder/ (tiny random models and a float64 PyTorch reference written from
// the papers: scripts/golden/decoder.py), through mha.loadModel: run() log-probabilities, every
// head's attention, the loss, head ablation, greedy generation through the KV caches; and the
// format's errors for the options.
//
// Tolerances: those of tests/model.test.mjs (float32 engine vs float64 PyTorch): logProbs 2e-4,
// attention 2e-5, loss 1e-4 bits per character. The reference's own float32 forward stays within
// 2e-5 (logProbs) and 3e-6 (attention) of float64 on these models (checks.float32_max_abs_err in
// each JSON), ≥ 7× inside; every option a model sets moves its log-probabilities by ≥ 3× the
// tolerance (GELU exact vs tanh form) and by ≥ 1 (the others), so a runner that ignores or
// misreads an option fails (checks.option_sensitivity).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, MHAError, parseSafetensors } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { maxDiff, MODEL_TOL } from './helpers/model-golden.mjs';

const TOL = MODEL_TOL;
const dir = new URL('./golden-decoder/', import.meta.url);
const goldens = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
assert.ok(goldens.length >= 10, `golden-decoder cases missing in ${dir.pathname}`);
const mha = await createMHA(tierOptions());

const read = (f) => JSON.parse(fs.readFileSync(new URL(f, dir)));
const bytesOf = (g) => fs.readFileSync(new URL(g.model.split('/').pop(), dir));


test('the golden models cover every value of every architecture option', () => {
  const seen = {};
  const add = (k, v) => (seen[k] ||= new Set()).add(JSON.stringify(v));
  for (const f of goldens) {
    const g = read(f);
    const a = g.architecture;
    for (const k of ['norm', 'mlp', 'bias', 'positions', 'tied']) add(k, a[k]);
    add('kv_heads', a.kv_heads);
    add('attention_form', `${g.attention_form}:${a.kv_heads === g.config.num_heads ? 'mha' : 'gqa'}`);
    if (a.positions === 'rope') add('rope_interleaved', a.rope_interleaved);
    if (a.positions === 'rope' && a.rope_base !== 10000) add('rope_base', 'other');
    if (a.eps !== 1e-5) add('eps', 'other');
    if (!Object.keys(g.config).some((k) => !['vocab_size', 'd_model', 'num_heads', 'num_layers', 'd_ff', 'context', 'ln_eps', 'unk'].includes(k))) add('config', 'no options');
  }
  const want = {
    norm: ['layernorm', 'rmsnorm'], mlp: ['relu', 'gelu', 'gelu_tanh', 'swiglu'], bias: [true, false],
    positions: ['learned', 'rope'], tied: [true, false], kv_heads: [4, 2, 1], rope_interleaved: [true, false],
    attention_form: ['in_proj:mha', 'qkv:mha', 'qkv:gqa'], rope_base: ['other'], eps: ['other'], config: ['no options'],
  };
  for (const [k, vs] of Object.entries(want)) {
    for (const v of vs) assert.ok(seen[k] && seen[k].has(JSON.stringify(v)), `no golden model with ${k} = ${JSON.stringify(v)}`);
  }
});

for (const file of goldens) {
  test(`golden decoder ${file}: log-probabilities, attention of every head, loss, ablation and greedy generation match PyTorch`, async () => {
    const g = read(file);
    const lm = await mha.loadModel(bytesOf(g));
    try {
      assert.equal(lm.config.numHeads, g.config.num_heads);
      assert.equal(lm.config.context, g.config.context);
      for (const c of g.cases) {
        const what = `${JSON.stringify(c.text)} (ablate ${JSON.stringify(c.ablate)})`;
        const r = lm.run(c.text, { ablate: c.ablate });
        assert.deepEqual(Array.from(r.ids), c.ids, `ids of ${what}`);
        assert.deepEqual(r.logProbs.shape, [c.ids.length, g.config.vocab_size]);
        const dl = maxDiff(r.logProbs.data, c.logProbs.flat());
        assert.ok(dl <= TOL.logProbs, `logProbs of ${what}: max |Δ| ${dl}`);
        assert.equal(r.attention.length, c.attention.length, 'one attention tensor per layer');
        for (let l = 0; l < c.attention.length; l++) {
          const T = c.ids.length;
          assert.deepEqual(r.attention[l].shape, [g.config.num_heads, T, T], `attention shape of layer ${l}`);
          const da = maxDiff(r.attention[l].data, c.attention[l].flat(2));
          assert.ok(da <= TOL.attention, `attention of layer ${l}, ${what}: max |Δ| ${da}`);
        }
        if (c.loss === null) assert.equal(r.loss, null);
        else assert.ok(Math.abs(r.loss - c.loss) <= TOL.loss, `loss of ${what}: ${r.loss} vs ${c.loss}`);
      }
      // The ablated case differs from the plain run of the same text: the ablation was applied.
      const abl = g.cases.find((c) => c.ablate.length);
      const plain = g.cases.find((c) => c.text === abl.text && !c.ablate.length);
      assert.ok(Math.abs(abl.loss - plain.loss) > 100 * TOL.loss);
      const gen = lm.generate(g.generate.prompt, g.generate.n, { temperature: 0 });
      assert.equal(gen.text, g.generate.text, `greedy generation after ${JSON.stringify(g.generate.prompt)}`);
    } finally {
      lm.dispose();
    }
  });
}

/** Asserts that a promise rejects with an MHAError of `code` whose message matches every pattern. */
async function rejectsMHA(promise, code, patterns) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, `code of "${e.message}"`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

test('loadModel refuses a bad option or a tensor of the options, naming the key or tensor, the expected and the actual value', async () => {
  // The Llama-like golden: rmsnorm, swiglu, no bias, RoPE, kv_heads 2 (d_model 32, d_k 8, d_ff 48), tied.
  const g = read('llama.json');
  const { metadata, tensors } = parseSafetensors(bytesOf(g));
  const cfg = JSON.parse(metadata.config);
  assert.deepEqual([cfg.d_model, cfg.num_heads, cfg.kv_heads, cfg.d_ff, cfg.mlp], [32, 4, 2, 48, 'swiglu']);
  const withConfig = (change) => encodeSafetensors({ ...metadata, config: JSON.stringify({ ...cfg, ...change }) }, tensors);

  await rejectsMHA(mha.loadModel(withConfig({ mlp: 'swish' })), 'INVALID_ARGUMENT',
    [/config\.mlp/, /"?swish"?/, /relu/, /gelu/, /gelu_tanh/, /swiglu/]);
  await rejectsMHA(mha.loadModel(withConfig({ norm: 'batchnorm' })), 'INVALID_ARGUMENT',
    [/config\.norm/, /batchnorm/, /layernorm/, /rmsnorm/]);
  await rejectsMHA(mha.loadModel(withConfig({ kv_heads: 3 })), 'INVALID_ARGUMENT',
    [/config\.kv_heads/, /\b3\b/, /num_heads/, /\b4\b/]);

  const noK = { ...tensors };
  delete noK['layers.0.attn.k_proj.weight'];
  await rejectsMHA(mha.loadModel(encodeSafetensors(metadata, noK)), 'INVALID_ARGUMENT',
    [/layers\.0\.attn\.k_proj\.weight/, /missing/, /\[16, 32\]/]);

  const badGate = { ...tensors, 'layers.1.mlp.gate.weight': { data: new Float32Array(40 * 32), shape: [40, 32] } };
  await rejectsMHA(mha.loadModel(encodeSafetensors(metadata, badGate)), 'SHAPE_MISMATCH',
    [/layers\.1\.mlp\.gate\.weight/, /\[48, 32\]/, /\[40, 32\]/]);

  // After the refusals the engine still loads and runs the unchanged file.
  const lm = await mha.loadModel(encodeSafetensors(metadata, tensors));
  try {
    const c = g.cases.find((k) => k.ids.length > 1 && !k.ablate.length);
    assert.ok(Math.abs(lm.run(c.text).loss - c.loss) <= TOL.loss);
  } finally {
    lm.dispose();
  }
});

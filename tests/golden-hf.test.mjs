// Hugging Face model folders (web/lib/src/formats/hf.js, hf-config.js) through mha.loadModel, against
// tests/golden-hf/: tiny random GPT2LMHeadModel and LlamaForCausalLM checkpoints in the layouts
// Hugging Face publishes (model.safetensors or a sharded index; float32, float16, bfloat16; GPT-2
// with and without the `transformer.` prefix and the causal-mask buffer; tied and untied heads;
// gelu_new, gelu, relu; Llama with GQA, MQA, MHA, attention_bias + mlp_bias, rope_theta) and a
// float64 PyTorch reference written from each architecture's description (scripts/golden/hf_models.py).
// The folders have no tokenizer: the cases are token ids, as a folder without one is used.
//
// Tolerances: those of tests/golden-decoder.test.mjs (float32 engine vs float64 reference): logProbs
// 2e-4, attention 2e-5. The weights are exactly the stored float16/bfloat16 values in both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { maxDiff, MODEL_TOL as TOL } from './helpers/model-golden.mjs';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden-hf');
const goldens = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
assert.ok(goldens.length >= 6, `golden-hf cases missing in ${dir}`);
const read = (f) => JSON.parse(fs.readFileSync(path.join(dir, f)));
const mha = await createMHA(tierOptions());

test('the golden folders cover both families, every dtype, tied and untied, sharded, each activation and K/V grouping', () => {
  const seen = new Set();
  for (const f of goldens) {
    const g = read(f);
    const c = g.config;
    seen.add(`${g.family}:${g.dtype}`);
    seen.add(`tied:${g.family === 'gpt2' ? c.tie_word_embeddings !== false : !!c.tie_word_embeddings}`);
    if (g.family === 'gpt2') seen.add(`act:${c.activation_function}`);
    else seen.add(`kv:${c.num_key_value_heads === c.num_attention_heads ? 'mha' : c.num_key_value_heads === 1 ? 'mqa' : 'gqa'}`);
    if (c.attention_bias) seen.add('attention_bias');
    if (c.mlp_bias) seen.add('mlp_bias');
    if (fs.existsSync(path.join(dir, g.name, 'model.safetensors.index.json'))) seen.add('sharded');
  }
  for (const want of ['gpt2:F32', 'gpt2:F16', 'gpt2:BF16', 'llama:F32', 'llama:F16', 'llama:BF16', 'tied:true', 'tied:false',
    'act:gelu_new', 'act:gelu', 'act:relu', 'kv:mha', 'kv:gqa', 'kv:mqa', 'attention_bias', 'mlp_bias', 'sharded']) {
    assert.ok(seen.has(want), `no golden folder with ${want}`);
  }
});

/** Runs every case of golden g on the loaded model lm. */
function checkCases(lm, g) {
  const V = g.config.vocab_size;
  const h = g.config.n_head ?? g.config.num_attention_heads;
  for (const c of g.cases) {
    const T = c.ids.length;
    const r = lm.run(c.ids);
    assert.deepEqual(Array.from(r.ids), c.ids);
    assert.deepEqual(r.logProbs.shape, [T, V]);
    const dl = maxDiff(r.logProbs.data, c.logProbs.flat());
    assert.ok(dl <= TOL.logProbs, `${g.name} T = ${T}: logProbs max |Δ| ${dl}`);
    assert.equal(r.attention.length, c.attention.length);
    for (let l = 0; l < c.attention.length; l++) {
      assert.deepEqual(r.attention[l].shape, [h, T, T]);
      const da = maxDiff(r.attention[l].data, c.attention[l].flat(2));
      assert.ok(da <= TOL.attention, `${g.name} T = ${T} layer ${l}: attention max |Δ| ${da}`);
    }
  }
  const gen = lm.generator(g.generate.prompt, { temperature: 0 });
  try {
    const ids = [];
    for (let i = 0; i < g.generate.ids.length; i++) ids.push(gen.step().id);
    assert.deepEqual(ids, g.generate.ids, `${g.name}: greedy ids through the KV cache`);
  } finally {
    gen.dispose();
  }
}

for (const file of goldens) {
  test(`golden HF folder ${file.replace('.json', '')}: log-probabilities, every head's attention and greedy ids match the float64 reference`, async () => {
    const g = read(file);
    const lm = await mha.loadModel(path.join(dir, g.name));   // a directory path (Node)
    try {
      assert.equal(lm.config.family, g.family);
      assert.equal(lm.config.tokenizer, 'none');
      assert.equal(lm.config.vocabSize, g.config.vocab_size);
      assert.equal(lm.config.kvHeads, g.config.num_key_value_heads ?? g.config.n_head);
      checkCases(lm, g);
      // no tokenizer: text is refused, naming the missing files
      assert.throws(() => lm.run('hello'), (e) => e.code === 'INVALID_ARGUMENT' && /tokenizer\.json/.test(e.message) && /token ids/.test(e.message));
      assert.equal(lm.decode([3, 7]), '<3><7>');
    } finally {
      lm.dispose();
    }
  });
}

test('the same folder from a file: URL, a File list and an http base URL gives the same log-probabilities', async () => {
  const g = read('llama-mqa-f16-sharded.json');
  const folder = path.join(dir, g.name);
  const ref = await mha.loadModel(folder);
  const want = ref.run(g.cases[2].ids).logProbs.data;
  ref.dispose();
  const server = http.createServer((req, res) => {
    const f = path.join(folder, path.basename(decodeURIComponent(req.url)));
    if (!req.url.startsWith('/m/') || !fs.existsSync(f)) { res.writeHead(404).end('not found'); return; }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(fs.readFileSync(f));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  try {
    const files = fs.readdirSync(folder).map((n) => new File([fs.readFileSync(path.join(folder, n))], n));
    for (const source of [pathToFileURL(folder + '/'), files, `http://127.0.0.1:${server.address().port}/m/`]) {
      const lm = await mha.loadModel(source);
      try {
        assert.deepEqual(Array.from(lm.run(g.cases[2].ids).logProbs.data), Array.from(want), `source ${typeof source === 'string' ? source : source.constructor.name}`);
      } finally {
        lm.dispose();
      }
    }
  } finally {
    server.close();
  }
});

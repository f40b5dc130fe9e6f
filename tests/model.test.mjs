// The trained-model runner (web/lib/src/lm/model.js) against PyTorch: every golden case in
// tests/golden-models/ (made by scripts/train/golden.py from the shipped files) passes through
// mha.loadModel within float32 tolerance; and the runner's API: head analysis, ablation, the
// KV-cache generator, errors, memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA } from '../web/lib/src/index.js';
import { throwsMHA } from './helpers/errors.mjs';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { assertMatchesGolden } from './helpers/model-golden.mjs';

const mha = await createMHA();
const modelsDir = new URL('../web/lib/models/', import.meta.url);
const goldenDir = new URL('./golden-models/', import.meta.url);
const goldens = fs.readdirSync(goldenDir).filter((f) => f.endsWith('.json')).sort();
const manifest = JSON.parse(fs.readFileSync(new URL('index.json', modelsDir)));

// float32 engine and JS loops vs float64 PyTorch on the same float16 weights.

test('the golden cases exist for the shipped models and the manifest lists every file', () => {
  assert.ok(goldens.length >= 2, `golden files: ${goldens}`);
  for (const m of manifest.models) {
    const bytes = fs.statSync(new URL(m.file, modelsDir)).size;
    assert.equal(bytes, m.bytes, `${m.file} size`);
  }
});

for (const file of goldens) {
  test(`golden ${file}: log-probabilities, attention of every head, loss, ablation and head scores match PyTorch`, async () => {
    const g = JSON.parse(fs.readFileSync(new URL(file, goldenDir)));
    const name = g.model.split('/').pop();
    const lm = await mha.loadModel(new URL(name, modelsDir));
    try {
      assertMatchesGolden(lm, g);
      // The ablation case differs from the plain run of the same text: switching heads off matters.
      const abl = g.cases.find((c) => c.ablate.length);
      const plain = g.cases.find((c) => c.text === abl.text && !c.ablate.length);
      assert.notEqual(abl.loss, plain.loss);
    } finally {
      lm.dispose();
    }
  });
}

const h4 = manifest.models.find((m) => m.numHeads === 4 && m.seed === 0);
const bytes = fs.readFileSync(new URL(h4.file, modelsDir));

/** Runs fn with the shipped h = 4 model loaded, and disposes it. */
async function withModel(fn) {
  const lm = await mha.loadModel(bytes);
  try {
    return await fn(lm);
  } finally {
    lm.dispose();
  }
}

test('the shipped h = 4 model has a previous-token head, an induction head and a third type, as its file records', async () => {
  await withModel(async (lm) => {
    const types = new Set(lm.heads.map((h) => h.type));
    assert.ok(types.has('previous-token'), [...types].join(', '));
    assert.ok(types.has('induction'), [...types].join(', '));
    assert.ok(types.size >= 3, [...types].join(', '));
    const recorded = JSON.parse(lm.metadata.heads);
    assert.deepEqual(lm.heads.map((h) => h.type), recorded.map((h) => h.type));
  });
});

test('generator: greedy steps equal the argmax of run() on the growing text, and the newest attention row equals run()\'s last row', async () => {
  await withModel(async (lm) => {
    const prompt = 'The cat sat. The cat';
    const g = lm.generator(prompt, { temperature: 0 });
    let text = prompt;
    for (let i = 0; i < 12; i++) {
      const s = g.step();
      const r = lm.run(text);
      assert.equal(s.char, r.next[0].char, `step ${i} after ${JSON.stringify(text)}`);
      assert.ok(Math.abs(s.p - r.next[0].p) < 1e-4);
      assert.equal(s.cacheLength, text.length);
      const T = text.length;
      for (let l = 0; l < lm.config.numLayers; l++) {
        const want = r.attention[l];
        for (let j = 0; j < lm.config.numHeads; j++) {
          for (let k = 0; k < T; k++) {
            assert.ok(Math.abs(s.attention[l].data[j * T + k] - want.data[(j * T + T - 1) * T + k]) < 1e-5);
          }
        }
      }
      text += s.char;
    }
    assert.equal(g.text, text);
    g.reset();
    assert.equal(g.text, prompt);
    g.dispose();
    assert.throws(() => g.step(), /disposed/);
  });
});

test('generator: seeded sampling repeats; the caches slide when they reach the context', async () => {
  await withModel(async (lm) => {
    const a = lm.generate('Fortune ', 30, { seed: 3, temperature: 0.8 });
    const b = lm.generate('Fortune ', 30, { seed: 3, temperature: 0.8 });
    assert.equal(a.text, b.text);
    const C = lm.config.context;
    const g = lm.generator('x', { temperature: 0 });
    let maxLen = 0;
    let slid = false;
    for (let i = 0; i < C + 5; i++) {
      const s = g.step();
      if (s.cacheLength < maxLen) slid = true;
      maxLen = Math.max(maxLen, s.cacheLength);
    }
    assert.equal(maxLen, C);
    assert.ok(slid, 'the cache was refilled after reaching the context');
    g.dispose();
  });
});

test('ablation: switching off the induction heads raises the loss on a repeated phrase', async () => {
  await withModel(async (lm) => {
    const text = 'The quick fox naps. The quick fox naps. The quick fox naps.';
    const ind = lm.heads.filter((h) => h.type === 'induction').map((h) => [h.layer, h.head]);
    const base = lm.run(text).loss;
    const off = lm.run(text, { ablate: ind }).loss;
    assert.ok(off > base + 0.3, `loss ${base} → ${off} with ${JSON.stringify(ind)} off`);
  });
});

test('runner errors name the argument, and the model keeps working', async () => {
  const lm = await mha.loadModel(bytes);
  try {
    const C = lm.config.context;
    throwsMHA(() => lm.run(''), 'INVALID_ARGUMENT', [/text/, /1 to \d+/, /got 0/]);
    throwsMHA(() => lm.run('a'.repeat(C + 1)), 'INVALID_ARGUMENT', [new RegExp(`got ${C + 1}`)]);
    throwsMHA(() => lm.run(42), 'INVALID_ARGUMENT', [/string/]);
    throwsMHA(() => lm.run('abc', { ablate: [[9, 0]] }), 'INVALID_ARGUMENT', [/layer/, /got 9/]);
    throwsMHA(() => lm.run('abc', { ablate: [[0, -1]] }), 'INVALID_ARGUMENT', [/head/, /got -1/]);
    throwsMHA(() => lm.run('abc', { ablate: [0, 1] }), 'INVALID_ARGUMENT', [/pairs/]);
    throwsMHA(() => lm.generator(''), 'INVALID_ARGUMENT', [/prompt/]);
    throwsMHA(() => lm.generator('a', { temperature: -1 }), 'INVALID_ARGUMENT', [/temperature/]);
    assert.ok(lm.run('abc').loss > 0);
  } finally {
    lm.dispose();
  }
  throwsMHA(() => lm.run('abc'), 'DISPOSED', [/disposed/]);
});

test('loadModel refuses files that are not this architecture, naming the tensor or field', async () => {
  const { parseSafetensors } = await import('../web/lib/src/index.js');
  const { metadata, tensors, dtypes } = parseSafetensors(bytes);
  const rebuild = (meta, ts) => encodeSafetensors(meta, ts);
  const noHead = { ...tensors };
  delete noHead['head.bias'];
  await assert.rejects(mha.loadModel(rebuild(metadata, noHead)), /tensor "head\.bias" is missing/);
  const wrong = { ...tensors, 'ln_f.bias': { data: new Float32Array(3), shape: [3] } };
  await assert.rejects(mha.loadModel(rebuild(metadata, wrong)), (e) => e.code === 'SHAPE_MISMATCH' && /ln_f\.bias/.test(e.message) && /\[3\]/.test(e.message));
  const nan = { ...tensors, 'ln_f.bias': { data: tensors['ln_f.bias'].data.map((v, i) => (i === 2 ? NaN : v)), shape: tensors['ln_f.bias'].shape } };
  await assert.rejects(mha.loadModel(rebuild(metadata, nan)), (e) => e.code === 'NON_FINITE' && /ln_f\.bias/.test(e.message) && /index 2/.test(e.message));
  await assert.rejects(mha.loadModel(rebuild({ ...metadata, format: 'other' }, tensors)), /format must be/);
  const cfg = JSON.parse(metadata.config);
  await assert.rejects(mha.loadModel(rebuild({ ...metadata, config: JSON.stringify({ ...cfg, num_heads: 5 }) }, tensors)), /num_heads = 5 must divide d_model/);
  await assert.rejects(mha.loadModel(rebuild({ ...metadata, vocab: '["a"]' }, tensors)), /vocab must be an array of/);
  await assert.rejects(mha.loadModel(42), /source must be bytes/);
  assert.equal(dtypes['head.weight'], 'F16');
});

test('dispose frees every layer and KV cache: 20 load/run/generate/dispose cycles leave the heap in use unchanged', async () => {
  const warm = await mha.loadModel(bytes);
  warm.run('warm up');
  warm.dispose();
  const before = mha.memory().inUseBytes;
  for (let i = 0; i < 20; i++) {
    const lm = await mha.loadModel(bytes);
    lm.run('Some text to run.', { ablate: [[0, i % 4]] });
    const g = lm.generator('abc', { seed: i });
    g.step();
    lm.dispose();
  }
  assert.equal(mha.memory().inUseBytes, before);
});

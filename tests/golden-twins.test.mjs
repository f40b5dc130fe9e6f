// The grouped-query twins (web/lib/models/gqa-kv{8,2,1}-s{0,1}.safetensors: 8 query heads over 8, 2
// or 1 K/V heads, rotary positions; docs/trained-models.md, "The grouped-query twins") through
// mha.loadModel, against tests/golden-twins/ (made by scripts/train/golden.py with the training
// code's own forward in float64 from the shipped float16 weights): log-probabilities, every head's
// attention, the loss, the loss with the induction heads switched off, every head's scores on the
// file's probes (random-letter and prose repeats) and their labels; the manifest's `gqa` list; and
// for one twin (h_kv = 2) greedy generation through the KV caches equals PyTorch's greedy text by
// full forwards, step by step equal to run() on the growing text.
//
// Tolerances: those of tests/model.test.mjs (float32 engine vs float64 PyTorch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, analyzeHeads } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { assertMatchesGolden } from './helpers/model-golden.mjs';

const modelsDir = new URL('../web/lib/models/', import.meta.url);
const goldenDir = new URL('./golden-twins/', import.meta.url);
const goldens = fs.readdirSync(goldenDir).filter((f) => f.endsWith('.json')).sort();
const manifest = JSON.parse(fs.readFileSync(new URL('index.json', modelsDir)));
const mha = await createMHA(tierOptions());

test('the manifest lists the twins in their own `gqa` list, after the untouched `models`, each with a golden file', () => {
  assert.ok(manifest.models.every((m) => m.file.startsWith('charlm-') && !('kvHeads' in m)));
  const gqa = manifest.gqa;
  assert.ok(Array.isArray(gqa) && gqa.length === 6, `gqa: ${JSON.stringify(gqa)}`);
  assert.deepEqual(gqa.map((m) => [m.kvHeads, m.seed]), [[8, 0], [8, 1], [2, 0], [2, 1], [1, 0], [1, 1]]);
  for (const m of gqa) {
    assert.equal(fs.statSync(new URL(m.file, modelsDir)).size, m.bytes, `${m.file} size`);
    assert.equal(m.numHeads, 8);
    assert.equal(m.positions, 'rope');
    assert.equal(m.kvBytesPerToken, 2 * m.numLayers * m.kvHeads * m.dK * 4);
    assert.ok(goldens.includes(m.file.replace('.safetensors', '.json')), `golden of ${m.file}`);
  }
  // parameters kept equal (the MLP widened by what the K/V projections lose) within 0.1 %
  const p = gqa.map((m) => m.parameters);
  assert.ok((Math.max(...p) - Math.min(...p)) / Math.max(...p) < 1e-3, `parameters ${p}`);
});

test('analyzeHeads: inductionProse is the induction score on probes.prose_repeat, only when the probes have it, and leaves the label alone', () => {
  // one layer, two heads over a text of T characters: head 0 attends to t − n + 1 (induction at any
  // span n), head 1 to the previous character
  const attend = (text) => {
    const T = text.length;
    const n = T / 2;
    const data = new Float32Array(2 * T * T);
    for (let t = 0; t < T; t++) {
      data[t * T + (t >= n ? t - n + 1 : t)] = 1;
      data[T * T + t * T + Math.max(0, t - 1)] = 1;
    }
    return [{ data, shape: [2, T, T] }];
  };
  const probes = { text: ['abcdefgh'], repeat: ['xyzxyz'], repeat_span: 3 };
  const plain = analyzeHeads(probes, attend, { numLayers: 1, numHeads: 2 });
  assert.ok(plain.every((h) => !('inductionProse' in h.scores)));
  const prose = analyzeHeads({ ...probes, prose_repeat: ['the cat the cat '], prose_repeat_span: 8 }, attend, { numLayers: 1, numHeads: 2 });
  assert.deepEqual(prose.map((h) => h.scores.inductionProse), [1, 0]);
  assert.deepEqual(prose.map((h) => h.type), plain.map((h) => h.type));
  for (let i = 0; i < 2; i++) {
    for (const [k, v] of Object.entries(plain[i].scores)) assert.equal(prose[i].scores[k], v);
  }
});

for (const file of goldens) {
  test(`twin ${file}: log-probabilities, attention, loss, ablation, head scores on both probe kinds match PyTorch`, async () => {
    const g = JSON.parse(fs.readFileSync(new URL(file, goldenDir)));
    const name = g.model.split('/').pop();
    const entry = manifest.gqa.find((m) => m.file === name);
    const lm = await mha.loadModel(fs.readFileSync(new URL(name, modelsDir)));
    try {
      assert.equal(lm.config.kvHeads, entry.kvHeads);
      assert.equal(lm.config.positions, 'rope');
      const abl = g.cases.find((c) => c.ablate.length);
      const plain = g.cases.find((c) => c.text === abl.text && !c.ablate.length);
      assert.ok(abl.loss > plain.loss, 'switching the induction heads off raises the loss on a repeated phrase');
      const heads = assertMatchesGolden(lm, g);
      for (let i = 0; i < heads.length; i++) {
        assert.deepEqual(Object.keys(heads[i].scores).sort(), Object.keys(g.heads[i].scores).sort());
        assert.ok('inductionProse' in heads[i].scores);
      }
      // the file's own record of the analysis is what the runner measures
      assert.deepEqual(JSON.parse(lm.metadata.heads).map((h) => h.type), heads.map((h) => h.type));
    } finally {
      lm.dispose();
    }
  });
}

test('generation through the KV caches (h_kv = 2) equals greedy full forwards: PyTorch\'s text, and run() at every step', async () => {
  const g = JSON.parse(fs.readFileSync(new URL('gqa-kv2-s0.json', goldenDir)));
  const lm = await mha.loadModel(fs.readFileSync(new URL('gqa-kv2-s0.safetensors', modelsDir)));
  try {
    assert.equal(lm.config.kvHeads, 2);
    const { prompt, text: want, minMargin } = g.greedy;
    assert.ok(minMargin > 1e-3, `PyTorch's greedy steps have a top-2 margin of ${minMargin} nats, too close for float32`);
    const gen = lm.generator(prompt, { temperature: 0 });
    let text = prompt;
    while (text.length < want.length) {
      const s = gen.step();
      const r = lm.run(text);
      assert.equal(s.char, r.next[0].char, `step after ${JSON.stringify(text)}`);
      assert.ok(Math.abs(s.p - r.next[0].p) < 1e-4);
      assert.equal(s.cacheLength, text.length);
      const T = text.length;
      for (let l = 0; l < lm.config.numLayers; l++) {
        for (let j = 0; j < lm.config.numHeads; j++) {
          for (let k = 0; k < T; k++) {
            assert.ok(Math.abs(s.attention[l].data[j * T + k] - r.attention[l].data[(j * T + T - 1) * T + k]) < 1e-5);
          }
        }
      }
      text += s.char;
    }
    assert.equal(text, want);
    gen.dispose();
  } finally {
    lm.dispose();
  }
});

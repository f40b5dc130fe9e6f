// stories260K (Karpathy's tinyllamas model, trained elsewhere with llama2.c: RMSNorm, SwiGLU, RoPE on
// interleaved pairs, 8 query heads over 4 K/V heads, tied head) through mha.loadModel, against
// tests/golden-stories260k/cases.json: a float64 numpy forward written from the model's README
// (scripts/golden/stories260k.py), which reproduces llama2.c's published greedy text. Checks the
// shipped file (web/lib/models/stories260K.safetensors) is the conversion of the original files,
// the tokenizer's ids, log-probabilities at every position, every head's attention, greedy decoding
// through the KV cache, and that a cache step equals the full forward's row.
//
// Tolerances (float32 engine vs float64 reference, 5 blocks): log-probabilities 1e-4 (measured
// 1.6e-5), attention weights 2e-5 (measured 2.9e-6). Greedy ids must be equal: the reference's
// smallest top-2 margin over the cases is 0.06 nats, far above float32 rounding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { maxDiff } from './helpers/model-golden.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TOL = { logProbs: 1e-4, attention: 2e-5 };
const shipped = path.join(root, 'web/lib/models/stories260K.safetensors');
// As tests/llama2c.test.mjs: llama2.c's original files in tests/fixtures/stories260K/ (README and
// LICENSE there), or $MHA_STORIES_DIR.
const original = process.env.MHA_STORIES_DIR || path.join(root, 'tests/fixtures/stories260K');
const { cases } = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden-stories260k/cases.json')));
const mha = await createMHA(tierOptions());
const lm = await mha.loadModel(fs.readFileSync(shipped));


test('the shipped stories260K.safetensors is the conversion of the original files (digests of their README)', () => {
  const sha = (f) => crypto.createHash('sha256').update(fs.readFileSync(path.join(original, f))).digest('hex');
  assert.equal(sha('stories260K.bin'), 'b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696');
  assert.equal(sha('tok512.bin'), '037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stories-')), 'm.safetensors');
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/models/stories260k.mjs'), '--dir', original, '--out', out], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(fs.readFileSync(out).equals(fs.readFileSync(shipped)), 'scripts/models/stories260k.mjs gives other bytes than the shipped file: re-run it');
});

test('the model as loaded: the Llama architecture of the README, credited', () => {
  const c = lm.config;
  assert.deepEqual([c.dModel, c.numHeads, c.kvHeads, c.numLayers, c.dFF, c.vocabSize, c.context], [64, 8, 4, 5, 172, 512, 512]);
  assert.deepEqual([c.norm, c.mlp, c.positions, c.ropeInterleaved, c.tied, c.bias, c.tokenizer], ['rmsnorm', 'swiglu', 'rope', true, true, false, 'llama2c']);
  assert.match(lm.training.author, /Karpathy/);
  assert.match(lm.training.license, /MIT/);
  assert.deepEqual(Array.from(lm.encode('Once upon a time')), [1, 403, 407, 261, 378]);
});

for (const c of cases) {
  test(`${c.name}: ids, log-probabilities${c.attention ? ', every head\'s attention' : ''} and greedy decoding match the reference`, () => {
    assert.deepEqual(Array.from(lm.encode(c.text)), c.ids);
    const r = lm.run(c.text);
    const T = c.ids.length;
    assert.deepEqual(r.logProbs.shape, [T, 512]);
    const d = maxDiff(r.logProbs.data, c.logProbs.flat());
    assert.ok(d <= TOL.logProbs, `log-probabilities differ by ${d} (tolerance ${TOL.logProbs})`);
    if (c.attention) {
      for (let l = 0; l < 5; l++) {
        const a = maxDiff(r.attention[l].data, c.attention[l].flat(2));
        assert.ok(a <= TOL.attention, `layer ${l} attention differs by ${a} (tolerance ${TOL.attention})`);
      }
    }
    const g = lm.generator(c.text, { temperature: 0 });
    try {
      const ids = [];
      for (let i = 0; i < c.greedy.ids.length; i++) ids.push(g.step().id);
      assert.deepEqual(ids, c.greedy.ids);
      assert.equal(g.text, c.greedy.text);
    } finally {
      g.dispose();
    }
  });
}

test('greedy decoding from "Once upon a time" gives the text llama2.c\'s README shows for this model', () => {
  const { text } = lm.generate('Once upon a time', 30, { temperature: 0 });
  assert.ok(text.startsWith('Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day,'), text);
});

test('KV-cache steps of one token give the full forward\'s rows (the cache rotates each key at its true position)', () => {
  const c = cases.find((x) => x.ids.length > 40);
  const T = c.ids.length, V = 512;
  const full = lm.run(c.text).logProbs.data;
  const cache = lm._decoder.createCache(T);  // the runner's decoder (model.js): steps of chosen ids
  try {
    const head = Int32Array.from(c.ids.slice(0, 7));
    let r = cache.step(head, { lastOnly: false });
    let d = maxDiff(r.logProbs, full.subarray(0, 7 * V));
    for (let t = 7; t < T; t++) {
      r = cache.step(Int32Array.of(c.ids[t]), { lastOnly: true });
      d = Math.max(d, maxDiff(r.logProbs, full.subarray(t * V, (t + 1) * V)));
    }
    assert.equal(cache.length, T);
    assert.ok(d <= TOL.logProbs, `cache steps differ from the forward by ${d} (float32 rounding of other summation orders: measured ≤ 3e-5)`);
  } finally {
    cache.dispose();
  }
});

test('ablating a head changes the prediction and its attention stays visible', () => {
  const text = 'Once upon a time, there was a little girl';
  const base = lm.run(text);
  const off = lm.run(text, { ablate: [[0, 3], [1, 5]] });
  assert.ok(maxDiff(off.logProbs.data, base.logProbs.data) > 1e-3, 'ablation changed nothing');
  assert.ok(maxDiff(off.attention[0].data, base.attention[0].data) < 1e-6, 'layer 0 attention must not change (its own heads only feed the output)');
});

test('top-p (nucleus) sampling: every drawn token is inside the nucleus the full forward gives; tiny topP is greedy; topP 1 is plain sampling', () => {
  const prompt = 'Once upon a time';
  const p = 0.6;
  const g = lm.generator(prompt, { temperature: 1, topP: p, seed: 3 });
  const plain = lm.generate(prompt, 12, { temperature: 1, seed: 3 }).text;
  try {
    let ids = Array.from(lm.encode(prompt));
    for (let i = 0; i < 12; i++) {
      const logp = lm.run(lm.decode(ids)).logProbs;  // the distribution after the text so far
      const T = logp.shape[0];
      const row = Array.from(logp.data.subarray((T - 1) * 512, T * 512), Math.exp);
      const order = row.map((q, j) => [q, j]).sort((a, b) => b[0] - a[0]);
      const nucleusIds = new Set();
      let c = 0;
      for (const [q, j] of order) { if (c >= p) break; c += q; nucleusIds.add(j); }
      const s = g.step();
      assert.ok(nucleusIds.has(s.id), `step ${i}: token ${s.id} (p ${s.p.toFixed(3)}) outside the ${p} nucleus of ${nucleusIds.size} tokens`);
      ids = [...ids, s.id];
      if (lm.encode(lm.decode(ids)).length !== ids.length) break;  // a re-encoding would differ: stop comparing
    }
  } finally {
    g.dispose();
  }
  assert.equal(lm.generate(prompt, 20, { temperature: 1, topP: 1e-9, seed: 5 }).text, lm.generate(prompt, 20, { temperature: 0 }).text);
  assert.equal(lm.generate(prompt, 12, { temperature: 1, topP: 1, seed: 3 }).text, plain);
  for (const bad of [0, -0.1, 1.5, '0.9', NaN]) assert.throws(() => lm.generator(prompt, { topP: bad }), /topP must be a number in \(0, 1\]/);
});

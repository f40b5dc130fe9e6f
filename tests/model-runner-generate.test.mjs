// The model runner (web/lib/src/lm/model.js) value by value, generation: the generator's seeded
// and top-p sampling against independent samplers on run()'s log-probabilities, greedy ties, the
// cache sliding when full, the newest attention rows, refusals, reset and dispose; and the
// byte-pair model stories260K (pieces as tokens, an empty prompt, decoding generated ids). Loading:
// model-runner-load.test.mjs; run(): model-runner-run.test.mjs. Written for the mutation testing
// of model.js (stryker.config.mjs); numerics vs PyTorch: tests/model.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA, mulberry32 } from '../web/lib/src/index.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { throwsExactly } from './helpers/exact-error.mjs';
import { maxDiff } from './helpers/model-golden.mjs';
import { bytesOf, parsed, storiesBytes, loaders } from './helpers/model-runner.mjs';

const mha = await createMHA();
const { withModel } = loaders(mha);

function sample(logp, temperature, u) {
  const w = Array.from(logp, (v) => Math.exp(v / temperature));
  let r = u * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) { r -= w[i]; if (r < 0) return i; }
  return w.length - 1;
}

test('generator: seeded sampling equals an independent sampler on run()\'s log-probabilities; seed 0 is the default; reset restarts', async () => {
  await withModel(bytesOf('default'), (lm) => {
    const V = lm.config.vocabSize;
    for (const [temperature, seed] of [[1, 0], [0.7, 5], [2.5, 11]]) {
      const g = lm.generator('the ', seed === 0 ? { temperature } : { temperature, seed });
      const rand = mulberry32(seed);
      let text = 'the ';
      const got = [];
      for (let i = 0; i < 9; i++) {
        const s = g.step();
        const lp = lm.run(text).logProbs.data;
        const row = lp.subarray(lp.length - V);
        assert.equal(s.id, sample(row, temperature, rand()), `step ${i}, T = ${temperature}, seed ${seed}`);
        assert.equal(s.token, lm.vocab[s.id]);
        assert.equal(s.char, s.token);
        assert.ok(Math.abs(s.p - Math.exp(row[s.id])) < 1e-5);
        assert.equal(s.cacheLength, text.length);
        text += s.char;
        assert.equal(g.text, text);
        assert.equal(g.cacheLength, text.length - 1);
        got.push(s.id);
      }
      g.reset();
      assert.equal(g.text, 'the ');
      assert.equal(g.cacheLength, 0);
      assert.deepEqual(Array.from({ length: 9 }, () => g.step().id), got, 'after reset the same steps');
      g.dispose();
    }
    // the default temperature is 1
    assert.equal(lm.generate('on', 12, { seed: 4 }).text, lm.generate('on', 12, { seed: 4, temperature: 1 }).text);
    assert.notEqual(lm.generate('on', 12, { seed: 4 }).text, lm.generate('on', 12, { seed: 5 }).text);
  });
});

/**
 * Nucleus sampling written again from its definition (Holtzman et al. 2020): the weights exp(logp / T)
 * of the most probable tokens until their sum first reaches p of the total (tokens tied with the last
 * one kept too), the others 0; then the sampler above over what is left.
 */
function sampleTopP(logp, temperature, p, u) {
  const w = Array.from(logp, (v) => Math.exp(v / temperature));
  let s = 0;
  for (const x of w) s += x;
  const order = w.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const keep = new Set();
  let kept = 0, last = null;
  for (const [x, i] of order) {
    if (kept >= p * s && x !== last) break;
    keep.add(i); kept += x; last = x;
  }
  let r = u * kept;
  for (let i = 0; i < w.length; i++) { if (!keep.has(i)) continue; r -= w[i]; if (r < 0) return i; }
  return w.length - 1;
}

test('generator: top-p equals an independent nucleus sampler on run()\'s log-probabilities; topP is checked, naming the value', async () => {
  await withModel(bytesOf('default'), (lm) => {
    const V = lm.config.vocabSize;
    let differs = false;
    for (const [temperature, topP, seed] of [[1, 0.5, 2], [0.8, 0.9, 7], [1.5, 0.3, 9]]) {
      const g = lm.generator('on ', { temperature, topP, seed });
      const rand = mulberry32(seed);
      let text = 'on ';
      for (let i = 0; i < 10; i++) {
        const s = g.step();
        const lp = lm.run(text).logProbs.data;
        const u = rand();
        assert.equal(s.id, sampleTopP(lp.subarray(lp.length - V), temperature, topP, u), `step ${i}, T ${temperature}, topP ${topP}`);
        if (s.id !== sample(lp.subarray(lp.length - V), temperature, u)) differs = true;
        text += s.char;
      }
      g.dispose();
    }
    assert.ok(differs, 'the nucleus changed some draw');
    assert.equal(lm.generate('on ', 10, { seed: 3, topP: 1 }).text, lm.generate('on ', 10, { seed: 3 }).text);
    for (const t of [0, -0.1, 1.5, 1.0000001, '0.9', NaN, Infinity]) {
      throwsExactly(() => lm.generator('on', { topP: t }), 'INVALID_ARGUMENT', `generator: topP must be a number in (0, 1], got ${JSON.stringify(t)}`);
    }
  });
});

test('generator: greedy decoding takes the first of equally probable tokens (every output row the same: a uniform next token)', async () => {
  const { metadata, tensors } = parsed('default');
  const row = tensors['head.weight'].data.subarray(0, 16);
  const flat = {
    ...tensors,
    'head.weight': { data: Float32Array.from({ length: 12 * 16 }, (_, i) => row[i % 16]), shape: [12, 16] },
    'head.bias': { data: new Float32Array(12).fill(0.25), shape: [12] },
  };
  await withModel(encodeSafetensors(metadata, flat), (lm) => {
    const r = lm.run('the rain');
    assert.ok(r.logProbs.data.every((v) => v === r.logProbs.data[0]), 'every token equally probable');
    assert.deepEqual(r.next.map((x) => x.id), [0, 1, 2, 3, 4]);
    const g = lm.generate('the rain', 3, { temperature: 0 });
    assert.equal(g.text, 'the raineee');
    // every token tied: top-p keeps them all (ties at the boundary are kept), as plain sampling
    assert.equal(lm.generate('the rain', 8, { seed: 6, topP: 0.01 }).text, lm.generate('the rain', 8, { seed: 6 }).text);
    assert.notEqual(lm.generate('the rain', 8, { seed: 6 }).text, 'the rain' + 'e'.repeat(8));
    assert.ok(Math.abs(g.steps[0].p - 1 / 12) < 1e-6);
  });
});

test('generator: the cache slides to the last ⌊context/2⌋ characters when full; a prompt longer than the context starts there', async () => {
  await withModel(bytesOf('default'), (lm) => {
    const C = lm.config.context;   // 16
    const argmax = (text) => lm.run(text).next[0].id;
    const g = lm.generator('the', { temperature: 0 });
    let text = 'the';
    const lengths = [];
    for (let i = 0; i < C + 4; i++) {
      const s = g.step();
      lengths.push(s.cacheLength);
      // the text the caches hold: the whole text, or since the slide its last C/2 characters and what followed
      const held = text.slice(text.length - s.cacheLength);
      assert.equal(s.id, argmax(held), `step ${i}`);
      assert.equal(s.attention[0].shape[1], s.cacheLength);
      text += s.char;
    }
    assert.deepEqual(lengths, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 8, 9, 10, 11, 12, 13]);
    assert.equal(g.text, text);
    g.dispose();
    // a prompt of C + 3 characters: the first step sees its last C/2
    const long = 'the rain in the sea.';
    assert.equal(long.length, C + 4);
    const h = lm.generator(long, { temperature: 0 });
    const s = h.step();
    assert.equal(s.cacheLength, C / 2);
    assert.equal(s.id, argmax(long.slice(-C / 2)));
    assert.equal(h.text, long + s.char);
    h.reset();
    assert.equal(h.text, long);
    assert.equal(h.step().cacheLength, C / 2);
    h.dispose();
    // a prompt of exactly C characters fills the caches
    const exact = long.slice(0, C);
    const e = lm.generator(exact, { temperature: 0 });
    const s0 = e.step();
    assert.equal(s0.cacheLength, C);
    assert.equal(s0.id, argmax(exact));
    assert.equal(e.step().cacheLength, C / 2, 'the next step slides');
    e.reset();
    assert.equal(e.step().cacheLength, C);
    e.dispose();
  });
});

test('generator: the newest attention row of every layer and head equals run()\'s last row', async () => {
  await withModel(bytesOf('llama'), (lm) => {
    const { numLayers: L, numHeads: h } = lm.config;
    const g = lm.generator('the ra', { temperature: 0 });
    let text = 'the ra';
    for (let i = 0; i < 3; i++) {
      const s = g.step();
      const r = lm.run(text);
      const T = text.length;
      assert.equal(s.attention.length, L);
      for (let l = 0; l < L; l++) {
        assert.deepEqual(s.attention[l].shape, [h, T]);
        const want = new Float32Array(h * T);
        for (let j = 0; j < h; j++) want.set(r.attention[l].data.subarray((j * T + T - 1) * T, (j * T + T) * T), j * T);
        assert.ok(maxDiff(s.attention[l].data, want) < 1e-5, `step ${i} layer ${l}`);
      }
      text += s.char;
    }
    g.dispose();
  });
});

test('generator and generate: refusals name the argument; n = 0; dispose is idempotent and frees every generator', async () => {
  const lm = await mha.loadModel(bytesOf('default'));
  const before = mha.memory().inUseBytes;
  throwsExactly(() => lm.generator(''), 'INVALID_ARGUMENT', 'generator: prompt must be a non-empty string, got ""');
  throwsExactly(() => lm.generator(7), 'INVALID_ARGUMENT', 'generator: prompt must be a non-empty string, got 7');
  for (const t of [-1, NaN, Infinity, -Infinity, '1']) {
    throwsExactly(() => lm.generator('a', { temperature: t }), 'INVALID_ARGUMENT', `generator: temperature must be a finite number ≥ 0, got ${JSON.stringify(t)}`);
  }
  for (const n of [-1, 1.5, '3', undefined]) {
    throwsExactly(() => lm.generate('a', n), 'INVALID_ARGUMENT', `generate: n must be a non-negative integer, got ${JSON.stringify(n)}`);
  }
  assert.deepEqual(lm.generate('the', 0), { text: 'the', steps: [] });
  const r = lm.generate('the', 3, { temperature: 0 });
  assert.deepEqual(Object.keys(r.steps[0]), ['token', 'id', 'p', 'cacheLength', 'char']);
  for (const s of r.steps) assert.deepEqual([s.token, s.char], [lm.vocab[s.id], lm.vocab[s.id]], 'a step names its token by id and text; char is the same text');
  assert.deepEqual(r.steps.map((s) => s.cacheLength), [3, 4, 5]);
  assert.equal(r.text, 'the' + r.steps.map((s) => s.token).join(''));
  assert.equal(mha.memory().inUseBytes, before, 'generate disposed its generator');
  const g1 = lm.generator('the');
  const g2 = lm.generator('the');
  g2.step();
  g2.dispose();
  g2.dispose();
  assert.equal(g2.cacheLength, 0);
  throwsExactly(() => g2.step(), 'DISPOSED', 'step: this generator was disposed');
  throwsExactly(() => g2.reset(), 'DISPOSED', 'reset: this generator was disposed');
  g1.step();
  lm.dispose();
  lm.dispose();
  throwsExactly(() => g1.step(), 'DISPOSED', 'step: this generator was disposed');
  throwsExactly(() => lm.run('the'), 'DISPOSED', 'run: this model was disposed');
  throwsExactly(() => lm.heads, 'DISPOSED', 'heads: this model was disposed');
  throwsExactly(() => lm.generator('the'), 'DISPOSED', 'generator: this model was disposed');
});

test('byte-pair model (stories260K): pieces as tokens, "tokens" in the length error, an empty prompt, decode of the generated ids', async () => {
  await withModel(storiesBytes, (lm) => {
    assert.equal(lm.config.tokenizer, 'llama2c');
    const r = lm.run('Lily and Ben');
    assert.deepEqual(r.tokens, ['<s>', ' Lily', ' and', ' B', 'en']);
    assert.deepEqual(Array.from(r.ids), Array.from(lm.encode('Lily and Ben')));
    assert.equal(lm.decode(r.ids), 'Lily and Ben');
    assert.ok(r.next.every((x) => x.char === lm._piece(x.id)));
    assert.deepEqual(r.next.slice(0, 1).map((x) => typeof x.char), ['string']);
    throwsExactly(() => lm.run('a'.repeat(600)), 'INVALID_ARGUMENT', `run: text must have 1 to 512 tokens (the model's context), got ${lm.encode('a'.repeat(600)).length}`);
    // "" is BOS alone
    const g = lm.generator('', { temperature: 0 });
    const s = g.step();
    assert.equal(s.cacheLength, 1);
    assert.equal(s.id, lm.run('').next[0].id);
    const s2 = g.step();
    assert.equal(g.text, lm.decode([1, s.id, s2.id]));
    // reset: the text decodes from the prompt's ids again
    g.reset();
    assert.equal(g.text, '');
    assert.equal(g.step().id, s.id);
    assert.equal(g.text, lm.decode([1, s.id]));
    g.dispose();
    const story = lm.generate('Once upon a time', 8, { temperature: 0 });
    assert.equal(story.text, 'Once upon a time, there was a little girl');
  });
});

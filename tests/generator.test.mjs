// The sampler of generation (web/lib/src/lm/generator.js) on hand-made rows of log-probabilities:
// greedy takes the first of the most probable ids; a draw follows the inverse CDF of
// softmax(logp / temperature); the nucleus keeps the fewest most probable ids reaching topP (ties
// at its edge kept); and the layout helper of the model readers (formats/matrices.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleToken, nucleus } from '../web/lib/src/lm/generator.js';
import { transposed, columns } from '../web/lib/src/formats/matrices.js';
import { LanguageModel, CharModel } from '../web/lib/src/lm/model.js';

const row = (...p) => Float32Array.from(p, Math.log);

test('sampleToken: greedy is the argmax, the first of ties', () => {
  assert.equal(sampleToken(row(0.1, 0.5, 0.4), 0, 1, () => 0.99), 1);
  assert.equal(sampleToken(row(0.3, 0.3, 0.4, 0.4), 0, 1, () => 0), 2);
});

test('sampleToken: a draw u picks the first id whose cumulative probability passes u', () => {
  const lp = row(0.2, 0.5, 0.3);
  // temperature 1: the cumulative shares are 0.2, 0.7, 1.0
  assert.deepEqual([0, 0.19, 0.21, 0.69, 0.71, 0.999].map((u) => sampleToken(lp, 1, 1, () => u)), [0, 0, 1, 1, 2, 2]);
  // temperature 0.5 squares the probabilities: 0.04, 0.25, 0.09 of 0.38
  const cut = [0.04 / 0.38, 0.29 / 0.38];
  assert.deepEqual([cut[0] - 1e-4, cut[0] + 1e-4, cut[1] - 1e-4, cut[1] + 1e-4].map((u) => sampleToken(lp, 0.5, 1, () => u)), [0, 1, 1, 2]);
});

test('nucleus: keeps the most probable ids until they reach p, ties at the edge kept; sampleToken draws only from them', () => {
  const w = Float64Array.of(0.1, 0.4, 0.3, 0.2);
  assert.ok(Math.abs(nucleus(w, 1, 0.6) - 0.7) < 1e-12);
  assert.deepEqual(Array.from(w), [0, 0.4, 0.3, 0]);
  const tie = Float64Array.of(0.25, 0.25, 0.25, 0.25);
  assert.equal(nucleus(tie, 1, 0.3), 1, 'equal weights at the edge are all kept');
  // top-p 0.6 of (0.1, 0.4, 0.3, 0.2): only ids 1 and 2, in shares 4/7 and 3/7
  const lp = row(0.1, 0.4, 0.3, 0.2);
  assert.deepEqual([0, 0.5, 0.58, 0.99].map((u) => sampleToken(lp, 1, 0.6, () => u)), [1, 1, 2, 2]);
});

test('transposed and columns: [out, in] rows to the core\'s [in, out]; a packed matrix cut into parts', () => {
  const w = Float32Array.of(1, 2, 3, 4, 5, 6);   // [3, 2]
  assert.deepEqual(Array.from(transposed(w, 2)), [1, 3, 5, 2, 4, 6]);
  assert.deepEqual(Array.from(transposed(w, 2, 1, 2)), [3, 5, 4, 6], 'rows 1..2');
  assert.deepEqual(Array.from(columns(w, 3, 2, 1, 1)), [2, 4, 6]);
  assert.deepEqual(Array.from(transposed(w, 2, 1)), [3, 5, 4, 6], 'rows 1.. by default to the last');
  assert.deepEqual(Array.from(columns(Float32Array.of(1, 2, 3, 4, 5, 6), 2, 3, 1, 2)), [2, 3, 5, 6], 'columns 1..2 of [2, 3]');
});

test('CharModel is LanguageModel under its first name', () => {
  assert.equal(CharModel, LanguageModel);
  assert.equal(LanguageModel.name, 'LanguageModel');
});

test('a prompt of token ids: the text is their decoding, the caches slide over the ids, a bad id names generator', async () => {
  const { createMHA } = await import('../web/lib/src/index.js');
  const { throwsExactly } = await import('./helpers/exact-error.mjs');
  const fs = await import('node:fs');
  const mha = await createMHA();
  const lm = await mha.loadModel(fs.readFileSync(new URL('./golden-decoder/default.safetensors', import.meta.url)));
  try {
    const C = lm.config.context;
    const ids = Array.from(lm.encode('the'));
    const g = lm.generator(ids, { temperature: 0 });
    assert.equal(g.text, lm.decode(ids));
    const byText = lm.generator('the', { temperature: 0 });
    // past the context: both slide to their last ⌊C/2⌋ tokens and go on writing the same tokens
    for (let i = 0; i < C + 3; i++) {
      const [a, b] = [g.step(), byText.step()];
      assert.deepEqual([a.id, a.token], [b.id, b.token], `step ${i}`);
    }
    assert.equal(g.text, byText.text);
    assert.equal(g.cacheLength, byText.cacheLength);
    assert.ok(g.cacheLength <= C);
    g.reset();
    assert.deepEqual([g.text, g.cacheLength], [lm.decode(ids), 0]);
    const V = lm.config.vocabSize;
    throwsExactly(() => lm.generator([V]), 'INVALID_ARGUMENT', `generator: token id 0 must be an integer in [0, ${V - 1}], got ${V}`);
  } finally {
    lm.dispose();
  }
});

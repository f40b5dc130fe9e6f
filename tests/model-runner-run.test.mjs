// The model runner (web/lib/src/lm/model.js) value by value, running a loaded model: encode and
// decode (characters, the unknown id, ids outside the vocabulary), run()'s tokens, ids, attention
// shapes, loss and next characters against its own log-probabilities, and the head mask (ablate),
// on the tiny models of tests/golden-decoder/. Loading: model-runner-load.test.mjs; generation:
// model-runner-generate.test.mjs. Written for the mutation testing of model.js (stryker.config.mjs);
// the numerics themselves are checked against PyTorch by tests/golden-decoder.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { throwsExactly } from './helpers/exact-error.mjs';
import { maxDiff } from './helpers/model-golden.mjs';
import { read, bytesOf, loaders } from './helpers/model-runner.mjs';

const mha = await createMHA();
const { withModel } = loaders(mha);

test('encode and decode: characters, the unknown id, ids outside the vocabulary; refusals name the argument', async () => {
  await withModel(bytesOf('default'), (lm) => {
    // vocab: e t a o i n s r h ' ' . ?  (unk = 11)
    const ids = lm.encode('the zoo!');
    assert.ok(ids instanceof Int32Array);
    assert.deepEqual(Array.from(ids), [1, 8, 0, 9, 11, 3, 3, 11]);
    assert.equal(lm.decode(ids), 'the ?oo?');
    assert.equal(lm.decode([0, 12, -1, 10]), 'e\ufffd\ufffd.');
    assert.equal(lm.decode([]), '');
    assert.deepEqual(Array.from(lm.encode('')), []);
    throwsExactly(() => lm.encode(5), 'INVALID_ARGUMENT', 'encode: text must be a string, got number');
  });
});

test('run(): tokens, ids, attention shapes, the loss and the 5 next characters from its own log-probabilities', async () => {
  for (const name of ['default', 'llama']) {
    const g = read(name);
    await withModel(bytesOf(name), (lm) => {
      const { vocabSize: V, numLayers: L, numHeads: h, context: C } = lm.config;
      for (const c of g.cases) {
        const r = lm.run(c.text, { ablate: c.ablate });
        const T = c.ids.length;
        assert.deepEqual(r.tokens, Array.from(c.text));
        assert.ok(r.ids instanceof Int32Array);
        assert.deepEqual(Array.from(r.ids), c.ids);
        assert.equal(r.attention.length, L);
        for (let l = 0; l < L; l++) {
          assert.deepEqual(r.attention[l].shape, [h, T, T]);
          assert.ok(maxDiff(r.attention[l].data, c.attention[l].flat(2)) < 2e-5, `${name} layer ${l} attention`);
        }
        assert.deepEqual(r.logProbs.shape, [T, V]);
        const lp = r.logProbs.data;
        if (T === 1) assert.equal(r.loss, null);
        else {
          let s = 0;
          for (let t = 0; t + 1 < T; t++) s += lp[t * V + c.ids[t + 1]];
          assert.ok(Math.abs(r.loss - (-s / (T - 1) / Math.log(2))) < 1e-9, `${r.loss}`);
          assert.ok(Math.abs(r.loss - c.loss) < 1e-4);
        }
        const row = Array.from(lp.subarray((T - 1) * V, T * V));
        const order = row.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, 5);
        assert.deepEqual(r.next.map((x) => x.id), order.map((x) => x[1]));
        assert.deepEqual(r.next.map((x) => x.token), order.map((x) => lm.vocab[x[1]]));
        assert.deepEqual(r.next.map((x) => x.char), order.map((x) => lm.vocab[x[1]]));
        for (let k = 0; k < 5; k++) assert.equal(r.next[k].p, Math.exp(order[k][0]));
      }
      // two characters: the loss of the one prediction
      const two = lm.run('th');
      assert.equal(two.loss, -two.logProbs.data[8] / Math.LN2);
      // the context is the longest text; one character more is refused
      const full = 'the rain in the sea is on the sea'.slice(0, C);
      assert.equal(lm.run(full).ids.length, C);
      throwsExactly(() => lm.run(full + 'e'), 'INVALID_ARGUMENT', `run: text must have 1 to ${C} characters (the model's context), got ${C + 1}`);
      throwsExactly(() => lm.run(''), 'INVALID_ARGUMENT', `run: text must have 1 to ${C} characters (the model's context), got 0`);
      // an array is read as token ids (a model without a tokenizer takes them): 't' is not an id
      throwsExactly(() => lm.run(['t']), 'INVALID_ARGUMENT', 'run: token id 0 must be an integer in [0, 11], got "t"');
      throwsExactly(() => lm.run({}), 'INVALID_ARGUMENT', 'run: text must be a string or an array of token ids, got object');
    });
  }
});

test('ablate: checked pair by pair naming the value; null, undefined and [] switch nothing off; the last layer and head are valid', async () => {
  const g = read('default');
  await withModel(bytesOf('default'), (lm) => {
    const c = g.cases.find((k) => k.ablate.length);
    const plain = lm.run(c.text).logProbs.data;
    for (const opts of [{ ablate: null }, { ablate: undefined }, { ablate: [] }, null, undefined]) {
      assert.deepEqual(lm.run(c.text, opts).logProbs.data, plain, JSON.stringify(opts));
    }
    const abl = lm.run(c.text, { ablate: c.ablate });
    assert.ok(maxDiff(abl.logProbs.data, c.logProbs.flat()) < 2e-4);
    assert.ok(Math.abs(abl.loss - c.loss) < 1e-4);
    // each pair switches exactly its head off: [1, 3] alone differs from [0, 3] and [1, 0]
    const loss = (ablate) => lm.run(c.text, { ablate }).loss;
    const l13 = loss([[1, 3]]), l03 = loss([[0, 3]]), l10 = loss([[1, 0]]), l00 = loss([[0, 0]]);
    assert.equal(new Set([l13, l03, l10, l00, lm.run(c.text).loss]).size, 5);
    assert.equal(loss([[1, 3], [1, 3]]), l13);
    const err = (what, m) => `${what}: ${m}`;
    for (const what of ['run', 'generator']) {
      const call = (ablate) => (what === 'run' ? lm.run('the', { ablate }) : lm.generator('the', { ablate }));
      throwsExactly(() => call('0,1'), 'INVALID_ARGUMENT', err(what, 'ablate must be an array of [layer, head] pairs, got string'));
      throwsExactly(() => call({}), 'INVALID_ARGUMENT', err(what, 'ablate must be an array of [layer, head] pairs, got object'));
      throwsExactly(() => call([[0, 1, 2]]), 'INVALID_ARGUMENT', err(what, 'ablate entries must be [layer, head] pairs, got [0,1,2]'));
      throwsExactly(() => call([[0]]), 'INVALID_ARGUMENT', err(what, 'ablate entries must be [layer, head] pairs, got [0]'));
      throwsExactly(() => call([1]), 'INVALID_ARGUMENT', err(what, 'ablate entries must be [layer, head] pairs, got 1'));
      throwsExactly(() => call([[2, 0]]), 'INVALID_ARGUMENT', err(what, 'ablate layer must be an integer in [0, 1], got 2'));
      throwsExactly(() => call([[-1, 0]]), 'INVALID_ARGUMENT', err(what, 'ablate layer must be an integer in [0, 1], got -1'));
      throwsExactly(() => call([[0.5, 0]]), 'INVALID_ARGUMENT', err(what, 'ablate layer must be an integer in [0, 1], got 0.5'));
      throwsExactly(() => call([[0, 4]]), 'INVALID_ARGUMENT', err(what, 'ablate head must be an integer in [0, 3], got 4'));
      throwsExactly(() => call([[0, -1]]), 'INVALID_ARGUMENT', err(what, 'ablate head must be an integer in [0, 3], got -1'));
      throwsExactly(() => call([[0, '1']]), 'INVALID_ARGUMENT', err(what, 'ablate head must be an integer in [0, 3], got "1"'));
    }
    // generator with an ablation: its greedy steps are run()'s argmax with the same heads off
    const gen = lm.generator('the r', { temperature: 0, ablate: [[1, 3], [0, 0]] });
    let text = 'the r';
    for (let i = 0; i < 4; i++) {
      const s = gen.step();
      assert.equal(s.id, lm.run(text, { ablate: [[1, 3], [0, 0]] }).next[0].id);
      text += s.char;
    }
    gen.dispose();
  });
});

/** The sampler of model.js written again: weights exp(logp / T), the first index whose running sum passes u·Σ. */

// The teaching logic of <mha-gqa-story> (web/lib/components/logic/gqa-story.js), in Node: the
// sentence to write twice, bits per token of each copy against −log₂ p read off the model's output,
// a Llama model's weights counted from its config against the tensors of the shipped stories260K
// file, the induction yardstick on a text whose targets are known by hand, every head of stories260K
// labelled, and the sentences made from them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, parseSafetensors } from '../web/lib/src/index.js';
import {
  storySentence, copyBitsPerToken, describeHeads, explainCopying, evenInduction, llamaParameters, measureRepeat,
  measureCopyList, labelHeads, showPiece, COPY_LIST,
} from '../web/lib/components/logic/gqa-story.js';
import { scoreText } from '../web/lib/src/lm/heads.js';

const FILE = new URL('../web/lib/models/stories260K.safetensors', import.meta.url);
const mha = await createMHA();
const lm = await mha.loadModel(new Uint8Array(fs.readFileSync(FILE)));

test('storySentence: the first whole sentence the model wrote after the prompt, else the first, else the text', () => {
  assert.equal(storySentence('Once upon a time. Tom ran. He fell.', 17), 'Tom ran.');
  assert.equal(storySentence('Once upon a time there was a cat. She sat.', 16), 'She sat.');
  assert.equal(storySentence('Once upon a time there was a cat.', 16), 'Once upon a time there was a cat.');
  assert.equal(storySentence('  no end here ', 0), 'no end here');
  assert.equal(showPiece(' cat'), '␣cat');
  assert.equal(showPiece('<0x0A>'), '↵');
});

test('llamaParameters counts stories260K\'s 260,032 weights: the sum of the file\'s tensor sizes', () => {
  const parsed = parseSafetensors(new Uint8Array(fs.readFileSync(FILE)));
  const inFile = Object.values(parsed.tensors).reduce((a, t) => a + t.data.length, 0);
  assert.equal(llamaParameters(lm.config), 260032);
  assert.equal(llamaParameters(lm.config), inFile);
  // untied: the output layer adds V · d_model
  assert.equal(llamaParameters({ ...lm.config, tied: false }), 260032 + 512 * 64);
});

test('copyBitsPerToken and measureRepeat: each copy\'s mean −log₂ p of its next tokens, from the model\'s output', () => {
  const s = 'Tom had a red ball.';
  const m = measureRepeat(lm, s, []);
  const ids = lm.encode(`${s} ${s}`);
  const n = lm.encode(s).length - 1;
  const r = lm.run(`${s} ${s}`);
  assert.deepEqual(Array.from(r.ids), Array.from(ids));
  const V = lm.config.vocabSize;
  // independent: probabilities by softmax of nothing but the stored log-probs, summed per copy in base 2
  const bits = (t) => -Math.log2(Math.exp(r.logProbs.data[t * V + ids[t + 1]]));
  let a = 0, b = 0;
  for (let t = 1; t < n; t++) a += bits(t);
  for (let t = n + 1; t < ids.length - 1; t++) b += bits(t);
  assert.equal(m.tokens, n);
  assert.ok(Math.abs(m.first - a / (n - 1)) < 1e-4, `${m.first} vs ${a / (n - 1)}`);
  assert.ok(Math.abs(m.second - b / (ids.length - 2 - n)) < 1e-4);
  assert.ok(m.second < m.first, 'the second copy is cheaper');
  assert.equal(m.scores.length, 40);
  const direct = copyBitsPerToken(r, n, V);
  assert.equal(direct.first, m.first);
  // too long to write twice in the context: NaN bits, no scores
  const long = measureRepeat(lm, 'Tom ran. '.repeat(80).trim(), []);
  assert.ok(long.tokens * 2 + 1 > lm.config.context, `${long.tokens}`);
  assert.ok(Number.isNaN(long.first) && long.scores === null);
});

test('evenInduction on a text whose induction targets are known by hand', () => {
  // 1 2 3 4 5 1 2 3 4 5: queries 8 and 9 end a 4-token span seen before, with one target each
  assert.ok(Math.abs(evenInduction([1, 2, 3, 4, 5, 1, 2, 3, 4, 5]) - (1 / 9 + 1 / 10) / 2) < 1e-12);
  assert.equal(evenInduction([1, 2, 3, 4, 5, 6]), null);
});

test('stories260K: the list test, every head labelled, the sentences made from them', () => {
  const copy = measureCopyList(lm, []);
  assert.equal(copy.list, COPY_LIST);
  assert.ok(copy.second < copy.first, `${copy.first} → ${copy.second}`);
  assert.ok(copy.best && copy.best.induction > copy.even, 'some head attends to the earlier copy more than evenly');
  // ablating every head of layer 1 changes the measurement
  const off = measureCopyList(lm, Array.from({ length: 8 }, (_, j) => [0, j]));
  assert.notEqual(off.first, copy.first);
  const story = 'Once upon a time, there was a little girl named Lily. She liked to play.';
  const r = lm.run(story);
  const rep = measureRepeat(lm, 'She liked to play.', []);
  const heads = labelHeads(scoreText(r.attention, r.ids), rep.scores, 2);
  assert.equal(heads.length, 40);
  assert.deepEqual(heads.slice(0, 8).map((h) => h.kvHead), [0, 0, 1, 1, 2, 2, 3, 3]);
  assert.ok(heads.every((h) => h.scores.induction !== null));
  const lines = describeHeads(heads, rep, 2);
  const counts = [...lines[0].matchAll(/(\d+) (previous-token|two-back|current-token|first-token|induction|broad|mixed)/g)];
  assert.equal(counts.reduce((a, m) => a + Number(m[1]), 0), 40, lines[0]);
  assert.match(lines.at(-1), /^In \d+ of the 20 groups, the 2 query heads that share one K\/V head got the same label/);
  assert.ok(lines.some((l) => l.startsWith(`Written twice, the sentence costs the model ${rep.first.toFixed(2)} bits per token`)));
  const why = explainCopying(heads, copy, lm.config, rep).join(' ');
  assert.ok(why.includes(`It costs ${copy.second.toFixed(2)} bits per token`), why);
  assert.ok(why.includes('260,032 parameters'));
});

test('describeHeads on hand-made heads: counts, the strongest of a type, no induction span', () => {
  const h = (layer, head, type, s) => ({ layer, head, kvHead: head, type, scores: { previous: 0, twoBack: 0, current: 0, first: 0, entropy: 0.5, induction: null, ...s } });
  const heads = [h(0, 0, 'previous-token', { previous: 0.9 }), h(0, 1, 'previous-token', { previous: 0.95 }), h(1, 0, 'broad', { entropy: 0.8 })];
  const lines = describeHeads(heads, null, 1);
  assert.deepEqual(lines, [
    'Measured on this story and sentence, the 3 heads are 2 previous-token and 1 broad.',
    'The strongest previous-token head is L1 · head 2: 0.95 of its attention is on the token just before the query.',
    'The repeated sentence has no span of 4 tokens written twice, so no induction score could be measured.',
  ]);
});

// lm/tokenizers.js: the one tokenizer object of a loaded model from what a reader gives: none for
// characters, llama2.c's byte-pair tokenizer (tok512.bin: its published ids), a Hugging Face
// tokenizer adapted so that ids beyond its vocabulary show as `<id>`, and an ids-only tokenizer
// whose encode refuses text with the reader's reason.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { tokenizerOf, idsOnlyTokenizer, hfTokenizerAdapter } from '../web/lib/src/lm/tokenizers.js';
import { Llama2cTokenizer } from '../web/lib/src/lm/bpe.js';
import { readLlama2cTokenizer } from '../web/lib/src/formats/llama2c.js';
import { hfTokenizer } from '../web/lib/src/formats/hf-tokenizer.js';
import { MHAError } from '../web/lib/src/engine/errors.js';

test('characters: no tokenizer object; llama2c: the byte-pair tokenizer of its pieces and scores', () => {
  assert.equal(tokenizerOf({ type: 'characters' }), null);
  const tok512 = readLlama2cTokenizer(fs.readFileSync(new URL('./fixtures/stories260K/tok512.bin', import.meta.url)), { vocabSize: 512 });
  const t = tokenizerOf({ type: 'llama2c', ...tok512 });
  assert.ok(t instanceof Llama2cTokenizer);
  assert.deepEqual(Array.from(t.encode('Once upon a time')), [1, 403, 407, 261, 378]);   // llama2.c's published ids
  assert.throws(() => tokenizerOf({ type: 'llama2c', pieces: tok512.pieces, scores: new Float32Array(3) }), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT');
});

test('none: ids in and out, each token shown as <id>, text refused with the reason', () => {
  for (const t of [tokenizerOf({ type: 'none', why: 'the model folder has no tokenizer.json' }), idsOnlyTokenizer('the model folder has no tokenizer.json')]) {
    assert.equal(t.decode([3, 0, 12]), '<3><0><12>');
    assert.equal(t.decode(Int32Array.of(7)), '<7>');
    assert.equal(t.decode([]), '');
    assert.equal(t.piece(41), '<41>');
    assert.throws(() => t.encode('hi'), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT'
      && e.message === 'encode: the model folder has no tokenizer.json: give token ids (an array of integers) instead of text');
  }
});

test('hf: the tokenizer\'s ids and text; ids beyond its vocabulary shown as <id>, not refused', async () => {
  // a byte-level BPE of five tokens: "a", "b", their merge "ab", "Ġ" (a space) and <|endoftext|>
  const hf = await hfTokenizer({ vocabJson: { a: 0, b: 1, ab: 2, 'Ġ': 3, '<|endoftext|>': 4 }, mergesTxt: 'a b\n' });
  for (const t of [tokenizerOf({ type: 'hf', tokenizer: hf }), hfTokenizerAdapter(hf)]) {
    assert.deepEqual(t.encode('ab b'), [2, 3, 1]);
    assert.equal(t.decode([2, 3, 1]), 'ab b');
    assert.equal(t.decode(Uint32Array.of(1, 0)), 'ba', 'a typed array of ids');
    assert.equal(t.piece(3), ' ');
    assert.equal(t.piece(9), '<9>');
    assert.equal(t.decode([0, 9, 3, 1]), 'a<9> b', 'an id beyond the vocabulary among known ones');
    assert.throws(() => t.encode(5), (e) => e instanceof MHAError && e.message === 'encode: text must be a string, got number 5');
  }
});

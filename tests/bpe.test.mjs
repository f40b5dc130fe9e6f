// llama2.c's byte-pair tokenizer (web/lib/src/lm/bpe.js) value by value on toy vocabularies, without
// the model files: the UTF-8 bytes of each range of code points (the byte fallback ids written out
// from RFC 3629), the surrogate range, the constructor's refusals, the merge rule (highest score,
// leftmost on ties, nothing at or below −1e10, merges next to a merge), decode's dummy-prefix and
// byte pieces, and piece(). tests/llama2c.test.mjs checks the real tok512.bin against llama2.c.
// Written for the mutation testing of bpe.js (stryker.config.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { Llama2cTokenizer, UNK, BOS, EOS, BYTE_OFFSET } from '../web/lib/src/lm/bpe.js';
import { throwsInvalid } from './helpers/exact-error.mjs';

const enc = new TextEncoder();
const BYTES = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);

/** A tokenizer of the specials, the 256 byte pieces and `extra` {piece: score} (pieces as text). */
function toy(extra, { specials = ['<unk>', '\n<s>\n', '\n</s>\n'] } = {}) {
  const names = [...specials, ...BYTES, ...Object.keys(extra)];
  const t = new Llama2cTokenizer({ pieces: names.map((n) => enc.encode(n)), scores: names.map((n, i) => (i < 259 ? 0 : extra[n])) });
  return { t, id: (n) => names.indexOf(n, 259) };
}


test('the special ids', () => {
  assert.deepEqual([UNK, BOS, EOS, BYTE_OFFSET], [0, 1, 2, 3]);
});

test('encode: characters without a piece become their UTF-8 bytes (ids byte + 3) at every length boundary; decode gives them back', () => {
  const { t, id } = toy({ ' ': -1 });
  for (const cp of [0x00, 0x41, 0x7f, 0x80, 0xff, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f999, 0x10ffff]) {
    const ch = String.fromCodePoint(cp);
    const bytes = Array.from(enc.encode(ch));
    const want = [BOS, id(' '), ...bytes.map((b) => b + BYTE_OFFSET)];
    assert.deepEqual(t.encode(ch), want, `U+${cp.toString(16)}`);
    assert.equal(t.decode(want), ch, `U+${cp.toString(16)}`);
    // one byte per char of the byte string: the fallback ids are exactly the UTF-8 bytes
    assert.equal(bytes.length, cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
  }
  // a piece for a multi-byte character is found as its byte string
  const { t: t2, id: id2 } = toy({ ' ': -1, 'é': -2, '日': -3, '🦙': -4 });
  assert.deepEqual(t2.encode('é日🦙x', { bos: false }), [id2(' '), id2('é'), id2('日'), id2('🦙'), 'x'.charCodeAt(0) + 3]);
  assert.equal(t2.decode(t2.encode('é日🦙x')), 'é日🦙x');
});

test('encode: a lone surrogate is refused with its code point and UTF-16 index; the neighbours of the range are accepted', () => {
  const { t } = toy({ ' ': -1 });
  throwsInvalid(() => t.encode('a\uD800'), 'encode: text must be well-formed UTF-16, got a lone surrogate U+D800 at index 1');
  throwsInvalid(() => t.encode('🦙\uDFFF'), 'encode: text must be well-formed UTF-16, got a lone surrogate U+DFFF at index 2');
  throwsInvalid(() => t.encode('ab\uDBFFc'), 'encode: text must be well-formed UTF-16, got a lone surrogate U+DBFF at index 2');
  assert.equal(t.decode(t.encode('\uD7FF\uE000')), '\uD7FF\uE000');
  throwsInvalid(() => t.encode(null), 'encode: text must be a string, got null');
  throwsInvalid(() => t.encode(['a']), 'encode: text must be a string, got object');
});

test('encode: BOS and EOS options; the dummy prefix only before a non-empty text', () => {
  const { t, id } = toy({ ' ': -1 });
  const a = 'a'.charCodeAt(0) + 3;
  assert.deepEqual(t.encode('a'), [BOS, id(' '), a]);
  assert.deepEqual(t.encode('a', {}), [BOS, id(' '), a]);
  assert.deepEqual(t.encode('a', { bos: false }), [id(' '), a]);
  assert.deepEqual(t.encode('a', { eos: true }), [BOS, id(' '), a, EOS]);
  assert.deepEqual(t.encode('', { bos: false, eos: true }), [EOS]);
  assert.deepEqual(t.encode('', { bos: false }), []);
  assert.deepEqual(t.encode(''), [BOS]);
});

test('merges: highest score first, leftmost on ties, again next to each merge, and never a pair scored at or below −1e10', () => {
  const { t, id } = toy({ ' ': -1, a: -1, b: -1, c: -1, ab: -5, bc: -2, abc: -1, ' a': -9 });
  // bc (−2) beats ab (−5): a, bc; then a+bc = abc (−1) next to the merge; then ' '+abc is no piece
  assert.deepEqual(t.encode('abc', { bos: false }), [id(' '), id('abc')]);
  // ties: leftmost
  const { t: t2, id: id2 } = toy({ ' ': -1, x: 0, xx: -3, xxxx: -100 });
  assert.deepEqual(t2.encode('xxx', { bos: false }), [id2(' '), id2('xx'), id2('x')]);
  // after the left merge the right pair is re-formed: xx + xx = xxxx
  assert.deepEqual(t2.encode('xxxx', { bos: false }), [id2(' '), id2('xxxx')]);
  // the merged pair on the left of a merge: " " + "a" is formed only after "a" stays alone
  const { t: t3, id: id3 } = toy({ ' ': -1, p: 0, q: 0, pq: -1, ' pq': -2 });
  assert.deepEqual(t3.encode('pq', { bos: false }), [id3(' pq')]);
  // scores at −1e10 never merge (llama2.c starts its best score there); just above, they do
  const { t: t4, id: id4 } = toy({ ' ': -1, m: 0, n: 0, mn: -1e10 });
  assert.deepEqual(t4.encode('mn', { bos: false }), [id4(' '), id4('m'), id4('n')]);
  const { t: t5, id: id5 } = toy({ ' ': -1, m: 0, n: 0, mn: -1e10 + 1 });
  assert.deepEqual(t5.encode('mn', { bos: false }), [id5(' '), id5('mn')]);
  // a merge at the end of the text: the pair on its left is re-formed
  const { t: t6, id: id6 } = toy({ ' ': -1, u: 0, v: 0, w: 0, vw: -1, uvw: -2 });
  assert.deepEqual(t6.encode('uvw', { bos: false }), [id6(' '), id6('uvw')]);
});

test('constructor: refusals name the argument and the value; a repeated piece maps to its first id', () => {
  const pieces = [...['<unk>', '<s>', '</s>'], ...BYTES, ' '].map((n) => enc.encode(n));
  const scores = new Array(pieces.length).fill(0);
  throwsInvalid(() => new Llama2cTokenizer(), 'Llama2cTokenizer: pieces must be an array of Uint8Array');
  throwsInvalid(() => new Llama2cTokenizer({ pieces: 'abc', scores }), 'Llama2cTokenizer: pieces must be an array of Uint8Array');
  throwsInvalid(() => new Llama2cTokenizer({ pieces: [...pieces.slice(1), [32]], scores }), 'Llama2cTokenizer: pieces must be an array of Uint8Array');
  throwsInvalid(() => new Llama2cTokenizer({ pieces: pieces.slice(0, 258), scores }), 'Llama2cTokenizer: pieces must hold at least 259 tokens (3 specials, 256 bytes), got 258');
  throwsInvalid(() => new Llama2cTokenizer({ pieces }), 'Llama2cTokenizer: scores must have 260 entries (one per piece), got undefined');
  throwsInvalid(() => new Llama2cTokenizer({ pieces, scores: scores.slice(1) }), 'Llama2cTokenizer: scores must have 260 entries (one per piece), got 259');
  throwsInvalid(() => new Llama2cTokenizer({ pieces, scores: [...scores.slice(1), NaN] }), 'Llama2cTokenizer: scores[259] must be finite, got NaN');
  throwsInvalid(() => new Llama2cTokenizer({ pieces, scores: [Infinity, ...scores.slice(1)] }), 'Llama2cTokenizer: scores[0] must be finite, got Infinity');
  throwsInvalid(() => new Llama2cTokenizer({ pieces: pieces.slice(0, 259), scores: scores.slice(0, 259) }), 'Llama2cTokenizer: pieces must include " " (the dummy prefix), got none');
  // 259 pieces suffice when one of them is " "
  const withSpace = pieces.slice(0, 259);
  withSpace[0] = enc.encode(' ');
  const t = new Llama2cTokenizer({ pieces: withSpace, scores: Float32Array.from(scores.slice(0, 259)) });
  assert.equal(t.vocabSize, 259);
  assert.deepEqual(t.encode('A'), [BOS, 0, 0x41 + 3]);
  assert.ok(t.scores instanceof Float64Array);
  // a piece listed twice: the first id
  const twice = [...pieces, enc.encode('ok'), enc.encode('ok')];
  const t2 = new Llama2cTokenizer({ pieces: twice, scores: [...scores, 0, 0] });
  assert.equal(t2.ids.get('ok'), 260);
  assert.equal(t2.ids.get(' '), 259);
  assert.deepEqual(t2.pieces.slice(258, 262), ['<0xFF>', ' ', 'ok', 'ok']);
});

test('decode: the piece after BOS loses one leading space; byte pieces are bytes; specials are nothing; bad ids are named', () => {
  const { t, id } = toy({ ' ': -1, ' on': -1, '  two': -1, 'x<0x41>': -1, ab: -1 });
  assert.equal(t.decode([BOS, id(' on'), id(' on')]), 'on on');
  assert.equal(t.decode([id(' on')]), ' on');
  assert.equal(t.decode([BOS, id('  two')]), ' two');
  assert.equal(t.decode([BOS, id('ab')]), 'ab');
  assert.equal(t.decode([EOS, id(' on')]), ' on', 'only after BOS');
  assert.equal(t.decode([UNK, BOS, EOS]), '');
  // a byte piece decodes to its byte, also after BOS; a piece merely containing "<0x41>" stays text
  assert.equal(t.decode([BOS, 0x41 + 3]), 'A');
  assert.equal(t.decode([BOS, 0x20 + 3, 0x20 + 3]), '  ');
  assert.equal(t.decode([id('x<0x41>')]), 'x<0x41>');
  const { t: t2, id: id2 } = toy({ ' ': -1, '<0x41>x': -1 });
  assert.equal(t2.decode([id2('<0x41>x')]), '<0x41>x', 'a byte piece is the whole piece');
  // a character cut in half: U+FFFD; its two halves together: the character
  const e = Array.from(enc.encode('é'), (b) => b + 3);
  assert.equal(t.decode([e[0]]), '\ufffd');
  assert.equal(t.decode(Int32Array.from(e)), 'é');
  throwsInvalid(() => t.decode(null), 'decode: ids must be an array of token ids, got null');
  throwsInvalid(() => t.decode(7), 'decode: ids must be an array of token ids, got number');
  throwsInvalid(() => t.decode({ length: '2' }), 'decode: ids must be an array of token ids, got object');
  throwsInvalid(() => t.decode([1, -1]), `decode: ids[1] must be an integer in 0..${t.vocabSize - 1}, got -1`);
  throwsInvalid(() => t.decode([t.vocabSize]), `decode: ids[0] must be an integer in 0..${t.vocabSize - 1}, got ${t.vocabSize}`);
  assert.equal(t.decode([t.vocabSize - 1]), 'ab');
});

test('piece: UTF-8 text of a token, specials trimmed, byte pieces as written; bad ids named', () => {
  const { t, id } = toy({ ' ': -1, ' x ': -1, 'é': -1 });
  assert.deepEqual([0, 1, 2].map((i) => t.piece(i)), ['<unk>', '<s>', '</s>']);
  assert.equal(t.piece(3), '<0x00>');
  assert.equal(t.piece(id(' x ')), ' x ', 'only the specials are trimmed');
  assert.equal(t.piece(id('é')), 'é');
  assert.equal(t.piece(t.vocabSize - 1), 'é');
  throwsInvalid(() => t.piece(t.vocabSize), `piece: id must be an integer in 0..${t.vocabSize - 1}, got ${t.vocabSize}`);
  throwsInvalid(() => t.piece(-1), `piece: id must be an integer in 0..${t.vocabSize - 1}, got -1`);
  throwsInvalid(() => t.piece(0.5), `piece: id must be an integer in 0..${t.vocabSize - 1}, got 0.5`);
  // specials with inner spaces keep them
  const { t: t2 } = toy({ ' ': -1 }, { specials: [' <u n k> ', '<s>', '</s>'] });
  assert.equal(t2.piece(0), '<u n k>');
});

// formats/hf-tokenizer.js on small files written here (fast: no 50 000-token vocabulary): the exact
// message of each refusal (the file, the field, the limit and what was given), each limit's last
// accepted value, GPT-2's merges.txt lines, tokenizer_config.json's bos/eos/specials, what `kind`,
// `piece` and `decode` give on a four-token byte-level BPE whose ids are worked out by hand, and
// the Llama-style tokenizer.json of tests/fixtures/stories260K/tok512.bin.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { hfTokenizer, gpt2TokenizerJson, MAX_FILE_CHARS, MAX_PIECE_CHARS, MAX_VOCAB } from '../web/lib/src/formats/hf-tokenizer.js';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { readLlama2cTokenizer } from '../web/lib/src/formats/llama2c.js';
import { llama2cTokenizerJson } from '../scripts/models/llama2c-tokenizer-json.mjs';

const tok512 = readLlama2cTokenizer(fs.readFileSync(new URL('./fixtures/stories260K/tok512.bin', import.meta.url)), { vocabSize: 512 });
const LLAMA = JSON.stringify(llama2cTokenizerJson(tok512));
/** The Llama-style tokenizer.json with `edit` applied to a copy. */
const llama = (edit) => { const t = JSON.parse(LLAMA); edit(t); return { tokenizerJson: t }; };
/** A four-token GPT-2 vocabulary: "a", "b", their merge "ab", "Ġ" (the byte-level space) and <|endoftext|>. */
const VOCAB = { a: 0, b: 1, ab: 2, 'Ġ': 3, '<|endoftext|>': 4 };
const MERGES = '#version: 0.2\na b\n';

/** Asserts hfTokenizer(files) rejects with an INVALID_ARGUMENT MHAError whose message is exactly `message`. */
async function refused(files, message) {
  await assert.rejects(hfTokenizer(files), (e) => {
    assert.ok(e instanceof MHAError, `expected an MHAError, got ${e?.name}: ${e?.message}`);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.equal(e.message, message);
    return true;
  });
}

test('a byte-level BPE of four tokens: ids, pieces, decode, bos/eos and the checks of decode\'s ids', async () => {
  const tok = await hfTokenizer({ vocabJson: VOCAB, mergesTxt: MERGES });
  assert.equal(tok.kind, 'byte-level');
  assert.equal(tok.vocabSize, 5);
  assert.deepEqual([tok.bos, tok.eos], [4, 4]);
  assert.deepEqual(tok.encode('ab'), [2]);
  assert.deepEqual(tok.encode('ba b'), [1, 0, 3, 1]);
  assert.deepEqual(tok.encode('abab', { addSpecialTokens: false }), [2, 2]);
  assert.equal(tok.decode([2, 3, 1, 4]), 'ab b');
  assert.equal(tok.decode([]), '');
  assert.equal(tok.decode(Int32Array.of(1, 0)), 'ba');
  assert.deepEqual([0, 1, 2, 3, 4].map((i) => tok.piece(i)), ['a', 'b', 'ab', ' ', '<|endoftext|>']);
  const bad = (ids, message) => assert.throws(() => tok.decode(ids), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === message);
  bad([0, 5], 'decode: ids[1] must be a token id of this vocabulary (an integer in 0..4 that names a token), got 5');
  bad([-1], 'decode: ids[0] must be a token id of this vocabulary (an integer in 0..4 that names a token), got -1');
  bad([1.5], 'decode: ids[0] must be a token id of this vocabulary (an integer in 0..4 that names a token), got 1.5');
  bad(null, 'decode: ids must be an array of token ids, got null');
  bad('ab', 'decode: ids must be an array of token ids, got a string of 2 characters');
  bad({ length: '1' }, 'decode: ids must be an array of token ids, got an object');
  assert.throws(() => tok.piece(5), { message: 'decode: ids[0] must be a token id of this vocabulary (an integer in 0..4 that names a token), got 5' });
  assert.throws(() => tok.encode(5), { message: 'encode: text must be a string, got number 5' });
  assert.throws(() => tok.encode(null), { message: 'encode: text must be a string, got null' });
  // a vocabulary with a gap: an id below vocabSize that names no token is refused too
  const gap = await hfTokenizer({ vocabJson: { a: 0, b: 2 }, mergesTxt: '' });
  assert.equal(gap.vocabSize, 3);
  assert.throws(() => gap.decode([1]), { message: 'decode: ids[0] must be a token id of this vocabulary (an integer in 0..2 that names a token), got 1' });
  assert.deepEqual([gap.bos, gap.eos], [undefined, undefined]);
});

test('GPT-2\'s pair: the tokenizer.json it means; merges.txt lines (version line, CRLF, blanks) and their refusals', () => {
  const tj = gpt2TokenizerJson(VOCAB, '#version: 0.2\r\na b\r\n\r\nab Ġ\n');
  assert.deepEqual(tj.model.merges, ['a b', 'ab Ġ']);
  assert.deepEqual(tj.added_tokens, [{ id: 4, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }]);
  assert.deepEqual(gpt2TokenizerJson({ a: 0 }, '').added_tokens, []);
  assert.deepEqual([tj.model.type, tj.model.unk_token, tj.model.byte_fallback, tj.pre_tokenizer.type, tj.pre_tokenizer.add_prefix_space, tj.decoder.type],
    ['BPE', null, false, 'ByteLevel', false, 'ByteLevel']);
  assert.deepEqual(gpt2TokenizerJson(VOCAB, 'a b\n#version x\n').model.merges, ['a b', '#version x'], 'a version line is skipped only as the first line');
  const refusedSync = (fn, message) => assert.throws(fn, (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === message);
  refusedSync(() => gpt2TokenizerJson(VOCAB, 'a b\na b c\n'), 'merges.txt: line 2 must be two tokens separated by one space, got "a b c"');
  refusedSync(() => gpt2TokenizerJson(VOCAB, '#version: 0.2\nab\r\n'), 'merges.txt: line 2 must be two tokens separated by one space, got "ab"');
  refusedSync(() => gpt2TokenizerJson(VOCAB, 'a b\n a\n'), 'merges.txt: line 2 must be two tokens separated by one space, got " a"');
  refusedSync(() => gpt2TokenizerJson(VOCAB, 'a \n'), 'merges.txt: line 1 must be two tokens separated by one space, got "a "');
  refusedSync(() => gpt2TokenizerJson(VOCAB, `${'x'.repeat(50)}\n`), `merges.txt: line 1 must be two tokens separated by one space, got "${'x'.repeat(40)}…"`);
  refusedSync(() => gpt2TokenizerJson([], ''), 'vocab.json: vocabulary must be an object {token: id}, got an array of 0');
});

test('tokenizer_config.json: bos/eos by name or {content}, else the common names; additional_special_tokens', async () => {
  const named = await hfTokenizer({ tokenizerJson: LLAMA, tokenizerConfig: { bos_token: '</s>', eos_token: { content: '<s>' } } });
  assert.deepEqual([named.bos, named.eos], [2, 1]);
  const fallback = await hfTokenizer({ tokenizerJson: LLAMA, tokenizerConfig: '{"bos_token": 7, "eos_token": {"content": 3}}' });
  assert.deepEqual([fallback.bos, fallback.eos], [1, 2]);
  const unknown = await hfTokenizer({ tokenizerJson: LLAMA, tokenizerConfig: new TextEncoder().encode('{"bos_token": "<nope>"}') });
  assert.deepEqual([unknown.bos, unknown.eos], [1, 2], 'a name not in the vocabulary: the common names');
  const extra = await hfTokenizer({ tokenizerJson: LLAMA, tokenizerConfig: { additional_special_tokens: ['<0x0A>'] } });
  assert.equal(extra.piece(13), '<0x0A>');
  await refused({ tokenizerJson: LLAMA, tokenizerConfig: '[1]' }, 'tokenizer_config.json: must be a JSON object, got an array of 1');
  await refused({ tokenizerJson: LLAMA, tokenizerConfig: '{"additional_special_tokens": ["a", 3]}' }, 'tokenizer_config.json: additional_special_tokens must be an array of strings, got an array of 2');
  await refused({ tokenizerJson: LLAMA, tokenizerConfig: { additional_special_tokens: 'a' } }, 'tokenizer_config.json: additional_special_tokens must be an array of strings, got a string of 1 characters');
  await refused({ tokenizerJson: LLAMA, tokenizerConfig: { additional_special_tokens: Array(65537).fill('a') } }, 'tokenizer_config.json: additional_special_tokens must be an array of strings, got an array of 65537');
  assert.equal((await hfTokenizer({ tokenizerJson: LLAMA, tokenizerConfig: { additional_special_tokens: [] } })).vocabSize, 512);
});

test('the Llama-style tokenizer.json: kind, pieces, and a tokenizer.json given as text, bytes, an ArrayBuffer or parsed', async () => {
  const bytes = new TextEncoder().encode(LLAMA);
  for (const tokenizerJson of [LLAMA, bytes, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), JSON.parse(LLAMA)]) {
    const t = await hfTokenizer({ tokenizerJson, vocabJson: 'ignored', mergesTxt: 'ignored' });
    assert.equal(t.kind, 'sentencepiece');
    assert.deepEqual(t.encode('Once upon a time'), [1, 403, 407, 261, 378]);
  }
  const t = await hfTokenizer({ tokenizerJson: LLAMA });
  assert.deepEqual([t.piece(403), t.piece(13), t.piece(1), t.piece(2), t.piece(0)], [' Once', '<0x0A>', '<s>', '</s>', '<unk>']);
  // without byte fallback nor a ByteLevel pre-tokenizer: 'bpe'
  assert.equal((await hfTokenizer(llama((j) => { j.model.byte_fallback = false; }))).kind, 'bpe');
  // a ByteLevel pre-tokenizer inside a Sequence: byte-level
  const seq = await hfTokenizer(llama((j) => { j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] }; }));
  assert.equal(seq.kind, 'byte-level');
  assert.equal((await hfTokenizer(llama((j) => { j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }] }; }))).kind, 'sentencepiece');
  // a decoded U+FEFF at the start of a byte run is kept (the library's default decoder drops it)
  assert.equal(t.decode(t.encode('\ufeffa')), '\ufeffa');
  const nested = await hfTokenizer(llama((j) => { j.decoder = { type: 'Sequence', decoders: [{ type: 'Sequence', decoders: j.decoder.decoders }] }; }));
  assert.equal(nested.decode(nested.encode('\ufeffa')), '\ufeffa');
});

test('refusals of tokenizer.json, each message exact', async () => {
  const F = 'tokenizer.json';
  const cases = [
    [llama((t) => { t.model = null; }), `${F}: model must be an object, got null`],
    [llama((t) => { t.model.type = 'WordPiece'; }), `${F}: model.type must be "BPE" (byte-level BPE as GPT-2, SentencePiece-style BPE as Llama), got a string of 9 characters "WordPiece"`],
    [llama((t) => { delete t.model.type; }), `${F}: model.type must be "BPE" (byte-level BPE as GPT-2, SentencePiece-style BPE as Llama), got undefined undefined`],
    [llama((t) => { t.model.vocab = { a: 0, ['b'.repeat(MAX_PIECE_CHARS + 1)]: 1 }; }), `${F}: model.vocab key must be a non-empty string of at most 4096 characters, got a string of 4097 characters`],
    [llama((t) => { t.model.vocab = { '': 0 }; }), `${F}: model.vocab key must be a non-empty string of at most 4096 characters, got a string of 0 characters`],
    [llama((t) => { t.model.vocab = { a: MAX_VOCAB }; }), `${F}: model.vocab["a"] must be a token id, an integer in 0..1048575, got number 1048576`],
    [llama((t) => { t.model.vocab = { ['k'.repeat(45)]: -1 }; }), `${F}: model.vocab["${'k'.repeat(40)}…"] must be a token id, an integer in 0..1048575, got number -1`],
    [llama((t) => { t.model.vocab = { a: 3, b: 3 }; }), `${F}: model.vocab["b"]: id 3 is given to two tokens`],
    [llama((t) => { t.model.merges = 'a b'; }), `${F}: model.merges must be an array of merges ("a b" or ["a", "b"]), got a string of 3 characters`],
    [llama((t) => { t.model.merges = ['a b', 'a  b']; }), `${F}: model.merges[1] must be two tokens separated by one space, got "a  b"`],
    [llama((t) => { t.model.merges = [' b']; }), `${F}: model.merges[0] must be two tokens separated by one space, got " b"`],
    [llama((t) => { t.model.merges = [`${'a'.repeat(MAX_PIECE_CHARS)} ${'b'.repeat(MAX_PIECE_CHARS)}`]; }), `${F}: model.merges[0] must be two tokens separated by one space, got "${'a'.repeat(40)}…"`],
    [llama((t) => { t.model.merges = [['a', 'b', 'c']]; }), `${F}: model.merges[0] must be "a b" or ["a", "b"], got an array of 3`],
    [llama((t) => { t.model.merges = [[7, 'b']]; }), `${F}: model.merges[0][0] must be a non-empty string of at most 4096 characters, got number 7`],
    [llama((t) => { t.model.continuing_subword_prefix = 'x'.repeat(MAX_PIECE_CHARS + 1); }), `${F}: model.continuing_subword_prefix must be a string or null, got a string of 4097 characters`],
    [llama((t) => { t.model.end_of_word_suffix = 1; }), `${F}: model.end_of_word_suffix must be a string or null, got number 1`],
    [llama((t) => { t.model.ignore_merges = 0; }), `${F}: model.ignore_merges must be a boolean, got number 0`],
    [llama((t) => { t.model.fuse_unk = 'true'; }), `${F}: model.fuse_unk must be a boolean, got a string of 4 characters`],
    [llama((t) => { t.model.dropout = false; }), `${F}: model.dropout must be null or 0 (deterministic BPE), got boolean false`],
    [llama((t) => { t.added_tokens = 'x'; }), `${F}: added_tokens must be an array, got a string of 1 characters`],
    [llama((t) => { t.added_tokens = Array(65537).fill(t.added_tokens[0]); }), `${F}: added_tokens must hold at most 65536 tokens, got 65537`],
    [llama((t) => { t.added_tokens[2] = [1]; }), `${F}: added_tokens[2] must be an object {id, content, …}, got an array of 1`],
    [llama((t) => { t.added_tokens[0].id = MAX_VOCAB; }), `${F}: added_tokens[0].id must be a token id, an integer in 0..1048575, got number 1048576`],
    [llama((t) => { t.added_tokens[0].rstrip = null; }), `${F}: added_tokens[0].rstrip must be a boolean, got null`],
    [llama((t) => { t.added_tokens[0].single_word = 'no'; }), `${F}: added_tokens[0].single_word must be a boolean, got a string of 2 characters`],
    [llama((t) => { t.normalizer = { type: 3 }; }), `${F}: normalizer.type must be a string, got number 3`],
    [llama((t) => { t.decoder = { type: 'Unigram' }; }), `${F}: decoder.type "Unigram" is not one Tokenizers.js implements (ByteLevel, WordPiece, Metaspace, BPEDecoder, CTC, Sequence, Replace, Fuse, Strip, ByteFallback)`],
    [llama((t) => { t.post_processor = { type: 'Replace' }; }), `${F}: post_processor.type "Replace" is not one Tokenizers.js implements (TemplateProcessing, ByteLevel, BertProcessing, RobertaProcessing, Sequence)`],
    [llama((t) => { t.pre_tokenizer = { type: 'Sequence', pretokenizers: Array(257).fill({ type: 'Digits' }) }; }), `${F}: pre_tokenizer.pretokenizers must be an array of at most 256 components, got an array of 257`],
    [llama((t) => { t.pre_tokenizer = { type: 'Sequence' }; }), `${F}: pre_tokenizer.pretokenizers must be an array of at most 256 components, got undefined undefined`],
    [llama((t) => { t.pre_tokenizer = { type: 'Digits', individual_digits: true, n: -4097 }; }), `${F}: pre_tokenizer.n must be a number of magnitude at most 4096, got -4097`],
    [llama((t) => { t.pre_tokenizer = { type: 'Digits', n: NaN }; }), `${F}: pre_tokenizer.n must be a number of magnitude at most 4096, got NaN`],
    [llama((t) => { t.pre_tokenizer = { type: 'FixedLength', length: 2.5 }; }), `${F}: pre_tokenizer.length must be an integer ≥ 1, got number 2.5`],
    [llama((t) => { t.pre_tokenizer = { type: 'Split', pattern: { String: ' ', Regex: ' ' } }; }), `${F}: pre_tokenizer.pattern must be {"String": "…"} or {"Regex": "…"}, got an object`],
    [llama((t) => { t.pre_tokenizer = { type: 'Split', pattern: { String: 3 } }; }), `${F}: pre_tokenizer.pattern must be {"String": "…"} or {"Regex": "…"}, got an object`],
    [llama((t) => { t.normalizer = { type: 'Replace', content: '' }; }), `${F}: normalizer.pattern must be {"String": "…"} or {"Regex": "…"}, got undefined undefined`],
    [llama((t) => { t.decoder = { type: 'Strip', pattern: 'x' }; }), `${F}: decoder.pattern must be {"String": "…"} or {"Regex": "…"}, got a string of 1 characters`],
    [{ tokenizerJson: true }, `${F}: must be the file's text, bytes or (JSON files) parsed object, got boolean true`],
    [{ tokenizerJson: '"just a string"' }, `${F}: must be a JSON object, got a string of 13 characters`],
  ];
  for (const [files, message] of cases) await refused(files, message);
  // accepted at the limits
  const ok = async (edit) => (await hfTokenizer(llama(edit))).vocabSize;
  assert.equal(await ok((t) => { t.pre_tokenizer = { type: 'Digits', individual_digits: true, n: -4096 }; }), 512);
  assert.equal(await ok((t) => { t.pre_tokenizer = { type: 'Sequence', pretokenizers: Array(256).fill({ type: 'Digits', individual_digits: false }) }; }), 512);
  assert.equal(await ok((t) => { t.model.dropout = 0; t.model.unk_token = null; t.model.ignore_merges = null; }), 512);
  assert.equal(await ok((t) => { t.added_tokens.push({ id: 600, content: '<extra>', special: true }); }), 601, 'vocabSize: the largest id of the added tokens too');
  assert.equal(await ok((t) => { t.model.vocab['x'.repeat(MAX_PIECE_CHARS)] = 700; }), 701);
  assert.equal(await ok((t) => { t.pre_tokenizer = { type: 'FixedLength', length: 1 }; }), 512);
  // a Sequence at depth 8 is accepted, at 9 refused
  const nest = (n) => (n === 0 ? { type: 'Fuse' } : { type: 'Sequence', decoders: [nest(n - 1)] });
  assert.equal(await ok((t) => { t.decoder = nest(8); }), 512);
  await refused(llama((t) => { t.decoder = nest(9); }), `${F}: decoder.decoders[0].decoders[0].decoders[0].decoders[0].decoders[0].decoders[0].decoders[0].decoders[0]: Sequence nested deeper than 8`);
  // sizes before decoding: a string over the limit, then bytes
  await refused({ tokenizerJson: ' '.repeat(MAX_FILE_CHARS + 1) }, `${F}: the file must be at most 67108864 characters, got 67108865`);
  await refused({ vocabJson: VOCAB, mergesTxt: new Uint8Array(MAX_FILE_CHARS + 1) }, 'merges.txt: the file must be at most 67108864 bytes, got 67108865');
  await refused({ vocabJson: VOCAB, mergesTxt: null }, 'hfTokenizer: give tokenizerJson (tokenizer.json) or vocabJson and mergesTxt (GPT-2\'s vocab.json and merges.txt)');
  await refused({ tokenizerJson: null, mergesTxt: MERGES }, 'hfTokenizer: give tokenizerJson (tokenizer.json) or vocabJson and mergesTxt (GPT-2\'s vocab.json and merges.txt)');
  // an error of the library while building: named with the file
  await assert.rejects(hfTokenizer(llama((t) => { t.pre_tokenizer = { type: 'Split', pattern: { Regex: '(' }, behavior: 'Isolated', invert: false }; })),
    (e) => e instanceof MHAError && e.message.startsWith(`${F}: Tokenizers.js could not build the tokenizer: `));
});

test('survivors of the mutation run: optional keys absent, the largest id wherever it stands, the limits\' last accepted values, quoting at 40 characters', async () => {
  const size = async (files) => (await hfTokenizer(files)).vocabSize;
  assert.equal(await size({ vocabJson: { a: 0 }, mergesTxt: '' }), 1);
  assert.equal(await size({ vocabJson: { b: 3, a: 0, c: 1 }, mergesTxt: '' }), 4, 'the largest id, not the last');
  assert.equal(await size(llama((t) => {
    for (const k of ['unk_token', 'continuing_subword_prefix', 'end_of_word_suffix', 'dropout', 'fuse_unk', 'ignore_merges']) delete t.model[k];
    delete t.added_tokens;
  })), 512, 'absent optional keys are accepted');
  assert.equal(await size(llama((t) => { t.model.unk_token = 'u'.repeat(MAX_PIECE_CHARS); })), 512);
  assert.equal(await size({ vocabJson: { a: 0, b: 1 }, mergesTxt: `${'a'.repeat(MAX_PIECE_CHARS)} ${'b'.repeat(MAX_PIECE_CHARS - 1)}\n` }), 2);
  await refused(llama((t) => { t.model.merges = ['a b c']; }), 'tokenizer.json: model.merges[0] must be two tokens separated by one space, got "a b c"');
  await refused(llama((t) => { t.model.merges = ['x'.repeat(40)]; }), `tokenizer.json: model.merges[0] must be two tokens separated by one space, got "${'x'.repeat(40)}"`);
  await refused(llama((t) => { t.added_tokens[0].lstrip = 1; }), 'tokenizer.json: added_tokens[0].lstrip must be a boolean, got number 1');
  await refused(llama((t) => { t.added_tokens[0].normalized = 'no'; }), 'tokenizer.json: added_tokens[0].normalized must be a boolean, got a string of 2 characters');
  await refused({ vocabJson: null, mergesTxt: 'a b\n' }, 'hfTokenizer: give tokenizerJson (tokenizer.json) or vocabJson and mergesTxt (GPT-2\'s vocab.json and merges.txt)');
  await refused({ vocabJson: { a: 0 } }, 'hfTokenizer: give tokenizerJson (tokenizer.json) or vocabJson and mergesTxt (GPT-2\'s vocab.json and merges.txt)');
  assert.equal(await size({ tokenizerJson: LLAMA, tokenizerConfig: null }), 512);
  await assert.rejects(hfTokenizer({ tokenizerJson: LLAMA, tokenizerConfig: '{' }), (e) => e instanceof MHAError && /^tokenizer_config\.json: not valid JSON \(.+\); truncated\?$/.test(e.message));
  const tok = await hfTokenizer({ tokenizerJson: LLAMA });
  assert.throws(() => tok.encode(BigInt('1'.repeat(50))), { message: `encode: text must be a string, got bigint ${'1'.repeat(40)}` });
});

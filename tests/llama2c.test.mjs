// stories260K (Karpathy's tinyllamas, llama2.c; tests/fixtures/stories260K) without the engine:
// the checkpoint and tokenizer readers (web/lib/src/formats/llama2c.js) with every bad-file case and a fuzz
// of the real files, and llama2.c's BPE tokenizer (web/lib/src/lm/bpe.js) against llama2.c's published
// ids, the Python port's ids in tests/golden-stories260k/cases.json, and a round-trip property.
// The model's numerics are checked against cases.json by the engine's suite once the core runs the
// Llama decoder; a JS float64 forward is not needed here (cases.json comes from an independent
// numpy forward whose greedy text matches llama2.c's README).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { readLlama2cCheckpoint, readLlama2cTokenizer, HEADER_FIELDS } from '../web/lib/src/formats/llama2c.js';
import { Llama2cTokenizer, BOS, EOS } from '../web/lib/src/lm/bpe.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// llama2.c's original files (with their README and LICENSE) in tests/fixtures/stories260K/, or $MHA_STORIES_DIR.
const MODEL_DIR = process.env.MHA_STORIES_DIR || path.join(here, 'fixtures/stories260K');
const modelBytes = new Uint8Array(fs.readFileSync(path.join(MODEL_DIR, 'stories260K.bin')));
const tokBytes = new Uint8Array(fs.readFileSync(path.join(MODEL_DIR, 'tok512.bin')));
const golden = JSON.parse(fs.readFileSync(new URL('./golden-stories260k/cases.json', import.meta.url), 'utf8'));
const tok = new Llama2cTokenizer(readLlama2cTokenizer(tokBytes, { vocabSize: 512 }));

/** Asserts fn throws MHAError INVALID_ARGUMENT whose message matches every pattern. */
function refuses(fn, patterns) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    for (const p of [].concat(patterns)) assert.match(e.message, p);
    return true;
  });
}

/** A copy of the checkpoint with header fields replaced ({dim: 60, ...}) and `length` bytes. */
function checkpoint(fields = {}, length = modelBytes.length) {
  const b = new Uint8Array(length);
  b.set(modelBytes.subarray(0, Math.min(length, modelBytes.length)));
  const dv = new DataView(b.buffer);
  for (const [k, v] of Object.entries(fields)) dv.setInt32(4 * HEADER_FIELDS.indexOf(k), v, true);
  return b;
}

/** A tokenizer file from [score, bytes] entries (lengths as given by `len` when set). */
function tokenizerFile(maxLen, entries) {
  const parts = [new Uint8Array(new Int32Array([maxLen]).buffer)];
  for (const { score, bytes, len } of entries) {
    const h = new DataView(new ArrayBuffer(8));
    h.setFloat32(0, score, true);
    h.setInt32(4, len ?? bytes.length, true);
    parts.push(new Uint8Array(h.buffer), bytes);
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

test('checkpoint: the header facts of stories260K and the shapes of every tensor', () => {
  const { config, tensors } = readLlama2cCheckpoint(modelBytes);
  assert.deepEqual(config, {
    vocab_size: 512, d_model: 64, num_heads: 8, num_layers: 5, d_ff: 172, context: 512,
    norm: 'rmsnorm', norm_eps: 1e-5, mlp: 'swiglu', bias: false,
    positions: 'rope', rope_interleaved: true, rope_base: 10000, kv_heads: 4, tied: true,
  });
  const want = { 'tok_emb.weight': [512, 64], 'ln_f.weight': [64] };
  for (let l = 0; l < 5; l++) {
    Object.assign(want, {
      [`layers.${l}.ln1.weight`]: [64], [`layers.${l}.attn.q_proj.weight`]: [64, 64],
      [`layers.${l}.attn.k_proj.weight`]: [32, 64], [`layers.${l}.attn.v_proj.weight`]: [32, 64],
      [`layers.${l}.attn.out_proj.weight`]: [64, 64], [`layers.${l}.ln2.weight`]: [64],
      [`layers.${l}.mlp.gate.weight`]: [172, 64], [`layers.${l}.mlp.up.weight`]: [172, 64], [`layers.${l}.mlp.proj.weight`]: [64, 172],
    });
  }
  assert.deepEqual(Object.fromEntries(Object.entries(tensors).map(([k, t]) => [k, t.shape])), want);
  for (const [k, t] of Object.entries(tensors)) {
    assert.ok(t.data instanceof Float32Array, k);
    assert.equal(t.data.length, t.shape.reduce((a, b) => a * b, 1), k);
  }
  // Parameters: 512·64 + 5·(64 + 64² + 2·32·64 + 64² + 64 + 3·172·64) + 64 = 260,032 (the "260K").
  assert.equal(Object.values(tensors).reduce((n, t) => n + t.data.length, 0), 260032);
});

test('checkpoint: every tensor holds the arrays the Python reader put under that name (sums from cases.json)', () => {
  // The Python reader's layout is confirmed by its forward reproducing llama2.c's greedy text.
  const { tensors } = readLlama2cCheckpoint(modelBytes);
  assert.deepEqual(Object.keys(tensors).sort(), Object.keys(golden.tensorSums).sort());
  for (const [name, [sum, sumAbs, first]] of Object.entries(golden.tensorSums)) {
    const d = tensors[name].data;
    let s = 0, a = 0;
    for (const v of d) { s += v; a += Math.abs(v); }
    assert.ok(Math.abs(s - sum) < 1e-9 * Math.max(1, a), `${name}: sum ${s} vs ${sum}`);
    assert.ok(Math.abs(a - sumAbs) < 1e-9 * Math.max(1, a), `${name}: sum |w| ${a} vs ${sumAbs}`);
    assert.equal(d[0], first, `${name}[0]`);
  }
});

test('checkpoint: the RoPE tables follow ln_f (the layout ends where llama2.c says) and are read past', () => {
  const { tensors } = readLlama2cCheckpoint(modelBytes);
  const dv = new DataView(modelBytes.buffer, modelBytes.byteOffset);
  const tables = 28 + 4 * 260032;   // every weight, then cos [512, 4], then sin [512, 4]
  assert.equal(modelBytes.length, tables + 2 * 4 * 512 * 4);
  for (const [pos, i] of [[0, 0], [1, 0], [7, 3], [511, 2]]) {
    const angle = pos * 10000 ** (-2 * i / 8);
    assert.ok(Math.abs(dv.getFloat32(tables + 4 * (4 * pos + i), true) - Math.cos(angle)) < 1e-6, `cos[${pos}, ${i}]`);
    assert.ok(Math.abs(dv.getFloat32(tables + 4 * 2048 + 4 * (4 * pos + i), true) - Math.sin(angle)) < 1e-6, `sin[${pos}, ${i}]`);
  }
  assert.equal(tensors['ln_f.weight'].data[63], dv.getFloat32(tables - 4, true));
});

test('checkpoint: an untied file (negative vocab_size) gets head.weight from after the RoPE tables', () => {
  const tail = Float32Array.from({ length: 512 * 64 }, (_, i) => (i % 7) - 3);
  const b = checkpoint({ vocab_size: -512 }, modelBytes.length + tail.byteLength);
  b.set(new Uint8Array(tail.buffer), modelBytes.length);
  const { config, tensors } = readLlama2cCheckpoint(b);
  assert.equal(config.tied, false);
  assert.equal(config.vocab_size, 512);
  assert.deepEqual(tensors['head.weight'].shape, [512, 64]);
  assert.deepEqual(Array.from(tensors['head.weight'].data.subarray(0, 8)), [-3, -2, -1, 0, 1, 2, 3, -3]);
});

test('checkpoint: a file at an odd byte offset is read by copy with the same values', () => {
  const shifted = new Uint8Array(modelBytes.length + 1);
  shifted.set(modelBytes, 1);
  const a = readLlama2cCheckpoint(modelBytes).tensors['layers.2.mlp.up.weight'].data;
  const b = readLlama2cCheckpoint(shifted.subarray(1)).tensors['layers.2.mlp.up.weight'].data;
  assert.deepEqual(Array.from(b), Array.from(a));
});

test('checkpoint: bad files are refused naming the field, the expected and the actual value', () => {
  const L = modelBytes.length;
  refuses(() => readLlama2cCheckpoint('bytes?'), [/ArrayBuffer or a Uint8Array/, /got string/]);
  refuses(() => readLlama2cCheckpoint(modelBytes.subarray(0, 20)), [/file length/, /at least 28 bytes/, /got 20/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ dim: 0 })), [/header dim/, /positive/, /got 0/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ n_layers: -5 })), [/header n_layers/, /positive/, /got -5/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ vocab_size: 0 })), [/header vocab_size/, /nonzero/, /got 0/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ hidden_dim: 2 ** 30 })), [/header hidden_dim/, /at most 262144/, /got 1073741824/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ seq_len: -(2 ** 31) })), [/header seq_len/, /positive/, /got -2147483648/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ dim: 60 })), [/header dim/, /divisible by n_heads = 8/, /got dim = 60/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ dim: 72 })), [/head_size/, /even/, /got 9/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ n_kv_heads: 3 })), [/header n_kv_heads/, /divide n_heads = 8/, /got 3/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ n_kv_heads: 16 })), [/header n_kv_heads/, /divide n_heads = 8/, /got 16/]);
  // A header that disagrees with the bytes: one byte too many or too few, a truncated array, and a
  // header asking for more layers than the file holds.
  refuses(() => readLlama2cCheckpoint(checkpoint({}, L + 1)), [/file length must be 1056540 bytes/, /got 1056541/, /1 bytes beyond the last array/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({}, L + 4 * 512 * 64)), [/file length must be 1056540 bytes/, /got 1187612/]);
  refuses(() => readLlama2cCheckpoint(modelBytes.subarray(0, L - 1)), [/file length must be 1056540 bytes/, /got 1056539/, /too few bytes/]);
  refuses(() => readLlama2cCheckpoint(modelBytes.subarray(0, 5000)), [/file length must be 1056540 bytes/, /dim 64, hidden_dim 172, n_layers 5/, /got 5000/]);
  refuses(() => readLlama2cCheckpoint(checkpoint({ n_layers: 6 })), [/file length must be 1\d{6} bytes/, /n_layers 6/, /got 1056540/]);
  // Non-finite weights: named by tensor and index.
  const nan = checkpoint();
  // Byte offsets written out from the README's order: embedding [512, 64], ln1 [5, 64], W_q [5, 64, 64],
  // W_k [5, 32, 64] (layer 3, row 5, column 7); ln_f is the last 64 weights.
  const kAt = 28 + 4 * (512 * 64 + 5 * 64 + 5 * 64 * 64 + 3 * 32 * 64 + 5 * 64 + 7);
  const lnfAt = 28 + 4 * (260032 - 64 + 12);
  new DataView(nan.buffer).setFloat32(kAt, NaN, true);
  refuses(() => readLlama2cCheckpoint(nan), [/tensor "layers\.3\.attn\.k_proj\.weight"/, /finite/, /got NaN at index \[5, 7\]/]);
  const inf = checkpoint();
  new DataView(inf.buffer).setFloat32(lnfAt, -Infinity, true);
  refuses(() => readLlama2cCheckpoint(inf), [/tensor "ln_f\.weight"/, /got -Infinity at index \[12\]/]);
});

test('tokenizer file: 512 pieces with their scores; bad files are refused naming the field and both values', () => {
  const { maxTokenLength, pieces, scores } = readLlama2cTokenizer(tokBytes);
  assert.equal(maxTokenLength, 7);
  assert.equal(pieces.length, 512);
  assert.equal(new TextDecoder().decode(pieces[403]), ' Once');
  assert.equal(scores[403], -144);
  assert.equal(new TextDecoder().decode(pieces[3 + 0x41]), '<0x41>');
  const ok = { score: -1, bytes: new Uint8Array([104, 105]) };
  refuses(() => readLlama2cTokenizer(tokBytes.subarray(0, 3)), [/file length/, /at least 4 bytes/, /got 3/]);
  refuses(() => readLlama2cTokenizer(tokenizerFile(0, [ok])), [/max_token_length/, /1\.\.65536/, /got 0/]);
  refuses(() => readLlama2cTokenizer(tokenizerFile(4, [ok, { score: 0, bytes: new Uint8Array(2), len: 40 }])), [/token 1's length/, /0\.\.4 \(max_token_length\)/, /got 40/]);
  refuses(() => readLlama2cTokenizer(tokenizerFile(4, [{ score: 0, bytes: new Uint8Array(0), len: -1 }])), [/token 0's length/, /got -1/]);
  refuses(() => readLlama2cTokenizer(tokenizerFile(4, [ok, { score: 0, bytes: new Uint8Array(1), len: 3 }])), [/token 1's 3 bytes/, /within the file \(23 bytes\)/, /got end 25/]);
  refuses(() => readLlama2cTokenizer(tokenizerFile(4, [ok, { score: NaN, bytes: new Uint8Array(1) }])), [/token 1's score/, /finite/, /got NaN/]);
  refuses(() => readLlama2cTokenizer(tokBytes.subarray(0, tokBytes.length - 2)), [/token 511's 3 bytes/, /within the file \(6225 bytes\)/, /got end 6227/]);
  refuses(() => readLlama2cTokenizer(tokBytes.subarray(0, 9)), [/token 0's score and length need bytes 4\.\.12/, /got a file of 9 bytes/]);
  // With the model's vocab_size: exactly that many tokens.
  refuses(() => readLlama2cTokenizer(tokBytes, { vocabSize: 513 }), [/token 512's score and length/, /got a file of 6227 bytes/, /vocabSize 513 expects 513 tokens/]);
  refuses(() => readLlama2cTokenizer(tokBytes, { vocabSize: 511 }), [/file length must be 6216 bytes for vocabSize 511/, /got 6227/, /11 bytes left over/]);
  refuses(() => readLlama2cTokenizer(tokBytes, { vocabSize: 0 }), [/vocabSize must be a positive integer/, /got 0/]);
  refuses(() => new Llama2cTokenizer({ pieces: [], scores: [] }), [/at least 259 tokens/, /got 0/]);
});

test('encode: "Once upon a time" → [1, 403, 407, 261, 378] (llama2.c), and decode gives the text back', () => {
  const ids = tok.encode('Once upon a time');
  assert.deepEqual(ids, [1, 403, 407, 261, 378]);
  assert.deepEqual(ids.slice(1).map((i) => tok.piece(i)), [' Once', ' upon', ' a', ' time']);
  assert.equal(tok.decode(ids), 'Once upon a time');
  assert.deepEqual(tok.encode('Once upon a time', { bos: false, eos: true }), [403, 407, 261, 378, EOS]);
  assert.equal(tok.decode([403, 407]), ' Once upon', 'without BOS the dummy space stays');
  assert.deepEqual(tok.encode(''), [BOS]);
  assert.equal(tok.decode([BOS, EOS, 0]), '');
  assert.deepEqual([0, 1, 2, 13].map((i) => tok.piece(i)), ['<unk>', '<s>', '</s>', '<0x0A>']);
});

test('encode: the ids of the Python port (cases.json) for every prompt and tricky text; decode of the greedy ids gives its text', () => {
  for (const c of golden.cases) {
    assert.deepEqual(tok.encode(c.text), c.ids, c.name);
    assert.equal(tok.decode([...c.ids, ...c.greedy.ids]), c.greedy.text, c.name);
  }
  for (const e of golden.encodings) assert.deepEqual(tok.encode(e.text), e.ids, JSON.stringify(e.text));
  assert.ok(golden.cases[0].greedy.text.startsWith('Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day,'));
});

test('encode: bytes without a piece fall back to ids byte + 3; merges take the best score, leftmost on ties', () => {
  // "日" (E6 97 A5) has no piece: three byte ids after the dummy space.
  assert.deepEqual(tok.encode('日'), [1, 410, 0xe6 + 3, 0x97 + 3, 0xa5 + 3]);
  // A toy vocabulary: "ab" (score -1) beats "bc" (score -2), so "abc" → ab, c; "aaaa" with "aa"
  // merges the leftmost pair first, then the next: aa, aa.
  const names = ['<unk>', '\n<s>\n', '\n</s>\n', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`),
    ' ', 'a', 'b', 'c', 'ab', 'bc', 'aa', 'aaa'];
  const score = { ab: -1, bc: -2, aa: -3, aaa: -0.5 };
  const toy = new Llama2cTokenizer({
    pieces: names.map((n) => new TextEncoder().encode(n)),
    scores: names.map((n, i) => (i < 259 ? 0 : score[n] ?? -10)),
  });
  const id = (n) => names.indexOf(n);
  assert.deepEqual(toy.encode('abc', { bos: false }), [id(' '), id('ab'), id('c')]);
  assert.deepEqual(toy.encode('aaaa', { bos: false }), [id(' '), id('aaa'), id('a')], 'aa+a → aaa outranks the second aa');
  assert.deepEqual(toy.encode('aa', { bos: false }), [id(' '), id('aa')]);
});

test('property: decode(encode(s)) === s for arbitrary strings (non-ASCII, emoji, control characters)', () => {
  const tricky = fc.constantFrom('🦙', '👩‍👩‍👧', '\u0000', '\u0007', '\n', '\t', '\r\n', ' ', '  ', 'é', 'e\u0301', '\u200a', '日本', '\uFFFD', '\u{10FFFF}', '<0x41>', '<s>');
  const text = fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ maxLength: 12 }), tricky), { maxLength: 8 }).map((a) => a.join(''));
  fc.assert(fc.property(text, fc.boolean(), (s, bos) => {
    const ids = tok.encode(s, { bos });
    assert.ok(ids.every((i) => Number.isInteger(i) && i >= 0 && i < 512));
    assert.equal(tok.decode(ids), bos || s === '' ? s : ` ${s}`);
  }), { numRuns: 400, seed: 20261124 });
});

test('encode and decode refuse bad arguments naming them', () => {
  refuses(() => tok.encode('a\uD800b'), [/text must be well-formed UTF-16/, /lone surrogate U\+D800 at index 1/]);
  refuses(() => tok.encode(42), [/text must be a string/, /got number/]);
  refuses(() => tok.decode([1, 512]), [/ids\[1\] must be an integer in 0\.\.511/, /got 512/]);
  refuses(() => tok.decode([1.5]), [/ids\[0\]/, /got 1\.5/]);
  refuses(() => tok.decode('abc'), [/ids must be an array of token ids/, /got string/]);
  refuses(() => tok.piece(-1), [/piece: id must be an integer in 0\.\.511/, /got -1/]);
});

test('fuzz: truncations and byte changes of the real files give a valid model or tokenizer or an MHAError, never another error or a hang', () => {
  const mutation = (length, hot) => fc.oneof(
    // Mostly in the header (checkpoint) or anywhere (tokenizer): where the reader's decisions are.
    fc.record({ kind: fc.constant('set'), at: fc.integer({ min: 0, max: hot }), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('set'), at: fc.integer({ min: 0, max: length - 1 }), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('truncate'), at: fc.integer({ min: 0, max: length }) }),
    fc.record({ kind: fc.constant('append'), count: fc.integer({ min: 1, max: 9 }) }),
  );
  const apply = (base, muts) => {
    let b = Uint8Array.from(base);
    for (const m of muts) {
      if (m.kind === 'set') { if (m.at < b.length) b[m.at] = m.value; }
      else if (m.kind === 'truncate') b = b.subarray(0, Math.min(m.at, b.length));
      else { const c = new Uint8Array(b.length + m.count); c.set(b); b = c; }
    }
    return b;
  };
  const counts = { model: [0, 0], tok: [0, 0] };
  const started = Date.now();
  fc.assert(fc.property(fc.array(mutation(modelBytes.length, 40), { minLength: 1, maxLength: 3 }), (muts) => {
    try {
      const { config, tensors } = readLlama2cCheckpoint(apply(modelBytes, muts));
      for (const t of Object.values(tensors)) {
        assert.equal(t.data.length, t.shape.reduce((a, b) => a * b, 1));
        assert.ok(t.data.every(Number.isFinite));
      }
      assert.equal(config.num_heads % config.kv_heads, 0);
      counts.model[0]++;
    } catch (e) {
      assert.ok(e instanceof MHAError, `${e && e.constructor.name}: ${e && e.message}`);
      counts.model[1]++;
    }
  }), { numRuns: 150, seed: 20261124 });
  fc.assert(fc.property(fc.array(mutation(tokBytes.length, tokBytes.length - 1), { minLength: 1, maxLength: 4 }), (muts) => {
    try {
      const t = new Llama2cTokenizer(readLlama2cTokenizer(apply(tokBytes, muts)));
      const ids = t.encode('Once upon a time, 日本 🦙');
      assert.ok(ids.every((i) => i >= 0 && i < t.vocabSize));
      assert.equal(typeof t.decode(ids), 'string');
      counts.tok[0]++;
    } catch (e) {
      assert.ok(e instanceof MHAError, `${e && e.constructor.name}: ${e && e.message}`);
      counts.tok[1]++;
    }
  }), { numRuns: 300, seed: 20261124 });
  // Both outcomes happen (else the fuzz tests nothing), and quickly (no hang: a few seconds at most).
  assert.ok(counts.model[0] > 0 && counts.model[1] > 0, `checkpoint read/refused ${counts.model}`);
  assert.ok(counts.tok[0] > 0 && counts.tok[1] > 0, `tokenizer read/refused ${counts.tok}`);
  assert.ok(Date.now() - started < 60_000, `fuzz took ${Date.now() - started} ms`);
});

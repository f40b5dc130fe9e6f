// llama2.c's file readers (web/lib/src/formats/llama2c.js) value by value on small synthetic files written
// here from the format's description (run.c read_checkpoint / memory_map_weights, build_tokenizer):
// every tensor's values at its offset, tied and untied, each header field at its limit and one past
// it, the index of a non-finite weight, and the tokenizer file's boundaries. tests/llama2c.test.mjs
// reads the real stories260K files and fuzzes them. Written for the mutation testing of llama2c.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { readLlama2cCheckpoint, readLlama2cTokenizer, HEADER_FIELDS, HEADER_LIMITS, MAX_TOKEN_LENGTH_LIMIT } from '../web/lib/src/formats/llama2c.js';
import { throwsInvalid } from './helpers/exact-error.mjs';


/**
 * A version-0 checkpoint: the header, then float i + 1 at float position i (so each value tells its
 * offset), the RoPE tables included; `extra` floats appended (an untied classifier).
 */
function checkpoint(h, floats, { at = 0 } = {}) {
  const b = new Uint8Array(at + 28 + 4 * floats);
  const dv = new DataView(b.buffer, at);
  HEADER_FIELDS.forEach((k, i) => dv.setInt32(4 * i, h[k], true));
  for (let i = 0; i < floats; i++) dv.setFloat32(28 + 4 * i, i + 1, true);
  return b.subarray(at);
}

// dim 4, hidden 6, 2 layers, 2 heads (head_size 2), 1 K/V head (kv_dim 2), vocab 5, seq_len 3
const H = { dim: 4, hidden_dim: 6, n_layers: 2, n_heads: 2, n_kv_heads: 1, vocab_size: 5, seq_len: 3 };
// the arrays in file order, written out from the format: [name or null, rows, cols]
const LAYOUT = [
  ['tok_emb.weight', 5, 4],
  ['layers.0.ln1.weight', 4], ['layers.1.ln1.weight', 4],
  ['layers.0.attn.q_proj.weight', 4, 4], ['layers.1.attn.q_proj.weight', 4, 4],
  ['layers.0.attn.k_proj.weight', 2, 4], ['layers.1.attn.k_proj.weight', 2, 4],
  ['layers.0.attn.v_proj.weight', 2, 4], ['layers.1.attn.v_proj.weight', 2, 4],
  ['layers.0.attn.out_proj.weight', 4, 4], ['layers.1.attn.out_proj.weight', 4, 4],
  ['layers.0.ln2.weight', 4], ['layers.1.ln2.weight', 4],
  ['layers.0.mlp.gate.weight', 6, 4], ['layers.1.mlp.gate.weight', 6, 4],
  ['layers.0.mlp.proj.weight', 4, 6], ['layers.1.mlp.proj.weight', 4, 6],
  ['layers.0.mlp.up.weight', 6, 4], ['layers.1.mlp.up.weight', 6, 4],
  ['ln_f.weight', 4], [null, 3, 1], [null, 3, 1],
];
const FLOATS = LAYOUT.reduce((n, [, r, c]) => n + r * (c ?? 1), 0);

test('checkpoint: every tensor holds the floats at its offset in the file, tied and untied, aligned or not', () => {
  for (const untied of [false, true]) {
    for (const at of [0, 1, 2]) {
      const floats = FLOATS + (untied ? 5 * 4 : 0);
      const { config, tensors } = readLlama2cCheckpoint(checkpoint({ ...H, vocab_size: untied ? -5 : 5 }, floats, { at }).slice());
      assert.deepEqual(config, {
        vocab_size: 5, d_model: 4, num_heads: 2, num_layers: 2, d_ff: 6, context: 3,
        norm: 'rmsnorm', norm_eps: 1e-5, mlp: 'swiglu', bias: false,
        positions: 'rope', rope_interleaved: true, rope_base: 10000, kv_heads: 1, tied: !untied,
      });
      const layout = untied ? [...LAYOUT, ['head.weight', 5, 4]] : LAYOUT;
      const want = {};
      let off = 0;
      for (const [name, r, c] of layout) {
        const n = r * (c ?? 1);
        if (name) want[name] = { shape: c === undefined ? [r] : [r, c], data: Array.from({ length: n }, (_, i) => off + i + 1) };
        off += n;
      }
      assert.deepEqual(Object.keys(tensors), Object.keys(want));
      for (const [name, w] of Object.entries(want)) {
        assert.deepEqual(tensors[name].shape, w.shape, name);
        assert.ok(tensors[name].data instanceof Float32Array);
        assert.deepEqual(Array.from(tensors[name].data), w.data, `${name} (untied ${untied}, at ${at})`);
      }
    }
  }
  // each tensor has its own shape array: changing one leaves the other layers' alone
  const { tensors } = readLlama2cCheckpoint(checkpoint(H, FLOATS));
  tensors['layers.0.ln1.weight'].shape[0] = 99;
  assert.deepEqual(tensors['layers.1.ln1.weight'].shape, [4]);
  // an ArrayBuffer is read as well
  const b = checkpoint(H, FLOATS).slice();
  assert.equal(readLlama2cCheckpoint(b.buffer).tensors['ln_f.weight'].data[3], FLOATS - 6);
});

test('checkpoint: each header field at its limit passes the header checks, one past it is refused naming the field', () => {
  for (const k of HEADER_FIELDS) {
    const lim = HEADER_LIMITS[k];
    const h = { ...H, [k]: lim + 1 };
    throwsInvalid(() => readLlama2cCheckpoint(checkpoint(h, 0)), `llama2c checkpoint: header ${k} must be at most ${lim}, got ${lim + 1}`);
    // at the limit: refused later (divisibility or the file length), never for the limit
    assert.throws(() => readLlama2cCheckpoint(checkpoint({ ...H, [k]: lim }, 0)), (e) => e instanceof MHAError && !/at most/.test(e.message) && /llama2c checkpoint: /.test(e.message));
  }
  assert.deepEqual(HEADER_LIMITS, { dim: 65536, hidden_dim: 262144, n_layers: 1024, n_heads: 1024, n_kv_heads: 1024, vocab_size: 4194304, seq_len: 1048576 });
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, vocab_size: -4194305 }, 0)), 'llama2c checkpoint: header vocab_size must be at most 4194304, got -4194305');
  for (const k of HEADER_FIELDS) {
    const want = k === 'vocab_size' ? 'nonzero' : 'positive';
    throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, [k]: 0 }, 0)), `llama2c checkpoint: header ${k} must be ${want}, got 0`);
  }
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, n_heads: -2 }, 0)), 'llama2c checkpoint: header n_heads must be positive, got -2');
  // 1 is valid: one layer, one head of size 4, seq_len 1
  const one = { ...H, n_layers: 1, n_heads: 1, n_kv_heads: 1, seq_len: 1 };
  // tok_emb 20, ln1 4, W_q 16, W_k and W_v 16 each (kv_dim 4), W_o 16, ln2 4, w1 w2 w3 24 each, ln_f 4, RoPE 2 · 1 · 2
  const floats = 20 + 4 + 16 + 2 * 16 + 16 + 4 + 3 * 24 + 4 + 4;
  assert.equal(readLlama2cCheckpoint(checkpoint(one, floats)).config.num_heads, 1);
});

test('checkpoint: divisibility, the even head size, n_kv_heads, the file length and a non-finite weight, with both values', () => {
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, n_heads: 3 }, 0)), 'llama2c checkpoint: header dim must be divisible by n_heads = 3, got dim = 4');
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, n_heads: 4, n_kv_heads: 1 }, 0)), 'llama2c checkpoint: head_size (dim / n_heads = 4 / 4) must be even (RoPE rotates pairs), got 1');
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, n_kv_heads: 4 }, 0)), 'llama2c checkpoint: header n_kv_heads must divide n_heads = 2, got 4');
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, n_kv_heads: 3, n_heads: 2 }, 0)), 'llama2c checkpoint: header n_kv_heads must divide n_heads = 2, got 3');
  // n_kv_heads = n_heads is valid
  const kv2 = FLOATS + 2 * 2 * 2 * 4;   // K and V of both layers twice as wide
  assert.equal(readLlama2cCheckpoint(checkpoint({ ...H, n_kv_heads: 2 }, kv2)).config.kv_heads, 2);
  const expected = 28 + 4 * FLOATS;
  const header = 'dim 4, hidden_dim 6, n_layers 2, n_heads 2, n_kv_heads 1, vocab_size 5, seq_len 3';
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint(H, FLOATS - 1)), `llama2c checkpoint: file length must be ${expected} bytes for the header (${header}), got ${expected - 4} (too few bytes)`);
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint(H, FLOATS + 2)), `llama2c checkpoint: file length must be ${expected} bytes for the header (${header}), got ${expected + 8} (8 bytes beyond the last array)`);
  throwsInvalid(() => readLlama2cCheckpoint(new Uint8Array(27)), 'llama2c checkpoint: file length must be at least 28 bytes (the header\'s seven int32), got 27');
  throwsInvalid(() => readLlama2cCheckpoint(checkpoint({ ...H, vocab_size: 0 }, 0).subarray(0, 28)), 'llama2c checkpoint: header vocab_size must be nonzero, got 0');
  // non-finite: 2-D index [row, col] and 1-D [i]
  const b = checkpoint(H, FLOATS);
  const dv = new DataView(b.buffer, b.byteOffset);
  const q1 = 20 + 8 + 16;   // layers.1.attn.q_proj.weight starts after tok_emb (20), the ln1s (8), layer 0's W_q (16)
  dv.setFloat32(28 + 4 * (q1 + 2 * 4 + 3), Infinity, true);
  throwsInvalid(() => readLlama2cCheckpoint(b), 'llama2c checkpoint: tensor "layers.1.attn.q_proj.weight" must be finite, got Infinity at index [2, 3]');
  const c = checkpoint(H, FLOATS);
  new DataView(c.buffer, c.byteOffset).setFloat32(28 + 4 * (20 + 4 + 1), NaN, true);
  throwsInvalid(() => readLlama2cCheckpoint(c), 'llama2c checkpoint: tensor "layers.1.ln1.weight" must be finite, got NaN at index [1]');
  // the RoPE tables are not read: a NaN there is accepted
  const r = checkpoint(H, FLOATS);
  new DataView(r.buffer, r.byteOffset).setFloat32(28 + 4 * (FLOATS - 1), NaN, true);
  assert.equal(readLlama2cCheckpoint(r).tensors['ln_f.weight'].data.length, 4);
  throwsInvalid(() => readLlama2cCheckpoint(null), 'llama2c checkpoint: expected an ArrayBuffer or a Uint8Array, got null');
});

/** A tokenizer file: int32 max_token_length, then per token float32 score, int32 length, bytes. */
function tokenizer(maxLen, tokens) {
  const parts = [new Uint8Array(new Int32Array([maxLen]).buffer)];
  for (const { score, bytes, len } of tokens) {
    const h = new DataView(new ArrayBuffer(8));
    h.setFloat32(0, score, true);
    h.setInt32(4, len ?? bytes.length, true);
    parts.push(new Uint8Array(h.buffer), Uint8Array.from(bytes));
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

test('tokenizer: pieces and scores read exactly, with and without vocabSize; lengths at max_token_length and 0; copies', () => {
  const toks = [{ score: -1.5, bytes: [104, 105] }, { score: 0, bytes: [] }, { score: 3.25, bytes: [1, 2, 3] }];
  const file = tokenizer(3, toks);
  for (const opts of [undefined, {}, { vocabSize: 3 }]) {
    const r = readLlama2cTokenizer(file, opts);
    assert.equal(r.maxTokenLength, 3);
    assert.deepEqual(r.pieces.map((p) => Array.from(p)), [[104, 105], [], [1, 2, 3]]);
    assert.ok(r.scores instanceof Float32Array);
    assert.deepEqual(Array.from(r.scores), [-1.5, 0, 3.25]);
  }
  // pieces are copies: changing the file afterwards does not change them
  const copy = file.slice();
  const r = readLlama2cTokenizer(copy);
  copy.fill(0);
  assert.deepEqual(Array.from(r.pieces[0]), [104, 105]);
  // vocabSize fewer than the file: refused with the bytes left over
  throwsInvalid(() => readLlama2cTokenizer(file, { vocabSize: 2 }), `llama2c tokenizer: file length must be ${4 + 10 + 8} bytes for vocabSize 2 tokens, got ${file.length} (11 bytes left over)`);
  throwsInvalid(() => readLlama2cTokenizer(file, { vocabSize: 4 }), `llama2c tokenizer: token 3's score and length need bytes ${file.length}..${file.length + 8}, got a file of ${file.length} bytes (vocabSize 4 expects 4 tokens)`);
  throwsInvalid(() => readLlama2cTokenizer(file.subarray(0, file.length - 4)), `llama2c tokenizer: token 2's score and length need bytes 22..30, got a file of ${file.length - 4} bytes`);
  throwsInvalid(() => readLlama2cTokenizer(file.subarray(0, file.length - 1)), `llama2c tokenizer: token 2's 3 bytes must end within the file (${file.length - 1} bytes), got end ${file.length}`);
  for (const v of [0, -1, 1.5, '3']) throwsInvalid(() => readLlama2cTokenizer(file, { vocabSize: v }), `llama2c tokenizer: vocabSize must be a positive integer, got ${v}`);
  // max_token_length bounds
  throwsInvalid(() => readLlama2cTokenizer(tokenizer(MAX_TOKEN_LENGTH_LIMIT + 1, toks)), `llama2c tokenizer: max_token_length must be in 1..65536, got 65537`);
  throwsInvalid(() => readLlama2cTokenizer(tokenizer(-3, toks)), 'llama2c tokenizer: max_token_length must be in 1..65536, got -3');
  assert.equal(readLlama2cTokenizer(tokenizer(MAX_TOKEN_LENGTH_LIMIT, toks)).maxTokenLength, 65536);
  assert.equal(readLlama2cTokenizer(tokenizer(1, [{ score: 0, bytes: [7] }])).pieces.length, 1);
  throwsInvalid(() => readLlama2cTokenizer(tokenizer(2, toks)), 'llama2c tokenizer: token 2\'s length must be in 0..2 (max_token_length), got 3');
  throwsInvalid(() => readLlama2cTokenizer(tokenizer(3, [{ score: -Infinity, bytes: [] }])), 'llama2c tokenizer: token 0\'s score must be finite, got -Infinity');
  throwsInvalid(() => readLlama2cTokenizer(new Uint8Array(3)), 'llama2c tokenizer: file length must be at least 4 bytes (max_token_length), got 3');
  // a file of max_token_length alone: no tokens
  assert.deepEqual(readLlama2cTokenizer(tokenizer(3, [])).pieces, []);
  throwsInvalid(() => readLlama2cTokenizer('tok'), 'llama2c tokenizer: expected an ArrayBuffer or a Uint8Array, got string');
  // a file at an odd offset
  const odd = new Uint8Array(file.length + 1);
  odd.set(file, 1);
  assert.deepEqual(Array.from(readLlama2cTokenizer(odd.subarray(1)).scores), [-1.5, 0, 3.25]);
});

/**
 * A version-1 checkpoint (llama2.c export.py version1_export): magic "ak42", version 1, the seven
 * header fields, shared_classifier at byte 36, zeros to byte 256; then float i + 1 at float position i.
 */
function checkpointV1(h, floats, shared) {
  const b = new Uint8Array(256 + 4 * floats);
  const dv = new DataView(b.buffer);
  dv.setUint32(0, 0x616b3432, true);
  dv.setInt32(4, 1, true);
  HEADER_FIELDS.forEach((k, i) => dv.setInt32(8 + 4 * i, h[k], true));
  b[36] = shared ? 1 : 0;
  for (let i = 0; i < floats; i++) dv.setFloat32(256 + 4 * i, i + 1, true);
  return b;
}

// version 1's order, written out from export.py: the norms first, then the embedding, the attention and MLP matrices, the classifier
const LAYOUT_V1 = [
  ['layers.0.ln1.weight', 4], ['layers.1.ln1.weight', 4],
  ['layers.0.ln2.weight', 4], ['layers.1.ln2.weight', 4],
  ['ln_f.weight', 4],
  ['tok_emb.weight', 5, 4],
  ['layers.0.attn.q_proj.weight', 4, 4], ['layers.1.attn.q_proj.weight', 4, 4],
  ['layers.0.attn.k_proj.weight', 2, 4], ['layers.1.attn.k_proj.weight', 2, 4],
  ['layers.0.attn.v_proj.weight', 2, 4], ['layers.1.attn.v_proj.weight', 2, 4],
  ['layers.0.attn.out_proj.weight', 4, 4], ['layers.1.attn.out_proj.weight', 4, 4],
  ['layers.0.mlp.gate.weight', 6, 4], ['layers.1.mlp.gate.weight', 6, 4],
  ['layers.0.mlp.proj.weight', 4, 6], ['layers.1.mlp.proj.weight', 4, 6],
  ['layers.0.mlp.up.weight', 6, 4], ['layers.1.mlp.up.weight', 6, 4],
];

test('checkpoint version 1: every tensor holds the floats at its offset, shared classifier or not, each a view of the file (no copy)', () => {
  for (const shared of [true, false]) {
    const layout = shared ? LAYOUT_V1 : [...LAYOUT_V1, ['head.weight', 5, 4]];
    const floats = layout.reduce((n, [, r, c]) => n + r * (c ?? 1), 0);
    const bytes = checkpointV1(H, floats, shared);
    const { config, tensors } = readLlama2cCheckpoint(bytes);
    assert.equal(config.tied, shared);
    assert.deepEqual([config.vocab_size, config.d_model, config.num_layers, config.kv_heads, config.d_ff, config.context], [5, 4, 2, 1, 6, 3]);
    let off = 0;
    for (const [name, r, c] of layout) {
      const n = r * (c ?? 1);
      assert.deepEqual(tensors[name].shape, c === undefined ? [r] : [r, c], name);
      assert.deepEqual(Array.from(tensors[name].data), Array.from({ length: n }, (_, i) => off + i + 1), `${name} (shared ${shared})`);
      assert.equal(tensors[name].data.buffer, bytes.buffer, `${name} is a view of the file's bytes`);
      off += n;
    }
    assert.deepEqual(Object.keys(tensors).sort(), layout.map(([name]) => name).sort());
    throwsInvalid(() => readLlama2cCheckpoint(bytes.subarray(0, bytes.length - 4)),
      `llama2c checkpoint: file length must be ${bytes.length} bytes for the version-1 header (dim 4, hidden_dim 6, n_layers 2, n_heads 2, n_kv_heads 1, vocab_size 5, seq_len 3, shared_classifier ${shared ? 1 : 0}), got ${bytes.length - 4} (too few bytes)`);
  }
});

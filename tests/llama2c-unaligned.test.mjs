// readLlama2cCheckpoint (web/lib/src/formats/llama2c.js) on bytes that do not start on a 4-byte
// boundary of their buffer (a subarray at byte offset 1, 2 or 3, as a file read into a larger buffer
// may be): the floats are copied out instead of viewed, with the same values; at offset 0 they are a
// view of the caller's buffer. (tests/llama2c-reader.test.mjs copies its files with .slice(), which
// realigns them.) Mutation testing (StrykerJS) measures llama2c.js with both suites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readLlama2cCheckpoint, HEADER_FIELDS } from '../web/lib/src/formats/llama2c.js';

// dim 4, hidden 6, 1 layer, 2 heads (head size 2), 2 K/V heads, vocab 3, seq_len 2: a tied checkpoint
const H = { dim: 4, hidden_dim: 6, n_layers: 1, n_heads: 2, n_kv_heads: 2, vocab_size: 3, seq_len: 2 };
// token embedding 3·4, ln1 4, W_Q, W_K, W_V, W_O 4·4 each, ln2 4, gate 6·4, down 4·6, up 6·4, final norm 4,
// the two RoPE tables seq_len · head_size / 2 each
const FLOATS = 12 + 4 + 4 * 16 + 4 + 3 * 24 + 4 + 2 * 2;

/** The checkpoint at byte `at` of a larger buffer, float i of the file holding i / 8 − 3. */
function placed(at) {
  const buf = new Uint8Array(at + 28 + 4 * FLOATS + 3);
  const dv = new DataView(buf.buffer, at);
  HEADER_FIELDS.forEach((k, i) => dv.setInt32(4 * i, H[k], true));
  for (let i = 0; i < FLOATS; i++) dv.setFloat32(28 + 4 * i, i / 8 - 3, true);
  return buf.subarray(at, at + 28 + 4 * FLOATS);
}

test('a checkpoint at byte offset 1, 2 or 3 of its buffer reads the same floats as an aligned one', () => {
  const aligned = readLlama2cCheckpoint(placed(0));
  const names = Object.keys(aligned.tensors);
  assert.equal(names.length, 11);
  // at offset 0 the tensors view the caller's buffer
  const src = placed(0);
  const viewed = readLlama2cCheckpoint(src).tensors['tok_emb.weight'].data;
  assert.equal(viewed.buffer, src.buffer);
  assert.deepEqual(Array.from(viewed), Array.from({ length: 12 }, (_, i) => i / 8 - 3));
  for (const at of [1, 2, 3]) {
    const bytes = placed(at);
    const got = readLlama2cCheckpoint(bytes);
    assert.deepEqual(got.config, aligned.config);
    for (const name of names) {
      const t = got.tensors[name];
      assert.deepEqual(t.shape, aligned.tensors[name].shape, `${name} at ${at}`);
      assert.deepEqual(Array.from(t.data), Array.from(aligned.tensors[name].data), `${name} at ${at}`);
      assert.notEqual(t.data.buffer, bytes.buffer, `${name} at ${at}: a copy`);
    }
    // the last array (the final norm) ends 2 · 2 floats before the file's end (the RoPE tables)
    assert.deepEqual(Array.from(got.tensors['ln_f.weight'].data), [FLOATS - 8, FLOATS - 7, FLOATS - 6, FLOATS - 5].map((i) => i / 8 - 3));
  }
});

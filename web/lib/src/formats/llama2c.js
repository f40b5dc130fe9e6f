/**
 * Readers of Karpathy's llama2.c files (llama2.c, Andrej Karpathy 2023, MIT; the format as described
 * in tests/fixtures/stories260K/README.md): the "version 0" model checkpoint and the tokenizer file
 * (tok512.bin format). They turn the bytes into the tensors and config of the model format of
 * docs/trained-models.md ("Architecture options": RMSNorm, SwiGLU, interleaved RoPE, grouped-query
 * K/V heads, tied head), so the model runner can run a llama2.c model like a shipped one.
 *
 * A file is untrusted input: every size in it is checked before a byte is read, and every failure is
 * an MHAError (INVALID_ARGUMENT) whose message names the field, the expected and the actual value.
 * @module llama2c
 */
import { MHAError } from '../engine/errors.js';
import { asBytes } from './safetensors.js';

/** The seven int32 fields of a version-0 checkpoint header, in file order. */
export const HEADER_FIELDS = Object.freeze(['dim', 'hidden_dim', 'n_layers', 'n_heads', 'n_kv_heads', 'vocab_size', 'seq_len']);

/**
 * Largest value accepted for each header field. Far above any llama2.c model (Llama 2 7B: dim 4096,
 * hidden 11008, 32 layers, 32 heads, vocab 32000, seq_len 4096): a header beyond them is garbage,
 * and refusing it by field gives a clearer message than the byte count it would imply.
 */
export const HEADER_LIMITS = Object.freeze({
  dim: 1 << 16, hidden_dim: 1 << 18, n_layers: 1 << 10, n_heads: 1 << 10, n_kv_heads: 1 << 10, vocab_size: 1 << 22, seq_len: 1 << 20,
});

/** Largest max_token_length accepted in a tokenizer file (Llama 2's is 27; llama2.c allocates 2× it). */
export const MAX_TOKEN_LENGTH_LIMIT = 1 << 16;

const bad = (msg) => new MHAError('INVALID_ARGUMENT', msg);
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The float32 values of bytes[offset .. offset + 4·count): a view of the caller's bytes when they are
 * 4-byte aligned (and the platform little-endian, as every JS engine in use is), else one copy.
 */
function float32s(bytes, offset, count) {
  if (LITTLE_ENDIAN && (bytes.byteOffset + offset) % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset + offset, count);
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 4 * count);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

/**
 * Reads a llama2.c "version 0" checkpoint (`stories260K.bin`, the tinyllamas models, `export.py
 * --version 0` / the legacy export): seven little-endian int32 — dim, hidden_dim, n_layers, n_heads,
 * n_kv_heads, vocab_size, seq_len — then float32 arrays: token embedding [V, d]; attention RMSNorm
 * [L, d]; W_q [L, d, d]; W_k, W_v [L, kv_dim, d]; W_o [L, d, d]; FFN RMSNorm [L, d]; w1 [L, f, d];
 * w2 [L, d, f]; w3 [L, f, d]; final RMSNorm [d]; the RoPE tables cos, sin [seq_len, head_size/2]
 * (unused: the runner computes RoPE); and, only when vocab_size < 0 (untied classifier, |vocab_size|
 * tokens), the classifier [V, d]. head_size = d / n_heads, kv_dim = n_kv_heads · head_size. Matrices
 * are [out, in] (PyTorch Linear), as the model format stores them. Source: llama2.c (Karpathy 2023),
 * run.c `read_checkpoint` / `memory_map_weights`; the README in tests/fixtures/stories260K.
 *
 * @param {ArrayBuffer|ArrayBufferView} source the whole file
 * @returns {{config: object, tensors: Object<string, {data: Float32Array, shape: number[]}>}}
 *   config `{vocab_size, d_model, num_heads, num_layers, d_ff, context, norm: 'rmsnorm', norm_eps:
 *   1e-5, mlp: 'swiglu', bias: false, positions: 'rope', rope_interleaved: true, rope_base: 10000,
 *   kv_heads, tied}` (tied = vocab_size > 0 in the header) and tensors in the naming of
 *   docs/trained-models.md: `tok_emb.weight [V, d]`; per layer l `layers.l.ln1.weight [d]`,
 *   `layers.l.attn.q_proj.weight [d, d]`, `.k_proj.weight`, `.v_proj.weight [kv_dim, d]`,
 *   `.out_proj.weight [d, d]`, `layers.l.ln2.weight [d]`, `layers.l.mlp.gate.weight [f, d]` (w1),
 *   `.up.weight [f, d]` (w3), `.proj.weight [d, f]` (w2); `ln_f.weight [d]`; `head.weight [V, d]`
 *   only when untied. `data` is a view of the caller's bytes when they are 4-byte aligned (do not
 *   modify them while the tensors are in use), else a copy.
 * @throws {MHAError} INVALID_ARGUMENT: not bytes; a file shorter than the 28-byte header; a header
 *   field that is not positive (vocab_size: nonzero) or above HEADER_LIMITS; n_heads not dividing
 *   dim; an odd head_size (RoPE rotates pairs); n_kv_heads above n_heads or not dividing it; a file
 *   length that disagrees with the header (too few bytes, or bytes beyond the last array); a weight
 *   that is NaN or ±Infinity (names the tensor and the index)
 */
export function readLlama2cCheckpoint(source) {
  const bytes = asBytes(source, 'llama2c checkpoint');
  if (bytes.length < 28) throw bad(`llama2c checkpoint: file length must be at least 28 bytes (the header's seven int32), got ${bytes.length}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, 28);
  const header = {};
  HEADER_FIELDS.forEach((name, i) => { header[name] = dv.getInt32(4 * i, true); });
  const tied = header.vocab_size > 0;   // llama2.c: a negative vocab_size means the classifier follows the weights
  for (const name of HEADER_FIELDS) {
    const v = name === 'vocab_size' ? Math.abs(header[name]) : header[name];
    const want = name === 'vocab_size' ? 'nonzero' : 'positive';
    if (v <= 0) throw bad(`llama2c checkpoint: header ${name} must be ${want}, got ${header[name]}`);
    if (v > HEADER_LIMITS[name]) throw bad(`llama2c checkpoint: header ${name} must be at most ${HEADER_LIMITS[name]}, got ${header[name]}`);
  }
  const d = header.dim, f = header.hidden_dim, L = header.n_layers, H = header.n_heads, G = header.n_kv_heads, V = Math.abs(header.vocab_size), S = header.seq_len;
  if (d % H !== 0) throw bad(`llama2c checkpoint: header dim must be divisible by n_heads = ${H}, got dim = ${d}`);
  const hs = d / H;
  if (hs % 2 !== 0) throw bad(`llama2c checkpoint: head_size (dim / n_heads = ${d} / ${H}) must be even (RoPE rotates pairs), got ${hs}`);
  if (G > H || H % G !== 0) throw bad(`llama2c checkpoint: header n_kv_heads must divide n_heads = ${H}, got ${G}`);
  const kv = G * hs;

  // The arrays in file order; `name` null = read past (the RoPE tables).
  const arrays = [['tok_emb.weight', [V, d]]];
  const perLayer = (suffix, shape) => { for (let l = 0; l < L; l++) arrays.push([`layers.${l}.${suffix}`, shape]); };
  perLayer('ln1.weight', [d]);
  perLayer('attn.q_proj.weight', [d, d]);
  perLayer('attn.k_proj.weight', [kv, d]);
  perLayer('attn.v_proj.weight', [kv, d]);
  perLayer('attn.out_proj.weight', [d, d]);
  perLayer('ln2.weight', [d]);
  perLayer('mlp.gate.weight', [f, d]);   // w1
  perLayer('mlp.proj.weight', [d, f]);   // w2
  perLayer('mlp.up.weight', [f, d]);     // w3
  arrays.push(['ln_f.weight', [d]], [null, [S, hs / 2]], [null, [S, hs / 2]]);
  if (!tied) arrays.push(['head.weight', [V, d]]);
  const floats = arrays.reduce((n, [, shape]) => n + shape[0] * (shape[1] ?? 1), 0);   // < 2^53 under the limits
  const expected = 28 + 4 * floats;
  if (bytes.length !== expected) {
    const what = bytes.length < expected ? 'too few bytes' : `${bytes.length - expected} bytes beyond the last array`;
    throw bad(`llama2c checkpoint: file length must be ${expected} bytes for the header ` +
      `(${HEADER_FIELDS.map((k) => `${k} ${header[k]}`).join(', ')}), got ${bytes.length} (${what})`);
  }

  const tensors = {};
  let offset = 28;
  for (const [name, shape] of arrays) {
    const count = shape[0] * (shape[1] ?? 1);
    if (name !== null) {
      const data = float32s(bytes, offset, count);
      for (let i = 0; i < count; i++) {
        if (!Number.isFinite(data[i])) {
          const index = shape.length === 2 ? `[${Math.floor(i / shape[1])}, ${i % shape[1]}]` : `[${i}]`;
          throw bad(`llama2c checkpoint: tensor "${name}" must be finite, got ${data[i]} at index ${index}`);
        }
      }
      tensors[name] = { data, shape: shape.slice() };
    }
    offset += 4 * count;
  }
  const config = {
    vocab_size: V, d_model: d, num_heads: H, num_layers: L, d_ff: f, context: S,
    norm: 'rmsnorm', norm_eps: 1e-5, mlp: 'swiglu', bias: false,
    positions: 'rope', rope_interleaved: true, rope_base: 10000, kv_heads: G, tied,
  };
  return { config, tensors };
}

/**
 * Reads a llama2.c tokenizer file (`tok512.bin`, `tokenizer.bin`; written by llama2.c's
 * tokenizer.py): int32 max_token_length, then for each token float32 score, int32 byte length, the
 * piece's bytes (UTF-8, no terminator). The file does not store the number of tokens: llama2.c takes
 * it from the model's vocab_size; here `vocabSize` does the same, and without it every token up to
 * the end of the file is read. Source: llama2.c (Karpathy 2023), run.c `build_tokenizer`; the README
 * in tests/fixtures/stories260K.
 *
 * @param {ArrayBuffer|ArrayBufferView} source the whole file
 * @param {{vocabSize?: number}} [options] the model's vocab_size: the file must hold exactly that many
 *   tokens
 * @returns {{maxTokenLength: number, pieces: Uint8Array[], scores: Float32Array}} `pieces[i]` the
 *   bytes of token i (copies), `scores[i]` its merge score (higher merges first)
 * @throws {MHAError} INVALID_ARGUMENT: not bytes; a vocabSize that is not a positive integer; a file
 *   shorter than 4 bytes; max_token_length not positive or above MAX_TOKEN_LENGTH_LIMIT; a token
 *   whose score, length or bytes run past the end of the file; a negative length or one above
 *   max_token_length; a non-finite score; fewer or more tokens than vocabSize (bytes left over)
 */
export function readLlama2cTokenizer(source, { vocabSize } = {}) {
  const bytes = asBytes(source, 'llama2c tokenizer');
  if (vocabSize !== undefined && !(Number.isInteger(vocabSize) && vocabSize > 0)) {
    throw bad(`llama2c tokenizer: vocabSize must be a positive integer, got ${vocabSize}`);
  }
  if (bytes.length < 4) throw bad(`llama2c tokenizer: file length must be at least 4 bytes (max_token_length), got ${bytes.length}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const maxTokenLength = dv.getInt32(0, true);
  if (maxTokenLength <= 0 || maxTokenLength > MAX_TOKEN_LENGTH_LIMIT) {
    throw bad(`llama2c tokenizer: max_token_length must be in 1..${MAX_TOKEN_LENGTH_LIMIT}, got ${maxTokenLength}`);
  }
  const pieces = [];
  const scores = [];
  let off = 4;
  while (vocabSize === undefined ? off < bytes.length : pieces.length < vocabSize) {
    const i = pieces.length;
    if (off + 8 > bytes.length) {
      throw bad(`llama2c tokenizer: token ${i}'s score and length need bytes ${off}..${off + 8}, got a file of ${bytes.length} bytes` +
        (vocabSize !== undefined ? ` (vocabSize ${vocabSize} expects ${vocabSize} tokens)` : ''));
    }
    const score = dv.getFloat32(off, true);
    const len = dv.getInt32(off + 4, true);
    off += 8;
    if (!Number.isFinite(score)) throw bad(`llama2c tokenizer: token ${i}'s score must be finite, got ${score}`);
    if (len < 0 || len > maxTokenLength) throw bad(`llama2c tokenizer: token ${i}'s length must be in 0..${maxTokenLength} (max_token_length), got ${len}`);
    if (off + len > bytes.length) throw bad(`llama2c tokenizer: token ${i}'s ${len} bytes must end within the file (${bytes.length} bytes), got end ${off + len}`);
    pieces.push(bytes.slice(off, off + len));
    scores.push(score);
    off += len;
  }
  if (off !== bytes.length) {
    throw bad(`llama2c tokenizer: file length must be ${off} bytes for vocabSize ${vocabSize} tokens, got ${bytes.length} (${bytes.length - off} bytes left over)`);
  }
  return { maxTokenLength, pieces, scores: Float32Array.from(scores) };
}

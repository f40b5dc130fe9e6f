/**
 * Readers of Karpathy's llama2.c files (llama2.c, Andrej Karpathy 2023, MIT; the format as described
 * in tests/fixtures/stories260K/README.md): the model checkpoint (format versions 0 and 1, float32)
 * and the tokenizer file (tok512.bin format). They turn the bytes into the tensors and config of the
 * model format of docs/trained-models.md ("Architecture options": RMSNorm, SwiGLU, interleaved RoPE,
 * grouped-query K/V heads, tied output projection), so the model runner can run a llama2.c model like
 * a shipped one. `detect` and `read` are this format's part of readModel (index.js).
 *
 * A file is untrusted input: every size in it is checked before a byte is read, and every failure is
 * an MHAError (INVALID_ARGUMENT) whose message names the field, the expected and the actual value.
 * @module llama2c
 */
import { MHAError } from '../engine/errors.js';
import { asBytes } from './safetensors.js';
import { charlmConfig, charlmDecoderWeights } from './charlm.js';
import { LLAMA2C_TOKENIZER_NAME } from './sources.js';

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

/** llama2.c version-1 header magic: "ak42" as a little-endian uint32 (bytes "24ka"). */
export const LLAMA2C_MAGIC = 0x616b3432;

/**
 * Every array of a checkpoint: key → [tensor name in the naming of docs/trained-models.md (per
 * layer, after `layers.<l>.`; null: read past), its shape from the header h, whether there is one
 * per layer (stored as [n_layers, …shape])]. The classifier `head` is there only when untied.
 */
const ARRAYS = {
  emb: ['tok_emb.weight', (h) => [h.V, h.d]],
  ln1: ['ln1.weight', (h) => [h.d], true],
  wq: ['attn.q_proj.weight', (h) => [h.d, h.d], true],
  wk: ['attn.k_proj.weight', (h) => [h.kv, h.d], true],
  wv: ['attn.v_proj.weight', (h) => [h.kv, h.d], true],
  wo: ['attn.out_proj.weight', (h) => [h.d, h.d], true],
  ln2: ['ln2.weight', (h) => [h.d], true],
  w1: ['mlp.gate.weight', (h) => [h.f, h.d], true],
  w2: ['mlp.proj.weight', (h) => [h.d, h.f], true],
  w3: ['mlp.up.weight', (h) => [h.f, h.d], true],
  norm: ['ln_f.weight', (h) => [h.d]],
  cos: [null, (h) => [h.S, h.hs / 2]],   // version 0's RoPE tables: the runner computes RoPE
  sin: [null, (h) => [h.S, h.hs / 2]],
  head: ['head.weight', (h) => [h.V, h.d]],
};

/**
 * The order of the arrays in the file of each format version, after its header (28 bytes for
 * version 0, 256 for version 1). Sources: llama2.c run.c `memory_map_weights` (version 0),
 * export.py `legacy_export` and `version1_export`.
 */
const LAYOUT = Object.freeze({
  0: Object.freeze({ headerBytes: 28, arrays: ['emb', 'ln1', 'wq', 'wk', 'wv', 'wo', 'ln2', 'w1', 'w2', 'w3', 'norm', 'cos', 'sin', 'head'] }),
  1: Object.freeze({ headerBytes: 256, arrays: ['ln1', 'ln2', 'norm', 'emb', 'wq', 'wk', 'wv', 'wo', 'w1', 'w2', 'w3', 'head'] }),
});

/** The header of a version-0 file (seven int32; a negative vocab_size means an untied classifier), checked. */
function headerV0(bytes) {
  if (bytes.length < 28) throw bad(`llama2c checkpoint: file length must be at least 28 bytes (the header's seven int32), got ${bytes.length}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, 28);
  const header = {};
  HEADER_FIELDS.forEach((name, i) => { header[name] = dv.getInt32(4 * i, true); });
  for (const name of HEADER_FIELDS) {
    const v = name === 'vocab_size' ? Math.abs(header[name]) : header[name];
    const want = name === 'vocab_size' ? 'nonzero' : 'positive';
    if (v <= 0) throw bad(`llama2c checkpoint: header ${name} must be ${want}, got ${header[name]}`);
    if (v > HEADER_LIMITS[name]) throw bad(`llama2c checkpoint: header ${name} must be at most ${HEADER_LIMITS[name]}, got ${header[name]}`);
  }
  const { dim: d, n_heads: H, n_kv_heads: G } = header;
  if (d % H !== 0) throw bad(`llama2c checkpoint: header dim must be divisible by n_heads = ${H}, got dim = ${d}`);
  if ((d / H) % 2 !== 0) throw bad(`llama2c checkpoint: head_size (dim / n_heads = ${d} / ${H}) must be even (RoPE rotates pairs), got ${d / H}`);
  if (G > H || H % G !== 0) throw bad(`llama2c checkpoint: header n_kv_heads must divide n_heads = ${H}, got ${G}`);
  return { version: 0, header, tied: header.vocab_size > 0, named: HEADER_FIELDS.map((k) => `${k} ${header[k]}`).join(', ') };
}

/**
 * The header of a version-1 file (export.py `version1_export`: uint32 magic "ak42", int32 version
 * 1, the seven int32 of version 0, uint8 shared_classifier, zeros to byte 256), checked. Version 2
 * (int8, Q8_0) is refused.
 */
function headerV1(bytes, dv) {
  const version = dv.getInt32(4, true);
  if (version !== 1) throw bad(`llama2c checkpoint: header version must be 1 (float32; version 2 is int8-quantized, not read), got ${version}`);
  if (bytes.length < 256) throw bad(`llama2c checkpoint: file length must be at least 256 bytes (the version-1 header), got ${bytes.length}`);
  const shared = bytes[36];
  if (shared !== 0 && shared !== 1) throw bad(`llama2c checkpoint: header shared_classifier must be 0 or 1, got ${shared}`);
  const header = {};
  HEADER_FIELDS.forEach((name, i) => { header[name] = dv.getInt32(8 + 4 * i, true); });
  for (const name of HEADER_FIELDS) {
    const v = Math.abs(header[name]);
    if (!(v > 0) || v > HEADER_LIMITS[name]) throw bad(`llama2c checkpoint: header ${name} must be in 1..${HEADER_LIMITS[name]}, got ${header[name]}`);
  }
  const { dim: d, n_heads: H, n_kv_heads: G } = header;
  if (d % H !== 0 || (d / H) % 2 !== 0 || H % G !== 0) {
    throw bad(`llama2c checkpoint: header dim ${d}, n_heads ${H}, n_kv_heads ${G}: n_heads must divide dim into an even head size and n_kv_heads must divide n_heads`);
  }
  const named = `${HEADER_FIELDS.map((k) => `${k} ${header[k]}`).join(', ')}, shared_classifier ${shared}`;
  return { version: 1, header, tied: shared === 1, named, label: 'version-1 header' };
}

/**
 * Reads a llama2.c checkpoint of either float32 format version, each array where LAYOUT places it
 * (no copy of the file):
 * - version 0 (`stories260K.bin`, the tinyllamas models, `export.py --version 0` / the legacy
 *   export): seven little-endian int32 — dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 *   vocab_size, seq_len (vocab_size < 0: an untied classifier of |vocab_size| tokens follows) —
 *   then float32 arrays: token embedding [V, d]; attention RMSNorm [L, d]; W_q [L, d, d]; W_k, W_v
 *   [L, kv_dim, d]; W_o [L, d, d]; FFN RMSNorm [L, d]; w1 [L, f, d]; w2 [L, d, f]; w3 [L, f, d];
 *   final RMSNorm [d]; the RoPE tables cos, sin [seq_len, head_size/2] (unused: the runner
 *   computes RoPE); the classifier [V, d] when untied;
 * - version 1 (magic "ak42"; headerV1): every attention RMSNorm, every FFN RMSNorm, the final
 *   norm, the token embedding, W_q, W_k, W_v, W_o, w1, w2, w3, and the classifier unless
 *   shared_classifier.
 * head_size = d / n_heads, kv_dim = n_kv_heads · head_size. Matrices are [out, in] (PyTorch
 * Linear), as the model format stores them. Source: llama2.c (Karpathy 2023), run.c
 * `read_checkpoint` / `memory_map_weights`, export.py; the README in tests/fixtures/stories260K.
 *
 * @param {ArrayBuffer|ArrayBufferView} source the whole file
 * @returns {{config: object, tensors: Object<string, {data: Float32Array, shape: number[]}>}}
 *   config `{vocab_size, d_model, num_heads, num_layers, d_ff, context, norm: 'rmsnorm', norm_eps:
 *   1e-5, mlp: 'swiglu', bias: false, positions: 'rope', rope_interleaved: true, rope_base: 10000,
 *   kv_heads, tied}` and tensors in the naming of docs/trained-models.md: `tok_emb.weight [V, d]`;
 *   per layer l `layers.l.ln1.weight [d]`, `layers.l.attn.q_proj.weight [d, d]`, `.k_proj.weight`,
 *   `.v_proj.weight [kv_dim, d]`, `.out_proj.weight [d, d]`, `layers.l.ln2.weight [d]`,
 *   `layers.l.mlp.gate.weight [f, d]` (w1), `.up.weight [f, d]` (w3), `.proj.weight [d, f]` (w2);
 *   `ln_f.weight [d]`; `head.weight [V, d]` only when untied. `data` is a view of the caller's bytes
 *   when they are 4-byte aligned (do not modify them while the tensors are in use), else a copy.
 * @throws {MHAError} INVALID_ARGUMENT: not bytes; a file shorter than its header; a header field
 *   that is not positive (vocab_size: nonzero) or above HEADER_LIMITS; n_heads not dividing dim; an
 *   odd head_size (RoPE rotates pairs); n_kv_heads above n_heads or not dividing it; a version other
 *   than 0 or 1, a shared_classifier other than 0 or 1; a file length that disagrees with the header
 *   (too few bytes, or bytes beyond the last array); a weight that is NaN or ±Infinity (names the
 *   tensor and the index)
 */
export function readLlama2cCheckpoint(source) {
  const bytes = asBytes(source, 'llama2c checkpoint');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { version, header, tied, named, label = 'header' } = bytes.length >= 8 && dv.getUint32(0, true) === LLAMA2C_MAGIC ? headerV1(bytes, dv) : headerV0(bytes);
  const d = header.dim, H = header.n_heads, hs = d / H;
  const h = { d, f: header.hidden_dim, L: header.n_layers, H, G: header.n_kv_heads, V: Math.abs(header.vocab_size), S: header.seq_len, hs, kv: header.n_kv_heads * hs };

  // the arrays in file order: [tensor name or null, shape]
  const arrays = [];
  for (const key of LAYOUT[version].arrays) {
    if (key === 'head' && tied) continue;
    const [name, shape, perLayer] = ARRAYS[key];
    if (!perLayer) arrays.push([name, shape(h)]);
    else for (let l = 0; l < h.L; l++) arrays.push([`layers.${l}.${name}`, shape(h)]);
  }
  const start = LAYOUT[version].headerBytes;
  const floats = arrays.reduce((n, [, shape]) => n + shape[0] * (shape[1] ?? 1), 0);   // < 2^53 under the limits
  const expected = start + 4 * floats;
  if (bytes.length !== expected) {
    const what = bytes.length < expected ? 'too few bytes' : `${bytes.length - expected} bytes beyond the last array`;
    throw bad(`llama2c checkpoint: file length must be ${expected} bytes for the ${label} (${named}), got ${bytes.length} (${what})`);
  }

  const tensors = {};
  let offset = start;
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
    vocab_size: h.V, d_model: d, num_heads: H, num_layers: h.L, d_ff: h.f, context: h.S,
    norm: 'rmsnorm', norm_eps: 1e-5, mlp: 'swiglu', bias: false,
    positions: 'rope', rope_interleaved: true, rope_base: 10000, kv_heads: h.G, tied,
  };
  return { config, tensors };
}

/**
 * Whether bytes are a llama2.c checkpoint: version 1's "ak42" magic, or a version-0 header whose
 * seven int32 are within HEADER_LIMITS and imply the file's length (else the file is not one,
 * and another reader's errors say what it is not).
 */
function isCheckpoint(bytes) {
  if (bytes.length < 8) return false;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(0, true) === LLAMA2C_MAGIC) return true;
  if (bytes.length < 28 || bytes[8] === 0x7b) return false;   // "{" at byte 8: a safetensors header
  const header = HEADER_FIELDS.map((_, i) => dv.getInt32(4 * i, true));
  const ok = header.every((v, i) => { const a = HEADER_FIELDS[i] === 'vocab_size' ? Math.abs(v) : v; return a > 0 && a <= HEADER_LIMITS[HEADER_FIELDS[i]]; });
  if (!ok) return false;
  const [d, f, L, H, G, V, S] = header.map(Math.abs);
  const kv = (d / H) * G;
  const floats = V * d + L * (2 * d + d * d * 2 + 2 * kv * d + 3 * f * d) + d + S * (d / H) + (header[5] < 0 ? V * d : 0);
  return bytes.length === 28 + 4 * floats;
}

/**
 * Whether readModel reads a folder with this reader: one file that is a llama2.c checkpoint (its
 * bytes, read once by the folder).
 * @param {import('./sources.js').ModelFolder} folder
 * @returns {Promise<boolean>}
 */
export async function detect(folder) {
  return folder.main !== null && isCheckpoint(await folder.read(folder.main));
}

/** llama2.c's special token ids (run.c): 1 begins a text, 2 ends one. */
const BOS = 1, EOS = 2;

/**
 * The bytes of a llama2.c tokenizer: a file of the model's own folder by name, or loadModel's
 * `tokenizer` option as readModel opened it (any source that names one file: bytes, a URL, a Node
 * path, a File).
 */
async function tokenizerBytes(tokenizer, folder) {
  if (typeof tokenizer === 'string') return folder.read(tokenizer);
  if (tokenizer.main === null) throw bad(`loadModel: tokenizer must name one file (a llama2.c tokenizer.bin), got the folder ${tokenizer.name}`);
  return tokenizer.read(tokenizer.main);
}

/**
 * Reads a llama2.c checkpoint and its tokenizer: `tokenizer` when given, else the one llama2.c
 * tokenizer among the files of its folder (a File list holding both; tokenizer.bin, tok512.bin …).
 * @param {import('./sources.js').ModelFolder} folder a folder of one model file (`main`)
 * @param {{tokenizer?: import('./sources.js').ModelFolder|string|null}} [options] tokenizer:
 *   loadModel's option as readModel opened it (a folder of one file), or a file of the folder by name
 * @returns {Promise<{config: object, tokenizer: object, weights: object, training: object}>} config:
 *   LanguageModel.config's fields, family 'llama2c'; tokenizer `{type: 'llama2c', pieces, scores}`
 *   or `{type: 'none', why}`; weights: the core decoder's
 * @throws {MHAError} INVALID_ARGUMENT as readLlama2cCheckpoint, charlmConfig (a size beyond the
 *   runner's), readLlama2cTokenizer and sources.js; a tokenizer that names a folder
 */
export async function read(folder, { tokenizer: given = null } = {}) {
  const { config: lc, tensors } = readLlama2cCheckpoint(await folder.read(folder.main));
  const config = { ...charlmConfig({ ...lc, unk: 0 }), family: 'llama2c' };
  const beside = (folder.files ?? []).filter((n) => n !== folder.main && LLAMA2C_TOKENIZER_NAME.test(n));
  const source = given ?? (beside.length === 1 ? beside[0] : null);
  let tokenizer;
  if (source !== null) {
    const { pieces, scores } = readLlama2cTokenizer(await tokenizerBytes(source, folder), { vocabSize: config.vocabSize });
    tokenizer = { type: 'llama2c', pieces, scores };
    Object.assign(config, { tokenizer: 'llama2c', bos: BOS, eos: EOS });
  } else {
    tokenizer = { type: 'none', why: 'no llama2.c tokenizer was given (loadModel(source, {tokenizer}))' };
    config.tokenizer = 'none';
  }
  const data = Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, v.data]));
  return { config, tokenizer, weights: charlmDecoderWeights(config, data, false), training: { source: 'llama2.c checkpoint', trainedWith: 'llama2.c' } };
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

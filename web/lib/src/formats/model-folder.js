/**
 * The readers `mha.loadModel` loads on its first call: a Hugging Face checkpoint read from a folder
 * (sources.js opens every source as one; hf.js maps the config and the names), and llama2.c
 * checkpoints (`.bin`, format versions 0 and 1) recognized by their bytes. Every file is
 * untrusted: its size is checked before it is read (HF_LIMITS), and each error is an MHAError
 * naming the file.
 * @module model-folder
 */
import { MHAError } from '../engine/errors.js';
import { parseSafetensors } from './safetensors.js';
// where the files come from (sources.js), re-exported for the callers that load this module
export { progressCounter, fileBytes, fetchBytes, openSource, openFolder, readPath, modelFileOf, LLAMA2C_TOKENIZER_NAME } from './sources.js';
import { halfToNumber, bfloat16ToNumber, widen16 } from './half.js';
import { HF_LIMITS, parseJSONFile, hfConfig, hfExpectedShapes, hfTensorName, hfDecoderWeights, hfShardIndex } from './hf.js';
import { readLlama2cCheckpoint, HEADER_FIELDS, HEADER_LIMITS } from './llama2c.js';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', `loadModel: ${msg}`);

/** @typedef {import('./sources.js').ModelFolder} ModelFolder */

/** Reads a safetensors file of the folder; errors name the file. */
function parseShard(bytes, file) {
  try {
    return parseSafetensors(bytes, { keep16: true });
  } catch (e) {
    if (e instanceof MHAError) throw new MHAError(e.code, `loadModel: ${file}: ${e.message}`);
    throw e;
  }
}

/**
 * Reads a Hugging Face model folder: config.json, the weights (model.safetensors or the shards of
 * model.safetensors.index.json), checked against the config.
 * @param {ModelFolder} folder
 * @returns {Promise<{family: string, config: object, hf: object, weights: object, files: string[],
 *   fileType: 'float16'|'bfloat16'|null}>} config: LanguageModel.config fields; weights: the core
 *   decoder's weights, float16 or bfloat16 tensors as Uint16Arrays of fileType (formats/half.js
 *   applyWeightStorage then sets what the core holds)
 * @throws {MHAError} INVALID_ARGUMENT (a missing or malformed file, a refused config, a missing or
 *   unexpected tensor), SHAPE_MISMATCH (a tensor's shape), NON_FINITE (a NaN/Inf weight): each
 *   message names the file and the key or tensor
 */
export async function readHFFolder(folder) {
  const cfgBytes = await folder.read('config.json', { maxBytes: HF_LIMITS.configBytes, optional: true });
  if (!cfgBytes) {
    throw invalid(`config.json: missing in the model folder ${folder.name} (${folder.absent?.('config.json') ?? 'absent'}; ` +
      'a Hugging Face model folder holds config.json and model.safetensors)');
  }
  const { family, config, hf } = hfConfig(parseJSONFile(cfgBytes, 'config.json', HF_LIMITS.configBytes));
  const expected = hfExpectedShapes(family, config);
  const tensors = {};
  const files = ['config.json'];
  const take = (parsed, file, only) => {
    for (const [stored, t] of Object.entries(parsed.tensors)) {
      if (only && only.get(stored) !== file) continue;
      const name = hfTensorName(family, stored);
      if (name === null) continue;
      if (!expected[name]) {
        throw invalid(`${file}: tensor "${stored}" is not part of a ${family === 'gpt2' ? 'GPT2LMHeadModel' : 'LlamaForCausalLM'} of this config.json (an option the config does not declare?)`);
      }
      tensors[name] = { t, file, stored, dtype: parsed.dtypes[stored] };
    }
  };
  // each file's bytes are dropped once parsed (only its tensors are kept), shard by shard
  let single = await folder.read('model.safetensors', { optional: true });
  if (single) {
    files.push('model.safetensors');
    const parsed = parseShard(single, 'model.safetensors');
    single = null;
    take(parsed, 'model.safetensors');
  } else {
    const F = 'model.safetensors.index.json';
    const ib = await folder.read(F, { maxBytes: HF_LIMITS.indexBytes, optional: true });
    if (!ib) throw invalid(`model.safetensors: missing in the model folder ${folder.name}, and no ${F} (PyTorch .bin weights are not read: convert them to safetensors)`);
    const { weightMap, shards } = hfShardIndex(parseJSONFile(ib, F, HF_LIMITS.indexBytes));
    files.push(F);
    for (const shard of shards) {
      const parsed = parseShard(await folder.read(shard), shard);
      files.push(shard);
      for (const [name, file] of weightMap) {
        if (file === shard && !parsed.tensors[name]) throw invalid(`${shard}: tensor "${name}" is missing (${F} places it in this shard)`);
      }
      take(parsed, shard, weightMap);
    }
  }
  const t = {};
  // 16-bit tensors stay 16-bit (the core keeps 16-bit matrices: loadModel's weightStorage); a folder
  // mixing float16 and bfloat16 keeps the first type met 16-bit and widens the other.
  let fileType = null;
  for (const [name, shape] of Object.entries(expected)) {
    const e = tensors[name];
    if (!e) throw invalid(`tensor "${name}" is missing from ${files.slice(1).join(', ')} (expected shape [${shape.join(', ')}] for this config.json)`);
    const s = e.t.shape;
    if (s.length !== shape.length || s.some((v, i) => v !== shape[i])) {
      throw new MHAError('SHAPE_MISMATCH', `loadModel: ${e.file}: tensor "${e.stored}": expected shape [${shape.join(', ')}] for this config.json, got [${s.join(', ')}]`);
    }
    let data = e.t.data;
    if (data instanceof Uint16Array) {
      const type = e.dtype === 'BF16' ? 'bfloat16' : 'float16';
      const m = type === 'bfloat16' ? 0x7f80 : 0x7c00;
      for (let i = 0; i < data.length; i++) {
        if ((data[i] & m) === m) {
          const v = type === 'bfloat16' ? bfloat16ToNumber(data[i]) : halfToNumber(data[i]);
          throw new MHAError('NON_FINITE', `loadModel: ${e.file}: tensor "${e.stored}" has ${v} at flat index ${i}`);
        }
      }
      fileType ??= type;
      if (type !== fileType) data = widen16(data, type);
    } else {
      for (let i = 0; i < data.length; i++) {
        if (!Number.isFinite(data[i])) throw new MHAError('NON_FINITE', `loadModel: ${e.file}: tensor "${e.stored}" has ${data[i]} at flat index ${i}`);
      }
    }
    t[name] = data;
    delete tensors[name];
  }
  return { family, config, hf, weights: hfDecoderWeights(family, config, t), files, fileType };
}

/** llama2.c version-1 header magic: "ak42" as a little-endian uint32 (bytes "24ka"). */
export const LLAMA2C_MAGIC = 0x616b3432;

/**
 * Which kind of single model file `bytes` hold: 'llama2c' (version 0: the header's seven int32
 * within HEADER_LIMITS and the file length it implies; version 1: the "ak42" magic), else
 * 'safetensors' (whose parser gives the errors).
 */
export function sniffModelFile(bytes) {
  if (bytes.length >= 8) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (dv.getUint32(0, true) === LLAMA2C_MAGIC) return 'llama2c';
    if (bytes.length >= 28 && bytes[8] !== 0x7b) {
      const header = HEADER_FIELDS.map((_, i) => dv.getInt32(4 * i, true));
      const ok = header.every((v, i) => { const a = HEADER_FIELDS[i] === 'vocab_size' ? Math.abs(v) : v; return a > 0 && a <= HEADER_LIMITS[HEADER_FIELDS[i]]; });
      if (ok) {
        const [d, f, L, H, G, V, S] = header.map(Math.abs);
        const kv = (d / H) * G;
        const floats = V * d + L * (2 * d + d * d * 2 + 2 * kv * d + 3 * f * d) + d + S * (d / H) + (header[5] < 0 ? V * d : 0);
        if (bytes.length === 28 + 4 * floats) return 'llama2c';
      }
    }
  }
  return 'safetensors';
}

/**
 * Reads a llama2.c checkpoint of either format version: version 0 (legacy export, no magic:
 * readLlama2cCheckpoint) or version 1 (llama2.c export.py `version1_export`: uint32 magic "ak42",
 * int32 version 1, the seven int32 of version 0, uint8 shared_classifier, zeros to byte 256; then
 * float32 arrays: every layer's attention RMSNorm [L, d], every FFN RMSNorm [L, d], the final norm
 * [d], the token embedding [V, d], then W_q [L, d, d], W_k, W_v [L, kv_dim, d], W_o [L, d, d],
 * w1 [L, f, d], w2 [L, d, f], w3 [L, f, d], and the classifier [V, d] unless shared). Version 2
 * (int8, Q8_0) is refused.
 * @param {Uint8Array} bytes
 * @returns {{config: object, tensors: object}} as readLlama2cCheckpoint
 * @throws {MHAError} INVALID_ARGUMENT naming the header field or tensor
 */
export function readLlama2cAnyVersion(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 8 || dv.getUint32(0, true) !== LLAMA2C_MAGIC) return readLlama2cCheckpoint(bytes);
  const version = dv.getInt32(4, true);
  if (version !== 1) throw invalid(`llama2c checkpoint: header version must be 1 (float32; version 2 is int8-quantized, not read), got ${version}`);
  if (bytes.length < 256) throw invalid(`llama2c checkpoint: file length must be at least 256 bytes (the version-1 header), got ${bytes.length}`);
  const shared = bytes[36];
  if (shared !== 0 && shared !== 1) throw invalid(`llama2c checkpoint: header shared_classifier must be 0 or 1, got ${shared}`);
  // Rewrite as version 0 (header + arrays in its order) and read that: one checked reader of sizes.
  const header = HEADER_FIELDS.map((_, i) => dv.getInt32(8 + 4 * i, true));
  for (let i = 0; i < 7; i++) {
    const v = Math.abs(header[i]), name = HEADER_FIELDS[i];
    if (!(v > 0) || v > HEADER_LIMITS[name]) throw invalid(`llama2c checkpoint: header ${name} must be in 1..${HEADER_LIMITS[name]}, got ${header[i]}`);
  }
  const [d, f, L, H, G, V, S] = header;
  if (d % H !== 0 || (d / H) % 2 !== 0 || H % G !== 0) {
    throw invalid(`llama2c checkpoint: header dim ${d}, n_heads ${H}, n_kv_heads ${G}: n_heads must divide dim into an even head size and n_kv_heads must divide n_heads`);
  }
  const hs = d / H, kv = G * hs;
  const parts = [['attn_norm', L * d], ['ffn_norm', L * d], ['norm', d], ['emb', V * d], ['wq', L * d * d], ['wk', L * kv * d],
    ['wv', L * kv * d], ['wo', L * d * d], ['w1', L * f * d], ['w2', L * d * f], ['w3', L * f * d]];
  if (!shared) parts.push(['out', V * d]);
  const total = parts.reduce((n, [, c]) => n + c, 0);
  if (bytes.length !== 256 + 4 * total) {
    throw invalid(`llama2c checkpoint: file length must be ${256 + 4 * total} bytes for the version-1 header (${HEADER_FIELDS.map((k, i) => `${k} ${header[i]}`).join(', ')}, shared_classifier ${shared}), got ${bytes.length}`);
  }
  const at = {};
  let off = 256;
  for (const [name, count] of parts) { at[name] = bytes.subarray(off, off + 4 * count); off += 4 * count; }
  const per = (name, l, size) => at[name].subarray(l * 4 * size, (l + 1) * 4 * size);
  const chunks = [new Uint8Array(new Int32Array([d, f, L, H, G, shared ? V : -V, S]).buffer), at.emb];
  const layerOrder = [['attn_norm', d], ['wq', d * d], ['wk', kv * d], ['wv', kv * d], ['wo', d * d], ['ffn_norm', d], ['w1', f * d], ['w2', d * f], ['w3', f * d]];
  for (const [name, size] of layerOrder) for (let l = 0; l < L; l++) chunks.push(per(name, l, size));
  chunks.push(at.norm, new Uint8Array(4 * S * hs));   // version 0's RoPE tables (unused by the reader)
  if (!shared) chunks.push(at.out);
  const v0 = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) { v0.set(c, o); o += c.length; }
  return readLlama2cCheckpoint(v0);
}

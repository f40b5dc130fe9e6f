/**
 * Where a model's files come from, for `mha.loadModel`: a model folder (a base URL ending in "/",
 * a directory path or `file:` URL in Node, a `FileSystemDirectoryHandle` or a list of `File`s in
 * the browser) holding a Hugging Face checkpoint (hf.js), and llama2.c checkpoints (`.bin`, format
 * versions 0 and 1) recognized by their bytes. Every file is untrusted: its size is checked before
 * it is read (HF_LIMITS), and each error is an MHAError naming the file.
 * @module model-folder
 */
import { MHAError } from '../engine/errors.js';
import { parseSafetensors } from './safetensors.js';
import { halfToNumber, bfloat16ToNumber, widen16 } from './half.js';
import { HF_LIMITS, parseJSONFile, hfConfig, hfExpectedShapes, hfTensorName, hfDecoderWeights, hfShardIndex } from './hf.js';
import { readLlama2cCheckpoint, HEADER_FIELDS, HEADER_LIMITS } from './llama2c.js';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', `loadModel: ${msg}`);
const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node) && typeof window === 'undefined';
const nodeImport = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ name);

/**
 * A folder: `read(file, {maxBytes, optional})` gives the file's bytes (null when optional and absent).
 * @typedef {{name: string, read: (file: string, opts?: {maxBytes?: number, optional?: boolean}) => Promise<Uint8Array|null>}} ModelFolder
 */

function tooBig(file, size, maxBytes) {
  return invalid(`${file}: file size must be at most ${maxBytes} bytes, got ${size}`);
}

/**
 * Progress of a load: `loadModel`'s `progress` callback, called as the bytes of each file arrive.
 * Each event is `{file, loaded, total, fraction}`: `loaded` the bytes read so far of every file of
 * the model (never decreases); `total` the sizes of the files read so far plus the one being read
 * (known before its bytes: a file's size, a `File`'s size, an http Content-Length; it grows when
 * the next file of a folder starts, so `fraction` = loaded / total can step back then), or null
 * while a size is unknown (an http response without Content-Length, or compressed); the last
 * event has loaded === total and fraction 1.
 * @typedef {{file: string, loaded: number, total: number|null, fraction: number|null}} LoadProgress
 */

/** Read granularity of files and File objects, and the step between progress events. */
const CHUNK = 8 * 2 ** 20;

/**
 * A progress counter over the files of one load (the `progress` option of loadModel), or a
 * no-op when `callback` is absent.
 * @param {((p: LoadProgress) => void)|undefined} callback
 * @returns {{start(file: string, size: number|null): void, add(file: string, n: number): void, end(file: string): void}}
 */
export function progressCounter(callback) {
  if (callback !== undefined && callback !== null && typeof callback !== 'function') {
    throw invalid(`progress must be a function ({file, loaded, total, fraction}) => void, got ${typeof callback}`);
  }
  let done = 0, loaded = 0, size = 0, known = true;
  const emit = (file) => {
    if (!callback) return;
    const total = known ? done + size : null;
    callback({ file, loaded, total, fraction: total ? Math.min(1, loaded / total) : total === 0 ? 1 : null });
  };
  return {
    start(file, n) { size = n ?? 0; known = known && n !== null && n !== undefined; emit(file); },
    add(file, n) { loaded += n; emit(file); },
    end(file) {   // the file's real length (a compressed body may differ from its Content-Length)
      done = loaded; size = 0;
      if (!known) { known = true; }
      emit(file);
    },
  };
}

/** A no-op progress counter. */
const NO_PROGRESS = progressCounter(undefined);

/**
 * The body of an http response as bytes, at most maxBytes, counted by `pc` as it arrives. With a
 * Content-Length (and no Content-Encoding), one buffer of that size is filled in place.
 */
async function responseBytes(res, file, maxBytes, pc) {
  const enc = res.headers.get('content-encoding');
  const lenHeader = res.headers.get('content-length');
  const len = lenHeader !== null && /^\d+$/.test(lenHeader.trim()) && (!enc || enc === 'identity') ? Number(lenHeader) : null;
  if (len !== null && len > maxBytes) { res.body?.cancel?.(); throw tooBig(file, len, maxBytes); }
  pc.start(file, len);
  if (!res.body || typeof res.body.getReader !== 'function') {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length > maxBytes) throw tooBig(file, bytes.length, maxBytes);
    pc.add(file, bytes.length);
    pc.end(file);
    return bytes;
  }
  const reader = res.body.getReader();
  let out = len !== null ? new Uint8Array(len) : null;
  const parts = [];
  let n = 0, since = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (n + value.length > maxBytes) { reader.cancel().catch(() => {}); throw tooBig(file, n + value.length, maxBytes); }
    if (out && n + value.length <= out.length) out.set(value, n);
    else {
      if (out) { parts.push(out.subarray(0, n)); out = null; }   // longer than its Content-Length
      parts.push(value);
    }
    n += value.length;
    since += value.length;
    if (since >= CHUNK) { pc.add(file, since); since = 0; }
  }
  pc.add(file, since);
  pc.end(file);
  if (out) return n === out.length ? out : out.subarray(0, n);
  const bytes = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { bytes.set(p, o); o += p.length; }
  return bytes;
}

/** The bytes of a Blob/File of known size, read in chunks (so that progress can be told). */
async function blobBytes(f, file, pc) {
  pc.start(file, f.size);
  if (f.size <= CHUNK || typeof f.slice !== 'function') {
    const bytes = new Uint8Array(await f.arrayBuffer());
    pc.add(file, bytes.length);
    pc.end(file);
    return bytes;
  }
  const bytes = new Uint8Array(f.size);
  for (let o = 0; o < f.size; o += CHUNK) {
    const part = new Uint8Array(await f.slice(o, Math.min(f.size, o + CHUNK)).arrayBuffer());
    bytes.set(part, o);
    pc.add(file, part.length);
  }
  pc.end(file);
  return bytes;
}

/**
 * Node: the bytes of a file of the file system (a path or a file: URL), read in chunks into one
 * buffer of its size (so that progress can be told); null when `optional` and absent.
 */
export async function fileBytes(p, file, { maxBytes = Infinity, optional = false, progress = NO_PROGRESS } = {}) {
  const fs = await nodeImport('node:fs/promises');
  let fh;
  try {
    fh = await fs.open(p, 'r');
  } catch (e) {
    if (e.code === 'ENOENT' && optional) return null;
    throw invalid(`${file}: cannot read ${String(p)}: ${e.code || e.message}`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw invalid(`${file}: ${String(p)} is not a file`);
    if (st.size > maxBytes) throw tooBig(file, st.size, maxBytes);
    progress.start(file, st.size);
    const bytes = new Uint8Array(st.size);
    let o = 0;
    while (o < bytes.length) {
      const { bytesRead } = await fh.read(bytes, o, Math.min(CHUNK, bytes.length - o), o);
      if (bytesRead === 0) break;   // the file shrank while being read
      o += bytesRead;
      progress.add(file, bytesRead);
    }
    progress.end(file);
    return o === bytes.length ? bytes : bytes.subarray(0, o);
  } catch (e) {
    if (e instanceof MHAError) throw e;
    throw invalid(`${file}: cannot read ${String(p)}: ${e.code || e.message}`);
  } finally {
    await fh.close();
  }
}

/**
 * The bytes at an http(s) URL (fetch), counted by `progress`.
 * @param {URL|string} url
 * @param {string} file the name used in errors
 */
export async function fetchBytes(url, file, { maxBytes = Infinity, optional = false, progress = NO_PROGRESS } = {}) {
  const href = String(url);
  let res;
  try {
    res = await fetch(href);
  } catch (e) {
    throw invalid(`${file}: cannot fetch ${href}: ${e.message}`);
  }
  if (res.status === 404 && optional) return null;
  if (!res.ok) throw invalid(`${file}: fetching ${href} gave HTTP ${res.status}`);
  return responseBytes(res, file, maxBytes, progress);
}

/** A folder over a base URL (fetched; `file:` URLs read from disk in Node). */
function urlFolder(base, progress) {
  if (base.protocol === 'file:' && isNode) return dirFolder(base, progress);
  return {
    name: base.href,
    read: (file, { maxBytes = Infinity, optional = false } = {}) => fetchBytes(new URL(file, base), file, { maxBytes, optional, progress }),
  };
}

/** A folder over a directory of the file system (Node): a path or a file: URL. */
function dirFolder(dir, progress) {
  return {
    name: String(dir),
    read(file, { maxBytes = Infinity, optional = false } = {}) {
      const p = dir instanceof URL ? new URL(file, dir) : `${String(dir).replace(/[\\/]+$/, '')}/${file}`;
      return fileBytes(p, file, { maxBytes, optional, progress });
    },
  };
}

/** A folder over File objects (an <input type=file webkitdirectory> list, drag and drop) by name. */
function fileListFolder(files, progress) {
  const byName = new Map();
  for (const f of files) byName.set(f.name, f);
  return {
    name: 'the chosen files',
    async read(file, { maxBytes = Infinity, optional = false } = {}) {
      const f = byName.get(file);
      if (!f) { if (optional) return null; throw invalid(`${file}: not among the chosen files (${[...byName.keys()].slice(0, 12).join(', ')})`); }
      if (f.size > maxBytes) throw tooBig(file, f.size, maxBytes);
      return blobBytes(f, file, progress);
    },
  };
}

/** A folder over a FileSystemDirectoryHandle (File System Access API). */
function handleFolder(dir, progress) {
  return {
    name: dir.name,
    async read(file, { maxBytes = Infinity, optional = false } = {}) {
      let fh;
      try {
        fh = await dir.getFileHandle(file);
      } catch (e) {
        if (optional && e && e.name === 'NotFoundError') return null;
        throw invalid(`${file}: cannot open it in the folder "${dir.name}": ${e && e.message}`);
      }
      const f = await fh.getFile();
      if (f.size > maxBytes) throw tooBig(file, f.size, maxBytes);
      return blobBytes(f, file, progress);
    },
  };
}

const hasScheme = (s) => /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !/^[a-zA-Z]:[\\/]/.test(s);

/**
 * The folder a loadModel source names, or null when it names one file (bytes, a URL not ending
 * in "/", a file path).
 * @param {*} source
 * @param {ReturnType<typeof progressCounter>} [progress] counts the bytes of the files read
 * @returns {Promise<ModelFolder|null>}
 */
export async function openFolder(source, progress = NO_PROGRESS) {
  if (source && typeof source === 'object' && source.kind === 'directory' && typeof source.getFileHandle === 'function') return handleFolder(source, progress);
  const isFile = (f) => f && typeof f === 'object' && typeof f.name === 'string' && typeof f.arrayBuffer === 'function';
  if ((typeof FileList !== 'undefined' && source instanceof FileList) || (Array.isArray(source) && source.length && source.every(isFile))) {
    return fileListFolder(Array.from(source), progress);
  }
  if (source instanceof URL) return source.pathname.endsWith('/') ? urlFolder(source, progress) : null;
  if (typeof source !== 'string') return null;
  if (isNode && !hasScheme(source)) {
    const fs = await nodeImport('node:fs/promises');
    const st = await fs.stat(source).catch(() => null);
    return st && st.isDirectory() ? dirFolder(source, progress) : null;
  }
  if (source.endsWith('/')) {
    const base = typeof location !== 'undefined' ? new URL(source, location.href) : new URL(source);
    return urlFolder(base, progress);
  }
  return null;
}

/** Node: the bytes of a plain file path (not a URL), or null when `source` is not one. */
export async function readPath(source, progress = NO_PROGRESS) {
  if (!isNode || typeof source !== 'string' || hasScheme(source)) return null;
  try {
    return await fileBytes(source, source.split(/[\\/]/).pop(), { progress });
  } catch (e) {
    throw invalid(`cannot read ${source}: ${String(e.message).replace(/^loadModel: [^:]*: cannot read [^:]*: /, '')}`);
  }
}

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
  if (!cfgBytes) throw invalid(`config.json: missing in the model folder ${folder.name} (a Hugging Face model folder holds config.json and model.safetensors)`);
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

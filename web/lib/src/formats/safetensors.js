/**
 * A reader of the safetensors format (Hugging Face): 8-byte little-endian header length N, N bytes
 * of JSON header `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {str: str}}`,
 * then the tensors' raw little-endian bytes, offsets relative to the end of the header.
 * Spec: https://github.com/huggingface/safetensors ("Format"). `parseSafetensors` reads a file
 * given whole; `openSafetensors` reads a file of a model folder by ranges (its header, then the
 * tensors asked for), with the same checks (headerLength, parseHeader).
 *
 * A file is untrusted input: every length, offset, dtype and shape is checked before a byte is
 * read, and every failure is an MHAError (INVALID_ARGUMENT) that names the tensor or header field,
 * the expected and the actual value.
 * @module safetensors
 */
import { MHAError } from '../engine/errors.js';
import { Tensor } from '../engine/tensor.js';

/** Largest header accepted (the reference implementation's limit is 100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** Bytes per element of each supported dtype. */
const ITEM_BYTES = { F32: 4, F16: 2, BF16: 2, F64: 8 };

const bad = (msg) => new MHAError('INVALID_ARGUMENT', `safetensors: ${msg}`);

/**
 * What a file that is not safetensors starts with, for the error message: its first bytes as text
 * when they are printable (`<!doctype html>`, `import …`), else in hex, with a guess at the kind
 * of file (an HTML page, such as a server's "not found" page; JSON; JavaScript; gzip; zip).
 * @param {Uint8Array} bytes the whole file
 * @returns {string} e.g. 'starts with `<!doctype html>` (an HTML page: a wrong URL, or a server\'s error page?)'
 */
export function describeStart(bytes) {
  const first = bytes.subarray(0, 32);
  let i = 0;
  if (first[0] === 0xef && first[1] === 0xbb && first[2] === 0xbf) i = 3;   // UTF-8 byte-order mark
  const text = Array.from(first.subarray(i), (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : b === 9 || b === 10 || b === 13 ? ' ' : null));
  const printable = text.length > 0 && text.every((c) => c !== null);
  const shown = printable ? `\`${text.join('').trim().slice(0, 24)}\`` : `bytes ${Array.from(first.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ')}`;
  const t = printable ? text.join('').trimStart().toLowerCase() : '';
  const kind = t.startsWith('<!doctype') || t.startsWith('<html') || t.startsWith('<head') || t.startsWith('<') ? 'an HTML or XML page: a wrong URL, or a server\'s error page?'
    : t.startsWith('{') || t.startsWith('[') ? 'JSON text: a manifest or a config, not the model file?'
      : /^(import|export|const|let|var|function|\/\/|\/\*|"use strict"|'use strict')/.test(t) ? 'JavaScript source'
        : first[0] === 0x1f && first[1] === 0x8b ? 'gzip data: a compressed file served without Content-Encoding?'
          : first[0] === 0x50 && first[1] === 0x4b ? 'a zip archive (a PyTorch .pt/.bin checkpoint?)'
            : printable ? 'text' : '';
  return `starts with ${shown}${kind ? ` (${kind})` : ''}`;
}

/** IEEE half → float, by bits. */
function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

let HALF_TABLE = null;
/** Float32 value of each of the 65536 half-precision bit patterns (built once, 256 KB). */
function halfTable() {
  if (!HALF_TABLE) {
    HALF_TABLE = new Float32Array(65536);
    for (let i = 0; i < 65536; i++) HALF_TABLE[i] = halfToFloat(i);
  }
  return HALF_TABLE;
}

/** Converts `count` elements of `dtype` at bytes[offset..] (little-endian) to a new Float32Array. */
function decode(bytes, offset, count, dtype) {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * ITEM_BYTES[dtype]);
  const out = new Float32Array(count);
  if (dtype === 'F32') {
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
  } else if (dtype === 'F16') {
    const table = halfTable();
    for (let i = 0; i < count; i++) out[i] = table[view.getUint16(2 * i, true)];
  } else if (dtype === 'BF16') {
    const u = new Uint32Array(1);
    const f = new Float32Array(u.buffer);
    for (let i = 0; i < count; i++) { u[0] = view.getUint16(2 * i, true) << 16; out[i] = f[0]; }
  } else {
    for (let i = 0; i < count; i++) out[i] = view.getFloat64(8 * i, true);
  }
  return out;
}

/** Uint8Array over an ArrayBuffer or any typed array / DataView, without copying. */
export function asBytes(source, name = 'bytes') {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new MHAError('INVALID_ARGUMENT', `${name}: expected an ArrayBuffer or a Uint8Array, got ${source === null ? 'null' : typeof source}`);
}

/** A copy of `count` 16-bit values at bytes[offset..] (little-endian) as a Uint16Array. */
function raw16(bytes, offset, count) {
  const out = new Uint16Array(count);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(bytes.subarray(offset, offset + 2 * count));
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 2 * count);
    for (let i = 0; i < count; i++) out[i] = view.getUint16(2 * i, true);
  }
  return out;
}
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The header length N of a safetensors file, from its first bytes and its size, checked: a file
 * that is not safetensors (text, gzip, zip) is said as what it starts with (describeStart).
 * @param {Uint8Array} first the file's first bytes: at least min(size, 32) of them
 * @param {number} size the file's size in bytes
 * @returns {number} N, with 2 ≤ N ≤ MAX_HEADER_BYTES and 8 + N ≤ size
 * @throws {MHAError} INVALID_ARGUMENT: a file shorter than 8 bytes or than its header length says,
 *   a header length over MAX_HEADER_BYTES or under 2, a file that is not safetensors
 */
export function headerLength(first, size) {
  if (size < 8) throw bad(`the file has ${size} bytes, fewer than the 8 of the header length`);
  const dv = new DataView(first.buffer, first.byteOffset, 8);
  const n = dv.getUint32(4, true) * 2 ** 32 + dv.getUint32(0, true);
  // a safetensors file's header is a JSON object right after its 8-byte length: anything else is
  // another kind of file (an HTML 404 page, a script, a manifest), said as what it starts with
  // (text of any kind gives a length of 2^37 or more: its bytes 4–7 are printable, ≥ 0x20)
  const text8 = Array.from(first.subarray(0, 8)).every((b) => (b >= 0x20 && b < 0x7f) || b === 9 || b === 10 || b === 13 || b >= 0x80);
  const magic = (first[0] === 0x1f && first[1] === 0x8b) || (first[0] === 0x50 && first[1] === 0x4b && first[2] < 9);
  if ((text8 || magic) && (n > MAX_HEADER_BYTES || 8 + n > size)) {
    throw bad(`not a safetensors file: it ${describeStart(first)}`);
  }
  if (n > MAX_HEADER_BYTES) throw bad(`header length ${n} exceeds the limit of ${MAX_HEADER_BYTES} bytes`);
  if (8 + n > size) throw bad(`header length ${n} runs past the end of the file (${size} bytes)`);
  if (n < 2) throw bad(`header length ${n} is too short for a JSON object`);
  return n;
}

/**
 * A safetensors header (the N bytes after the length) parsed and checked against the file's size.
 * @param {Uint8Array} json the header's bytes
 * @param {number} size the file's size in bytes
 * @returns {{metadata: Object<string, string>, entries: Array<{name: string, dtype: string,
 *   shape: number[], begin: number, end: number, count: number}>}} entries in the header's order;
 *   begin and end are byte offsets in the file (the data's offsets plus 8 + N)
 * @throws {MHAError} INVALID_ARGUMENT: a header that is not a JSON object, a tensor entry with an
 *   unknown dtype, a bad shape, offsets outside the data or not matching the shape, overlapping
 *   tensors, a metadata value that is not a string
 */
export function parseHeader(json, size) {
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json));
  } catch (e) {
    throw bad(`the header is not valid UTF-8 JSON (${e.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw bad(`the header must be a JSON object, got ${Array.isArray(header) ? 'an array' : header === null ? 'null' : typeof header}`);
  }
  const dataStart = 8 + json.length;
  const dataBytes = size - dataStart;
  const metadata = {};
  if ('__metadata__' in header) {
    const m = header.__metadata__;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw bad('__metadata__ must be an object of strings');
    for (const [k, v] of Object.entries(m)) {
      if (typeof v !== 'string') throw bad(`__metadata__.${k} must be a string, got ${v === null ? 'null' : typeof v}`);
      metadata[k] = v;
    }
  }
  const entries = [];
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw bad(`tensor "${name}": expected an object {dtype, shape, data_offsets}`);
    if (!Object.prototype.hasOwnProperty.call(ITEM_BYTES, e.dtype)) {
      throw bad(`tensor "${name}": dtype must be one of ${Object.keys(ITEM_BYTES).join(', ')}, got ${JSON.stringify(e.dtype)}`);
    }
    if (!Array.isArray(e.shape) || e.shape.length > 8 || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw bad(`tensor "${name}": shape must be an array of at most 8 non-negative integers, got ${JSON.stringify(e.shape)}`);
    }
    const off = e.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isSafeInteger(d) && d >= 0) || off[0] > off[1]) {
      throw bad(`tensor "${name}": data_offsets must be [begin, end] with 0 ≤ begin ≤ end, got ${JSON.stringify(off)}`);
    }
    if (off[1] > dataBytes) throw bad(`tensor "${name}": data_offsets ${JSON.stringify(off)} run past the end of the data (${dataBytes} bytes)`);
    const count = e.shape.reduce((a, b) => a * b, 1);
    const need = count * ITEM_BYTES[e.dtype];
    if (need !== off[1] - off[0]) {
      throw bad(`tensor "${name}": shape ${JSON.stringify(e.shape)} of ${e.dtype} needs ${need} bytes, data_offsets give ${off[1] - off[0]}`);
    }
    entries.push({ name, dtype: e.dtype, shape: e.shape.slice(), begin: dataStart + off[0], end: dataStart + off[1], count });
  }
  const sorted = entries.slice().sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].begin < sorted[i - 1].end) throw bad(`tensors "${sorted[i - 1].name}" and "${sorted[i].name}" overlap`);
  }
  return { metadata, entries };
}

/**
 * One tensor's values from the bytes that hold it: float32 (F32, F16, BF16 and F64 converted), or
 * with keep16 the F16 and BF16 bit patterns as a Uint16Array. With `view`, an F32 (or kept 16-bit)
 * tensor at an aligned offset of a little-endian machine is a view of `bytes`, not a copy (bytes
 * read for this tensor's group alone).
 * @param {Uint8Array} bytes
 * @param {number} at the tensor's first byte in `bytes`
 * @param {{dtype: string, count: number}} e its header entry
 * @param {{keep16?: boolean, view?: boolean}} [opts]
 * @returns {Float32Array|Uint16Array}
 */
export function tensorData(bytes, at, e, { keep16 = false, view = false } = {}) {
  const is16 = e.dtype === 'F16' || e.dtype === 'BF16';
  const item = is16 && keep16 ? 2 : e.dtype === 'F32' ? 4 : 0;
  if (view && item && LITTLE_ENDIAN && (bytes.byteOffset + at) % item === 0) {
    return item === 2 ? new Uint16Array(bytes.buffer, bytes.byteOffset + at, e.count) : new Float32Array(bytes.buffer, bytes.byteOffset + at, e.count);
  }
  return keep16 && is16 ? raw16(bytes, at, e.count) : decode(bytes, at, e.count, e.dtype);
}

/**
 * Parses a safetensors file.
 * @param {ArrayBuffer|ArrayBufferView} source the whole file
 * @param {{keep16?: boolean}} [opts] keep16: F16 and BF16 tensors stay 16-bit, their data a
 *   Uint16Array of the stored bit patterns (formats/half.js reads them), instead of float32
 * @returns {{metadata: Object<string, string>, tensors: Object<string, Tensor>, dtypes: Object<string, string>}}
 *   every tensor converted to float32 (F32, F16, BF16 and F64 are read; shape [] is one value),
 *   F16 and BF16 ones kept 16-bit with keep16; each a copy (the file's bytes can be dropped);
 *   `dtypes` gives each tensor's stored dtype
 * @throws {MHAError} INVALID_ARGUMENT: as headerLength and parseHeader
 */
export function parseSafetensors(source, opts = {}) {
  const bytes = asBytes(source, 'parseSafetensors');
  const n = headerLength(bytes, bytes.length);
  const { metadata, entries } = parseHeader(bytes.subarray(8, 8 + n), bytes.length);
  const tensors = {};
  const dtypes = {};
  for (const e of entries) {
    tensors[e.name] = Tensor.wrap(tensorData(bytes, e.begin, e, { keep16: opts.keep16 }), e.shape);
    dtypes[e.name] = e.dtype;
  }
  return { metadata, tensors, dtypes };
}

/**
 * Gaps of up to this many bytes between the tensors of one read are read too (one range, not two):
 * padding and scalars such as GPT-2's `masked_bias`, not its 4 MB mask buffers nor a block of
 * another part (read again with that part; only in a tiny model can one lie within the gap).
 */
const MERGE_GAP = 4 * 1024;

/**
 * A safetensors file of a model folder, read by ranges (sources.js: a folder's
 * `read(file, {offset, length})`): the header when opened, each tensor when asked, bytes that no
 * tensor asked for never (a GPT-2 file's causal-mask buffers). The tensors of one `read` that lie
 * close together in the file come in one range. A folder that cannot tell the file's size (a
 * server that hides Content-Range from the page) gives the whole file, read once.
 * @param {import('./sources.js').ModelFolder} folder
 * @param {string} file
 * @param {{optional?: boolean}} [opts] optional: null when the file is absent
 * @returns {Promise<{metadata: Object<string, string>, entries: Map<string, {name: string, dtype: string,
 *   shape: number[], begin: number, end: number, count: number}>,
 *   read: (names: string[], keep16?: boolean) => Promise<Map<string, Float32Array|Uint16Array>>,
 *   done: () => void}|null>} entries by name (parseHeader's); read: the named tensors' values
 *   (tensorData: F16 and BF16 kept 16-bit with keep16), views of the bytes read for this call;
 *   done: the reader needs nothing more of the file (its progress counts the rest as read)
 * @throws {MHAError} INVALID_ARGUMENT: as headerLength and parseHeader (messages begin
 *   "safetensors: "); a file that ends before a tensor's data (it changed while being read);
 *   the folder's errors
 */
export async function openSafetensors(folder, file, { optional = false } = {}) {
  const first = await folder.read(file, { offset: 0, length: 32, optional });
  if (first === null) return null;
  let size = await folder.size(file);
  let whole = null;
  if (size === null) {
    whole = await folder.read(file);
    size = whole.length;
  }
  const range = async (offset, length) => {
    const bytes = whole ? whole.subarray(offset, offset + length) : length ? await folder.read(file, { offset, length }) : new Uint8Array(0);
    if (bytes.length < length) throw bad(`the file ends at byte ${offset + bytes.length}, before byte ${offset + length} that its header promises (it changed while being read?)`);
    return bytes;
  };
  const n = headerLength(whole ?? first, size);
  let json = (whole ?? first).subarray(8, 8 + n);
  if (json.length < n) {
    const rest = await range(first.length, 8 + n - first.length);
    json = new Uint8Array(n);
    json.set(first.subarray(8));
    json.set(rest, first.length - 8);
  }
  const { metadata, entries } = parseHeader(json, size);
  const byName = new Map(entries.map((e) => [e.name, e]));
  return {
    metadata, entries: byName,
    async read(names, keep16 = false) {
      const list = names.map((name) => byName.get(name)).sort((a, b) => a.begin - b.begin);
      const out = new Map();
      for (let i = 0; i < list.length;) {
        let j = i + 1, end = list[i].end;
        while (j < list.length && list[j].begin - end <= MERGE_GAP) end = Math.max(end, list[j++].end);
        const start = list[i].begin;
        const bytes = await range(start, end - start);
        for (; i < j; i++) out.set(list[i].name, tensorData(bytes, list[i].begin - start, list[i], { keep16, view: !whole }));
      }
      return out;
    },
    done() {
      whole = null;
      folder.done?.(file);
    },
  };
}

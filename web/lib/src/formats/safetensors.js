/**
 * A reader of the safetensors format (Hugging Face): 8-byte little-endian header length N, N bytes
 * of JSON header `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {str: str}}`,
 * then the tensors' raw little-endian bytes, offsets relative to the end of the header.
 * Spec: https://github.com/huggingface/safetensors ("Format").
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
 * Parses a safetensors file.
 * @param {ArrayBuffer|ArrayBufferView} source the whole file
 * @param {{keep16?: boolean}} [opts] keep16: F16 and BF16 tensors stay 16-bit, their data a
 *   Uint16Array of the stored bit patterns (formats/half.js reads them), instead of float32
 * @returns {{metadata: Object<string, string>, tensors: Object<string, Tensor>, dtypes: Object<string, string>}}
 *   every tensor converted to float32 (F32, F16, BF16 and F64 are read; shape [] is one value),
 *   F16 and BF16 ones kept 16-bit with keep16; `dtypes` gives each tensor's stored dtype
 * @throws {MHAError} INVALID_ARGUMENT: a file shorter than its header length says, a header
 *   length over MAX_HEADER_BYTES, a header that is not a JSON object, a tensor entry with an
 *   unknown dtype, a bad shape, offsets outside the data or not matching the shape, overlapping
 *   tensors, a metadata value that is not a string
 */
export function parseSafetensors(source, opts = {}) {
  const bytes = asBytes(source, 'parseSafetensors');
  if (bytes.length < 8) throw bad(`the file has ${bytes.length} bytes, fewer than the 8 of the header length`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lo = dv.getUint32(0, true);
  const hi = dv.getUint32(4, true);
  const n = hi * 2 ** 32 + lo;
  // a safetensors file's header is a JSON object right after its 8-byte length: anything else is
  // another kind of file (an HTML 404 page, a script, a manifest), said as what it starts with
  // (text of any kind gives a length of 2^37 or more: its bytes 4–7 are printable, ≥ 0x20)
  const text8 = Array.from(bytes.subarray(0, 8)).every((b) => (b >= 0x20 && b < 0x7f) || b === 9 || b === 10 || b === 13 || b >= 0x80);
  const magic = (bytes[0] === 0x1f && bytes[1] === 0x8b) || (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] < 9);
  if ((text8 || magic) && (n > MAX_HEADER_BYTES || 8 + n > bytes.length)) {
    throw bad(`not a safetensors file: it ${describeStart(bytes)}`);
  }
  if (n > MAX_HEADER_BYTES) throw bad(`header length ${n} exceeds the limit of ${MAX_HEADER_BYTES} bytes`);
  if (8 + n > bytes.length) throw bad(`header length ${n} runs past the end of the file (${bytes.length} bytes)`);
  if (n < 2) throw bad(`header length ${n} is too short for a JSON object`);
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw bad(`the header is not valid UTF-8 JSON (${e.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw bad(`the header must be a JSON object, got ${Array.isArray(header) ? 'an array' : header === null ? 'null' : typeof header}`);
  }
  const dataStart = 8 + n;
  const dataBytes = bytes.length - dataStart;
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
    entries.push({ name, dtype: e.dtype, shape: e.shape, begin: off[0], end: off[1], count });
  }
  const sorted = entries.slice().sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].begin < sorted[i - 1].end) throw bad(`tensors "${sorted[i - 1].name}" and "${sorted[i].name}" overlap`);
  }
  const tensors = {};
  const dtypes = {};
  for (const e of entries) {
    const data = opts.keep16 && (e.dtype === 'F16' || e.dtype === 'BF16') ? raw16(bytes, dataStart + e.begin, e.count)
      : decode(bytes, dataStart + e.begin, e.count, e.dtype);
    tensors[e.name] = Tensor.wrap(data, e.shape.slice());
    dtypes[e.name] = e.dtype;
  }
  return { metadata, tensors, dtypes };
}

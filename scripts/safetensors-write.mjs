/**
 * Writing safetensors files (the library only reads them): the model conversion scripts and the
 * tests share this writer. Format (huggingface/safetensors): 8-byte little-endian header length N,
 * N bytes of JSON header (padded with spaces so that the tensor data starts 8-byte aligned), then
 * each tensor's little-endian F32 bytes, row-major, in the header's order.
 * @param {Object<string, string>} metadata `__metadata__` (string → string)
 * @param {Object<string, {data: ArrayLike<number>, shape: number[]}>} tensors written as F32
 * @returns {Uint8Array} the file
 */
export function encodeSafetensors(metadata, tensors) {
  const header = { __metadata__: metadata };
  let off = 0;
  const names = Object.keys(tensors);
  for (const n of names) {
    const len = tensors[n].data.length * 4;
    header[n] = { dtype: 'F32', shape: tensors[n].shape, data_offsets: [off, off + len] };
    off += len;
  }
  const json = JSON.stringify(header);
  const pad = (8 - (new TextEncoder().encode(json).length % 8)) % 8;
  const h = new TextEncoder().encode(json + ' '.repeat(pad));
  const bytes = new Uint8Array(8 + h.length + off);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(h.length), true);
  bytes.set(h, 8);
  let at = 8 + h.length;
  for (const n of names) {
    const d = tensors[n].data instanceof Float32Array ? tensors[n].data : Float32Array.from(tensors[n].data);
    bytes.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), at);
    at += d.byteLength;
  }
  return bytes;
}

// Writing safetensors files in tests (the library only reads them).

/** A safetensors file (F32) from metadata and {name: {data, shape}}, for the tests above. */
export function encodeSafetensors(metadata, tensors) {
  const header = { __metadata__: metadata };
  let off = 0;
  const names = Object.keys(tensors);
  for (const n of names) {
    const len = tensors[n].data.length * 4;
    header[n] = { dtype: 'F32', shape: tensors[n].shape, data_offsets: [off, off + len] };
    off += len;
  }
  const h = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setUint32(0, h.length, true);
  out.set(h, 8);
  let at = 8 + h.length;
  for (const n of names) {
    out.set(new Uint8Array(Float32Array.from(tensors[n].data).buffer), at);
    at += tensors[n].data.length * 4;
  }
  return out;
}

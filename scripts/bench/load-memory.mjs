#!/usr/bin/env node
/**
 * Peak resident memory of `loadModel` on a llama2.c checkpoint (synthetic weights: dim 512, hidden
 * 1376, 4 layers, 8 heads, vocab 4096; 56 MB of float32), format version 1 or 0, for this tree and,
 * with --a, another tree's library, in alternating child processes (a, b, b, a, …). Each child
 * creates an engine, loads a tiny checkpoint (the readers' modules), builds the file, then measures
 * one load: its peak RSS (getrusage maxrss) above the RSS before it, which holds the wasm heap the
 * weights grow into (the same in every tree) and what the reader allocates on the way. A reader
 * that copies the file shows as one file size more.
 *
 *   node scripts/bench/load-memory.mjs [--a /path/to/other/tree] [--version 1|0] [--rounds 3]
 *
 * Prints each child's line and the median per tree, in MB.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { relaxedSimdFlags } from '../node-flags.mjs';
import { libDir } from './tree.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i < 0 ? dflt : process.argv[i + 1]; };

if (process.argv[2] === '--child') {
  const [, , , lib, version] = process.argv;
  const { createMHA } = await import(pathToFileURL(path.join(lib, 'src', 'index.js')));
  const mha = await createMHA({ threads: 1 });
  const [d, f, L, H, G, V, S] = [512, 1376, 4, 8, 8, 4096, 256];
  const kv = (d / H) * G;
  const floats = 2 * L * d + d + V * d + L * (2 * d * d + 2 * kv * d + 3 * f * d) + (version === '0' ? S * (d / H) : 0);
  const start = version === '0' ? 28 : 256;
  const bytes = new Uint8Array(start + 4 * floats);
  const dv = new DataView(bytes.buffer);
  if (version === '0') [d, f, L, H, G, V, S].forEach((v, i) => dv.setInt32(4 * i, v, true));
  else {
    dv.setUint32(0, 0x616b3432, true); dv.setInt32(4, 1, true);
    [d, f, L, H, G, V, S].forEach((v, i) => dv.setInt32(8 + 4 * i, v, true));
    bytes[36] = 1;   // shared classifier
  }
  const w = new Float32Array(bytes.buffer, start);
  let s = 1;
  for (let i = 0; i < w.length; i++) { s = (Math.imul(s, 1103515245) + 12345) >>> 0; w[i] = (s / 2 ** 32 - 0.5) * 0.02; }
  // the readers' modules loaded by a tiny version-1 file (dim 8, one layer), so that only the big load is measured
  const tiny = new Uint8Array(256 + 4 * (2 * 8 + 8 + 6 * 8 + (2 * 64 + 2 * 32 + 3 * 16 * 8)));
  const tv = new DataView(tiny.buffer);
  tv.setUint32(0, 0x616b3432, true); tv.setInt32(4, 1, true);
  [8, 16, 1, 2, 1, 6, 4].forEach((v, i) => tv.setInt32(8 + 4 * i, v, true));
  tiny[36] = 1;
  (await mha.loadModel(tiny)).dispose();
  globalThis.gc(); globalThis.gc();
  const before = process.memoryUsage().rss;
  const lm = await mha.loadModel(bytes);
  const peak = process.resourceUsage().maxRSS * 1024;
  lm.dispose();
  console.log(JSON.stringify({ fileMB: bytes.length / 2 ** 20, peakAboveMB: Math.max(0, peak - before) / 2 ** 20 }));
  process.exit(0);
}

const version = arg('--version', '1'), rounds = Number(arg('--rounds', 3));
const trees = { b: here, ...(arg('--a') ? { a: path.resolve(arg('--a')) } : {}) };
const got = Object.fromEntries(Object.keys(trees).map((k) => [k, []]));
const order = [];
for (let r = 0; r < rounds; r++) order.push(...(r % 2 ? Object.keys(trees).reverse() : Object.keys(trees)));
for (const k of order) {
  const out = spawnSync(process.execPath, [...relaxedSimdFlags(), '--expose-gc', fileURLToPath(import.meta.url), '--child', libDir(trees[k]), version], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`child for ${trees[k]} failed: ${out.stderr}`);
  const m = JSON.parse(out.stdout.trim().split('\n').pop());
  got[k].push(m.peakAboveMB);
  console.log(`${k} ${trees[k]}: file ${m.fileMB.toFixed(1)} MB, peak above the resident set ${m.peakAboveMB.toFixed(1)} MB`);
}
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (const [k, v] of Object.entries(got)) console.log(`median ${k} (${trees[k]}), llama2.c version ${version}: ${median(v).toFixed(1)} MB above`);

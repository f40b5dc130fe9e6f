#!/usr/bin/env node
/**
 * A/B of GPT-2 small between this tree's library and another tree's, in one Node process: the
 * float16 folder of scripts/bench/gpt2-small.mjs (run that once to write it) loaded by both engines
 * (relaxed-simd, one thread unless AB_THREADS says), then in interleaved rounds (this, other; other,
 * this; …) a `run()` of the 128-token prompt with every map, and 16 greedy `generator().step()`s with
 * the KV cache after a 16-token prompt. Prints each side's wasm heap after load, the median prompt
 * time and step time (wall and process CPU time), and the medians of the per-round ratios
 * other / this. On a machine other work shares, the CPU-time ratios are the figures to read.
 * AB_OTHER_STORAGE=float32 loads the other side with that `weightStorage` (with `.` as the other
 * tree: this tree's 16-bit storage against the same file widened to float32 at load).
 *
 *   node --experimental-wasm-relaxed-simd scripts/bench/gpt2-ab.mjs ../other-tree [rounds (6)] [--dir DIR]
 *
 * Prints; asserts nothing.
 */
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMHA } from '../../web/lib/src/index.js';
import { libDir } from './tree.mjs';

const argv = process.argv.slice(2);
const other = argv[0];
if (!other) {
  console.error('usage: gpt2-ab.mjs <other tree> [rounds] [--dir DIR]');
  process.exit(2);
}
const rounds = Number(argv[1] && !argv[1].startsWith('--') ? argv[1] : 6);
const dir = argv.includes('--dir') ? argv[argv.indexOf('--dir') + 1] : path.join(os.tmpdir(), 'mha-gpt2-small', 'f16');
const threads = Number(process.env.AB_THREADS || 1);
const base = await import(pathToFileURL(path.join(libDir(path.resolve(other)), 'src', 'index.js')).href);
const sides = [];
for (const [name, create] of [['this', createMHA], ['other', base.createMHA]]) {
  const mha = await create({ tier: 'relaxed-simd', threads });
  const storage = name === 'other' ? process.env.AB_OTHER_STORAGE : undefined;
  const lm = await mha.loadModel(dir, storage ? { weightStorage: storage } : undefined);
  sides.push({ name, lm, heap: mha.memory().heapBytes, gen: [], prompt: [] });
}
const TEXT = 'The quick brown fox jumps over the lazy dog. In 1066, William crossed the Channel; the rest is history. ';
const ids = sides[0].lm.encode(TEXT.repeat(8)).slice(0, 128);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
for (let r = 0; r < rounds; r++) {
  for (const i of r % 2 ? [1, 0] : [0, 1]) {
    const s = sides[i];
    let t = performance.now(), c = cpu();
    s.lm.run(ids);
    s.prompt.push([performance.now() - t, cpu() - c]);
    const g = s.lm.generator(Array.from(ids.slice(0, 16)), { temperature: 0 });
    g.step();
    t = performance.now(); c = cpu();
    for (let k = 0; k < 16; k++) g.step();
    s.gen.push([(performance.now() - t) / 16, (cpu() - c) / 16]);
    g.dispose();
  }
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const col = (s, k, j) => med(s[k].map((x) => x[j]));
for (const s of sides) {
  console.log(`${s.name}: wasm heap after load ${(s.heap / 2 ** 20).toFixed(0)} MiB; prompt ${col(s, 'prompt', 0).toFixed(0)} ms [CPU ${col(s, 'prompt', 1).toFixed(0)}]; ` +
    `step ${col(s, 'gen', 0).toFixed(1)} ms [CPU ${col(s, 'gen', 1).toFixed(1)}]: ${(1000 / col(s, 'gen', 0)).toFixed(1)} tokens/s [${(1000 / col(s, 'gen', 1)).toFixed(1)} per CPU second]`);
}
const ratio = (k, j) => med(sides[0][k].map((x, i) => sides[1][k][i][j] / x[j]));
console.log(`other / this, median of ${rounds} rounds: prompt ${ratio('prompt', 0).toFixed(3)} [CPU ${ratio('prompt', 1).toFixed(3)}]; ` +
  `generation step ${ratio('gen', 0).toFixed(3)} [CPU ${ratio('gen', 1).toFixed(3)}]; load average ${os.loadavg().map((x) => x.toFixed(1)).join(', ')}`);

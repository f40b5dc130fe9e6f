#!/usr/bin/env node
// A/B of this tree's build against another tree's (its library's src/ + wasm/), in one process: the
// bench's workloads W0–W3 (d_model = 768, h = 12 with biases; W0 the lesson's T = 5, d = 24, h = 2)
// forwarded by both in interleaved rounds, both orders alternating, medians. For a refactor that
// must not change speed: the ratio base / this is printed per workload and needWeights.
//   node --experimental-wasm-relaxed-simd scripts/bench/ab.mjs ../base-tree [rounds] [W0,W1,…]
// Both run one thread (AB_THREADS=n for n). AB_THIS_OPTS (JSON) adds layer options to this tree's layers only, e.g. RoPE on against off in one
// tree: AB_THIS_OPTS='{"rope":true}' node --experimental-wasm-relaxed-simd scripts/bench/ab.mjs . 15 W1,W3
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMHA } from '../../web/lib/src/index.js';
import { libDir } from './tree.mjs';

const baseTree = process.argv[2];
if (!baseTree) {
  console.error('usage: ab.mjs <other tree> [rounds]');
  process.exit(2);
}
const rounds = Number(process.argv[3] || 15);
const base = await import(pathToFileURL(path.join(libDir(path.resolve(baseTree)), 'src', 'index.js')).href);
const threads = Number(process.env.AB_THREADS || 1);  // one thread unless AB_THREADS says otherwise
const engines = [{ name: 'this', mha: await createMHA({ threads }) }, { name: 'base', mha: await base.createMHA({ threads }) }];
const desc = ({ info }) => `${info.tier}${info.tile ? ` ${info.tile}` : ''}, ${info.threads ?? 1} thread(s)`;
console.log(`this ${desc(engines[0].mha)}; base ${desc(engines[1].mha)}; ${rounds} rounds`);

const thisOpts = process.env.AB_THIS_OPTS ? JSON.parse(process.env.AB_THIS_OPTS) : {};
if (process.env.AB_THIS_OPTS) console.log(`this tree's layers add ${process.env.AB_THIS_OPTS}`);
const W = [
  { id: 'W0', T: 5, d: 24, h: 2, reps: 2000 },
  { id: 'W1', T: 128, d: 768, h: 12, reps: 20 },
  { id: 'W2', T: 512, d: 768, h: 12, reps: 3 },
  { id: 'W3', T: 1024, d: 768, h: 12, causal: true, reps: 1 },
];
const only = process.argv[4]?.split(',');
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (const w of W.filter((v) => !only || only.includes(v.id))) {
  const x = { data: Float32Array.from({ length: w.T * w.d }, (_, i) => Math.sin(0.37 * i)), shape: [w.T, w.d] };
  for (const needWeights of [false, true]) {
    const runs = engines.map(({ name, mha }) => ({
      name, layer: mha.createLayer({ dModel: w.d, numHeads: w.h, seed: 1, ...(name === 'this' ? thisOpts : {}) }), t: [] }));
    const opts = { needWeights, causal: !!w.causal };
    const out = runs.map((r) => r.layer.forward(x, opts).output.data);
    let diff = 0;
    for (let i = 0; i < out[0].length; i++) diff = Math.max(diff, Math.abs(out[0][i] - out[1][i]));
    for (let r = 0; r < 2; r++) for (const run of runs) run.layer.forward(x, opts);
    for (let r = 0; r < rounds; r++) {
      for (const run of r % 2 ? runs.slice().reverse() : runs) {
        const t0 = performance.now();
        for (let k = 0; k < w.reps; k++) run.layer.forward(x, opts);
        run.t.push((performance.now() - t0) / w.reps);
      }
    }
    const [a, b] = runs.map((r) => median(r.t));
    const unit = w.id === 'W0' ? `${(a * 1000).toFixed(2)} µs vs ${(b * 1000).toFixed(2)} µs` : `${a.toFixed(2)} ms vs ${b.toFixed(2)} ms`;
    console.log(`${w.id} needWeights ${needWeights ? 'true ' : 'false'}: this ${unit}  base/this ${(b / a).toFixed(3)}  max |Δ| ${diff.toExponential(1)}`);
    for (const run of runs) run.layer.dispose();
  }
}

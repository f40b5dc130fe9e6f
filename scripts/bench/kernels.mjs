#!/usr/bin/env node
/**
 * The kernel benchmark of both SIMD tiers in one table: runs build-wasm/kernel-tests/kernels_bench.js
 * (mul + add) and kernels_bench_relaxed.js (f32x4.relaxed_madd) alternately, in both orders, and
 * prints each kernel's best GFLOP/s per tier, the relaxed/simd ratio, and each as a fraction of the
 * two peaks measured in the same processes (f32x4 mul + add chains; relaxed_madd chains), then
 * the streaming-read roof and the output head's matrix–vector products in GB/s against it.
 *
 *   node scripts/bench/kernels.mjs [--rounds 2] [--seconds 0.5]
 *
 * Builds the CMake target kernel_bench first (CMake rebuilds only what changed).
 *
 * The relaxed build needs relaxed SIMD: Node ≥ 22, or Node 20 with --experimental-wasm-relaxed-simd
 * (passed here when this Node knows the flag). GFLOP/s count one multiply-add as 2 FLOPs.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { relaxedSimdFlags } from '../node-flags.mjs';
import { BUILD_DIR, buildTarget } from '../cmake-target.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i < 0 ? dflt : args[i + 1]; };
const rounds = Number(opt('--rounds', 2));
const seconds = String(opt('--seconds', 0.5));
const BUILDS = { simd: 'kernels_bench.js', 'relaxed-simd': 'kernels_bench_relaxed.js' };
const built = buildTarget('kernel_bench');
if (!built.ok) {
  process.stderr.write(`kernels: building the kernel_bench target failed:\n${built.log}`);
  process.exit(1);
}
const flags = relaxedSimdFlags();

/** One run of a build: Map name -> {gflops, ms}. */
function run(tier) {
  const r = spawnSync(process.execPath, [...flags, path.join(BUILD_DIR, 'kernel-tests', BUILDS[tier]), seconds, 'tsv'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${BUILDS[tier]} failed (${r.status}): ${r.stderr.slice(0, 500)}`);
  const out = new Map();
  for (const line of r.stdout.trim().split('\n')) {
    const [name, g, ms] = line.split('\t');
    out.set(name, { gflops: Number(g), ms: Number(ms) });
  }
  return out;
}

// best of every run per tier and kernel (interference on a shared machine only adds time)
const best = { simd: new Map(), 'relaxed-simd': new Map() };
const order = [];
for (let r = 0; r < rounds; r++) {
  for (const tier of r % 2 ? ['relaxed-simd', 'simd'] : ['simd', 'relaxed-simd']) {
    order.push(tier);
    process.stderr.write(`kernels: round ${r + 1}, ${tier}\n`);
    for (const [name, v] of run(tier)) {
      const b = best[tier].get(name);
      const better = name.startsWith('softmax') ? !b || v.ms < b.ms : !b || v.gflops > b.gflops;
      if (better) best[tier].set(name, v);
    }
  }
}
const S = best.simd, R = best['relaxed-simd'];
const peakMA = Math.max(S.get('peak mul+add').gflops, R.get('peak mul+add').gflops);
const peakF = R.get('peak fma')?.gflops ?? NaN;
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const pc = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)} %` : '—');
const L = [];
L.push(`Kernel benchmark, node ${process.version}${flags.length ? ` ${flags.join(' ')}` : ''}; runs in the order ${order.join(', ')}; best of each.`);
L.push(`Peaks: f32x4 mul + add ${f1(peakMA)} GFLOP/s; f32x4.relaxed_madd (FMA) ${f1(peakF)} GFLOP/s.`);
L.push('');
L.push('| kernel | simd GFLOP/s | relaxed GFLOP/s | relaxed / simd | simd of mul+add peak | relaxed of FMA peak | relaxed of mul+add peak |');
L.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
const isGBs = (name) => name.endsWith('(GB/s)');
for (const [name, s] of S) {
  if (name.startsWith('peak') || isGBs(name)) continue;
  const r = R.get(name);
  if (name.startsWith('softmax')) {
    L.push(`| ${name} (ms) | ${s.ms.toFixed(3)} ms | ${r.ms.toFixed(3)} ms | ${(s.ms / r.ms).toFixed(2)}× | | | |`);
    continue;
  }
  L.push(`| ${name} | ${f1(s.gflops)} | ${f1(r.gflops)} | ${(r.gflops / s.gflops).toFixed(2)}× | ${pc(s.gflops / peakMA)} | ${pc(r.gflops / peakF)} | ${pc(r.gflops / peakMA)} |`);
}
// Reading memory: the streaming-read roof (plain v128 loads over the 16-bit head's bytes, 1–8
// streams side by side) and the output head's matrix–vector products in GB/s of their weights,
// each as a fraction of the best roof of its tier.
const roof = (M) => Math.max(...[...M].filter(([n]) => n.startsWith('stream read')).map(([, v]) => v.gflops));
const roofS = roof(S), roofR = roof(R);
L.push('');
L.push(`Reading memory (GB/s; roof = the best stream read of the tier: simd ${f1(roofS)}, relaxed ${f1(roofR)}):`);
L.push('');
L.push('| reading | simd GB/s | relaxed GB/s | simd of roof | relaxed of roof |');
L.push('| --- | ---: | ---: | ---: | ---: |');
for (const [name, s] of S) {
  if (!isGBs(name)) continue;
  const r = R.get(name);
  L.push(`| ${name.replace(' (GB/s)', '')} | ${f1(s.gflops)} | ${f1(r?.gflops)} | ${pc(s.gflops / roofS)} | ${pc(r?.gflops / roofR)} |`);
}
process.stdout.write(`${L.join('\n')}\n`);

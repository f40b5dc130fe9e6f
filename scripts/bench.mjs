#!/usr/bin/env node
/**
 * npm run bench — our layer.forward against onnxruntime-web (wasm, 1 thread) and TensorFlow.js (wasm
 * backend, 1 thread) on the workloads W0–W4; prints a markdown table and the targets.
 *
 *   node scripts/bench.mjs [--only W0,W2] [--budget-scale 0.5] [--no-rss] [--json out.json] [--md out.md]
 *   node scripts/bench.mjs --browser   (in headless Chromium: Debian's, through playwright-core)
 *   node scripts/bench.mjs --node 24   (the children run on Node 24 from the npm package node@24,
 *                                       installed on demand into .cache/node-24/)
 *   node scripts/bench.mjs --no-relaxed  (Node: children without --experimental-wasm-relaxed-simd)
 *   node scripts/bench.mjs --quick     (smoke test of the bench: short budgets, W4 at T = 4096)
 *   node scripts/bench.mjs --from-json out.json [--md out.md]   (re-prints a saved run)
 *   node scripts/bench.mjs --engine ../other-tree   (benches the web/lib/src + web/lib/wasm of another tree; Node)
 *   node scripts/bench.mjs --threads 2   (ours, onnxruntime-web and tfjs at 2 threads, ours also at 1: the scaling; also with --browser)
 *
 * - One process per workload in Node (scripts/bench/child.mjs), one page in a fresh browser context
 *   per workload in the browser (scripts/bench/page.mjs); both run scripts/bench/impls.mjs: the
 *   implementations interleaved in rounds (the order rotates each round), medians over rounds.
 * - Ours loads the best tier the runtime accepts (createMHA(): relaxed-simd in Chromium and Node 24,
 *   and in Node 20 with the flag, which the children get when their Node knows it); the report names it.
 * - Before timing, every peer's output (and attention weights) is checked against ours: the run
 *   fails (exit code 1) if any max |diff| exceeds 1e-3 of max |ours|.
 * - onnxruntime-web runs the same layer (same weights) as an ONNX graph built here
 *   (scripts/bench/onnx-graph.mjs): a PyTorch-style graph, com.microsoft.MultiHeadAttention or
 *   com.microsoft.Attention: every graph that runs is timed in the rounds, and the one with the
 *   lowest median is reported (only the PyTorch-style graph can return the attention weights).
 * - GFLOP/s use the dense count 8·T·d² + 4·T²·d (also for causal). Two peaks are measured in the
 *   same runtime (scripts/bench/peak.mjs), before and after the workloads: f32x4 mul + add and
 *   f32x4.relaxed_madd (FMA); "of peak" divides by the FMA peak when ours runs the relaxed-simd tier,
 *   else by the mul + add peak.
 * - Peak RSS (process.resourceUsage().maxRSS) for W3 and W4 comes from Node processes that load only
 *   one implementation; the wasm heap column is ours' heap size after the workload (a wasm heap
 *   never shrinks: its high-water mark), in both runtimes.
 * Needs the devDependencies onnxruntime-web, onnx-proto, @tensorflow/tfjs-core,
 * @tensorflow/tfjs-backend-wasm (and esbuild, playwright-core for --browser), and a built web/lib/wasm/.
 */
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { relaxedSimdFlags } from './node-flags.mjs';
import { libDir } from './bench/tree.mjs';
import { nodeBinary } from './bench/node-bin.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const CHILD = path.join(here, 'bench', 'child.mjs');
const PEAK = path.join(here, 'bench', 'peak.mjs');

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i < 0 ? dflt : args[i + 1]; };
const only = opt('--only', null)?.split(',');
const quick = args.includes('--quick');  // a smoke test of the bench itself: short budgets, W4 at T = 4096
const budgetScale = Number(opt('--budget-scale', quick ? 0.25 : 1));
const noRss = args.includes('--no-rss');
const jsonOut = opt('--json', null);
const mdOut = opt('--md', null);
const fromJson = opt('--from-json', null);
const engine = opt('--engine', null) && path.resolve(opt('--engine'));  // bench the build in another tree (web/lib/src + web/lib/wasm)
const browserMode = args.includes('--browser');
const nodeVersion = opt('--node', null);  // e.g. 24: a Node from the npm package node@<version>
const noRelaxed = args.includes('--no-relaxed');
// --threads N: ours, onnxruntime-web and tfjs at N threads, and ours at 1 thread beside them (the scaling)
const threads = Number(opt('--threads', 1));
if (!Number.isInteger(threads) || threads < 1) throw new Error(`--threads must be a whole number ≥ 1, got ${opt('--threads', 1)}`);

const D = { d: 768, h: 12, causal: false, nws: [true, false], peers: ['ort', 'tfjs'], mode: 'timing', minSampleMs: 0 };
const WORKLOADS = [
  { ...D, id: 'W0', T: 5, d: 24, h: 2, budget: 4, minRounds: 9, maxRounds: 41, minSampleMs: 25 },
  { ...D, id: 'W1', T: 128, budget: 8, minRounds: 7, maxRounds: 31, minSampleMs: 25 },
  { ...D, id: 'W2', T: 512, budget: 18, minRounds: 5, maxRounds: 21 },
  { ...D, id: 'W3', T: 1024, causal: true, budget: 25, minRounds: 3, maxRounds: 15, rss: true },
  // W4: ours first, then one try of each peer; rounds = calls of ours within the budget (≥ 1)
  { ...D, id: 'W4', T: quick ? 4096 : 16384, nws: [false], mode: 'long', budget: 120, maxRounds: 3 },
].filter((w) => !only || only.includes(w.id));

/** The Node that runs the children: this one, or (--node N) the npm package node@N's (bench/node-bin.mjs). */
function childNode() {
  try {
    return nodeBinary(nodeVersion, root);
  } catch (e) {
    process.stderr.write(`bench: ${e.message}\n`);
    process.exit(1);
  }
}
const NODE = browserMode ? null : childNode();
const NODE_FLAGS = NODE && !noRelaxed ? relaxedSimdFlags(NODE) : [];
const nodeVersionOf = (bin) => spawnSync(bin, ['-p', 'process.version + " (V8 " + process.versions.v8 + ")"'], { encoding: 'utf8' }).stdout.trim();

function runChild(script, argv, { quiet = false } = {}) {
  return new Promise((resolve) => {
    const p = spawn(NODE, [...NODE_FLAGS, script, ...argv], { cwd: root, stdio: ['ignore', 'pipe', quiet ? 'ignore' : 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => { out += b; });
    p.on('close', (code) => {
      const line = out.trim().split('\n').pop() || '';
      let result = null;
      try { result = JSON.parse(line); } catch { result = { fatal: `child exited with code ${code} and no result${line ? `: ${line.slice(0, 300)}` : ''}` }; }
      if (code !== 0 && !result.fatal) result.fatal = `child exited with code ${code}`;
      resolve(result);
    });
  });
}

const flops = (w) => 8 * w.T * w.d * w.d + 4 * w.T * w.T * w.d;
const fmt = (x, digits = 3) => {
  if (x == null || !Number.isFinite(x)) return '—';
  if (x >= 1000) return x.toFixed(0);
  return x.toPrecision(digits);
};
const pct = (x) => (x == null || !Number.isFinite(x) ? '—' : `${(100 * x).toFixed(0)} %`);

/** The peers are devDependencies: say what is missing instead of failing in a child. */
function checkSetup() {
  const require = createRequire(import.meta.url);
  const missing = ['onnxruntime-web', 'onnx-proto', '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-wasm'].filter((p) => {
    try { require.resolve(p); return false; } catch { return true; }
  });
  const problems = [];
  if (missing.length) problems.push(`missing devDependencies ${missing.join(', ')}: run npm install (or npm ci)`);
  const wasm = path.join(libDir(engine || root), 'wasm', 'mha_core.wasm');
  if (!fs.existsSync(wasm)) problems.push(`${wasm} is missing: run npm run build`);
  if (problems.length) {
    process.stderr.write(`bench: ${problems.join('; ')}\n`);
    process.exit(1);
  }
}

/** The targets (the FMA tier's), checked against this run. */
function targets(results, { peak, useFMA, browser, threads = 1 }) {
  const get = (id, nw) => results.find((r) => r.workload.id === id && !r.fatal)?.variants.find((v) => v.nw === nw);
  const med = (v, key) => v?.rows.find((x) => x.key === key)?.median;
  const speedup = (id, nw) => { const v = get(id, nw); return v && med(v, 'ort') ? med(v, 'ort') / med(v, 'ours') : null; };
  const out = ['Targets:'];
  // one digit more than the tables, so that a value just below a target does not print as the target
  const fmtT = (x) => fmt(x, 4);
  const pctT = (x) => (x == null || !Number.isFinite(x) ? '—' : `${(100 * x).toFixed(1)} %`);
  const line = (ok, text) => out.push(`- [${ok ? 'x' : ' '}] ${text}${ok === null ? ' (not measured)' : ok ? '' : ' — **missed**'}`);
  for (const id of ['W1', 'W2']) {
    const w = results.find((r) => r.workload.id === id)?.workload;
    const f = get(id, false), t = get(id, true);
    const sp = speedup(id, false);
    line(sp == null ? null : sp >= 1.8, `${id} needWeights=false ≥ 1.8× onnxruntime-web: ${sp == null ? '—' : `${fmtT(sp)}×`}`);
    const of = f && w ? flops(w) / med(f, 'ours') / 1e6 / (f.roundPeak ? f.roundPeak.gflops * threads : peak) : null;
    line(of == null || !useFMA ? null : of >= 0.85, `${id} needWeights=false ≥ 85 % of the FMA peak: ${of == null ? '—' : pctT(of)}${useFMA ? '' : ' (ours does not run the relaxed-simd tier here)'}`);
    const rt = f && t ? med(t, 'ours') / med(f, 'ours') : null;
    line(rt == null ? null : rt <= 1.1, `${id} needWeights=true within 10 % of needWeights=false: ${rt == null ? '—' : `${fmtT(rt)}×`}`);
  }
  for (const [nw, goal] of [[false, 2.3], [true, 2]]) {
    const sp = speedup('W3', nw);
    line(sp == null ? null : sp >= goal, `W3 causal needWeights=${nw} ≥ ${goal}× onnxruntime-web: ${sp == null ? '—' : `${fmtT(sp)}×`}`);
  }
  for (const nw of [true, false]) {
    const v = get('W0', nw);
    const sp = speedup('W0', nw);
    line(sp == null ? null : sp >= 10, `W0 needWeights=${nw} ≥ 10× onnxruntime-web calls/s: ${sp == null ? '—' : `${fmtT(sp)}×, ${fmtT(1000 / med(v, 'ours'))} calls/s`}`);
  }
  if (threads > 1) {
    for (const [id, goal] of [['W1', 1.6], ['W2', 1.8], ['W3', 1.8]]) {
      const v = get(id, false);
      const sc = v && med(v, 'ours1') ? med(v, 'ours1') / med(v, 'ours') : null;
      line(sc == null ? null : sc >= goal, `${id} needWeights=false: ${threads} threads ≥ ${goal}× our own single thread: ${sc == null ? '—' : `${fmtT(sc)}×`}`);
    }
    for (const nw of [true, false]) {
      const v = get('W0', nw);
      const r = v && med(v, 'ours1') ? med(v, 'ours1') / med(v, 'ours') : null;
      line(r == null ? null : r >= 0.95, `W0 needWeights=${nw} calls/s with the threaded build within 5 % of the single-thread build: ${r == null ? '—' : `${fmtT(r)}×`}`);
    }
  }
  const w3 = results.find((r) => r.workload.id === 'W3');
  const rss = w3?.rss?.['ours:false'];
  if (!browser) line(rss == null ? null : rss <= 100, `W3 needWeights=false peak RSS ≤ 100 MB${threads > 1 ? ` (at ${threads} threads; the target is for 1)` : ''}: ${rss == null ? '—' : `${fmtT(rss)} MB`}`);
  const w4 = results.find((r) => r.workload.id === 'W4');
  const quickNote = w4 && w4.workload.T !== 16384 ? ` (at T = ${w4.workload.T}: --quick)` : '';
  line(w4 ? !w4.fatal && w4.heapMB <= 256 : null, `W4 completes within a 256 MB wasm heap${quickNote}: ${w4?.fatal ? 'failed' : w4 ? `${fmtT(w4.heapMB)} MB` : '—'}`);
  return out;
}

async function main() {
  checkSetup();
  const started = Date.now();
  const load0 = os.loadavg();
  const cpus = os.cpus();
  let browser = null;
  let runtime;
  if (browserMode) {
    const { openBrowser } = await import('./bench/browser.mjs');
    browser = await openBrowser();
    runtime = browser.version;
  } else {
    runtime = `node ${nodeVersionOf(NODE)}${NODE_FLAGS.length ? ` ${NODE_FLAGS.join(' ')}` : ''}`;
  }
  // one workload (or the peak): a page of its own in the browser, a process of its own in Node
  const runJob = (job, script = CHILD, quiet = false) => (browser ? browser.run(job) : runChild(script, [JSON.stringify(job)], { quiet }));
  const peak = () => (browser ? browser.run({ mode: 'peak', seconds: 3 }) : runChild(PEAK, ['3'], { quiet: true }));
  process.stderr.write(`mha-wasm bench (${runtime}): ${WORKLOADS.map((w) => w.id).join(', ')} — measuring the wasm SIMD peaks\n`);
  const peaks = [await peak()];

  const results = [];
  let failed = false;
  for (const w of WORKLOADS) {
    const job = { ...w, budget: w.budget * budgetScale, engine, threads };
    process.stderr.write(`${w.id}: T=${w.T} d=${w.d} h=${w.h}${w.causal ? ' causal' : ''}\n`);
    const r = await runJob(job);
    r.workload = w;
    if (r.fatal) { failed = true; process.stderr.write(`\n!!! ${w.id} FAILED: ${r.fatal}\n\n`); }
    if (w.rss && !noRss && !browser && !r.fatal) {
      r.rss = {};
      for (const v of r.variants) {
        for (const impl of ['ours', 'ort']) {
          if (impl === 'ort' && !v.ortStyle) continue;
          const rr = await runJob({ mode: 'rss', engine, threads, id: `${w.id} rss ${impl}`, T: w.T, d: w.d, h: w.h, causal: w.causal, nw: v.nw, impl, style: v.ortStyle });
          r.rss[`${impl}:${v.nw}`] = rr.fatal ? null : rr.maxRSS;
          if (!rr.fatal) (r.rssDetail ??= []).push(`${impl} needWeights=${v.nw}${impl === 'ort' ? ` (${v.ortStyle})` : ''}: ${fmt(rr.baseMB)} MB with the data, ${fmt(rr.loadedMB)} MB with the layer loaded, ${fmt(rr.maxRSS)} MB peak`);
        }
      }
    }
    results.push(r);
  }
  peaks.push(await peak());
  if (browser) await browser.close();
  const run = {
    machine: { cpu: cpus[0]?.model ?? 'unknown cpu', cores: cpus.length, memGiB: os.totalmem() / 2 ** 30, platform: `${os.platform()} ${os.arch()}` },
    runtime, browser: browserMode, load: [load0, os.loadavg()], seconds: (Date.now() - started) / 1000, budgetScale, engine, threads, peaks, results,
  };
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(run, null, 1));
  report(run);
  if (failed) {
    process.stderr.write('\nbench: FAILED (see the messages above)\n');
    process.exitCode = 1;
  }
}

/** Prints (and with --md writes) the markdown report of a run. */
function report({ machine: m, runtime, browser, load, seconds, engine: eng, threads: N = 1, peaks, results }) {
  const good = peaks.filter((p) => p && Number.isFinite(p.gflops));
  const peakMA = good.length ? Math.max(...good.map((p) => p.gflops)) : NaN;
  const fmas = good.filter((p) => p.fma && Number.isFinite(p.fma.gflops));
  const peakFMA = fmas.length ? Math.max(...fmas.map((p) => p.fma.gflops)) : NaN;
  const labels = Object.assign({}, ...results.map((r) => r.labels || {}));
  const tier = results.map((r) => r.tier).find(Boolean) ?? /tier ([\w-]+)/.exec(labels.ours ?? '')?.[1];
  // ours' GFLOP/s as a fraction of the peak its tier can reach: FMA for relaxed-simd
  const useFMA = tier === 'relaxed-simd' && Number.isFinite(peakFMA);
  const peak = useFMA ? peakFMA : peakMA;
  const L = [];
  L.push(`## mha-wasm benchmark: ${runtime ?? `node ${m.node}`}`);
  L.push('');
  L.push(`- machine: ${m.cpu} (${m.cores} logical cores), ${m.memGiB.toFixed(0)} GiB, ${m.platform}; load average ${load[0][0].toFixed(1)} at start, ${load[1][0].toFixed(1)} at end`);
  L.push(`- runtime: ${runtime ?? `node ${m.node}`}${browser ? ' (headless, through playwright-core; one page per workload, cross-origin isolated)' : ' (one process per workload)'}; ${N > 1 ? `every implementation asked for ${N} threads; ours also timed on 1 thread (its single-thread build), interleaved with the rest` : 'every implementation single-threaded wasm'}${eng ? `; ours from ${eng}` : ''}`);
  L.push(`- implementations: ours = ${labels.ours ?? 'mha-wasm'}${labels.ours1 ? `, ours on 1 thread = ${labels.ours1}` : ''}; ORT = ${labels.ort ?? 'onnxruntime-web'} (wasm EP, numThreads = ${N}); tfjs = ${labels.tfjs ?? 'tfjs'} (@tensorflow/tfjs-backend-wasm, setThreadsCount(${N}))`);
  L.push(`- peaks measured in this runtime (independent chains, best of ${peaks.length} measurements): f32x4 mul + add ${good.map((p) => `${p.gflops.toFixed(1)} [${p.best}]`).join(', ')} → **${fmt(peakMA)} GFLOP/s**; f32x4.relaxed_madd (FMA) ${fmas.length ? `${fmas.map((p) => `${p.fma.gflops.toFixed(1)} [${p.fma.best}]`).join(', ')} → **${fmt(peakFMA)} GFLOP/s**` : 'not available in this runtime'}`);
  const rp = results.flatMap((r) => (r.variants ?? []).map((v) => v.roundPeak).filter(Boolean));
  L.push(`- "of peak" divides by the ${useFMA ? 'FMA' : 'mul + add'} peak (ours runs the ${tier ?? '?'} tier)${rp.length ? `, as timed inside each workload's rounds, between the implementations (${rp[0].variant} chains; ${fmt(Math.min(...rp.map((p) => p.gflops)))}–${fmt(Math.max(...rp.map((p) => p.gflops)))} GFLOP/s across workloads), so that it moves with the machine's speed; W4 divides by the peak above` : ''}`);
  L.push(`- GFLOP/s = (8·T·d² + 4·T²·d) / median time (the dense count, also for causal); median of interleaved rounds (rounds × calls timed together per round); ± = half the interquartile range; speed-up of ours = that row's median / ours${N > 1 ? ` (on the row "ours, 1 thread": the scaling of ${N} threads over 1); "of peak" divides by ${N} × the single-thread peak for rows at ${N} threads` : ''}; max |Δ| = largest absolute difference from our output (/ w: attention weights), checked before timing (limit 1e-3 of max |ours|)`);
  L.push('');
  L.push('| workload | needWeights | implementation | median ms | ± | best ms | rounds | GFLOP/s | of peak | speed-up of ours | calls/s | peak RSS MB | wasm heap MB | max \\|Δ\\| vs ours |');
  L.push('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  const notes = [];
  const implName = (key, v) => (key === 'ours' ? `**ours**${N > 1 ? `, ${N} threads` : ''}` : key === 'ours1' ? 'ours, 1 thread' : key === 'ort' ? `ORT (${{ torch: 'PyTorch-style graph', mha: 'MultiHeadAttention op', attn: 'Attention op' }[v.ortStyle] ?? '—'})` : 'tfjs');
  for (const r of results) {
    const w = r.workload;
    const wname = `${w.id} T=${w.T} d=${w.d} h=${w.h}${w.causal ? ' causal' : ''}`;
    if (r.fatal) {
      L.push(`| ${wname} | | **FAILED** | | | | | | | | | | | ${r.fatal.replace(/\|/g, '\\|').slice(0, 300)} |`);
      continue;
    }
    for (const v of r.variants) {
      const oursRow = v.rows.find((x) => x.key === 'ours');
      for (const key of ['ours', 'ours1', 'ort', 'tfjs']) {
        const row = v.rows.find((x) => x.key === key);
        if (!row && !v.errors[key]) continue;
        if (!row) {
          L.push(`| ${wname} | ${v.nw} | ${key === 'ort' ? 'ORT' : 'tfjs'} | cannot run | | | | | | | | | | see note |`);
          notes.push(`${w.id} needWeights=${v.nw}: ${key === 'ort' ? 'onnxruntime-web' : 'tfjs'} cannot run it: ${v.errors[key]}`);
          continue;
        }
        const gf = flops(w) / (row.median / 1000) / 1e9;
        const spread = row.median ? (row.q3 - row.q1) / 2 / row.median : NaN;
        const ratio = key === 'ours' ? '—' : `${fmt(row.median / oursRow.median)}×`;
        const calls = w.id === 'W0' ? fmt(1000 / row.median) : '';
        let rss = '';
        if (r.rss && (key === 'ours' || key === 'ort')) rss = fmt(r.rss[`${key}:${v.nw}`]);
        if (w.mode === 'long' && key === 'ours') rss = fmt(r.oursRSS);
        const heap = key === 'ours' && Number.isFinite(r.heapMB) ? fmt(r.heapMB) : '';
        const c = v.checks[key];
        const chk = key === 'ours' ? '' : c ? `${c.y.maxAbs.toExponential(1)}${c.w ? ` / w ${c.w.maxAbs.toExponential(1)}` : ''}` : '';
        const rowPeak = (v.roundPeak?.gflops ?? peak) * (key === 'ours1' ? 1 : N);
        L.push(`| ${wname} | ${v.nw} | ${implName(key, v)} | ${fmt(row.median)} | ${Number.isFinite(spread) && row.n > 1 ? `${(100 * spread).toFixed(0)} %` : '—'} | ${fmt(row.min)} | ${row.n}${row.callsPerSample > 1 ? ` × ${row.callsPerSample}` : ''} | ${fmt(gf)} | ${pct(gf / rowPeak)} | ${ratio} | ${calls} | ${rss} | ${heap} | ${chk} |`);
      }
      if (w.mode === 'long' && Object.keys(v.errors).length) {
        const gib = (w.h * w.T * w.T * 4) / 2 ** 30;
        const who = Object.keys(v.errors).map((k) => (k === 'ort' ? `onnxruntime-web (graph ${v.ortStyle})` : 'tfjs'));
        notes.push(`${w.id}: ${v.rows.length === 1 ? 'ours only. ' : ''}${who.join(' and ')} materialize${who.length === 1 ? 's' : ''} the ${w.h}·T·T attention scores, ${gib.toFixed(1)} GiB for this input${gib > 4 ? ', beyond the 4 GiB a wasm32 instance can address' : ''} (ORT\'s CPU flash-attention path of MultiHeadAttention is not taken in its wasm build: its scores buffer grows with T²)`);
      }
      if (v.ortStyles && v.ortStyles.length > 1) {
        notes.push(`${w.id} needWeights=${v.nw}: ORT graphs, median ms per call in the timed rounds: ${v.ortStyles.map((s) => `${s.style} ${s.error ? `cannot (${s.error})` : fmt(s.ms)}`).join(', ')} → ${v.ortStyle}`);
      }
    }
  }
  L.push('');
  L.push(...targets(results, { peak: peak * N, useFMA, browser, threads: N }));
  for (const r of results) if (r.rssDetail) notes.push(`${r.workload.id} peak RSS processes: ${r.rssDetail.join('; ')}`);
  L.push('');
  if (notes.length) { L.push('Notes:'); for (const n of notes) L.push(`- ${n}`); L.push(''); }
  L.push(`Total time ${seconds.toFixed(0)} s. ${browser ? 'Peak RSS is measured in Node only. ' : 'Peak RSS: whole process (node + one implementation\'s module + the layer\'s weights in JS), W3 from processes running only that implementation, W4 ours measured before any peer was loaded. '}Wasm heap: ours' heap size after the workload (its high-water mark).`);
  const md = L.join('\n');
  process.stdout.write(`\n${md}\n`);
  if (mdOut) fs.writeFileSync(mdOut, `${md}\n`);
}

if (fromJson) report(JSON.parse(fs.readFileSync(fromJson, 'utf8')));
else main().catch((e) => { process.stderr.write(`${e.stack || e}\n`); process.exitCode = 1; });

#!/usr/bin/env node
/**
 * GPT-2 small, the whole model: ours (`loadModel` of a Hugging Face folder, `generator()`) against
 * onnxruntime-web's wasm backend on the same float32 weights, in Node:
 *
 *   node --experimental-wasm-relaxed-simd scripts/bench/gpt2-peer.mjs [--dir DIR] [--threads 1,2]
 *        [--rounds 2] [--tokens 32] [--styles torch,mha,attn] [--only ours|ort] [--busy]
 *        [--node 24] [--lib path/to/web/lib] [--json out.json]
 *
 * - The model: gpt2-model.mjs's seeded random weights of GPT-2 small's shape (DIR, default
 *   $TMPDIR/mha-gpt2-small/, float32 file); the ONNX graphs (onnx-gpt2.mjs, one per attention style)
 *   are written beside it on first use (DIR/onnx/).
 * - The work: a prompt of 128 token ids (seeded; the weights are random, so the text does not
 *   matter) filled into the KV cache with the next token's log-probs (ours: the generator's first
 *   `step()`; ORT: one `session.run` with empty past keys and values), then 32 greedy steps with
 *   the KV cache (ours: `step()`, which also returns every head's newest attention row; ORT:
 *   `session.run` of one token with the previous run's present keys and values).
 * - Each run is its own Node process (`--expose-gc`): load, the prompt three times (first, best of
 *   the next two), the 32 steps; then its peak RSS (getrusage maxrss), its RSS after load once
 *   garbage is collected, ours' wasm heap. Runs are interleaved: per round and thread count, ours
 *   and every ORT graph, the order (of thread counts too) reversed every other round. The tables give medians over rounds.
 * - Checked before any figure counts: every ORT graph's greedy tokens must equal ours, and its
 *   log-probs after the prompt and after the last step must equal ours' `run()` of the same text
 *   (max |Δ| ≤ 1e-3; the figure is printed). A graph that fails or does not run is left out.
 * - `--busy`: a second process spins (`for(;;){}`) for the whole benchmark, holding one core.
 * - `--node 24`: the children run on the npm package node@24's binary (node-bin.mjs).
 * - `--json`: the rows and the summary (medians, ratios ours / ORT's best graph per thread count).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CONFIG, makeModel, readF32Tensors } from './gpt2-model.mjs';
import { GPT2_STYLES, buildGpt2Onnx } from './onnx-gpt2.mjs';
import { nodeBinary } from './node-bin.mjs';
import { relaxedSimdFlags } from '../node-flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const argv = process.argv.slice(2);
const opt = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
const DIR = path.resolve(opt('--dir', path.join(os.tmpdir(), 'mha-gpt2-small')));
const PROMPT = 128;
const TOKENS = Number(opt('--tokens', 32));
const TOL = 1e-3;

/** The prompt: PROMPT ids from a seeded xorshift32 over the vocabulary. */
function promptIds() {
  let s = 0x2545f491;
  const ids = [];
  for (let i = 0; i < PROMPT; i++) { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; ids.push((s >>> 0) % CONFIG.vocab_size); }
  return ids;
}

const cpuMs = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
async function settledRss() {
  globalThis.gc(); await new Promise((r) => setTimeout(r, 100)); globalThis.gc();
  return process.memoryUsage().rss;
}
function logSoftmax(x) {
  let m = -Infinity;
  for (const v of x) if (v > m) m = v;
  let s = 0;
  for (const v of x) s += Math.exp(v - m);
  const lse = m + Math.log(s), out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i] - lse;
  return out;
}
const argmax = (x) => { let b = 0; for (let i = 1; i < x.length; i++) if (x[i] > x[b]) b = i; return b; };

/** Child: ours. */
async function runOurs(threads, lib) {
  const { createMHA } = await import(lib ? pathToFileURL(path.join(lib, 'src', 'index.js')).href : '../../web/lib/src/index.js');
  const t0 = performance.now();
  const mha = await createMHA({ threads });
  const createMs = performance.now() - t0;
  const t1 = performance.now();
  const lm = await mha.loadModel(path.join(DIR, 'f32'));
  const loadMs = performance.now() - t1;
  const rssAfterLoad = await settledRss();
  const ids = promptIds();
  const promptMs = [], promptCpu = [];
  let g = null, first = null;
  for (let i = 0; i < 3; i++) {
    if (g) g.dispose();
    g = lm.generator(ids, { temperature: 0 });
    const t = performance.now(), c = cpuMs();
    first = g.step();
    promptMs.push(performance.now() - t); promptCpu.push(cpuMs() - c);
  }
  const gen = [first.id];
  const t = performance.now(), c = cpuMs();
  for (let i = 0; i < TOKENS; i++) gen.push(g.step().id);
  const genMs = performance.now() - t, genCpu = cpuMs() - c;
  g.dispose();
  const maxRSS = process.resourceUsage().maxRSS * 1024, heapPeak = mha.memory().heapBytes;
  // the check: log-probs after the prompt and after the last step, from run() of the same text
  const lpPrompt = lm.run(ids).logProbs.data.slice((PROMPT - 1) * CONFIG.vocab_size);
  const all = [...ids, ...gen.slice(0, TOKENS)];
  const lpLast = lm.run(all).logProbs.data.slice((all.length - 1) * CONFIG.vocab_size);
  lm.dispose();
  mha.dispose();
  return { impl: 'ours', threads: mha.info ? threads : threads, tier: mha.info.tier, createMs, loadMs, rssAfterLoad, maxRSS, heapPeak,
    promptFirstMs: promptMs[0], promptMs: Math.min(promptMs[1], promptMs[2]), promptCpuMs: Math.min(promptCpu[1], promptCpu[2]),
    tokPerS: TOKENS / (genMs / 1000), tokPerCpuS: TOKENS / (genCpu / 1000), gen, lpPrompt: Array.from(lpPrompt), lpLast: Array.from(lpLast) };
}

/** Child: onnxruntime-web with the graph of `style`. */
async function runOrt(threads, style) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const { n_layer: L, n_head: h, n_embd: d } = CONFIG, dk = d / h;
  const t1 = performance.now();
  const session = await ort.InferenceSession.create(fs.readFileSync(onnxPath(style)), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential', intraOpNumThreads: threads,
  });
  const loadMs = performance.now() - t1;
  const rssAfterLoad = await settledRss();
  const i64 = (a) => BigInt64Array.from(a, (x) => BigInt(x));
  // one forward of `ids` at positions past..past+S−1 over the cache `kv` (null: empty)
  const forward = async (ids, past, kv) => {
    const S = ids.length, T = past + S;
    const feeds = { input_ids: new ort.Tensor('int64', i64(ids), [1, S]), position_ids: new ort.Tensor('int64', i64(ids.map((_, i) => past + i)), [1, S]) };
    if (style === 'torch') {
      const m = new Float32Array(S * T);
      for (let i = 0; i < S; i++) for (let j = past + i + 1; j < T; j++) m[i * T + j] = -Infinity;
      feeds.mask = new ort.Tensor('float32', m, [1, 1, S, T]);
    }
    for (let l = 0; l < L; l++) {
      if (style === 'attn') feeds[`past_${l}`] = kv ? kv[`present_${l}`] : new ort.Tensor('float32', new Float32Array(0), [2, 1, h, 0, dk]);
      else for (const s of ['key', 'value']) feeds[`past_${s}_${l}`] = kv ? kv[`present_${s}_${l}`] : new ort.Tensor('float32', new Float32Array(0), [1, h, 0, dk]);
    }
    return session.run(feeds);
  };
  const ids = promptIds();
  const promptMs = [], promptCpu = [];
  let out = null;
  for (let i = 0; i < 3; i++) {
    const t = performance.now(), c = cpuMs();
    out = await forward(ids, 0, null);
    promptMs.push(performance.now() - t); promptCpu.push(cpuMs() - c);
  }
  const lpPrompt = logSoftmax(out.logits.data);
  const gen = [argmax(out.logits.data)];
  let past = PROMPT, lpLast = null;
  const t = performance.now(), c = cpuMs();
  for (let i = 0; i < TOKENS; i++) {
    out = await forward([gen[gen.length - 1]], past, out);
    past += 1;
    gen.push(argmax(out.logits.data));
    if (i === TOKENS - 1) lpLast = out.logits.data;
  }
  const genMs = performance.now() - t, genCpu = cpuMs() - c;
  const maxRSS = process.resourceUsage().maxRSS * 1024;
  await session.release();
  return { impl: 'ort', style, threads, version: ort.env.versions.web, loadMs, rssAfterLoad, maxRSS,
    promptFirstMs: promptMs[0], promptMs: Math.min(promptMs[1], promptMs[2]), promptCpuMs: Math.min(promptCpu[1], promptCpu[2]),
    tokPerS: TOKENS / (genMs / 1000), tokPerCpuS: TOKENS / (genCpu / 1000), gen, lpPrompt: Array.from(lpPrompt), lpLast: Array.from(logSoftmax(lpLast)) };
}

const onnxPath = (style) => path.join(DIR, 'onnx', `gpt2-${style}.onnx`);

// ---- children ---------------------------------------------------------------------------------
if (argv[0] === '--child') {
  const [, what, threads, extra] = argv;
  let r;
  if (what === 'build') {
    fs.mkdirSync(path.dirname(onnxPath(threads)), { recursive: true });
    fs.writeFileSync(`${onnxPath(threads)}.tmp`, buildGpt2Onnx(CONFIG, readF32Tensors(path.join(DIR, 'f32')), threads));
    fs.renameSync(`${onnxPath(threads)}.tmp`, onnxPath(threads));
    r = { built: threads };
  } else {
    r = what === 'ours' ? await runOurs(Number(threads), extra || null) : await runOrt(Number(threads), extra);
  }
  // to a file: stdout to a pipe is asynchronous, and process.exit would cut it
  if (process.env.GPT2_PEER_OUT) fs.writeFileSync(process.env.GPT2_PEER_OUT, JSON.stringify(r));
  else console.log(JSON.stringify(r).slice(0, 2000));
  process.exit(0);
}

// ---- the benchmark ----------------------------------------------------------------------------
const THREADS = opt('--threads', '1,2').split(',').map(Number);
const ROUNDS = Number(opt('--rounds', 2));
const ONLY = opt('--only', null);
let STYLES = ONLY === 'ours' ? [] : opt('--styles', GPT2_STYLES.join(',')).split(',');
const LIB = opt('--lib', null) && path.resolve(opt('--lib'));
const NODE = nodeBinary(opt('--node', null), root);
const FLAGS = [...relaxedSimdFlags(NODE), '--expose-gc', '--max-old-space-size=8192'];
const nodeVersion = spawnSync(NODE, ['-p', 'process.version + " (V8 " + process.versions.v8 + ")"'], { encoding: 'utf8' }).stdout.trim();
const lscpu = (() => { try { return (spawnSync('lscpu', { encoding: 'utf8' }).stdout.match(/Model name:\s*(.*)/) || [])[1]; } catch { return ''; } })();

function child(...args) {
  const out = path.join(os.tmpdir(), `gpt2-peer-${process.pid}.json`);
  fs.rmSync(out, { force: true });
  const p = spawnSync(NODE, [...FLAGS, fileURLToPath(import.meta.url), '--child', ...args.map(String)], { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, TMPDIR: os.tmpdir(), GPT2_PEER_OUT: out } });
  try { return JSON.parse(fs.readFileSync(out, 'utf8')); } catch { return { fatal: `exit ${p.status}: ${(p.stderr || '').trim().split('\n').slice(-3).join(' | ')}` }; } finally { fs.rmSync(out, { force: true }); }
}

console.log(`machine: ${os.cpus().length} cores, ${lscpu || os.cpus()[0]?.model}; children: Node ${nodeVersion}${opt('--busy', null) !== null || argv.includes('--busy') ? '; a busy process holds one core' : ''}`);
makeModel(DIR);
for (const style of STYLES) {
  if (fs.existsSync(onnxPath(style))) continue;
  const r = child('build', style);
  if (r.fatal) { console.log(`ORT graph ${style}: could not be built: ${r.fatal}`); STYLES = STYLES.filter((s) => s !== style); }
}
const busy = argv.includes('--busy') ? spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }) : null;
const rows = [];
const checks = {};
let reference = null;   // ours' greedy tokens and log-probs (from the first ours run)
const maxAbs = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const th of round % 2 === 1 ? [...THREADS].reverse() : THREADS) {
      const jobs = [...(ONLY === 'ort' ? [] : [['ours', th, LIB || '']]), ...STYLES.map((s) => ['ort', th, s])];
      if (round % 2 === 1) jobs.reverse();
      // ours first in the first round: its tokens and log-probs are the reference
      if (!reference && ONLY !== 'ort') jobs.sort((a) => (a[0] === 'ours' ? -1 : 1));
      for (const job of jobs) {
        const r = child(...job);
        const name = job[0] === 'ours' ? 'ours' : `ORT ${job[2]}`;
        if (r.fatal) { console.log(`round ${round + 1}, ${th} thread(s), ${name}: failed: ${r.fatal}`); continue; }
        if (r.impl === 'ours' && !reference) reference = { gen: r.gen, lpPrompt: r.lpPrompt, lpLast: r.lpLast };
        if (r.impl === 'ort' && reference) {
          const c = { tokensEqual: r.gen.every((x, i) => x === reference.gen[i]), prompt: maxAbs(r.lpPrompt, reference.lpPrompt), last: maxAbs(r.lpLast, reference.lpLast) };
          c.ok = c.tokensEqual && c.prompt <= TOL && c.last <= TOL;
          checks[`${r.style}/${th}`] = c;
          if (!c.ok) { console.log(`ORT ${r.style} at ${th} thread(s): CHECK FAILED ${JSON.stringify(c)}; left out`); STYLES = STYLES.filter((s) => s !== r.style); continue; }
        }
        delete r.lpPrompt; delete r.lpLast;
        rows.push({ round, ...r });
        console.log(`round ${round + 1}, ${th} thread(s), ${name}: prompt ${r.promptMs.toFixed(0)} ms (first ${r.promptFirstMs.toFixed(0)}), ${r.tokPerS.toFixed(1)} tokens/s, ` +
          `peak RSS ${(r.maxRSS / 2 ** 20).toFixed(0)} MiB, RSS after load ${(r.rssAfterLoad / 2 ** 20).toFixed(0)} MiB${r.heapPeak ? `, wasm heap ${(r.heapPeak / 2 ** 20).toFixed(0)} MiB` : ''}`);
      }
    }
  }
} finally {
  if (busy) busy.kill();
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const summary = {};
for (const th of THREADS) {
  const of = (impl, style) => rows.filter((r) => r.threads === th && r.impl === impl && (style === undefined || r.style === style));
  const stat = (rs) => (rs.length ? { runs: rs.length, promptMs: median(rs.map((r) => r.promptMs)), promptCpuMs: median(rs.map((r) => r.promptCpuMs)), tokPerS: median(rs.map((r) => r.tokPerS)),
    tokPerCpuS: median(rs.map((r) => r.tokPerCpuS)), maxRSS: Math.max(...rs.map((r) => r.maxRSS)), rssAfterLoad: median(rs.map((r) => r.rssAfterLoad)), loadMs: median(rs.map((r) => r.loadMs)),
    ...(rs[0].heapPeak ? { heapPeak: Math.max(...rs.map((r) => r.heapPeak)) } : {}) } : null);
  const ort = Object.fromEntries(STYLES.map((s) => [s, stat(of('ort', s))]).filter(([, v]) => v));
  const bestPrompt = Object.entries(ort).sort((a, b) => a[1].promptMs - b[1].promptMs)[0];
  const bestGen = Object.entries(ort).sort((a, b) => b[1].tokPerS - a[1].tokPerS)[0];
  const ours = stat(of('ours'));
  summary[th] = { ours, ort, bestPromptStyle: bestPrompt?.[0], bestGenStyle: bestGen?.[0],
    ratios: ours && bestPrompt ? { prompt: bestPrompt[1].promptMs / ours.promptMs, generation: ours.tokPerS / bestGen[1].tokPerS, peakRss: ours.maxRSS / Math.min(...Object.values(ort).map((o) => o.maxRSS)) } : null };
}

const MiB = (b) => (b / 2 ** 20).toFixed(0);
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(', ')}; medians over ${ROUNDS} round(s)`);
console.log('| threads | implementation | 128-token prompt | generation, tokens/s [per CPU second] | peak RSS / RSS after load | wasm heap peak |');
console.log('|---|---|---:|---:|---:|---:|');
for (const th of THREADS) {
  const s = summary[th];
  const line = (name, x) => x && console.log(`| ${th} | ${name} | ${(x.promptMs / 1000).toFixed(3)} s | ${x.tokPerS.toFixed(1)} [${x.tokPerCpuS.toFixed(1)}] | ${MiB(x.maxRSS)} / ${MiB(x.rssAfterLoad)} MiB | ${x.heapPeak ? `${MiB(x.heapPeak)} MiB` : '–'} |`);
  line('ours', s.ours);
  for (const [style, x] of Object.entries(s.ort)) line(`onnxruntime-web (${style})`, x);
  if (s.ratios) console.log(`| ${th} | **ours / ORT's best** | ${s.ratios.prompt.toFixed(2)}× (${s.bestPromptStyle}) | ${s.ratios.generation.toFixed(2)}× (${s.bestGenStyle}) | ${s.ratios.peakRss.toFixed(2)}× | |`);
}
if (Object.keys(checks).length) console.log(`checks (max |Δ log-prob| after the prompt / after the last step; greedy tokens equal): ${Object.entries(checks).map(([k, c]) => `${k} ${c.prompt.toExponential(1)} / ${c.last.toExponential(1)} ${c.tokensEqual}`).join('; ')}`);
const jsonOut = opt('--json', null);
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({ machine: { cores: os.cpus().length, cpu: lscpu, node: nodeVersion }, busy: !!busy, prompt: PROMPT, tokens: TOKENS, rounds: ROUNDS, checks, summary, rows }, null, 1));
  console.log(`wrote ${jsonOut}`);
}

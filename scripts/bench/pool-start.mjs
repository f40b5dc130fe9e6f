#!/usr/bin/env node
/**
 * How long a cross-origin isolated page waits for the threaded engine: `createMHA({threads})` in
 * an empty page of headless Chromium (the site's bundle, web/site/dist/mha-components.js, served
 * with COOP/COEP by a local server), each run in a fresh browser context:
 *
 *   node scripts/bench/pool-start.mjs [--threads 1,2] [--runs 5] [--no-build] [--site other/web/site]
 *
 * Per run: the wall time of `createMHA` (the tier's glue and wasm fetched and compiled, and with
 * threads, the pool's workers started and loaded), the threads it reports, and whether it fell back
 * to one thread. Prints each run and the medians. Not a test: asserts nothing.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const argv = process.argv.slice(2);
const opt = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
const THREADS = opt('--threads', '1,2').split(',').map(Number);
const RUNS = Number(opt('--runs', 5));

if (!argv.includes('--no-build') && !argv.includes('--site')) execFileSync(process.execPath, [path.join(root, 'scripts', 'build-web.mjs')], { stdio: 'ignore' });
const site = path.resolve(opt('--site', path.join(root, 'web', 'site')));   // --site: another tree's web/site (a before/after comparison)
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin', 'Cache-Control': 'no-store' };
  if (rel === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html', ...isolation }).end('<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>pool start</title>');
    return;
  }
  const file = path.join(site, path.normalize(rel));
  if (!file.startsWith(site) || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream', ...isolation });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/`;
const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const results = {};
try {
  for (let run = 0; run < RUNS; run++) {
    for (const th of THREADS) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(url);
      const r = await page.evaluate(async (threads) => {
        const { createMHA } = await import('/dist/mha-components.js');   // the bundle, imported before the clock starts
        const t0 = performance.now();
        const mha = await createMHA({ threads });
        const ms = performance.now() - t0;
        const out = { ms, threads: mha.info.threads, isolated: crossOriginIsolated, fallback: mha.info.threadsError || null };
        mha.dispose();
        return out;
      }, th);
      await context.close();
      (results[th] ??= []).push(r);
      console.log(`run ${run + 1}, threads ${th}: createMHA ${r.ms.toFixed(0)} ms, ${r.threads} thread(s)${r.fallback ? `, fell back: ${r.fallback}` : ''}${r.isolated ? '' : ' (NOT isolated)'}`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
for (const th of THREADS) console.log(`threads ${th}: median ${median(results[th].map((r) => r.ms)).toFixed(0)} ms, range ${Math.min(...results[th].map((r) => r.ms)).toFixed(0)}–${Math.max(...results[th].map((r) => r.ms)).toFixed(0)} ms over ${RUNS} runs`);

#!/usr/bin/env node
/**
 * A/B of CharModel between two trees' libraries in one process (Node) or one page (Chromium): the
 * shipped models charlm-h4-s0 and charlm-h1-s0, loaded into both engines, timed in interleaved
 * rounds (a, b, b, a, a, b, …) on
 *   - run(text) of the 64 characters of scripts/bench/model-run.mjs,
 *   - run(text, {ablate}) alternating between two ablation sets, one call each (the explorer
 *     switching heads: before the decoder moved into the core, a new set of switched-off heads in a
 *     layer rebuilt that layer; h4: [[1,2]] ↔ [[1,1]], the same layer; h1 has one head per layer,
 *     so its two sets, [[0,0]] ↔ [[1,0]], are different layers and stayed cached before),
 *   - generate(prompt, 32, {temperature: 0}).
 * Per case: the median time per call of each side, the ratio of the medians a/b, and the ratio a/b
 * of each round (median, min–max). Before timing, both sides' log-probabilities are compared (plain
 * and both ablation sets; max |Δ| printed) and their greedy texts must be equal.
 *
 *   node scripts/bench/model-ab.mjs --a /work/wt-old [--b .] [--rounds 21] [--browser]
 *
 * --b defaults to this tree. Both engines run the relaxed-simd tier (createMHA({tier})); in Node the
 * script re-runs itself with --experimental-wasm-relaxed-simd when that Node needs the flag. With
 * --browser it serves both trees (a small static server: /a/ and /b/) and runs the same rounds in
 * one page of Debian's Chromium (headless, through playwright-core). Prints; asserts nothing but
 * that both sides agree.
 */
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { relaxedSimdFlags, RELAXED_SIMD_FLAG } from '../node-flags.mjs';
import { libDir } from './tree.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const MODELS = ['charlm-h4-s0.safetensors', 'charlm-h1-s0.safetensors'];
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding'];

/**
 * The measurement, self-contained so that Playwright can run it in the page as it is (no closures
 * over module scope). libs: the two index.js module URLs; models: [{file, url}] (read with node:fs
 * in Node, fetched in a page).
 * @returns {Promise<{tiers: string[], models: object[]}>}
 */
export async function measure({ libs, models, rounds, tier, targetMs }) {
  const text = 'The cat sat on the mat. The cat sat on the mat. The cat sat on t';
  const prompt = 'The cat sat on the ';
  const inNode = typeof window === 'undefined';
  const readBytes = async (url) => inNode
    ? (await import('node:fs')).readFileSync(new URL(url))
    : new Uint8Array(await (await fetch(url)).arrayBuffer());
  const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  const sides = [];
  for (const url of libs) {
    const lib = await import(url);
    sides.push(await lib.createMHA({ tier }));
  }
  const out = { tiers: sides.map((m) => m.info.tier), models: [] };
  for (const m of models) {
    const bytes = await readBytes(m.url);
    const lms = [];
    for (const mha of sides) lms.push(await mha.loadModel(bytes.slice()));
    const { numHeads: h } = lms[0].config;
    const sets = h >= 3 ? [[[1, 2]], [[1, 1]]] : [[[0, 0]], [[1, 0]]];
    // agreement
    let maxDiff = 0;
    for (const opts of [{}, { ablate: sets[0] }, { ablate: sets[1] }]) {
      const [p, q] = lms.map((lm) => Float32Array.from(lm.run(text, opts).logProbs.data));
      for (let i = 0; i < p.length; i++) maxDiff = Math.max(maxDiff, Math.abs(p[i] - q[i]));
    }
    const gens = lms.map((lm) => lm.generate(prompt, 32, { temperature: 0 }));
    let maxDiffP = 0;
    for (let i = 0; i < 32; i++) maxDiffP = Math.max(maxDiffP, Math.abs(gens[0].steps[i].p - gens[1].steps[i].p));
    if (gens[0].text !== gens[1].text) throw new Error(`${m.file}: greedy texts differ: ${JSON.stringify(gens.map((g) => g.text))}`);
    const toggles = [0, 0];  // per side: which ablation set comes next, so each call switches
    const cases = [
      { id: 'run(text)', call: (lm) => lm.run(text) },
      { id: `run(text, {ablate}) ${JSON.stringify(sets[0])} ↔ ${JSON.stringify(sets[1])}`, even: true,
        call: (lm, s) => lm.run(text, { ablate: sets[toggles[s]++ & 1] }) },
      { id: 'generate(prompt, 32, {temperature: 0})', call: (lm) => lm.generate(prompt, 32, { temperature: 0 }) },
    ];
    const batch = (c, s, reps) => {
      const t0 = performance.now();
      for (let k = 0; k < reps; k++) c.call(lms[s], s);
      return (performance.now() - t0) / reps;
    };
    // warm-up (baseline → optimizing compiles), then reps so that the faster side's batch takes targetMs
    for (const c of cases) {
      for (let w = 0; w < 3; w++) for (let s = 0; s < 2; s++) batch(c, s, 6);
      const fast = Math.min(batch(c, 0, 4), batch(c, 1, 4));
      c.reps = Math.max(c.even ? 2 : 1, Math.min(400, Math.round(targetMs / fast)));
      if (c.even) c.reps += c.reps & 1;
      c.t = [[], []];
      c.ratios = [];
    }
    for (let r = 0; r < rounds; r++) {
      for (const c of cases) {
        const t = [0, 0];
        for (const s of r % 2 ? [1, 0] : [0, 1]) t[s] = batch(c, s, c.reps);
        c.t[0].push(t[0]);
        c.t[1].push(t[1]);
        c.ratios.push(t[0] / t[1]);
      }
    }
    out.models.push({
      file: m.file, numHeads: h, maxDiff, maxDiffP, greedy: gens[1].text,
      cases: cases.map((c) => ({
        id: c.id, reps: c.reps, rounds,
        a: median(c.t[0]), b: median(c.t[1]),
        ratio: median(c.t[0]) / median(c.t[1]),
        roundRatio: { median: median(c.ratios), min: Math.min(...c.ratios), max: Math.max(...c.ratios) },
      })),
    });
    for (const lm of lms) lm.dispose();
  }
  return out;
}

function parseArgs(argv) {
  const o = { a: null, b: root, rounds: 21, browser: false, targetMs: 40 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--a') o.a = path.resolve(argv[++i]);
    else if (k === '--b') o.b = path.resolve(argv[++i]);
    else if (k === '--rounds') o.rounds = Number(argv[++i]);
    else if (k === '--target-ms') o.targetMs = Number(argv[++i]);
    else if (k === '--browser') o.browser = true;
    else throw new Error(`unknown argument ${k}`);
  }
  if (!o.a) throw new Error('usage: model-ab.mjs --a <tree> [--b <tree>] [--rounds n] [--browser]');
  return o;
}

const rev = (tree) => {
  try {
    return execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return '?';
  }
};

const fmt = (ms) => (ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));

function report(o, res, runtime, load0) {
  console.log(`a = ${o.a} (${rev(o.a)}), b = ${o.b} (${rev(o.b)}); ${runtime}; tiers a ${res.tiers[0]}, b ${res.tiers[1]}; ${o.rounds} rounds, order a,b,b,a,…`);
  console.log(`machine: ${os.cpus()[0].model.trim()} (${os.cpus().length} logical cores), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.arch()}; load average ${load0.toFixed(1)} at start, ${os.loadavg()[0].toFixed(1)} at end`);
  for (const m of res.models) {
    console.log(`\n${m.file}: log-probs max |Δ| a vs b ${m.maxDiff.toExponential(1)} (plain and both ablation sets); greedy texts equal ${JSON.stringify(m.greedy)}, step p max |Δ| ${m.maxDiffP.toExponential(1)}`);
    console.log('| case | calls × rounds | a ms/call | b ms/call | a/b (medians) | a/b per round: median (min–max) |');
    console.log('| --- | ---: | ---: | ---: | ---: | --- |');
    for (const c of m.cases) {
      const r = c.roundRatio;
      console.log(`| ${c.id} | ${c.reps} × ${c.rounds} | ${fmt(c.a)} | ${fmt(c.b)} | ${c.ratio.toFixed(2)}× | ${r.median.toFixed(2)}× (${r.min.toFixed(2)}–${r.max.toFixed(2)}) |`);
    }
  }
}

function serveTwo(roots) {
  const page = '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>model-ab</title>\n';
  const mime = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (p === '/') return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
    const m = /^\/(a|b)(\/.*)$/.exec(p);
    const base = m && roots[m[1]];
    const file = base && path.resolve(base, '.' + m[2]);
    if (!file || !file.startsWith(base + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      return res.writeHead(404).end();
    }
    res.writeHead(200, { 'Content-Type': mime[path.extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const load0 = os.loadavg()[0];
  const libs = [o.a, o.b].map((t) => libDir(t));
  const modelDir = path.join(libDir(o.b), 'models');
  const common = { rounds: o.rounds, tier: 'relaxed-simd', targetMs: o.targetMs };
  if (!o.browser) {
    const flags = relaxedSimdFlags();
    if (flags.length && !process.execArgv.includes(RELAXED_SIMD_FLAG)) {
      const r = spawnSync(process.execPath, [...flags, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
      process.exit(r.status ?? 1);
    }
    const res = await measure({
      ...common,
      libs: libs.map((l) => pathToFileURL(path.join(l, 'src', 'index.js')).href),
      models: MODELS.map((file) => ({ file, url: pathToFileURL(path.join(modelDir, file)).href })),
    });
    report(o, res, `Node ${process.version}`, load0);
    return;
  }
  const { chromium } = await import('playwright-core');
  const server = await serveTwo({ a: libs[0], b: libs[1] });
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await (await browser.newContext()).newPage();
    page.on('console', (m) => console.log(`  page: ${m.text()}`));
    page.on('pageerror', (e) => console.log(`  page error: ${e.message}`));
    await page.goto(url);
    const res = await page.evaluate(measure, {
      ...common,
      libs: [`${url}a/src/index.js`, `${url}b/src/index.js`],
      models: MODELS.map((file) => ({ file, url: `${url}b/models/${file}` })),
    });
    report(o, res, `Chromium ${browser.version()} (headless, one page)`, load0);
  } finally {
    await browser.close();
    server.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();

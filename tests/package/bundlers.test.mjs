// The bundler matrix: one app (tests/package/fixtures/every: the three group entries imported, all 24
// elements on the page) built from the packed tarball by Vite (the current major and the one before),
// webpack 5, esbuild and Parcel 2, each with nothing configured about mha-wasm (Vite 7: module workers, `worker.format`), then opened in
// Chromium under the README's strict CSP, plain and cross-origin isolated (the isolated page also with
// ?threads=2, so the pthread pool runs even where 'auto' picks one thread): every element renders
// its content, no element has an error, no console error, no CSP violation.
// One tarball, one `npm install` of it (the apps are folders of one project and share its
// node_modules); the bundlers are the repository's devDependencies. Writes
// tests/artifacts/bundlers.json (build and load times, asset counts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISOLATION_HEADERS } from '../../scripts/serve.mjs';
import { createHash } from 'node:crypto';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIX = path.join(ROOT, 'tests', 'package', 'fixtures', 'every');
const BIN = path.join(ROOT, 'node_modules');
const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];
/** The README's policy for a page with the elements (no inline script, wasm compiled from a file). */
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";

/** Each element and the read-only property it sets once it has computed (null: rendered from its data). */
const READY = {
  'mha-engine-info': 'info', 'mha-widget': 'result', 'mha-passport': 'passport', 'mha-heatmap': null, 'mha-heads': null,
  'mha-stepper': 'trace', 'mha-wo-mix': 'contributions', 'mha-model-table': 'rows', 'mha-kv-calculator': 'result',
  'mha-cost-ledger': 'result', 'mha-layer-map': 'passport', 'mha-causal-mask': 'result', 'mha-cross-attention': 'result',
  'mha-trained-heads': 'textScores', 'mha-model-view': 'summaries', 'mha-induction': 'measured', 'mha-generate': 'lm', 'mha-twins': 'rows',
  'mha-gqa-story': 'measured', 'mha-gqa-twins': 'rows', 'mha-surprisal': 'measured',
  'mha-flash-attention': 'replay', 'mha-composition': 'measured', 'mha-ov-circuit': 'rows',
  'mha-phase-change': 'shown',
};

let tmp, app, browser;
const servers = [];
const report = {};

async function sh(cmd, args, cwd) {
  try {
    return await run(cmd, args, { cwd, maxBuffer: 64 << 20, timeout: 240_000, env: { ...process.env, NODE_ENV: 'production' } });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.safetensors': 'application/octet-stream' };

/** A static server of `root` with the CSP header on every response, and the COOP/COEP headers when isolated. */
function serve(root, { isolated = false, csp = CSP, noWasm = false } = {}) {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/favicon.ico') { res.writeHead(204).end(); return; }
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if ((await stat(file).catch(() => null))?.isDirectory()) file = path.join(file, 'index.html');
    const headers = { 'Cache-Control': 'no-store', 'Content-Security-Policy': csp, ...(isolated ? ISOLATION_HEADERS : {}) };
    const body = noWasm && file.endsWith('.wasm') ? null : await readFile(file).catch(() => null);
    if (!body) { res.writeHead(404, headers).end('not found'); return; }
    res.writeHead(200, { ...headers, 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const s = { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) };
    servers.push(s);
    resolve(s);
  }));
}

const page = (script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>every element</title>
${script}</head>
<body><main>
BODY
</main></body></html>
`;

/** The bundlers: how each builds the app in `dir` (its own folder of the one project) into dir/dist. */
const BUNDLERS = {
  'vite 8': async (dir) => {
    await writeFile(path.join(dir, 'index.html'), page('<script type="module" src="./main.js"></script>'));
    await sh(process.execPath, [path.join(BIN, 'vite', 'bin', 'vite.js'), 'build', '--config', 'vite.config.mjs'], dir);
  },
  'vite 7': async (dir) => {
    await writeFile(path.join(dir, 'index.html'), page('<script type="module" src="./main.js"></script>'));
    await sh(process.execPath, [path.join(BIN, 'vite7', 'bin', 'vite.js'), 'build', '--config', 'vite.config.mjs'], dir);
  },
  'webpack 5': async (dir) => {
    const { stdout, stderr } = await sh(process.execPath, [path.join(BIN, 'webpack', 'bin', 'webpack.js'), '--config', 'webpack.config.mjs'], dir);
    assert.doesNotMatch(stdout + stderr, /WARNING|ERROR/, `webpack builds the package without warnings:\n${stdout}${stderr}`);
    await writeFile(path.join(dir, 'dist', 'index.html'), page('<script src="./main.js" defer></script>'));
  },
  // esbuild does not follow new URL(…, import.meta.url): the README's recipe copies the package's
  // wasm/ and models/ folders beside the output folder, where those URLs point from any chunk in it,
  // and builds the engine worker as a second entry named engine-worker
  esbuild: async (dir) => {
    const { build } = await import('esbuild');
    // the engine worker as an entry of its own, beside the chunks that start it (new URL('./engine-worker.js', import.meta.url))
    await build({ absWorkingDir: dir, bundle: true, format: 'esm', splitting: true, minify: true, outdir: 'dist/assets', logLevel: 'warning', platform: 'browser',
      entryPoints: ['main.js', { in: path.join(app, 'node_modules', 'mha-wasm', 'web', 'lib', 'src', 'engine-worker.js'), out: 'engine-worker' }] });
    const lib = path.join(app, 'node_modules', 'mha-wasm', 'web', 'lib');
    for (const d of ['wasm', 'models']) await cp(path.join(lib, d), path.join(dir, 'dist', d), { recursive: true });
    await writeFile(path.join(dir, 'dist', 'index.html'), page('<script type="module" src="./assets/main.js"></script>'));
  },
  'parcel 2': async (dir) => {
    await writeFile(path.join(dir, 'index.html'), page('<script type="module" src="./main.js"></script>'));
    await sh(process.execPath, [path.join(BIN, 'parcel', 'lib', 'bin.js'), 'build', 'index.html', '--dist-dir', 'dist',
      '--no-cache', '--no-source-maps', '--log-level', 'warn', '--public-url', './'], dir);
  },
};

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-bundlers-'));
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], ROOT);
  const tarball = path.join(tmp, JSON.parse(stdout)[0].filename);
  app = path.join(tmp, 'app');
  await mkdir(app);
  // Parcel 2 reads package.json "exports" (mha-wasm/components, …) only with this switch (its documented opt-in)
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'every-element', private: true, type: 'module',
    '@parcel/resolver-default': { packageExports: true } }));
  await sh('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], app);
  const body = await readFile(path.join(FIX, 'body.html'), 'utf8');
  for (const name of Object.keys(BUNDLERS)) {
    const dir = path.join(app, name.replace(/\s+/g, ''));
    await mkdir(dir);
    for (const f of await readdir(FIX)) await cp(path.join(FIX, f), path.join(dir, f));
    const t0 = Date.now();
    await BUNDLERS[name](dir);
    // the page's body: every element (after the build: bundlers rewrite only the head's script)
    for (const html of [path.join(dir, 'dist', 'index.html')]) {
      await writeFile(html, (await readFile(html, 'utf8')).replace('BODY', body));
    }
    report[name] = { buildMs: Date.now() - t0, files: (await readdir(path.join(dir, 'dist'), { recursive: true })).length, csp: CSP };
    // Parcel (2.14 and later) writes its bundle map into the page as an inline <script type="importmap">,
    // which a policy without 'unsafe-inline' runs only when script-src lists its hash (README, bundlers)
    const importmap = /<script type=["']?importmap["']?>([\s\S]*?)<\/script>/.exec(await readFile(path.join(dir, 'dist', 'index.html'), 'utf8'));
    if (importmap) {
      assert.equal(name, 'parcel 2', 'only Parcel writes an inline import map');
      report[name].csp = CSP.replace("script-src 'self'", `script-src 'self' 'sha256-${createHash('sha256').update(importmap[1]).digest('base64')}'`);
    }
  }
});

after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(path.join(ARTIFACTS, 'bundlers.json'), JSON.stringify(report, null, 1));
  if (tmp && !process.env.MHA_KEEP_TMP) await rm(tmp, { recursive: true, force: true });
});

/**
 * Opens the app's page and checks every element in document order: scrolled into view (models are
 * fetched when seen), its ready property set with no error, its text shown; then no console error
 * and no CSP violation. Returns the load time and the engine's thread count.
 */
async function checkPage(url, csp = CSP, expectWarning = null) {
  const { chromium } = await import('playwright-core');
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext();
  const pg = await context.newPage();
  const errors = [];
  const warnings = [];
  pg.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); if (m.type() === 'warning') warnings.push(m.text()); });
  pg.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await pg.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const t0 = Date.now();
  const res = await pg.goto(url);
  assert.equal(res.headers()['content-security-policy'], csp);
  try {
    const tags = await pg.evaluate(() => [...document.querySelectorAll('main > *')].map((e) => e.localName));
    assert.deepEqual(tags.slice().sort(), Object.keys(READY).sort(), 'every element is on the page');
    for (const tag of tags) {
      const prop = READY[tag];
      await pg.evaluate((t) => document.querySelector(t).scrollIntoView(), tag);
      try {
        await pg.waitForFunction(([t, p]) => {
          const el = document.querySelector(t);
          if (!customElements.get(t) || !el.shadowRoot) return false;
          return p ? el.error || el[p] : el.shadowRoot.querySelector('svg, table, mha-heatmap, [role="grid"]');
        }, [tag, prop], { timeout: 60_000 });
      } catch (e) {
        const text = await pg.evaluate((t) => document.querySelector(t).shadowRoot?.textContent.replace(/\s+/g, ' ').slice(0, 300), tag);
        throw new Error(`${tag} did not render within 60 s; it shows: ${text}; console errors: ${JSON.stringify(errors)}`);
      }
      const state = await pg.evaluate((t) => {
        const el = document.querySelector(t);
        return { error: el.error ? String(el.error.message ?? el.error) : null, text: el.shadowRoot.textContent.replace(/\s+/g, ' ').trim() };
      }, tag);
      assert.equal(state.error, null, `${tag} has an error`);
      assert.ok(state.text.length > 10, `${tag} shows ${JSON.stringify(state.text)}`);
      assert.doesNotMatch(state.text, /Failed to construct|Invalid URL|HTTP 404|cannot fetch/, tag);
    }
    // the trained-heads explorer's model picker lists the shipped models (read from the manifest)
    await pg.waitForFunction(() => document.querySelector('mha-trained-heads').shadowRoot.querySelectorAll('select option').length >= 4, null, { timeout: 20_000 })
      .catch(() => assert.fail('the trained-heads model picker is missing'));
    const out = await pg.evaluate(() => ({ threads: document.querySelector('mha-engine-info').info.threads, isolated: crossOriginIsolated, csp: window.__csp }));
    assert.deepEqual(out.csp, [], 'CSP violations');
    assert.deepEqual(errors, [], 'console errors');
    if (expectWarning) assert.ok(warnings.some((w) => expectWarning.test(w)), `warning ${expectWarning}: ${JSON.stringify(warnings)}`);
    return { ms: Date.now() - t0, threads: out.threads, isolated: out.isolated };
  } finally {
    await context.close();
  }
}

for (const name of Object.keys(BUNDLERS)) {
  test(`${name}: every element renders under the README's CSP, plain and cross-origin isolated (auto threads and 2 threads)`, { timeout: 600_000 }, async () => {
    const dist = path.join(app, name.replace(/\s+/g, ''), 'dist');
    const { csp } = report[name];
    const plain = await checkPage(`${(await serve(dist, { csp })).url}/index.html`, csp);
    assert.equal(plain.isolated, false);
    assert.equal(plain.threads, 1);
    const isoSrv = await serve(dist, { isolated: true, csp });
    const iso = await checkPage(`${isoSrv.url}/index.html`, csp);
    assert.equal(iso.isolated, true);
    const two = await checkPage(`${isoSrv.url}/index.html?threads=2`, csp, name === 'parcel 2' ? /running one thread instead of 2: a pthread worker could not load the glue/ : null);
    // Parcel compiles the glue the workers import (new URL('…/mha_core_*_mt.mjs')) into a script of its own:
    // the engine says so in a console warning and runs one thread (README, bundlers)
    assert.equal(two.threads, name === 'parcel 2' ? 1 : 2, 'the threaded build with one pthread worker');
    Object.assign(report[name], { plainMs: plain.ms, isolatedMs: iso.ms, isolatedThreads: iso.threads, twoThreadsMs: two.ms });
  });
}

test('an engine that cannot load (every .wasm answers 404): each engine element says why in place and fires mha-error; no endless Loading', { timeout: 180_000 }, async () => {
  const dist = path.join(app, 'vite8', 'dist');
  const srv = await serve(dist, { noWasm: true });
  const { chromium } = await import('playwright-core');
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext();
  const pg = await context.newPage();
  await pg.addInitScript(() => {
    window.__mhaErrors = {};
    document.addEventListener('mha-error', (e) => {
      const tag = e.composedPath()[0].localName;
      (window.__mhaErrors[tag] ??= []).push(String(e.detail?.error?.message ?? e.detail?.message ?? e.detail));
    }, true);
  });
  await pg.goto(`${srv.url}/index.html`);
  const engineTags = ['mha-engine-info', 'mha-widget', 'mha-passport', 'mha-stepper', 'mha-wo-mix', 'mha-layer-map', 'mha-causal-mask',
    'mha-cross-attention', 'mha-trained-heads', 'mha-induction', 'mha-generate', 'mha-surprisal'];
  for (const tag of engineTags) {
    await pg.evaluate((t) => document.querySelector(t).scrollIntoView(), tag);
    await pg.waitForFunction((t) => document.querySelector(t).error, tag, { timeout: 40_000 })
      .catch(() => assert.fail(`${tag} shows no error: ${JSON.stringify(null)}`));
    const st = await pg.evaluate((t) => { const el = document.querySelector(t); return { msg: String(el.error.message ?? el.error), text: el.shadowRoot.textContent.replace(/\s+/g, ' '), events: window.__mhaErrors[t] ?? [] }; }, tag);
    assert.match(st.msg, /could not load the wasm core/, tag);
    assert.match(st.text, /could not load the wasm core/, `${tag} shows the cause in place`);
    assert.match(st.text, /status 200|wasmURL|mha-wasm\/single/, `${tag} says what to change`);
    assert.doesNotMatch(st.text, /Loading…|Loading\.\.\./, `${tag}: no Loading line beside the error`);
    assert.ok(st.events.length >= 1, `${tag} fired mha-error (${JSON.stringify(st.events)})`);
  }
  await context.close();
});

test("a pthread worker the page's CSP refuses (worker-src 'none'): the engine falls back to one thread with a warning, every element works", { timeout: 180_000 }, async () => {
  const dist = path.join(app, 'vite8', 'dist');
  const csp = `${CSP}; worker-src 'none'`;
  const srv = await serve(dist, { isolated: true, csp });
  const { chromium } = await import('playwright-core');
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext();
  const pg = await context.newPage();
  const warnings = [];
  pg.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await pg.goto(`${srv.url}/index.html?threads=2`);
  await pg.waitForFunction(() => document.querySelector('mha-widget').result || document.querySelector('mha-widget').error, null, { timeout: 30_000 });
  const r = await pg.evaluate(() => ({ threads: document.querySelector('mha-engine-info').info?.threads, error: document.querySelector('mha-widget').error?.message ?? null }));
  assert.equal(r.error, null);
  assert.equal(r.threads, 1);
  assert.ok(warnings.some((w) => /running one thread instead of 2: a pthread worker failed to load/.test(w)), JSON.stringify(warnings));
  await context.close();
});

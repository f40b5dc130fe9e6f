// Shared setup of the package's consumer suites (tests/package/package.test.mjs and
// tests/package/browser-consumers.test.mjs): `npm pack` of the repository, fresh temporary projects that
// install the tarball (Node, Vite, webpack; dependencies from the registry with --prefer-offline),
// a static server, a Chromium page opener that collects console errors, CSP violations and what
// the page downloads, and the worked example's value-by-value check.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISOLATION_HEADERS } from '../../scripts/serve.mjs';

const run = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIX = path.join(ROOT, 'tests', 'package', 'fixtures');
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];
export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";
const VITE = process.env.MHA_TEST_VITE || 'vite@^8';   // vite@^7 where vite 8 will not install
const WEBPACK = ['webpack@^5', 'webpack-cli@^6'];
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--no-package-lock'];
const EXPECTED_CHEAP = '4.050';

let browser;
const servers = [];

/** Runs a command in a directory; rejects with its output on failure. */
export async function sh(cmd, args, cwd, opts = {}) {
  try {
    return await run(cmd, args, { cwd, maxBuffer: 64 << 20, timeout: 240_000, env: { ...process.env, ...opts.env } });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml' };

/**
 * A static server of `root`. csp: Content-Security-Policy header on every response;
 * noWasm: refuse every .wasm with 404 (a host that cannot serve them); isolated: the COOP/COEP
 * headers that make a page cross-origin isolated (the engine then loads its threaded build);
 * cache: seconds a browser may keep each file (`max-age`, as a static host sends), else no-store.
 * Records request paths.
 */
export function serve(root, { csp = null, noWasm = false, isolated = false, cache = 0 } = {}) {
  const requests = [];
  // what the server sent (path and body), for what a page downloads: counted here, not from the
  // browser's response events, whose body is not always retrievable once a page streamed it
  const sent = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    if (url.pathname === '/favicon.ico') { res.writeHead(204).end(); return; }
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if ((await stat(file).catch(() => null))?.isDirectory()) file = path.join(file, 'index.html');
    const headers = { 'Cache-Control': cache ? `public, max-age=${cache}` : 'no-store' };
    if (csp) headers['Content-Security-Policy'] = csp;
    if (isolated) Object.assign(headers, ISOLATION_HEADERS);
    if (noWasm && file.endsWith('.wasm')) { res.writeHead(404, headers).end('no .wasm here'); return; }
    const body = await readFile(file).catch(() => null);
    if (!body) { res.writeHead(404, headers).end('not found'); return; }
    sent.push({ url: url.pathname, body });
    headers['Content-Type'] = MIME[path.extname(file)] ?? 'application/octet-stream';
    res.writeHead(200, headers).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const s = { url: `http://127.0.0.1:${server.address().port}`, requests, sent, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) };
    servers.push(s);
    resolve(s);
  }));
}

/** Opens a page, waits for window.__result, returns it with the console errors and CSP violations. */
export async function openPage(url, { waitFor = () => window.__result !== undefined, csp = false, timeout = 30_000 } = {}) {
  const { chromium } = await import('playwright-core');
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const wasmResponses = [];
  page.on('response', (r) => {
    if (r.url().endsWith('.wasm')) wasmResponses.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] });
  });
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const res = await page.goto(url);
  if (csp) assert.equal(res.headers()['content-security-policy'], CSP);
  try {
    await page.waitForFunction(waitFor, null, { timeout });
  } catch (e) {
    throw new Error(`${url}: ${e.message}; console errors: ${JSON.stringify(errors)}`);
  }
  const result = await page.evaluate(() => window.__result);
  return { page, context, result, errors, wasmResponses, csp: await page.evaluate(() => window.__csp) };
}

export const heatmaps = (page, sel = 'mha-widget') => page.evaluate((s) => {
  const w = document.querySelector(s);
  return w?.shadowRoot?.querySelector('mha-heads')?.shadowRoot?.querySelectorAll('mha-heatmap').length ?? 0;
}, sel);

/** The worked example's result, checked value by value. */
export function assertWorked(r, { simd } = {}) {
  assert.ok(r, 'no result');
  assert.equal(r.cheap, EXPECTED_CHEAP, "Alex's final cheap");
  assert.deepEqual(r.shape, [3, 6]);
  assert.deepEqual(r.weightsShape, [2, 3, 3]);
  for (const row of r.head0) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-3, `softmax row sums to 1: ${row}`);
  assert.equal(r.error?.name, 'MHAError');
  assert.equal(r.error?.code, 'SHAPE_MISMATCH');
  assert.match(r.error?.message, /query/);
  if (simd !== undefined) assert.equal(r.simd, simd, 'info.simd');
}


/** Each element: [tag, the markup of a page with it alone, the read-only property it sets once ready]. */
export const ELEMENTS = {
  'mha-widget': ['mha-widget', '<mha-widget seq-len="5" d-model="24" heads="2"></mha-widget>', 'result'],
  'mha-passport': ['mha-passport', '<mha-passport seq-len="10" d-model="512" heads="8"></mha-passport>', 'passport'],
  'mha-engine-info': ['mha-engine-info', '<mha-engine-info></mha-engine-info>', 'info'],
  'mha-stepper': ['mha-stepper', '<mha-stepper></mha-stepper>', 'trace'],
  'mha-wo-mix': ['mha-wo-mix', '<mha-wo-mix></mha-wo-mix>', 'contributions'],
  'mha-flash-attention': ['mha-flash-attention', '<mha-flash-attention></mha-flash-attention>', 'replay'],
  'mha-model-table': ['mha-model-table', '<mha-model-table></mha-model-table>', 'rows'],
  'mha-kv-calculator': ['mha-kv-calculator', '<mha-kv-calculator></mha-kv-calculator>', 'result'],
  'mha-cost-ledger': ['mha-cost-ledger', '<mha-cost-ledger></mha-cost-ledger>', 'result'],
  'mha-trained-heads': ['mha-trained-heads', '<mha-trained-heads></mha-trained-heads>', 'textScores'],
  'mha-model-view': ['mha-model-view', '<mha-model-view></mha-model-view>', 'summaries'],
  'mha-induction': ['mha-induction', '<mha-induction></mha-induction>', 'measured'],
  'mha-composition': ['mha-composition', '<mha-composition></mha-composition>', 'measured'],
  'mha-ov-circuit': ['mha-ov-circuit', '<mha-ov-circuit></mha-ov-circuit>', 'rows'],
  'mha-phase-change': ['mha-phase-change', '<mha-phase-change></mha-phase-change>', 'shown'],
  'mha-generate': ['mha-generate', '<mha-generate></mha-generate>', 'lm'],
  'mha-twins': ['mha-twins', '<mha-twins></mha-twins>', 'rows'],
  'mha-gqa-story': ['mha-gqa-story', '<mha-gqa-story></mha-gqa-story>', 'measured'],
  'mha-gqa-twins': ['mha-gqa-twins', '<mha-gqa-twins></mha-gqa-twins>', 'rows'],
  'mha-layer-map': ['mha-layer-map', '<mha-layer-map seq-len="5" d-model="24" heads="2" causal></mha-layer-map>', 'passport'],
  'mha-causal-mask': ['mha-causal-mask', '<mha-causal-mask causal></mha-causal-mask>', 'result'],
  'mha-cross-attention': ['mha-cross-attention', '<mha-cross-attention></mha-cross-attention>', 'result'],
  'mha-surprisal': ['mha-surprisal', '<mha-surprisal text="purple kites drift north" repeat></mha-surprisal>', 'measured'],
};

/**
 * Packs the repository into a new temporary folder and installs the tarball into fresh projects:
 * always `node-app` (the Node, TypeScript and plain-page fixtures), with `vite` a Vite app and with
 * `webpack` a webpack app (the bundler fixtures). Needs the build (npm run build).
 * @returns {Promise<{tmp: string, tarball: string, pack: object, nodeApp: string, viteApp?: string, webpackApp?: string}>}
 *   `pack` is npm pack --json's entry (files, sizes).
 */
export async function preparePackage({ vite = false, webpack = false } = {}) {
  const need = ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_core_scalar.wasm', 'web/lib/wasm/mha_core.wasm.mjs',
    'web/lib/dist/mha-components.js', 'web/lib/dist/anywidget.js', 'custom-elements.json', 'web/lib/types/components/index.d.ts'];
  const missing = need.filter((f) => !existsSync(path.join(ROOT, f)));
  if (missing.length) throw new Error(`missing ${missing.join(', ')}: run npm run build (scripts/build.sh, which runs scripts/build-package.mjs)`);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-pkg-'));
  // MHA_PREPACK_SKIP_BUILD: the build is there (checked above); prepack only checks, so that the bundles
  // other suites read at this moment are not rebuilt under them (scripts/prepack.mjs)
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], ROOT, { env: { MHA_PREPACK_SKIP_BUILD: '1' } });
  const pack = JSON.parse(stdout)[0];
  const tarball = path.join(tmp, pack.filename);

  const nodeApp = path.join(tmp, 'node-app');
  const viteApp = vite ? path.join(tmp, 'vite-app') : undefined;
  const webpackApp = webpack ? path.join(tmp, 'webpack-app') : undefined;
  const installs = [];
  await mkdir(nodeApp);
  await writeFile(path.join(nodeApp, 'package.json'), JSON.stringify({ name: 'node-app', private: true, type: 'module' }));
  for (const f of ['worked.mjs', 'node-esm.mjs', 'node-cjs.cjs', 'consumer.ts']) await cp(path.join(FIX, f), path.join(nodeApp, f));
  await cp(path.join(FIX, 'site'), nodeApp, { recursive: true });
  installs.push([nodeApp, []]);
  if (viteApp) {
    await mkdir(viteApp);
    await writeFile(path.join(viteApp, 'package.json'), JSON.stringify({ name: 'vite-app', private: true, type: 'module', scripts: { build: 'vite build' } }));
    await cp(path.join(FIX, 'vite'), viteApp, { recursive: true });
    installs.push([viteApp, [VITE]]);
  }
  if (webpackApp) {
    await mkdir(webpackApp);
    await writeFile(path.join(webpackApp, 'package.json'), JSON.stringify({ name: 'webpack-app', private: true, type: 'module' }));
    await cp(path.join(FIX, 'webpack'), webpackApp, { recursive: true });
    await cp(path.join(FIX, 'vite', 'main.js'), path.join(webpackApp, 'main.js'));
    installs.push([webpackApp, WEBPACK]);
  }
  for (const [dir] of installs.slice(1)) await cp(path.join(FIX, 'worked.mjs'), path.join(dir, 'worked.mjs'));
  // worked.mjs reads the worked example's numbers from the lesson's data module (one copy of them).
  for (const [dir] of installs) await cp(path.join(ROOT, 'web', 'lib', 'components', 'logic', 'restaurant.js'), path.join(dir, 'lesson-data.js'));
  await Promise.all(installs.map(([dir, extra]) => sh('npm', ['install', tarball, ...extra, ...NPM_FLAGS], dir)));
  return { tmp, tarball, pack, nodeApp, viteApp, webpackApp };
}

/** Closes the browser and the servers, and removes `tmp` (kept when MHA_KEEP_TMP is set). */
export async function cleanup(tmp) {
  await browser?.close();
  for (const s of servers) await s.close();
  if (tmp && !process.env.MHA_KEEP_TMP) await rm(tmp, { recursive: true, force: true });
}

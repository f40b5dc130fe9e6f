// Consumer tests of the npm package: `npm pack` once, install the tarball into fresh temporary
// projects (`npm install <tarball>`, dependencies from the registry with --prefer-offline), and use
// it the ways users do: Node ESM and CJS, TypeScript --strict, Vite and webpack builds in Chromium, a page
// without a bundler, the single-file entry where .wasm files cannot be served, a strict CSP page,
// and the anywidget module. Checks values (the worked example's 4.050), not only "no error".
// Writes tests/artifacts/package-report.json (tarball files and sizes, gzip sizes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISOLATION_HEADERS } from '../../scripts/serve.mjs';
import { gzipSync } from 'node:zlib';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIX = path.join(ROOT, 'tests', 'package', 'fixtures');
const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";
const VITE = process.env.MHA_TEST_VITE || 'vite@^8';   // vite@^7 where vite 8 will not install
const WEBPACK = ['webpack@^5', 'webpack-cli@^6'];
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--no-package-lock'];
const EXPECTED_CHEAP = '4.050';

let tmp, tarball, pack, nodeApp, viteApp, webpackApp, browser;
const servers = [];

/** Runs a command in a directory; rejects with its output on failure. */
async function sh(cmd, args, cwd, opts = {}) {
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
 * headers that make a page cross-origin isolated (the engine then loads its threaded build).
 * Records request paths.
 */
function serve(root, { csp = null, noWasm = false, isolated = false } = {}) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    if (url.pathname === '/favicon.ico') { res.writeHead(204).end(); return; }
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if ((await stat(file).catch(() => null))?.isDirectory()) file = path.join(file, 'index.html');
    const headers = { 'Cache-Control': 'no-store' };
    if (csp) headers['Content-Security-Policy'] = csp;
    if (isolated) Object.assign(headers, ISOLATION_HEADERS);
    if (noWasm && file.endsWith('.wasm')) { res.writeHead(404, headers).end('no .wasm here'); return; }
    const body = await readFile(file).catch(() => null);
    if (!body) { res.writeHead(404, headers).end('not found'); return; }
    headers['Content-Type'] = MIME[path.extname(file)] ?? 'application/octet-stream';
    res.writeHead(200, headers).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const s = { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) };
    servers.push(s);
    resolve(s);
  }));
}

/** Opens a page, waits for window.__result, returns it with the console errors and CSP violations. */
async function openPage(url, { waitFor = () => window.__result !== undefined, csp = false, timeout = 30_000 } = {}) {
  const { chromium } = await import('playwright-core');
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  const wasmResponses = [];
  const bodies = [];   // every response's path and body, for what a page downloads
  page.on('response', (r) => {
    if (r.url().endsWith('.wasm')) wasmResponses.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] });
    const url = new URL(r.url()).pathname;
    // a page closed before a response finished leaves that response empty (never an unhandled rejection)
    bodies.push(r.finished().then(() => r.body()).then((body) => ({ url, body }), () => ({ url, body: Buffer.alloc(0) })));
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
  return { page, context, result, errors, wasmResponses, bodies, csp: await page.evaluate(() => window.__csp) };
}

const heatmaps = (page, sel = 'mha-widget') => page.evaluate((s) => {
  const w = document.querySelector(s);
  return w?.shadowRoot?.querySelector('mha-heads')?.shadowRoot?.querySelectorAll('mha-heatmap').length ?? 0;
}, sel);

/** The worked example's result, checked value by value. */
function assertWorked(r, { simd } = {}) {
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

before(async () => {
  const need = ['web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_core_scalar.wasm', 'web/lib/wasm/mha_core.wasm.mjs',
    'web/lib/dist/mha-components.js', 'web/lib/dist/anywidget.js', 'custom-elements.json', 'web/lib/types/components/index.d.ts'];
  const missing = need.filter((f) => !existsSync(path.join(ROOT, f)));
  if (missing.length) throw new Error(`missing ${missing.join(', ')}: run npm run build (scripts/build.sh, which runs scripts/build-package.mjs)`);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-pkg-'));
  // MHA_PREPACK_SKIP_BUILD: the build is there (checked above); prepack only checks, so that the bundles
  // other suites read at this moment are not rebuilt under them (scripts/prepack.mjs)
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], ROOT, { env: { MHA_PREPACK_SKIP_BUILD: '1' } });
  pack = JSON.parse(stdout)[0];
  tarball = path.join(tmp, pack.filename);

  nodeApp = path.join(tmp, 'node-app');
  viteApp = path.join(tmp, 'vite-app');
  webpackApp = path.join(tmp, 'webpack-app');
  await mkdir(nodeApp);
  await mkdir(viteApp);
  await mkdir(webpackApp);
  await writeFile(path.join(webpackApp, 'package.json'), JSON.stringify({ name: 'webpack-app', private: true, type: 'module' }));
  await writeFile(path.join(nodeApp, 'package.json'), JSON.stringify({ name: 'node-app', private: true, type: 'module' }));
  await writeFile(path.join(viteApp, 'package.json'), JSON.stringify({ name: 'vite-app', private: true, type: 'module', scripts: { build: 'vite build' } }));
  for (const f of ['worked.mjs', 'node-esm.mjs', 'node-cjs.cjs', 'consumer.ts']) await cp(path.join(FIX, f), path.join(nodeApp, f));
  await cp(path.join(FIX, 'site'), nodeApp, { recursive: true });
  await cp(path.join(FIX, 'vite'), viteApp, { recursive: true });
  await cp(path.join(FIX, 'webpack'), webpackApp, { recursive: true });
  await cp(path.join(FIX, 'vite', 'main.js'), path.join(webpackApp, 'main.js'));
  for (const dir of [viteApp, webpackApp]) await cp(path.join(FIX, 'worked.mjs'), path.join(dir, 'worked.mjs'));
  // worked.mjs reads the worked example's numbers from the lesson's data module (one copy of them).
  for (const dir of [nodeApp, viteApp, webpackApp]) await cp(path.join(ROOT, 'web', 'lib', 'components', 'logic', 'restaurant.js'), path.join(dir, 'lesson-data.js'));
  await Promise.all([
    sh('npm', ['install', tarball, ...NPM_FLAGS], nodeApp),
    sh('npm', ['install', tarball, VITE, ...NPM_FLAGS], viteApp),
    sh('npm', ['install', tarball, ...WEBPACK, ...NPM_FLAGS], webpackApp),
  ]);
});

after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  if (tmp && !process.env.MHA_KEEP_TMP) await rm(tmp, { recursive: true, force: true });
});

test('tarball: what users need, nothing else; sizes reported', async (t) => {
  const files = pack.files.map((f) => f.path).sort();
  for (const f of ['package.json', 'README.md', 'web/lib/src/index.js', 'web/lib/src/index.d.ts', 'web/lib/src/loader.js',
    'web/lib/src/single.js', 'web/lib/src/single.d.ts', 'web/lib/components/index.js', 'web/lib/types/components/index.d.ts',
    'web/lib/anywidget.js', 'web/lib/dist/anywidget.js', 'web/lib/dist/mha-components.js', 'web/lib/dist/mha-lesson-elements.js',
    'web/lib/dist/mha-trained.js', 'custom-elements.json',
    'web/lib/wasm/mha_core.mjs', 'web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_core_scalar.mjs', 'web/lib/wasm/mha_core_scalar.wasm',
    'web/lib/wasm/mha_core.wasm.mjs', 'web/lib/wasm/mha_core_scalar.wasm.mjs', 'web/lib/models/index.json',
    'web/lib/models/charlm-h4-s0.safetensors', 'web/lib/models/charlm-h1-s0.safetensors',
    'web/lib/models/stories260K.safetensors', 'web/lib/models/stories260K.LICENSE', 'NOTICE', 'web/lib/dist/mha-gqa-story.js']) {
    assert.ok(files.includes(f), `tarball lacks ${f}`);
  }
  const unwanted = files.filter((f) => /^(tests|cpp|scripts|build[^/]*|node_modules|web\/site)\//.test(f) ||
    /\.(map|tgz|o|a|cpp|hpp)$/.test(f) || /^(CMakeLists\.txt|CMakePresets\.json|custom-elements-manifest\.config\.mjs)$/.test(f));
  assert.deepEqual(unwanted, [], 'tests, the lesson site, build intermediates');
  assert.deepEqual(files.filter((f) => !f.startsWith('web/lib/')).sort(), ['LICENSE', 'NOTICE', 'README.md', 'custom-elements.json', 'docs/trained-models.md', 'package.json'],
    'the library is web/lib/; nothing else but the manifest, README, the licence and third-party notice, and package.json');

  // gzip sizes: the .wasm, and the JS the default entry loads (its static import graph)
  const pkgDir = path.join(ROOT);
  const graph = new Set();
  const walk = async (rel) => {
    if (graph.has(rel)) return;
    graph.add(rel);
    const src = await readFile(path.join(pkgDir, rel), 'utf8');
    for (const m of src.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|^\s*import\s*['"](\.[^'"]+)['"]/gm)) {
      await walk(path.posix.join(path.posix.dirname(rel), m[1] ?? m[2]));
    }
  };
  await walk('web/lib/src/index.js');
  const gz = async (rels) => rels.reduce(async (acc, r) => (await acc) + gzipSync(await readFile(path.join(pkgDir, r)), { level: 9 }).length, Promise.resolve(0));
  const raw = async (rels) => rels.reduce(async (acc, r) => (await acc) + (await stat(path.join(pkgDir, r))).size, Promise.resolve(0));
  const entryJS = [...graph].sort();
  assert.ok(entryJS.includes('web/lib/wasm/mha_core.mjs') && !entryJS.includes('web/lib/wasm/mha_core_scalar.mjs'), 'default entry: SIMD glue only');
  const report = {
    tarball: pack.filename, size: pack.size, unpackedSize: pack.unpackedSize, entryCount: pack.entryCount,
    files: pack.files.map((f) => ({ path: f.path, size: f.size })).sort((a, b) => a.path.localeCompare(b.path)),
    gzip: {
      wasm: await gz(['web/lib/wasm/mha_core.wasm']),
      wasmScalar: await gz(['web/lib/wasm/mha_core_scalar.wasm']),
      wasmRelaxed: await gz(['web/lib/wasm/mha_core_relaxed.wasm', 'web/lib/wasm/mha_core_relaxed.mjs']),
      defaultEntryJS: await gz(entryJS),
      defaultEntryJSRaw: await raw(entryJS),
      defaultEntryFiles: entryJS,
      single: await gz(['web/lib/wasm/mha_core.wasm.mjs']),
      componentsBundle: await gz(['web/lib/dist/mha-components.js']),
      anywidgetBundle: await gz(['web/lib/dist/anywidget.js']),
    },
  };
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(path.join(ARTIFACTS, 'package-report.json'), JSON.stringify(report, null, 2));
  t.diagnostic(`${pack.filename}: ${pack.entryCount} files, ${pack.size} B packed, ${pack.unpackedSize} B unpacked; ` +
    `gzip: wasm ${report.gzip.wasm} B, default-entry JS ${report.gzip.defaultEntryJS} B (${entryJS.length} files)`);
  assert.ok(pack.size < 6_500_000, `tarball ${pack.size} B (the four character models are ~1.3 MB of it, the six grouped-query twins ~2 MB, stories260K in float32 ~1 MB; the bundles of 20 elements, Tokenizers.js's chunk and docs/trained-models.md the rest)`);
});

test('package.json: exports resolve to files in the installed package', async () => {
  const installed = path.join(nodeApp, 'node_modules', 'mha-wasm');
  const pj = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(pj.type, 'module');
  assert.ok(pj.engines.node);
  const targets = [];
  const collect = (v) => { if (typeof v === 'string') targets.push(v); else for (const x of Object.values(v)) collect(x); };
  for (const [key, v] of Object.entries(pj.exports)) if (!key.includes('*')) collect(v);
  for (const tgt of targets) assert.ok(existsSync(path.join(installed, tgt)), `exports target ${tgt} is in the package`);
  for (const key of ['.', './components', './single', './anywidget', './wasm', './custom-elements.json']) assert.ok(pj.exports[key], key);
  for (const key of ['.', './components', './single']) assert.ok(pj.exports[key].types, `${key} has types`);
  assert.ok(Array.isArray(pj.sideEffects) && pj.sideEffects.some((p) => p.includes('components')), 'components register elements: not side-effect free');
  const { stdout } = await sh(process.execPath, ['--input-type=module', '-e',
    "for (const s of ['mha-wasm', 'mha-wasm/components', 'mha-wasm/single', 'mha-wasm/anywidget', 'mha-wasm/wasm', 'mha-wasm/wasm-scalar', 'mha-wasm/dist/mha-components.js', 'mha-wasm/models/charlm-h4-s0.safetensors']) console.log(import.meta.resolve(s));"], nodeApp);
  for (const line of stdout.trim().split('\n')) assert.ok(existsSync(fileURLToPath(line)), line);
});

test('Node ESM: import with no options, worked example; non-SIMD, single, wasmBinary; no fetch', async () => {
  const { stdout } = await sh(process.execPath, ['node-esm.mjs'], nodeApp);
  const r = JSON.parse(stdout);
  assertWorked(r.simd, { simd: true });
  assertWorked(r.scalar, { simd: false });
  assertWorked(r.single, { simd: true });
  assertWorked(r.wasmBinary);
  assert.deepEqual(r.scalar.output, r.simd.output, 'both builds agree');
  assert.equal(r.version, JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version);
  assert.equal(r.isMHAError, true, 'mha-wasm/single re-exports the same MHAError');
  assert.equal(r.loadError?.name, 'MHALoadError');
  assert.match(r.loadError.message, /nonexistent\/mha_core\.wasm/);
});

test('Node CommonJS: await import(), and require() where Node has require(esm)', async () => {
  const { stdout } = await sh(process.execPath, ['node-cjs.cjs'], nodeApp);
  const r = JSON.parse(stdout);
  assertWorked(r.dynamicImport, { simd: true });
  if (process.features?.require_module) assertWorked(r.require, { simd: true });
});

test('TypeScript: tsc --noEmit --strict on a consumer file (types are checked, not any)', async () => {
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  const base = { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext',
    lib: ['es2022', 'dom'], skipLibCheck: false, types: [] };
  await writeFile(path.join(nodeApp, 'tsconfig.json'), JSON.stringify({ compilerOptions: base, files: ['consumer.ts'] }));
  await sh(tsc, ['-p', 'tsconfig.json'], nodeApp);
  // control: a wrong use is reported, so the check above can fail
  await writeFile(path.join(nodeApp, 'wrong.ts'),
    "import { createMHA } from 'mha-wasm';\nconst mha = await createMHA({ simd: 'yes' });\nmha.createLayer({ dModel: 24, numHeads: 2 }).forward([[1]]).output.nope;\nexport {};\n");
  await writeFile(path.join(nodeApp, 'tsconfig.wrong.json'), JSON.stringify({ compilerOptions: base, files: ['wrong.ts'] }));
  const err = await sh(tsc, ['-p', 'tsconfig.wrong.json'], nodeApp).then(() => null, (e) => e.message);
  assert.ok(err, 'tsc must reject wrong.ts');
  assert.match(err, /wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'boolean \| undefined'/);
  assert.match(err, /wrong\.ts\(3,\d+\): error TS2339: Property 'nope' does not exist on type 'Tensor'/);
});

test('custom-elements.json: generated, lists every element with attributes, events, parts, CSS properties', async () => {
  const installed = path.join(nodeApp, 'node_modules', 'mha-wasm');
  const pj = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(pj.customElements, 'custom-elements.json');
  const m = JSON.parse(await readFile(path.join(installed, pj.customElements), 'utf8'));
  const els = Object.fromEntries(m.modules.flatMap((mod) => (mod.declarations ?? []).filter((d) => d.customElement && d.tagName).map((d) => [d.tagName, { ...d, path: mod.path }])));
  assert.deepEqual(Object.keys(els).sort(), Object.keys(ELEMENTS).concat('mha-heatmap', 'mha-heads').sort());
  for (const tag of ['mha-trained-heads', 'mha-generate', 'mha-induction', 'mha-gqa-story']) {
    assert.ok(els[tag].attributes.some((a) => a.name === 'model'), `${tag} has a model attribute`);
  }
  assert.ok(els['mha-trained-heads'].cssParts.some((p) => p.name === 'switch'));
  assert.ok(els['mha-trained-heads'].events.some((e) => e.name === 'change'));
  const w = els['mha-widget'];
  const attrs = w.attributes.map((a) => a.name);
  for (const a of ['seq-len', 'd-model', 'heads', 'seed']) assert.ok(attrs.includes(a), `mha-widget attribute ${a}`);
  assert.ok(!attrs.some((a) => a.startsWith('_') || a === 'result'), `no internal state as attributes: ${attrs}`);
  assert.ok(w.events.some((e) => e.name === 'change'));
  assert.ok(w.cssParts.some((p) => p.name === 'head-button'));
  assert.ok(w.cssProperties.some((p) => p.name === '--mha-accent'));
  assert.ok(w.members.some((p) => p.name === 'weights' && p.kind === 'field'), 'data property weights');
  assert.ok(els['mha-passport'].attributes.some((a) => a.name === 'seq-len'));
  for (const e of Object.values(els)) assert.ok(existsSync(path.join(installed, e.path)), e.path);
});

test('Vite build: the .wasm is emitted as an asset and loaded in Chromium; components render', async () => {
  await sh(process.execPath, [path.join(viteApp, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], viteApp);
  const assets = await readdir(path.join(viteApp, 'dist', 'assets'));
  const wasm = assets.filter((f) => f.endsWith('.wasm'));
  assert.ok(wasm.some((f) => f.startsWith('mha_core-')), `SIMD .wasm emitted: ${assets}`);
  assert.ok(wasm.some((f) => f.startsWith('mha_core_scalar-')), `non-SIMD .wasm emitted: ${assets}`);
  assert.ok(wasm.some((f) => f.startsWith('mha_core_relaxed-')), `relaxed-SIMD .wasm emitted: ${assets}`);
  // the threaded builds: the wasm and the glue the workers import by URL are assets, and the pthread
  // worker (new Worker(new URL(…)) in the loader) a bundled worker file of the page's origin, never a
  // data: or blob: URL; the isolated page below runs them
  for (const re of [/^mha_core_relaxed_mt-.*\.wasm$/, /^mha_core_relaxed_mt-.*\.mjs$/, /^mha_core_mt-.*\.wasm$/, /^mha_core_mt-.*\.mjs$/, /^mha_pthread_worker-.*\.js$/]) {
    assert.ok(assets.some((f) => re.test(f)), `${re} emitted: ${assets}`);
  }
  const srv = await serve(path.join(viteApp, 'dist'));
  const { page, context, result, errors, wasmResponses } = await openPage(`${srv.url}/index.html`);
  assert.equal(result.error, undefined, result.error);
  assertWorked(result.simd, { simd: true });
  assertWorked(result.scalar, { simd: false });
  assert.deepEqual(result.scalar.output, result.simd.output);
  // Chromium compiles relaxed SIMD: the page's default createMHA() loads the relaxed tier.
  assert.ok(wasmResponses.some((r) => /\/assets\/mha_core_relaxed-[^/]*\.wasm$/.test(r.url) && r.status === 200 && r.type === 'application/wasm'), JSON.stringify(wasmResponses));
  await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 2);
  assert.equal(await heatmaps(page), 2);
  await page.locator('mha-widget button[data-h="4"]').click();
  await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 4);
  assert.equal(await heatmaps(page), 4);
  assert.equal(result.simd.threads, 1, 'a page that is not cross-origin isolated runs one thread');
  assert.deepEqual(errors, []);
  await context.close();

  // the same build served cross-origin isolated: the threaded build, the same numbers
  const iso = await serve(path.join(viteApp, 'dist'), { isolated: true });
  const t = await openPage(`${iso.url}/index.html?threads=2`);
  assert.equal(t.result.error, undefined, t.result.error);
  assert.ok(t.result.simd.threads >= 2, `threads in an isolated page: ${t.result.simd.threads}`);
  assert.deepEqual(t.result.simd.output, result.simd.output);
  assert.ok(t.wasmResponses.some((r) => /\/assets\/mha_core_relaxed_mt-[^/]*\.wasm$/.test(r.url) && r.status === 200), JSON.stringify(t.wasmResponses));
  assert.deepEqual(t.errors, []);
  await t.context.close();
});

test('webpack 5 build: the .wasm files and threaded glue are emitted as assets, the pthread worker as a worker chunk; one thread plain, threaded isolated', async () => {
  const { stdout, stderr } = await sh(process.execPath, [path.join(webpackApp, 'node_modules', 'webpack', 'bin', 'webpack.js')], webpackApp);
  assert.doesNotMatch(stdout + stderr, /WARNING|ERROR/, 'webpack builds the package without warnings');
  await cp(path.join(webpackApp, 'index.html'), path.join(webpackApp, 'dist', 'index.html'));
  const assets = await readdir(path.join(webpackApp, 'dist', 'assets'));
  for (const re of [/^mha_core-.*\.wasm$/, /^mha_core_scalar-.*\.wasm$/, /^mha_core_relaxed-.*\.wasm$/,
    /^mha_core_relaxed_mt-.*\.wasm$/, /^mha_core_relaxed_mt-.*\.mjs$/, /^mha_core_mt-.*\.wasm$/, /^mha_core_mt-.*\.mjs$/]) {
    assert.ok(assets.some((f) => re.test(f)), `${re} emitted: ${assets}`);
  }
  // the pthread worker: a worker chunk webpack bundles from the loader's new Worker(new URL(…), {name: 'mha-pthread'})
  assert.ok(existsSync(path.join(webpackApp, 'dist', 'mha-pthread.js')), 'pthread worker chunk emitted');
  assert.ok(!assets.some((f) => f.startsWith('thread-worker')), `the Node-only worker bootstrap is not a browser asset: ${assets}`);
  const plain = await openPage(`${(await serve(path.join(webpackApp, 'dist'))).url}/index.html`);
  assert.equal(plain.result.error, undefined, plain.result.error);
  assertWorked(plain.result.simd, { simd: true });
  assertWorked(plain.result.scalar, { simd: false });
  assert.equal(plain.result.simd.threads, 1, 'a page that is not cross-origin isolated runs one thread');
  assert.ok(plain.wasmResponses.some((r) => /\/assets\/mha_core_relaxed-[^/]*\.wasm$/.test(r.url) && r.status === 200), JSON.stringify(plain.wasmResponses));
  await plain.page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 2);
  assert.equal(await heatmaps(plain.page), 2);
  assert.deepEqual(plain.errors, []);
  await plain.context.close();
  const iso = await openPage(`${(await serve(path.join(webpackApp, 'dist'), { isolated: true })).url}/index.html?threads=2`);
  assert.equal(iso.result.error, undefined, iso.result.error);
  assert.ok(iso.result.simd.threads >= 2, `threads in an isolated page: ${iso.result.simd.threads}`);
  assert.deepEqual(iso.result.simd.output, plain.result.simd.output);
  assert.ok(iso.wasmResponses.some((r) => /\/assets\/mha_core_relaxed_mt-[^/]*\.wasm$/.test(r.url) && r.status === 200), JSON.stringify(iso.wasmResponses));
  assert.deepEqual(iso.errors, []);
  await iso.context.close();
});

test('single-file entry: works where .wasm files are refused (Vite build and no bundler)', async () => {
  const viteSrv = await serve(path.join(viteApp, 'dist'), { noWasm: true });
  const a = await openPage(`${viteSrv.url}/single.html`);
  assert.equal(a.result.error, undefined, a.result.error);
  assertWorked(a.result.simd, { simd: true });
  assert.deepEqual(a.wasmResponses, [], 'no .wasm requested');
  assert.deepEqual(a.errors, []);
  await a.context.close();

  const siteSrv = await serve(nodeApp, { noWasm: true });
  const b = await openPage(`${siteSrv.url}/single.html`);
  assert.equal(b.result.error, undefined, b.result.error);
  assertWorked(b.result.simd, { simd: true });
  assertWorked(b.result.scalar, { simd: false });
  assert.deepEqual(b.wasmResponses, []);
  assert.ok(siteSrv.requests.includes('/node_modules/mha-wasm/web/lib/wasm/mha_core_scalar.wasm.mjs'), 'non-SIMD bytes loaded on demand');
  assert.deepEqual(b.errors, []);
  await b.context.close();

  // control: the default entry on the same host fails, with a message that points to the remedy
  const c = await openPage(`${siteSrv.url}/static.html`);
  assert.match(c.result.error ?? '', /MHALoadError|could not load the wasm core/);
  assert.match(c.result.error, /mha-wasm\/single/);
  await c.context.close();
});

test('no bundler: a static page imports the API and the component bundle from node_modules', async () => {
  const srv = await serve(nodeApp);
  const { page, context, result, errors, wasmResponses } = await openPage(`${srv.url}/static.html`);
  assert.equal(result.error, undefined, result.error);
  assertWorked(result.simd, { simd: true });
  assert.ok(wasmResponses.some((r) => r.url.endsWith('/node_modules/mha-wasm/web/lib/wasm/mha_core_relaxed.wasm') && r.status === 200), JSON.stringify(wasmResponses));
  await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 2);
  assert.equal(await heatmaps(page), 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test('strict CSP (no unsafe-eval): copied dist/ + wasm/ folders, and the single-file entry', async () => {
  // "copy the dist/ and wasm/ folders": node_modules/mha-wasm/web/lib/{dist,wasm} → /mha/
  const site = path.join(nodeApp, 'mha');
  await mkdir(site, { recursive: true });
  await cp(path.join(nodeApp, 'node_modules', 'mha-wasm', 'web', 'lib', 'dist'), path.join(site, 'dist'), { recursive: true });
  await cp(path.join(nodeApp, 'node_modules', 'mha-wasm', 'web', 'lib', 'wasm'), path.join(site, 'wasm'), { recursive: true });
  const srv = await serve(nodeApp, { csp: CSP });
  for (const which of ['dist', 'single']) {
    const { page, context, result, errors, csp, wasmResponses } = await openPage(`${srv.url}/csp.html?which=${which}`, { csp: true });
    assert.equal(result.error, undefined, `${which}: ${result.error}`);
    assertWorked(result.simd, { simd: true });
    if (which === 'dist') {
      assert.ok(wasmResponses.some((r) => r.url.endsWith('/mha/wasm/mha_core_relaxed.wasm')), JSON.stringify(wasmResponses));
      await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 2);
      assert.equal(await heatmaps(page), 2);
    } else {
      assert.deepEqual(wasmResponses, []);
    }
    assert.deepEqual(csp, [], `${which}: CSP violations`);
    assert.deepEqual(errors, [], `${which}: console errors`);
    // control: the policy is in force and its violations are seen: an inline script is refused
    await page.evaluate(() => {
      const el = document.createElement('script');
      el.textContent = 'window.__inline = 1';
      document.body.append(el);
    });
    await page.waitForFunction(() => window.__csp.length > 0);
    assert.equal(await page.evaluate(() => window.__inline), undefined);
    await context.close();
  }
  // control: without 'wasm-unsafe-eval' the wasm cannot compile, and the test sees it
  const strict = await serve(nodeApp, { csp: "default-src 'self'; script-src 'self'" });
  const { result, context } = await openPage(`${strict.url}/csp.html?which=single`);
  assert.ok(result.error, 'wasm compiled without wasm-unsafe-eval?');
  await context.close();
});

/** Every element an author can paste alone: its entry in dist/ (dist/<tag>.js), its markup, and the read-only property that is set once it has computed. */
const ELEMENTS = {
  'mha-widget': ['mha-widget', '<mha-widget seq-len="5" d-model="24" heads="2"></mha-widget>', 'result'],
  'mha-passport': ['mha-passport', '<mha-passport seq-len="10" d-model="512" heads="8"></mha-passport>', 'passport'],
  'mha-engine-info': ['mha-engine-info', '<mha-engine-info></mha-engine-info>', 'info'],
  'mha-stepper': ['mha-stepper', '<mha-stepper></mha-stepper>', 'trace'],
  'mha-wo-mix': ['mha-wo-mix', '<mha-wo-mix></mha-wo-mix>', 'contributions'],
  'mha-model-table': ['mha-model-table', '<mha-model-table></mha-model-table>', 'rows'],
  'mha-kv-calculator': ['mha-kv-calculator', '<mha-kv-calculator></mha-kv-calculator>', 'result'],
  'mha-cost-ledger': ['mha-cost-ledger', '<mha-cost-ledger></mha-cost-ledger>', 'result'],
  'mha-trained-heads': ['mha-trained-heads', '<mha-trained-heads></mha-trained-heads>', 'textScores'],
  'mha-induction': ['mha-induction', '<mha-induction></mha-induction>', 'measured'],
  'mha-generate': ['mha-generate', '<mha-generate></mha-generate>', 'lm'],
  'mha-twins': ['mha-twins', '<mha-twins></mha-twins>', 'rows'],
  'mha-gqa-story': ['mha-gqa-story', '<mha-gqa-story></mha-gqa-story>', 'measured'],
  'mha-gqa-twins': ['mha-gqa-twins', '<mha-gqa-twins></mha-gqa-twins>', 'rows'],
  'mha-layer-map': ['mha-layer-map', '<mha-layer-map seq-len="5" d-model="24" heads="2" causal></mha-layer-map>', 'passport'],
  'mha-causal-mask': ['mha-causal-mask', '<mha-causal-mask causal></mha-causal-mask>', 'result'],
  'mha-cross-attention': ['mha-cross-attention', '<mha-cross-attention></mha-cross-attention>', 'result'],
  'mha-surprisal': ['mha-surprisal', '<mha-surprisal text="purple kites drift north" repeat></mha-surprisal>', 'measured'],
};

test('every element alone on a plain page under the strict CSP, from copied dist/, wasm/ and models/ folders; what each page downloads (gzip)', { timeout: 300_000 }, async () => {
  const lib = path.join(nodeApp, 'node_modules', 'mha-wasm', 'web', 'lib');
  const site = path.join(nodeApp, 'mha');
  for (const d of ['dist', 'wasm', 'models']) await cp(path.join(lib, d), path.join(site, d), { recursive: true });
  const srv = await serve(nodeApp, { csp: CSP });
  const sizes = {};
  for (const [tag, [bundle, markup, ready]] of Object.entries(ELEMENTS)) {
    await writeFile(path.join(nodeApp, `el-${tag}.html`), `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>${tag}</title><script type="module" src="/mha/dist/${bundle}.js"></script></head>
<body><main><h1>${tag}</h1>${markup.replace('>', ` data-ready-prop="${ready}">`)}</main></body></html>`);
    const { page, context, errors, bodies, csp } = await openPage(`${srv.url}/el-${tag}.html`, {
      csp: true, timeout: 90_000,
      waitFor: () => { const el = document.querySelector('[data-ready-prop]'); return el && (el.error || el[el.dataset.readyProp]); },
    });
    assert.equal(await page.evaluate(() => document.querySelector('[data-ready-prop]').error?.message ?? null), null, tag);
    const shadowText = await page.evaluate(() => document.querySelector('[data-ready-prop]').shadowRoot.textContent.length);
    assert.ok(shadowText > 10, `${tag} rendered ${shadowText} characters`);
    assert.deepEqual(csp, [], `${tag}: CSP violations`);
    assert.deepEqual(errors, [], `${tag}: console errors`);
    const got = await Promise.all(bodies);
    const gz = (re) => got.filter((b) => re.test(b.url)).reduce((a, b) => a + gzipSync(b.body).length, 0);
    sizes[tag] = { js: gz(/\.m?js$/), wasm: gz(/\.wasm$/), models: gz(/\.(safetensors|json)$/) };
    await context.close();
  }
  // a page with only the widget downloads none of the lesson elements' code: the engine's API and the
  // chosen build's glue (73,342 B of JS, gzip, before the elements existed; 77,466 B since the
  // decoder moved into the core: decoder.js, the byte-pair tokenizer and the decoder bindings' glue)
  // the JS API's entry, Lit and the widget's elements; the model readers and the model cache load on first use
  assert.ok(sizes['mha-widget'].js < 96_000, `widget page JS ${sizes['mha-widget'].js} B gzip`);
  assert.equal(sizes['mha-widget'].models, 0);
  console.log('# gzip bytes downloaded by a page with one element (JS / wasm / models):');
  for (const [tag, s] of Object.entries(sizes)) {
    const extra = s.js - sizes['mha-widget'].js;
    console.log(`#   ${tag.padEnd(18)} ${String(s.js).padStart(7)} / ${String(s.wasm).padStart(6)} / ${String(s.models).padStart(7)}   JS vs the widget page: ${extra >= 0 ? '+' : ''}${extra}`);
  }
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(path.join(ARTIFACTS, 'element-sizes.json'), JSON.stringify(sizes, null, 1));
});

test("README: every html snippet of 'Embed in a course page', pasted into an empty page, works under the strict CSP", { timeout: 300_000 }, async () => {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Embed in a course page'), readme.indexOf('## Performance'));
  const snippets = [...section.matchAll(/```html\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(snippets.length >= 5, `${snippets.length} snippets`);
  const lib = path.join(nodeApp, 'node_modules', 'mha-wasm', 'web', 'lib');
  for (const d of ['dist', 'wasm', 'models']) await cp(path.join(lib, d), path.join(nodeApp, 'mha', d), { recursive: true });
  const srv = await serve(nodeApp, { csp: CSP });
  for (const [i, snippet] of snippets.entries()) {
    await writeFile(path.join(nodeApp, `snippet-${i}.html`), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>snippet</title></head><body>\n${snippet}</body></html>`);
    assert.match(snippet, /<mha-[a-z-]+/, snippet);
    // every element defined, rendered (numbers on it, no loading line), or showing an error of its own
    const { page, context, errors, csp } = await openPage(`${srv.url}/snippet-${i}.html`, {
      csp: true, timeout: 90_000,
      waitFor: () => [...document.body.children].filter((e) => e.localName.startsWith('mha-')).every((el) => customElements.get(el.localName) &&
        (el.error || (/\d/.test(el.shadowRoot?.textContent ?? '') && !/Loading|Computing/.test(el.shadowRoot.textContent)))),
    });
    const bad = await page.evaluate(() => [...document.body.children].filter((el) => el.error).map((el) => `${el.localName}: ${el.error.message}`));
    assert.deepEqual(bad, [], snippet);
    assert.deepEqual(csp, [], snippet);
    assert.deepEqual(errors, [], snippet);
    await context.close();
  }
});

test('anywidget: the bundled module, imported from a blob: URL, renders <mha-widget> and syncs heads', async () => {
  const srv = await serve(nodeApp, { noWasm: true });
  const { page, context, errors, wasmResponses } = await openPage(`${srv.url}/anywidget.html`,
    { waitFor: () => window.__ready === true || window.__result !== undefined });
  await page.waitForFunction(() => document.querySelector('#out mha-widget')?.result?.heads === 4, null, { timeout: 30_000 });
  assert.equal(await heatmaps(page, '#out mha-widget'), 4, 'heads = 4 from the model');
  assert.equal(await page.evaluate(() => document.querySelector('#out mha-widget').getAttribute('seed')), '3');
  // user clicks h = 2: written back to the model and saved
  await page.locator('#out mha-widget button[data-h="2"]').click();
  await page.waitForFunction(() => window.__model.get('heads') === 2);
  assert.equal(await page.evaluate(() => window.__model.saves), 1);
  assert.equal(await heatmaps(page, '#out mha-widget'), 2);
  // Python sets heads = 8
  await page.evaluate(() => window.__model.fromPython('heads', 8));
  await page.waitForFunction(() => document.querySelector('#out mha-widget')?.result?.heads === 8);
  assert.equal(await heatmaps(page, '#out mha-widget'), 8);
  // cleanup removes the element and the listeners
  await page.evaluate(() => window.__cleanup());
  assert.equal(await page.evaluate(() => [document.querySelectorAll('mha-widget').length, window.__model.listeners()].join()), '0,0');
  assert.deepEqual(wasmResponses, [], 'wasm embedded in the module');
  assert.deepEqual(errors, []);
  await context.close();
});

test('anywidget: view "trained-heads" shows the explorer on a model sent as bytes, and syncs text and ablate both ways', async () => {
  const srv = await serve(nodeApp, { noWasm: true });
  const { page, context, errors, wasmResponses } = await openPage(`${srv.url}/anywidget.html?view=trained-heads`,
    { waitFor: () => window.__ready === true || window.__result !== undefined });
  await page.waitForFunction(() => document.querySelector('#out mha-trained-heads')?.result?.tokens.length === 14, null, { timeout: 60_000 });
  assert.equal(await page.locator('#out mha-trained-heads mha-heatmap').count(), 8);
  // the user types and switches a head off: both written back
  await page.locator('#out mha-trained-heads textarea').fill('hello hello');
  await page.waitForFunction(() => window.__model.get('text') === 'hello hello');
  await page.locator('#out mha-trained-heads button[role="switch"]').nth(5).click();
  await page.waitForFunction(() => window.__model.get('ablate') === '2:2');
  // Python sets the text
  await page.evaluate(() => window.__model.fromPython('text', 'from python'));
  await page.waitForFunction(() => document.querySelector('#out mha-trained-heads').result?.tokens.join('') === 'from python');
  await page.evaluate(() => window.__cleanup());
  assert.equal(await page.evaluate(() => [document.querySelectorAll('mha-trained-heads').length, window.__model.listeners()].join()), '0,0');
  assert.deepEqual(wasmResponses, [], 'wasm embedded in the module');
  assert.deepEqual(errors, []);
  await context.close();
});

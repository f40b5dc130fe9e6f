// Consumer tests of the npm package in Chromium: `npm pack` once, install the tarball into fresh
// temporary projects (`npm install <tarball>`, dependencies from the registry with --prefer-offline)
// and use it the ways pages do: Vite and webpack builds, a page without a bundler, the single-file
// entry where .wasm files cannot be served, a strict CSP page, every element alone on a plain page
// (what each downloads), the README's embed snippets, and the anywidget module. Checks values (the
// worked example's 4.050, heatmaps rendered), not only "no error". The tarball, exports, Node and
// TypeScript: package.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT, ARTIFACTS, CSP, ELEMENTS, sh, serve, openPage, heatmaps, assertWorked, preparePackage, cleanup } from '../helpers/package.mjs';

let tmp, nodeApp, viteApp, webpackApp;

before(async () => {
  ({ tmp, nodeApp, viteApp, webpackApp } = await preparePackage({ vite: true, webpack: true }));
});

after(() => cleanup(tmp));

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
    srv.sent.length = 0;
    const { page, context, errors, csp } = await openPage(`${srv.url}/el-${tag}.html`, {
      csp: true, timeout: 90_000,
      waitFor: () => { const el = document.querySelector('[data-ready-prop]'); return el && (el.error || el[el.dataset.readyProp]); },
    });
    assert.equal(await page.evaluate(() => document.querySelector('[data-ready-prop]').error?.message ?? null), null, tag);
    const shadowText = await page.evaluate(() => document.querySelector('[data-ready-prop]').shadowRoot.textContent.length);
    assert.ok(shadowText > 10, `${tag} rendered ${shadowText} characters`);
    assert.deepEqual(csp, [], `${tag}: CSP violations`);
    assert.deepEqual(errors, [], `${tag}: console errors`);
    const got = srv.sent.slice();
    const gz = (re) => got.filter((b) => re.test(b.url)).reduce((a, b) => a + gzipSync(b.body).length, 0);
    sizes[tag] = { js: gz(/\.m?js$/), wasm: gz(/\.wasm$/), models: gz(/\.(safetensors|json)$/) };
    await context.close();
  }
  // a page with only the widget downloads none of the lesson elements' code: the engine's API and the
  // chosen build's glue (73,342 B of JS, gzip, before the elements existed; 77,466 B since the
  // decoder moved into the core: decoder.js, the byte-pair tokenizer and the decoder bindings' glue)
  // the JS API's entry, Lit and the widget's elements; the model readers and the model cache load on
  // first use. The entry also carries what index.js exports statically: the OV circuit's eigenvalues
  // (lm/eigen.js, lm/ov-eigen.js), 16-bit weight storage (formats/half.js), and the components' radio
  // groups, announcer and light-dark() colours (99,526 B measured with them)
  assert.ok(sizes['mha-widget'].js < 102_000, `widget page JS ${sizes['mha-widget'].js} B gzip`);
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

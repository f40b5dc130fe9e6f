// The Docusaurus 3 recipe of docs/guide.md ("Course hosts"), built with the real host: Docusaurus 3
// with its classic preset and React 19, pinned in tests/hosts/docusaurus/ (package.json and its lock,
// installed there by scripts/setup.sh), and the package as a course author gets it: `npm pack` of
// this repository unpacked into the site's node_modules/mha-wasm (not linked: Docusaurus's Babel
// compiles code outside node_modules to ES5 classes, which custom elements refuse). The recipe: one
// `import 'mha-wasm/components';` in the .mdx page that uses the elements, no configuration, the
// theme's one-liner in src/css/custom.css. The built site is opened in Chromium: the elements show
// content, the bad attribute its one message, no console error (no hydration mismatch), the theme
// switch (`data-theme`) darkens and lightens them, and a page without elements runs none of the package.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, ROOT } from './helpers.mjs';
import { serve } from '../helpers/package.mjs';

export const HOST = path.join(ROOT, 'tests', 'hosts', 'docusaurus');
export const CONFIG = `export default {
  title: 'Sequence models',
  url: 'https://course.example',
  baseUrl: '/',
  presets: [['classic', {
    docs: { routeBasePath: '/' },
    blog: false,
    theme: { customCss: './src/css/custom.css' },
  }]],
};
`;
export const CUSTOM_CSS = '[data-theme="dark"] { color-scheme: dark; }\n';
export const PAGE = `---
title: "Week 6: how many heads?"
---
import 'mha-wasm/components';

# Week 6: how many heads?

<mha-widget heads="4"></mha-widget>

<mha-passport seq-len="5" d-model="24" heads="four"></mha-passport>
`;
export const INTRO = `---
slug: /
---
# Sequence models

This page has no element: it loads none of the package.
`;

const seconds = (t0) => ((performance.now() - t0) / 1000).toFixed(1);
let env, tmp, srv;
const timing = {};

before(async () => {
  const pinned = JSON.parse(readFileSync(path.join(HOST, 'package.json'), 'utf8')).dependencies;
  const installed = path.join(HOST, 'node_modules', '@docusaurus', 'core', 'package.json');
  if (!existsSync(installed) || JSON.parse(readFileSync(installed, 'utf8')).version !== pinned['@docusaurus/core']) {
    throw new Error(`Docusaurus ${pinned['@docusaurus/core']} is not installed in ${HOST}: run bash scripts/setup.sh (it runs npm ci there)`);
  }
  env = await setup();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'mha-docusaurus-'));
  const site = path.join(tmp, 'site');
  const nm = path.join(site, 'node_modules');
  for (const d of ['docs', 'src/css', 'node_modules']) mkdirSync(path.join(site, d), { recursive: true });
  writeFileSync(path.join(site, 'package.json'), '{"private": true}\n');   // not "type": "module": Docusaurus's generated modules are CommonJS
  writeFileSync(path.join(site, 'docusaurus.config.js'), CONFIG);
  writeFileSync(path.join(site, 'src', 'css', 'custom.css'), CUSTOM_CSS);
  writeFileSync(path.join(site, 'docs', 'intro.md'), INTRO);
  writeFileSync(path.join(site, 'docs', 'week-6.mdx'), PAGE);
  // the site's node_modules: the pinned host's packages (linked, each package on its own so that
  // scopes can be shared), then the package unpacked from its tarball, then the package's
  // dependencies from the repository's node_modules (as `npm install mha-wasm-*.tgz` would add them)
  const link = (from, name) => {
    if (existsSync(path.join(nm, name))) return;
    if (name.includes('/')) mkdirSync(path.join(nm, name.split('/')[0]), { recursive: true });
    symlinkSync(path.join(from, name), path.join(nm, name));
  };
  for (const e of readdirSync(path.join(HOST, 'node_modules'))) {
    if (e.startsWith('.')) continue;
    if (e.startsWith('@')) for (const s of readdirSync(path.join(HOST, 'node_modules', e))) link(path.join(HOST, 'node_modules'), `${e}/${s}`);
    else link(path.join(HOST, 'node_modules'), e);
  }
  let t0 = performance.now();
  const pack = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'],
    { cwd: ROOT, env: { ...process.env, MHA_PREPACK_SKIP_BUILD: '1' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))[0];
  mkdirSync(path.join(nm, 'mha-wasm'));
  execFileSync('tar', ['xzf', path.join(tmp, pack.filename), '-C', path.join(nm, 'mha-wasm'), '--strip-components=1']);
  for (const dep of Object.keys(JSON.parse(readFileSync(path.join(nm, 'mha-wasm', 'package.json'), 'utf8')).dependencies)) {
    link(path.join(ROOT, 'node_modules'), dep);
  }
  timing.pack = seconds(t0);
  t0 = performance.now();
  try {
    execFileSync(process.execPath, [path.join(HOST, 'node_modules', '@docusaurus', 'core', 'bin', 'docusaurus.mjs'), 'build', '--out-dir', 'build', '--no-minify'],
      { cwd: site, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DOCUSAURUS_TELEMETRY: '0' }, maxBuffer: 64 << 20 });
  } catch (e) {
    throw new Error(`docusaurus build failed:\n${e.stdout}\n${e.stderr}`);
  }
  timing.build = seconds(t0);
  srv = await serve(path.join(site, 'build'));
});
after(async () => {
  await srv?.close();
  await env?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('Docusaurus 3 (React 19): a page that imports the elements shows them, one message for the bad attribute, no console error; data-theme switches them; a page without them runs none of the package', { timeout: 300_000 }, async (t) => {
  const react = JSON.parse(readFileSync(path.join(HOST, 'node_modules', 'react', 'package.json'), 'utf8')).version;
  assert.match(react, /^19\./, 'the host runs React 19');
  const html = readFileSync(path.join(tmp, 'site', 'build', 'week-6', 'index.html'), 'utf8');
  assert.match(html, /<mha-widget heads="4"><\/mha-widget>/, 'prerendered as a custom element with its attribute');
  const t0 = performance.now();
  const { page: p, errors } = await env.newPage({ colorScheme: 'dark' });
  // the intro page: no element, so nothing of the package runs and no wasm is fetched
  const wasm = [];
  p.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(r.url()); });
  await p.goto(`${srv.url}/`, { waitUntil: 'load' });
  await p.waitForSelector('article h1');
  assert.equal(await p.evaluate(() => customElements.get('mha-widget') === undefined), true, 'the intro page defines no element');
  await p.waitForTimeout(500);
  assert.deepEqual(wasm, [], 'the intro page fetches no wasm');
  const kb = (from) => (srv.sent.slice(from).filter((f) => /\.(js|wasm)$/.test(f.url)).reduce((a, f) => a + f.body.length, 0) / 1024).toFixed(0);
  const introSent = srv.sent.length;
  timing.introKB = kb(0);
  // the package's code, told by the definition of one of its elements
  const withPackage = (from) => srv.sent.slice(from).filter((f) => f.url.endsWith('.js') && f.body.includes("'mha-widget'")).map((f) => f.url);
  assert.deepEqual(withPackage(0), [], 'the intro page fetches none of the package\'s code');
  await p.goto(`${srv.url}/week-6`, { waitUntil: 'domcontentloaded' });
  await p.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 4
    && document.querySelector('mha-passport')?.shadowRoot?.querySelector('[part="error"]'), null, { timeout: 90_000 });
  const shown = await p.evaluate(() => ({
    widgets: document.querySelectorAll('article mha-widget').length,
    heatmaps: document.querySelector('mha-widget').shadowRoot.querySelector('mha-heads').shadowRoot.querySelectorAll('mha-heatmap').length,
    errors: [...document.querySelector('mha-passport').shadowRoot.querySelectorAll('[part="error"]')].map((e) => e.textContent),
  }));
  assert.deepEqual(shown, { widgets: 1, heatmaps: 4, errors: ['heads: expected a whole number from 1 to 24, got "four"'] });
  assert.ok(wasm.length > 0, 'the page with elements fetched the engine');
  timing.pageKB = kb(introSent);
  assert.ok(withPackage(introSent).length > 0, 'the page with elements fetched the package\'s code');
  // Docusaurus starts light whatever the system (its default colorMode): light elements on a dark
  // system; its navbar switch, both ways
  const fg = () => p.evaluate(() => getComputedStyle(document.querySelector('mha-widget')).color);
  const theme = () => p.evaluate(() => document.documentElement.dataset.theme);
  const toggle = p.locator('.navbar button[title*="mode"]').first();
  assert.equal(await theme(), 'light');
  assert.equal(await fg(), 'rgb(27, 31, 36)');
  await toggle.click();
  await p.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  assert.equal(await fg(), 'rgb(230, 237, 243)', 'dark after the switch');
  await toggle.click();
  await p.waitForFunction(() => document.documentElement.dataset.theme === 'light');
  assert.equal(await fg(), 'rgb(27, 31, 36)', 'light again');
  assert.deepEqual(errors, []);
  timing.browser = seconds(t0);
  t.diagnostic(`Docusaurus host (unminified build): npm pack + unpack ${timing.pack} s, docusaurus build ${timing.build} s, in Chromium ${timing.browser} s; `
    + `JS and wasm fetched: ${timing.introKB} KB loading the page without elements, ${timing.pageKB} KB loading the page with them`);
});

test('docs/guide.md gives the recipe this suite builds: the page\'s import and tags, the theme line in src/css/custom.css', () => {
  const guide = readFileSync(path.join(ROOT, 'docs', 'guide.md'), 'utf8');
  const block = guide.match(/\*\*Docusaurus 3\*\*[\s\S]*?```mdx\n([\s\S]*?)```/)?.[1];
  assert.ok(block, 'the guide\'s Docusaurus .mdx block');
  const body = PAGE.replace(/^---[\s\S]*?---\n/, '');
  for (const line of block.split('\n').filter(Boolean)) assert.ok(body.includes(line), `the test's page has the guide's line ${line}`);
  assert.ok(guide.includes(`| Docusaurus | \`src/css/custom.css\` | \`${CUSTOM_CSS.trim()}\` |`), 'the theme line');
  assert.match(CONFIG, /customCss: '\.\/src\/css\/custom\.css'/);
});

// The VitePress recipe of docs/guide.md ("Course hosts"), built with the real host (VitePress 1, a
// devDependency): `isCustomElement` for the <mha-*> tags (without it Vue renders them as unknown
// components: empty prerendered HTML and hydration errors), `optimizeDeps.exclude` (for `vitepress
// dev`), `worker.format: 'es'` (VitePress 1 ships Vite 5, whose default worker format cannot hold the
// engine worker's lazily loaded modules), the elements imported on mount (the build prerenders pages in Node, where custom elements
// cannot be defined), the theme's one-liner. The package is linked as node_modules/mha-wasm. The
// built site is opened in Chromium: the elements show content, the bad attribute its one message,
// no console error (no hydration mismatch), and the `.dark` switch darkens them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, ROOT } from './helpers.mjs';
import { serve } from '../helpers/package.mjs';

export const CONFIG = `export default {
  title: 'Sequence models',
  vue: { template: { compilerOptions: { isCustomElement: (tag) => tag.startsWith('mha-') } } },
  vite: { optimizeDeps: { exclude: ['mha-wasm'] }, worker: { format: 'es' } },
};
`;
export const THEME = `import DefaultTheme from 'vitepress/theme';
import './style.css';
export default DefaultTheme;
`;
export const STYLE = '.dark { color-scheme: dark; }\n';
export const PAGE = `# Week 6: how many heads?

<script setup>
import { onMounted } from 'vue';
onMounted(() => import('mha-wasm/components'));
</script>

<mha-widget heads="4"></mha-widget>

<mha-passport seq-len="5" d-model="24" heads="four"></mha-passport>
`;

let env, tmp, srv, buildSeconds;
before(async () => {
  env = await setup();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'mha-vitepress-'));
  mkdirSync(path.join(tmp, 'docs', '.vitepress', 'theme'), { recursive: true });
  mkdirSync(path.join(tmp, 'node_modules'));
  for (const dep of ['vitepress', 'vue']) symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(tmp, 'node_modules', dep));
  symlinkSync(ROOT, path.join(tmp, 'node_modules', 'mha-wasm'));   // as `npm link` would
  writeFileSync(path.join(tmp, 'package.json'), '{"private": true, "type": "module"}\n');
  writeFileSync(path.join(tmp, 'docs', '.vitepress', 'config.mjs'), CONFIG);
  writeFileSync(path.join(tmp, 'docs', '.vitepress', 'theme', 'index.js'), THEME);
  writeFileSync(path.join(tmp, 'docs', '.vitepress', 'theme', 'style.css'), STYLE);
  writeFileSync(path.join(tmp, 'docs', 'index.md'), PAGE);
  const t0 = performance.now();
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build', 'docs'],
    { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
  buildSeconds = ((performance.now() - t0) / 1000).toFixed(1);
  srv = await serve(path.join(tmp, 'docs', '.vitepress', 'dist'));
});
after(async () => {
  await srv?.close();
  await env?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('VitePress: the prerendered page keeps the tags; in Chromium the elements show content and one message for the bad attribute, no console error; .dark darkens them', { timeout: 180_000 }, async (t) => {
  const t0 = performance.now();
  const html = readFileSync(path.join(tmp, 'docs', '.vitepress', 'dist', 'index.html'), 'utf8');
  assert.match(html, /<mha-widget heads="4"><\/mha-widget>/, 'prerendered as a custom element, not an empty component');
  const { page: p, errors } = await env.newPage();
  await p.goto(`${srv.url}/`, { waitUntil: 'domcontentloaded' });
  await p.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 4
    && document.querySelector('mha-passport')?.shadowRoot?.querySelector('[part="error"]'), null, { timeout: 90_000 });
  const shown = await p.evaluate(() => ({
    widgets: document.querySelectorAll('mha-widget').length,
    heatmaps: document.querySelector('mha-widget').shadowRoot.querySelector('mha-heads').shadowRoot.querySelectorAll('mha-heatmap').length,
    errors: [...document.querySelector('mha-passport').shadowRoot.querySelectorAll('[part="error"]')].map((e) => e.textContent),
  }));
  assert.deepEqual(shown, { widgets: 1, heatmaps: 4, errors: ['heads: expected a whole number from 1 to 24, got "four"'] });
  const fg = () => p.evaluate(() => getComputedStyle(document.querySelector('mha-widget')).color);
  await p.evaluate(() => document.documentElement.classList.remove('dark'));
  assert.equal(await fg(), 'rgb(27, 31, 36)');
  await p.evaluate(() => document.documentElement.classList.add('dark'));
  assert.equal(await fg(), 'rgb(230, 237, 243)');
  assert.deepEqual(errors, []);
  t.diagnostic(`VitePress host: vitepress build ${buildSeconds} s, in Chromium ${((performance.now() - t0) / 1000).toFixed(1)} s`);
});

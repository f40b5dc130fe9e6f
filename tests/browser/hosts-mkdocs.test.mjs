// The MkDocs + Material recipe of docs/guide.md ("Course hosts"), built with the real host (Debian's
// mkdocs and mkdocs-material, which scripts/setup.sh installs): the package's dist/, wasm/ and models/
// copied under docs/mha/, a page with elements as raw HTML and one module script, the theme's
// one-liner in extra.css. The built site is opened in Chromium: every element shows content, no
// console error, no internal README published as a page, and Material's dark scheme darkens them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, ROOT } from './helpers.mjs';
import { serve } from '../helpers/package.mjs';

export const MKDOCS_YML = `site_name: Sequence models
theme:
  name: material
  font: false
  palette:
    - scheme: default
      toggle: { icon: material/brightness-4, name: Dark }
    - scheme: slate
      toggle: { icon: material/brightness-7, name: Light }
extra_css:
  - stylesheets/extra.css
`;
export const EXTRA_CSS = '[data-md-color-scheme="slate"] { color-scheme: dark; }\n';
export const PAGE = `# Week 6: how many heads?

Switch between 1, 2, 4 and 8 heads.

<script type="module" src="mha/dist/mha-components.js"></script>
<script type="module" src="mha/dist/mha-lesson-elements.js"></script>

<mha-widget heads="4"></mha-widget>

The restaurant example, step by step:

<mha-stepper step="3"></mha-stepper>

<mha-passport seq-len="5" d-model="24" heads="four"></mha-passport>
`;

let env, tmp, srv, buildSeconds;
before(async () => {
  env = await setup();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'mha-mkdocs-'));
  mkdirSync(path.join(tmp, 'docs', 'stylesheets'), { recursive: true });
  writeFileSync(path.join(tmp, 'mkdocs.yml'), MKDOCS_YML);
  writeFileSync(path.join(tmp, 'docs', 'stylesheets', 'extra.css'), EXTRA_CSS);
  writeFileSync(path.join(tmp, 'docs', 'index.md'), PAGE);
  // the recipe: dist/, wasm/ and models/ of the package's web/lib/, nothing else of it
  for (const f of ['dist', 'wasm', 'models']) cpSync(path.join(ROOT, 'web', 'lib', f), path.join(tmp, 'docs', 'mha', f), { recursive: true });
  const t0 = performance.now();
  execFileSync('mkdocs', ['build', '--quiet', '--site-dir', 'site'], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
  buildSeconds = ((performance.now() - t0) / 1000).toFixed(1);
  srv = await serve(path.join(tmp, 'site'));
});
after(async () => {
  await srv?.close();
  await env?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('MkDocs + Material: the built page shows every element, one message for the bad attribute, no console error, no README page', { timeout: 180_000 }, async (t) => {
  const t0 = performance.now();
  const pages = readdirSync(path.join(tmp, 'site'), { recursive: true }).filter((f) => f.endsWith('index.html'));
  assert.deepEqual(pages.sort(), ['index.html'], 'only the course page is published');
  const { page: p, errors } = await env.newPage({ colorScheme: 'dark' });
  await p.goto(`${srv.url}/`, { waitUntil: 'domcontentloaded' });
  await p.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 4
    && document.querySelector('mha-stepper')?.shadowRoot?.querySelector('table')
    && document.querySelector('mha-passport')?.shadowRoot?.querySelector('[part="error"]'), null, { timeout: 90_000 });
  const shown = await p.evaluate(() => ({
    heatmaps: document.querySelector('mha-widget').shadowRoot.querySelector('mha-heads').shadowRoot.querySelectorAll('mha-heatmap').length,
    passportErrors: [...document.querySelector('mha-passport').shadowRoot.querySelectorAll('[part="error"]')].map((e) => e.textContent),
    inArticle: !!document.querySelector('article mha-widget'),
  }));
  assert.equal(shown.heatmaps, 4);
  assert.deepEqual(shown.passportErrors.length, 1);
  assert.match(shown.passportErrors[0], /^heads: expected a whole number/);
  assert.ok(shown.inArticle, 'the element sits in Material\'s article');
  // Material's default scheme on a dark system: a light page, light elements; slate: dark ones
  const fg = () => p.evaluate(() => getComputedStyle(document.querySelector('mha-widget')).color);
  assert.equal(await p.evaluate(() => document.body.getAttribute('data-md-color-scheme')), 'default');
  assert.equal(await fg(), 'rgb(27, 31, 36)');
  await p.evaluate(() => document.body.setAttribute('data-md-color-scheme', 'slate'));
  assert.equal(await fg(), 'rgb(230, 237, 243)');
  assert.deepEqual(errors, []);
  t.diagnostic(`MkDocs host: mkdocs build ${buildSeconds} s, in Chromium ${((performance.now() - t0) / 1000).toFixed(1)} s`);
});

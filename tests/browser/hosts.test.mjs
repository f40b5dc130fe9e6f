// Course hosts: the elements follow the host page's theme with no script (the page's inherited
// `color-scheme`, resolved by light-dark() in the elements' styles), with the one-line rules the
// docs give for MkDocs Material, Docusaurus and VitePress (docs/guide.md, "Course hosts").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, ROOT } from './helpers.mjs';
import { serve } from '../helpers/package.mjs';
import { resolveLightDark } from '../../web/lib/components/base/color.js';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const LIGHT = { fg: 'rgb(27, 31, 36)', surface: 'rgb(244, 246, 248)' };
const DARK = { fg: 'rgb(230, 237, 243)', surface: 'rgb(22, 27, 34)' };

// the one-liners of docs/guide.md, as a host's extra CSS
export const HOST_RULES = {
  mkdocs: { css: '[data-md-color-scheme="slate"] { color-scheme: dark; }', dark: (d) => d.body.setAttribute('data-md-color-scheme', 'slate'), light: (d) => d.body.setAttribute('data-md-color-scheme', 'default') },
  docusaurus: { css: '[data-theme="dark"] { color-scheme: dark; }', dark: (d) => d.documentElement.setAttribute('data-theme', 'dark'), light: (d) => d.documentElement.setAttribute('data-theme', 'light') },
  vitepress: { css: '.dark { color-scheme: dark; }', dark: (d) => d.documentElement.classList.add('dark'), light: (d) => d.documentElement.classList.remove('dark') },
};

const page = (css, meta = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8">${meta}<title>host theme</title>
<style>${css}</style><script type="module" src="/dist/mha-components.js"></script></head>
<body><main><mha-widget heads="2"></mha-widget></main></body></html>`;

/** The widget's text color and an unchecked head button's background, once it has drawn. */
async function colors(p) {
  await p.waitForFunction(() => document.querySelector('mha-widget')?.result, null, { timeout: 60_000 });
  return p.evaluate(() => {
    const w = document.querySelector('mha-widget');
    const b = [...w.shadowRoot.querySelectorAll('button')].find((x) => x.getAttribute('aria-checked') === 'false');
    return { fg: getComputedStyle(w).color, surface: getComputedStyle(b).backgroundColor };
  });
}

test('light-dark() resolution for canvases: the side of the scheme, nested colors kept whole', () => {
  assert.equal(resolveLightDark('light-dark(#1b1f24, #e6edf3)', 'light'), '#1b1f24');
  assert.equal(resolveLightDark(' light-dark(#1b1f24, #e6edf3)', 'dark'), '#e6edf3');
  assert.equal(resolveLightDark('light-dark(rgb(1, 2, 3), light-dark(red, blue))', 'dark'), 'blue');
  assert.equal(resolveLightDark('light-dark(rgb(1, 2, 3), light-dark(red, blue))', 'light'), 'rgb(1, 2, 3)');
  assert.equal(resolveLightDark('#abc', 'dark'), '#abc');
});

test('a page that declares no color-scheme is light on a dark system; one that declares "light dark" follows the system', { timeout: 120_000 }, async () => {
  const { page: p, errors } = await env.newPage({ colorScheme: 'dark' });
  await p.route('**/host-plain.html', (r) => r.fulfill({ contentType: 'text/html', body: page('') }));
  await p.route('**/host-both.html', (r) => r.fulfill({ contentType: 'text/html', body: page('', '<meta name="color-scheme" content="light dark">') }));
  await p.goto(`${env.url}host-plain.html`);
  assert.deepEqual(await colors(p), LIGHT, 'white page, light widget');
  await p.goto(`${env.url}host-both.html`);
  assert.deepEqual(await colors(p), DARK, 'the page follows the dark system, so does the widget');
  assert.deepEqual(errors, []);
});

for (const [host, rule] of Object.entries(HOST_RULES)) {
  test(`${host}: the documented one-liner makes the elements follow the host's theme switch both ways, whatever the system`, { timeout: 120_000 }, async () => {
    for (const system of ['light', 'dark']) {
      const { page: p, errors, context } = await env.newPage({ colorScheme: system });
      await p.route('**/host-theme.html', (r) => r.fulfill({ contentType: 'text/html', body: page(rule.css) }));
      await p.goto(`${env.url}host-theme.html`);
      await p.evaluate(`(${rule.dark})(document)`);
      assert.deepEqual(await colors(p), DARK, `${host} dark on a ${system} system`);
      await p.evaluate(`(${rule.light})(document)`);
      assert.deepEqual(await colors(p), LIGHT, `${host} light on a ${system} system`);
      await p.evaluate(`(${rule.dark})(document)`);
      assert.deepEqual(await colors(p), DARK, `${host} dark again`);
      assert.deepEqual(errors, []);
      await context.close();
    }
  });
}

// embed.html: one element in a frame, for hosts that strip <script> (Canvas, Moodle)
const frames = (srcs, resizer = true) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LMS page</title>
${resizer ? '<script src="/dist/embed-resize.js"></script>' : ''}</head><body><h1>Week 6</h1>
${srcs.map((s, i) => `<iframe id="f${i}" src="${s}" title="figure ${i}" style="width: 100%; height: 150px; border: 0"></iframe>`).join('\n')}</body></html>`;

test('embed.html: the element and its attributes from the query, checked by the attribute contract; unknown names refused; height posted and applied by the resizer', { timeout: 180_000 }, async () => {
  const { page: p, errors } = await env.newPage({ viewport: { width: 1000, height: 800 } });
  const heights = [];
  await p.exposeFunction('__height', (h) => heights.push(h));
  await p.addInitScript(() => addEventListener('message', (e) => { if (e.data?.type === 'mha-embed') window.__height(e.data.height); }));
  await p.route('**/lms.html', (r) => r.fulfill({ contentType: 'text/html', body: frames([
    'embed.html?el=mha-widget&heads=4&seq-len=6', 'embed.html?el=mha-widget&heads=four&onclick=alert(1)', 'embed.html?el=script', 'embed.html?el=mha-passport&seq-len=7&d-model=32&heads=8', 'embed.html?el=mha-widget&heads=5']) }));
  await p.goto(`${env.url}lms.html`);
  const f = (i) => p.frameLocator(`#f${i}`);
  const frame = async (i) => (await p.$(`#f${i}`)).contentFrame();
  const w0 = await frame(0);
  await w0.waitForFunction(() => document.querySelector('mha-widget')?.result, null, { timeout: 60_000 });
  assert.deepEqual(await w0.evaluate(() => { const r = document.querySelector('mha-widget').result; return [r.heads, r.weights.shape]; }), [4, [4, 6, 6]]);
  // the contract of the element itself: heads=four is not a number
  const w1 = await frame(1);
  await w1.waitForFunction(() => document.querySelector('mha-widget')?.shadowRoot?.querySelector('[part="error"]'), null, { timeout: 60_000 });
  const bad = await w1.evaluate(() => ({ shown: [...document.querySelector('mha-widget').shadowRoot.querySelectorAll('[part="error"]')].map((e) => e.textContent),
    refused: [...document.querySelectorAll('.embed-error')].map((e) => e.textContent), onclick: document.querySelector('mha-widget').getAttribute('onclick') }));
  assert.equal(bad.shown.length, 1);
  assert.equal(bad.shown[0], 'heads: expected a whole number from 1 to 24, got "four"');
  assert.equal(bad.refused.length, 1);
  assert.match(bad.refused[0], /^onclick: not an attribute of <mha-widget>, which takes .*heads/);
  assert.equal(bad.onclick, null);
  assert.match(await f(2).locator('.embed-error').textContent(), /^el: expected one of mha-causal-mask, .*mha-widget, got "script"$/);
  const w3 = await frame(3);
  await w3.waitForFunction(() => document.querySelector('mha-passport')?.shadowRoot?.querySelector('table'), null, { timeout: 60_000 });
  // a value that parses but does not fit (5 heads of d_model = 24): its message stays once the widget has drawn
  const w4 = await frame(4);
  await w4.waitForFunction(() => document.querySelector('mha-widget')?.result, null, { timeout: 60_000 });
  await p.waitForTimeout(500);
  assert.deepEqual(await w4.evaluate(() => [...document.querySelector('mha-widget').shadowRoot.querySelectorAll('[part="error"]')].map((e) => e.textContent)),
    ['heads: expected a divisor of d-model = 24 (d_k = d_model / h), got "5"']);
  // the resizer: each frame as tall as its page
  await p.waitForTimeout(1000);
  for (const i of [0, 1, 2, 3, 4]) {
    const fr = await frame(i);
    const inner = await fr.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
    const outer = await p.evaluate((id) => document.getElementById(id).getBoundingClientRect().height, `f${i}`);
    assert.ok(Math.abs(inner - outer) <= 1, `frame ${i}: page ${inner} px, frame ${outer} px`);
  }
  assert.ok(heights.some((h) => h > 400), `the widget's frame posted its height (${heights})`);
  assert.deepEqual(errors, []);
});

test('pasted tags where the host strips scripts: the text inside the tag shows; with the script it does not', { timeout: 120_000 }, async () => {
  const { page: p, errors } = await env.newPage();
  const body = '<mha-widget heads="4">Interactive figure: open <a href="/embed.html?el=mha-widget&amp;heads=4">the widget</a>.</mha-widget>';
  await p.route('**/pasted.html', (r) => r.fulfill({ contentType: 'text/html', body: `<!doctype html><html lang="en"><head><title>t</title></head><body>${body}</body></html>` }));
  await p.route('**/scripted.html', (r) => r.fulfill({ contentType: 'text/html', body: `<!doctype html><html lang="en"><head><title>t</title><script type="module" src="/dist/mha-widget.js"></script></head><body>${body}</body></html>` }));
  await p.goto(`${env.url}pasted.html`);
  assert.equal(await p.evaluate(() => document.body.innerText.trim()), 'Interactive figure: open the widget.');
  await p.goto(`${env.url}scripted.html`);
  await p.waitForFunction(() => document.querySelector('mha-widget')?.result, null, { timeout: 60_000 });
  assert.equal(await p.evaluate(() => document.body.innerText.includes('Interactive figure')), false);
  assert.deepEqual(errors, []);
});

test('several embed.html frames on one page: every file is fetched once, the others come from the browser cache', { timeout: 180_000 }, async () => {
  // a static host that lets browsers cache (max-age), as course hosts and CDNs do
  const root = mkdtempSync(path.join(os.tmpdir(), 'mha-frames-'));
  for (const f of ['dist', 'wasm', 'models', 'embed.html']) symlinkSync(path.join(ROOT, 'web', 'site', f), path.join(root, f));
  writeFileSync(path.join(root, 'lms.html'), frames(['embed.html?el=mha-widget&heads=4']));
  const srv = await serve(root, { cache: 3600 });
  const { page: p, errors } = await env.newPage();
  try {
    await p.goto(`${srv.url}/lms.html`);
    const ready = async (i, tag) => {
      const fr = await (await p.$(`#f${i}`)).contentFrame();
      await fr.waitForFunction((t) => document.querySelector(t)?.result, tag, { timeout: 60_000 });
    };
    await ready(0, 'mha-widget');
    await p.evaluate(() => {
      for (const [i, src] of [[1, 'embed.html?el=mha-widget&heads=8'], [2, 'embed.html?el=mha-widget&heads=1&seq-len=4']]) {
        const f = document.createElement('iframe');
        Object.assign(f, { id: `f${i}`, src, title: `figure ${i}` });
        document.body.append(f);
      }
    });
    await ready(1, 'mha-widget');
    await ready(2, 'mha-widget');
    const files = srv.requests.filter((u) => !u.endsWith('.html'));
    const counts = {};
    for (const u of files) counts[u] = (counts[u] ?? 0) + 1;
    assert.ok(files.some((u) => /\/wasm\/mha_core.*\.wasm$/.test(u)) && files.includes('/dist/mha-embed.js'), `the first frame fetched the engine: ${files}`);
    assert.deepEqual(Object.entries(counts).filter(([, n]) => n > 1), [], 'each file fetched once for the three frames');
    assert.equal(srv.requests.filter((u) => u === '/embed.html').length, 3, 'each frame its own page (its query differs)');
    assert.deepEqual(errors, []);
  } finally {
    await srv.close();
    rmSync(root, { recursive: true, force: true });
  }
});

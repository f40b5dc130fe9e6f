// Course hosts: the elements follow the host page's theme with no script (the page's inherited
// `color-scheme`, resolved by light-dark() in the elements' styles), with the one-line rules the
// docs give for MkDocs Material, Docusaurus and VitePress (docs/guide.md, "Course hosts").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';
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

/** The widget's text color and an unpressed head button's background, once it has drawn. */
async function colors(p) {
  await p.waitForFunction(() => document.querySelector('mha-widget')?.result, null, { timeout: 60_000 });
  return p.evaluate(() => {
    const w = document.querySelector('mha-widget');
    const b = [...w.shadowRoot.querySelectorAll('button')].find((x) => x.getAttribute('aria-pressed') === 'false');
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

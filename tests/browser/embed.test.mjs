// The course-page embedding example under a strict Content-Security-Policy, and the framed embed.html page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { setup, ARTIFACTS, ROOT } from './helpers.mjs';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const heatmapCount = (page) => page.evaluate(() => {
  const w = document.querySelector('mha-widget');
  return w?.shadowRoot?.querySelector('mha-heads')?.shadowRoot?.querySelectorAll('mha-heatmap').length ?? 0;
});

test('the server sends the strict CSP for /examples/ and the wasm MIME type', async () => {
  const res = await fetch(env.url + 'examples/embed.html');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-security-policy'), EXAMPLES_CSP);
  assert.doesNotMatch(EXAMPLES_CSP, /(^|\s)'unsafe-eval'/);
  const wasm = await fetch(env.url + 'wasm/mha_core.wasm');
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  const index = await fetch(env.url);
  assert.equal(index.headers.get('content-security-policy'), null);
  assert.equal((await fetch(env.url + '../package.json')).status === 200, false);
});

test('the widget works under the CSP: rendered, recomputes on h, no CSP violation, no console error', async () => {
  const { page, errors, context } = await env.newPage();
  const res = await page.goto(env.url + 'examples/embed.html');
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 2);
  assert.equal(await heatmapCount(page), 2);
  await page.locator('mha-widget button[data-h="8"]').click();
  await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 8);
  assert.equal(await heatmapCount(page), 8);
  assert.equal((await page.locator('mha-widget mha-passport tr[data-k="wQPerHead"] td').first().textContent()).trim(), '24 × 3 = 72');
  const csp = await page.evaluate(() => window.__csp);
  assert.deepEqual(csp, []);
  assert.deepEqual(errors, []);
  // control: the policy is in force and violations are seen — an injected inline script is refused
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
  });
  await page.waitForFunction(() => window.__csp.length > 0);
  assert.equal(await page.evaluate(() => window.__inline), undefined);
  assert.match((await page.evaluate(() => window.__csp))[0], /script-src/);
  const shot = path.join(ARTIFACTS, 'embed.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(statSync(shot).size > 20_000);
  await context.close();
});

test('axe-core on the embedded widget: no serious or critical violations', async () => {
  // axe is injected as a script, which the page's own CSP would (rightly) refuse: bypass it here only
  const context = await env.browser.newContext({ bypassCSP: true });
  const page = await context.newPage();
  await page.goto(env.url + 'examples/embed.html');
  await page.waitForFunction(() => document.querySelector('mha-widget')?.result?.heads === 2);
  await page.addScriptTag({ content: readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
  const violations = await page.evaluate(async () => (await window.axe.run(document)).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id));
  assert.deepEqual(violations, []);
  await context.close();
});

// embed.html, the page a course host frames (one element, its attributes from the query): WCAG 2.1
// A/AA of every impact, light and dark, with an element drawn, with refused and bad attributes
// (the page's own message and the element's), and with an unknown element.
const EMBEDS = [
  ['embed.html?el=mha-widget&heads=4', () => document.querySelector('mha-widget')?.result],
  ['embed.html?el=mha-widget&heads=four&onclick=x', () => document.querySelector('mha-widget')?.shadowRoot?.querySelector('[part="error"]')
    && document.querySelector('.embed-error')],
  ['embed.html?el=script', () => document.querySelector('.embed-error')],
  ['embed.html?el=mha-stepper&step=3', () => document.querySelector('mha-stepper')?.shadowRoot?.querySelector('table')],
];
for (const colorScheme of ['light', 'dark']) {
  test(`axe-core WCAG 2.1 A/AA on embed.html (the framed page), ${colorScheme}: no violation`, { timeout: 180_000 }, async () => {
    const { page, errors, context } = await env.newPage({ colorScheme, viewport: { width: 700, height: 900 } });
    const found = {};
    for (const [url, ready] of EMBEDS) {
      await page.goto(env.url + url);
      await page.waitForFunction(ready, null, { timeout: 60_000 });
      await page.addScriptTag({ content: readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
      found[url] = await page.evaluate(async () => (await window.axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'],
      })).violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' >> ')).join(', ')}`));
    }
    assert.deepEqual(found, Object.fromEntries(EMBEDS.map(([u]) => [u, []])));
    assert.deepEqual(errors, []);
    await context.close();
  });
}

// Views from HTML alone: <mha-heatmap> and <mha-heads> filled from attributes on a
// page with no script of its own, served under the examples' strict CSP: a JSON file (`src`) and a
// shipped model run on a text (`model`, `text`, `layer`, `head`), with the JS API's numbers; bad
// attributes and unreadable sources give one message in place and one mha-error {error}.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, openExample, ROOT } from './helpers.mjs';
import { createMHA } from '../../web/lib/src/index.js';

const TEXT = 'a cat sat. a cat sat.';
const json = JSON.parse(readFileSync(path.join(ROOT, 'web', 'site', 'examples', 'attention.json'), 'utf8'));

let env;
let lm;
before(async () => {
  env = await setup();
  lm = await (await createMHA()).loadModel(readFileSync(path.join(ROOT, 'web', 'lib', 'models', 'charlm-h4-s0.safetensors')));
});
after(async () => { lm?.dispose(); await env?.close(); });

test('the example page: a heatmap from a JSON file, the heads of a layer and one head from a shipped model, under the strict CSP', { timeout: 120_000 }, async () => {
  const { page, errors, fetched } = await openExample(env, 'html-only.html');
  const inline = await page.evaluate(() => [...document.scripts].filter((s) => !s.src).length);
  assert.equal(inline, 0, 'the page has no script of its own');
  await page.waitForFunction(() => ['#from-json', '#from-model', '#one-head'].every((s) => document.querySelector(s).weights), null, { timeout: 90_000 });
  // the JSON file's numbers and labels
  const j = await page.evaluate(() => {
    const el = document.querySelector('#from-json');
    return { cells: [...el.shadowRoot.querySelectorAll('[part="cell"]')].map((c) => Number(c.dataset.value)),
      labels: [...el.shadowRoot.querySelectorAll('.rl')].map((c) => c.textContent) };
  });
  assert.deepEqual(j.cells, json.weights.flat());
  assert.deepEqual(j.labels, json.tokens);
  // the model's layer 2, against the JS API in Node
  const r = lm.run(TEXT);
  const att = r.attention[1];
  const [h, T] = att.shape;
  const heads = await page.evaluate(() => {
    const el = document.querySelector('#from-model');
    return { n: el.shadowRoot.querySelectorAll('mha-heatmap').length, shape: el.weights.shape, data: Array.from(el.weights.data), tokens: el.tokens, dK: el.dK };
  });
  assert.equal(heads.n, h);
  assert.deepEqual(heads.shape, [h, T, T]);
  assert.equal(heads.dK, 96 / h);
  assert.equal(heads.tokens.join(''), TEXT.replace(/ /g, '␣'));
  let worst = 0;
  heads.data.forEach((v, i) => { worst = Math.max(worst, Math.abs(v - att.data[i])); });
  assert.ok(worst < 1e-5, `layer 2 weights differ from the API's by ${worst}`);
  const one = await page.evaluate(() => { const el = document.querySelector('#one-head'); return { shape: el.weights.shape, data: Array.from(el.weights.data) }; });
  assert.deepEqual(one.shape, [T, T]);
  one.data.forEach((v, i) => assert.ok(Math.abs(v - att.data[i]) < 1e-5, `head 1 cell ${i}`));
  assert.equal(fetched.filter((f) => f.endsWith('.safetensors')).length, 1, 'the model fetched once for both elements');
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
});

test('bad attributes and unreadable sources: one message naming the attribute, mha-error {error} with code and argument, attributes kept', { timeout: 120_000 }, async () => {
  const { page, errors } = await openExample(env, 'html-only.html');
  await page.waitForFunction(() => document.querySelector('#from-json').weights);
  const cases = [
    ['mha-heatmap', { src: 'no-such.json' }, 'src', /^src: .*no-such\.json gave HTTP 404$/],
    ['mha-heatmap', { src: 'html-only.html' }, 'src', /^src: .*html-only\.html is not JSON .*starts with "<!doctype html>/],
    ['mha-heads', { src: 'attention.json' }, 'src', /weights\[0\]\[0\] is not a non-empty array of numbers/],
    ['mha-heatmap', { model: 'GPT-5', text: 'hi', layer: '1' }, 'model', /^model: expected a shipped model \(charlm-h1-s0, .*\) or the URL of a \.safetensors file, got "GPT-5"$/],
    ['mha-heatmap', { model: 'charlm-h4-s0', text: 'hi', layer: 'two' }, 'layer', /^layer: expected a whole number from 1 to /],
    ['mha-heatmap', { model: 'charlm-h4-s0', text: 'hi', layer: '3' }, 'layer', /^layer: expected a whole number from 1 to 2, got "3"$/],
    ['mha-heatmap', { model: 'charlm-h4-s0', text: 'hi', layer: '1', head: '9' }, 'head', /^head: expected a whole number from 1 to 4, got "9"$/],
    ['mha-heads', { model: 'charlm-h4-s0', layer: '1' }, 'text', /^text: expected the text the model reads/],
    ['mha-heads', { model: 'charlm-h4-s0', layer: '1', text: 'x'.repeat(500) }, 'text', /^text: expected 1 to 96 characters/],
  ];
  for (const [tag, attrs, argument, re] of cases) {
    const r = await page.evaluate(async ([t, a]) => {
      const el = document.createElement(t);
      for (const [k, v] of Object.entries(a)) el.setAttribute(k, v);
      const events = [];
      el.addEventListener('mha-error', (e) => events.push({ message: e.detail.error.message, code: e.detail.error.code, argument: e.detail.error.argument }));
      document.querySelector('main').prepend(el);
      const t0 = performance.now();
      while (!events.length && performance.now() - t0 < 20000) await new Promise((res) => setTimeout(res, 50));
      await new Promise((res) => setTimeout(res, 300));
      await el.updateComplete;
      const shown = [...el.shadowRoot.querySelectorAll('[part="error"]')].map((p) => p.textContent);
      const kept = Object.entries(a).every(([k, v]) => el.getAttribute(k) === v);
      el.remove();
      return { events, shown, kept };
    }, [tag, attrs]);
    const what = `${tag} ${JSON.stringify(attrs)}`;
    assert.equal(r.events.length, 1, `${what}: one mha-error (${JSON.stringify(r.events)})`);
    assert.match(r.events[0].message, re, what);
    assert.equal(r.events[0].code, 'INVALID_ARGUMENT', what);
    assert.equal(r.events[0].argument, argument, what);
    assert.deepEqual(r.shown, [r.events[0].message], `${what}: one message in place`);
    assert.ok(r.kept, `${what}: attributes as written`);
  }
  assert.ok(errors.every((e) => /404/.test(e)), errors.join(' | '));
});

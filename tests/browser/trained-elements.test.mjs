// The trained-model elements (<mha-trained-heads>, <mha-induction>, <mha-generate>, <mha-twins>)
// each alone on a plain page under the strict CSP (web/site/examples/), as a course author embeds
// them: rendered, operable by keyboard, the numbers of the JS API, one engine and one fetch per
// model, released when removed, a clear inline error for a bad model, axe-clean, 390 px wide; the
// twins' failure to score (a missing manifest or listed model) shown in place, apart from `error`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, deepFocus, ARTIFACTS, ROOT } from './helpers.mjs';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const EXAMPLES = {
  'mha-trained-heads': 'trained-heads.html',
  'mha-induction': 'induction.html',
  'mha-generate': 'generate.html',
  'mha-twins': 'twins.html',
};

/** Counts wasm instantiations and model fetches of a page (before its scripts run). */
async function countLoads(page) {
  await page.addInitScript(() => {
    window.__instantiations = 0;
    for (const k of ['instantiate', 'instantiateStreaming']) {
      const f = WebAssembly[k];
      WebAssembly[k] = function (...a) { window.__instantiations++; return f.apply(this, a); };
    }
  });
  const fetched = [];
  page.on('request', (r) => { if (/\.(safetensors|wasm)$|index\.json$/.test(new URL(r.url()).pathname)) fetched.push(new URL(r.url()).pathname); });
  return fetched;
}

/** The elements whose model runs in the engine worker (their lm is a RemoteModel). */
const WORKER_TAGS = new Set(['mha-trained-heads', 'mha-generate', 'mha-induction', 'mha-twins']);

/** Waits until `tag` (the first on the page) has a loaded model and a first result. */
async function ready(page, tag) {
  await page.waitForFunction((t) => {
    const el = document.querySelector(t);
    if (!el) return false;
    if (el.error) return true;
    switch (t) {
      case 'mha-trained-heads': return !!(el.result && el.textScores);
      case 'mha-induction': return !!el.measured;
      case 'mha-generate': return !!el.lm;
      default: return !!el.rows;
    }
  }, tag, { timeout: 150_000 });
  const err = await page.evaluate((t) => document.querySelector(t).error?.message ?? null, tag);
  assert.equal(err, null, `${tag}: ${err}`);
}

for (const [tag, file] of Object.entries(EXAMPLES)) {
  test(`${tag} alone under the strict CSP: renders, no console error or CSP violation, one wasm instantiation, one fetch per file, fits 390 px`, async () => {
    const { page, errors, context } = await env.newPage({ viewport: { width: 390, height: 800 } });
    const fetched = await countLoads(page);
    const res = await page.goto(`${env.url}examples/${file}`);
    assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
    await ready(page, tag);
    // the elements of WORKER_TAGS instantiate the engine in the engine worker, none on the page's thread
    assert.equal(await page.evaluate(() => window.__instantiations), WORKER_TAGS.has(tag) ? 0 : 1);
    if (WORKER_TAGS.has(tag)) assert.equal(await page.evaluate((t) => document.querySelector(t).lm.remote, tag), true);
    const counts = fetched.reduce((m, f) => ({ ...m, [f]: (m[f] ?? 0) + 1 }), {});
    for (const [f, n] of Object.entries(counts)) assert.equal(n, 1, `${f} fetched ${n} times`);
    assert.equal(fetched.filter((f) => f.endsWith('.wasm')).length, 1, JSON.stringify(fetched));
    assert.ok(fetched.some((f) => f.endsWith('/models/charlm-h4-s0.safetensors')), JSON.stringify(fetched));
    if (tag === 'mha-twins') assert.equal(fetched.filter((f) => f.endsWith('.safetensors')).length, 4);
    else assert.equal(fetched.filter((f) => f.endsWith('.safetensors')).length, 1);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `page overflows 390 px by ${overflow} px`);
    await page.screenshot({ path: path.join(ARTIFACTS, `element-${tag}-390.png`), fullPage: true });
    assert.deepEqual(await page.evaluate(() => window.__csp), []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test(`${tag}: axe-core finds no serious or critical violation, light and dark`, { timeout: 400_000 }, async () => {
    for (const colorScheme of ['light', 'dark']) {
      const context = await env.browser.newContext({ bypassCSP: true, colorScheme });
      const page = await context.newPage();
      await page.goto(`${env.url}examples/${file}`);
      await ready(page, tag);
      if (tag === 'mha-generate') await page.locator('mha-generate button.step10').click();
      await page.addScriptTag({ content: readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
      const violations = await page.evaluate(async () => (await window.axe.run(document)).violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.nodes.slice(0, 2).map((n) => n.target.join(' ')).join(', ')}`));
      assert.deepEqual(violations, [], colorScheme);
      await page.screenshot({ path: path.join(ARTIFACTS, `element-${tag}-${colorScheme}.png`), fullPage: true });
      await context.close();
    }
  });
}

test('mha-trained-heads: loss, top-5, every head\'s weights and both scores equal the JS API\'s; typing and the keyboard switch recompute', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(`${env.url}examples/trained-heads.html`);
  await ready(page, 'mha-trained-heads');
  const check = () => page.evaluate(async () => {
    const api = await import('/dist/mha-trained.js');
    const el = document.querySelector('mha-trained-heads');
    const mha = await api.getEngine();
    const bytes = await (await fetch(api.DEFAULT_MODEL_URL)).arrayBuffer();
    const lm = await mha.loadModel(bytes);   // an independent copy of the model
    try {
      const off = el.ablation;
      const r = lm.run(el.text, { ablate: off });
      const scores = api.scoreText(r.attention, r.ids);
      const root = el.shadowRoot;
      let maxW = 0;
      for (const m of root.querySelectorAll('mha-heatmap')) {
        const l = Number(m.dataset.layer), j = Number(m.dataset.head);
        const T = r.ids.length;
        const want = r.attention[l].data.subarray(j * T * T, (j + 1) * T * T);
        const got = m.weights.data;
        for (let i = 0; i < want.length; i++) maxW = Math.max(maxW, Math.abs(got[i] - want[i]));
      }
      const scoreLines = [...root.querySelectorAll('.scores')].map((p) => ({ probes: Number(p.dataset.probes), text: p.dataset.text }));
      const ref = lm.heads;
      const key = (t) => ({ 'previous-token': 'previous', 'two-back': 'twoBack', 'current-token': 'current', 'first-token': 'first', induction: 'induction' })[t] ?? 'entropy';
      return {
        loss: root.querySelector('.loss').textContent, apiLoss: r.loss,
        next: [...root.querySelectorAll('.next li')].map((li) => li.textContent.trim()),
        apiNext: r.next.map((n) => `${({ ' ': '␣', '\n': '↵' })[n.char] ?? n.char} ${(100 * n.p).toFixed(1)} %`),
        maxW, maps: root.querySelectorAll('mha-heatmap').length, heads: ref.length,
        probes: scoreLines.map((s) => s.probes), apiProbes: ref.map((h) => h.scores[key(h.type)]),
        text: scoreLines.map((s) => s.text), apiText: ref.map((h, i) => String(scores[i].scores[key(h.type)] ?? '')),
        off: [...root.querySelectorAll('button[role=switch][aria-checked=false]')].length,
        explanation: root.querySelector('.explanation')?.textContent ?? '',
      };
    } finally {
      lm.dispose();
    }
  });
  let c = await check();
  assert.equal(c.maps, c.heads);
  assert.equal(c.loss, `${c.apiLoss.toFixed(3)} bits per character`);
  assert.deepEqual(c.next, c.apiNext);
  assert.ok(c.maxW < 1e-6, `heatmap weights differ from run() by ${c.maxW}`);
  c.probes.forEach((v, i) => assert.ok(Math.abs(v - c.apiProbes[i]) < 1e-12));
  assert.deepEqual(c.text, c.apiText);
  // the default text repeats a sentence: every induction head is judged on it; the explanation says how it did
  assert.match(c.explanation, /On this text, \d of the \d labelled heads that it can judge do what their label says/);
  assert.match(c.explanation, /induction/);

  // keyboard: type into the field, then Tab to a switch and press Space
  const field = page.locator('mha-trained-heads textarea');
  await field.focus();
  await page.keyboard.press('End');
  await page.keyboard.type(' zq');
  await page.waitForFunction(() => document.querySelector('mha-trained-heads').result?.tokens.length === 50);
  await page.locator('mha-trained-heads button.all-on').focus();
  await page.keyboard.press('Tab');
  assert.equal((await deepFocus(page)).role, 'switch');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('mha-trained-heads').getAttribute('ablate') === '1:1');
  c = await check();
  assert.equal(c.off, 1);
  assert.equal(c.loss, `${c.apiLoss.toFixed(3)} bits per character`);
  assert.ok(c.maxW < 1e-6);
  // a text without a repeated span: the induction heads cannot be judged, and the explanation says so
  await field.fill('Quick brown foxes jump.');
  await page.waitForFunction(() => document.querySelector('mha-trained-heads').result?.tokens.length === 23);
  c = await check();
  assert.match(c.explanation, /repeats no span of 4 characters/);
  assert.ok(c.text.some((t) => t === ''), 'an induction score is left out where it is not defined');
  assert.deepEqual(errors, []);
  await context.close();
});

test('mha-induction and mha-generate show the JS API\'s numbers', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(`${env.url}examples/induction.html`);
  await ready(page, 'mha-induction');
  await page.locator('mha-induction input').fill('zyx wvu tsr');
  // the phrase is measured in the engine worker: the last measurement stays shown until the new one arrives
  await page.evaluate(() => document.querySelector('mha-induction').computeComplete);
  const ind = await page.evaluate(async () => {
    const api = await import('/dist/mha-trained.js');
    const mha = await api.getEngine();
    const lm = await mha.loadModel(await (await fetch(api.DEFAULT_MODEL_URL)).arrayBuffer());
    try {
      const r = lm.run('zyx wvu tsr zyx wvu tsr');
      const want = api.copyBits(r, 11, lm.config.vocabSize);
      // an independent sum: −log2 p of each character of each copy after its first
      let a = 0, b = 0;
      const V = lm.config.vocabSize;
      for (let t = 0; t < 10; t++) a -= r.logProbs.data[t * V + r.ids[t + 1]] / Math.LN2;
      for (let t = 12; t < 22; t++) b -= r.logProbs.data[t * V + r.ids[t + 1]] / Math.LN2;
      return { shown: document.querySelector('mha-induction').shadowRoot.querySelector('.result').textContent, want, a: a / 10, b: b / 10 };
    } finally { lm.dispose(); }
  });
  assert.ok(Math.abs(ind.want.first - ind.a) < 1e-9 && Math.abs(ind.want.second - ind.b) < 1e-9);
  assert.ok(ind.shown.includes(`First copy: ${ind.a.toFixed(2)} bits per character. Second copy: ${ind.b.toFixed(2)}`), ind.shown);
  assert.ok(ind.b < ind.a, 'the second copy is cheaper');

  await page.goto(`${env.url}examples/generate.html`);
  await ready(page, 'mha-generate');
  // before the first step: one line that says what to do, and no empty rows
  const before = await page.evaluate(() => {
    const root = document.querySelector('mha-generate').shadowRoot;
    return { maps: root.querySelectorAll('mha-heatmap').length, hint: root.querySelector('[part="hint"]')?.textContent.replace(/\s+/g, ' ').trim(),
      empty: root.textContent.includes('No attention weights yet') };
  });
  assert.deepEqual(before, { maps: 0, hint: 'Generate a character to see where each head\'s newest query looks in the cache: one row per head.', empty: false });
  await page.locator('mha-generate button.step1').click();
  await page.locator('mha-generate button.step10').click();
  const gen = await page.evaluate(async () => {
    const api = await import('/dist/mha-trained.js');
    const el = document.querySelector('mha-generate');
    await el.computeComplete;   // the steps run in the engine worker
    const mha = await api.getEngine();
    const lm = await mha.loadModel(await (await fetch(api.DEFAULT_MODEL_URL)).arrayBuffer());
    try {
      const want = lm.generate('A friend ', 11, { temperature: 0 }).text;
      const maps = el.shadowRoot.querySelectorAll('mha-heatmap');
      return { text: el.shadowRoot.querySelector('.text').textContent, want, cache: el.shadowRoot.querySelector('.cache').textContent,
        cols: maps[0].weights.shape[1], maps: maps.length,
        // the colour range of every row: one scale for all, 0 to 1
        domains: [...maps].map((m) => `${m.scaleInUse}:${JSON.stringify(m.shadowRoot.querySelector('[part="legend"]')?.textContent.replace(/\s+/g, ' ').trim() ?? '')}`) };
    } finally { lm.dispose(); }
  });
  assert.equal(gen.text, gen.want);
  assert.match(gen.cache, /^KV cache: 19 of 96 positions per layer\./);
  assert.equal(gen.cols, 19);
  assert.equal(gen.maps, 8);
  assert.equal(new Set(gen.domains).size, 1, `one colour scale for every row: ${gen.domains.join(' | ')}`);
  assert.match(gen.domains[0], /^shared:/);
  assert.equal(await page.locator('mha-generate [part="hint"]').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('removed and re-added: the model is released (wasm heap back), comes back without a new fetch; a bad model shows an inline error', async () => {
  const { page, errors, context } = await env.newPage();
  const fetched = await countLoads(page);
  await page.goto(`${env.url}examples/trained-heads.html`);
  await ready(page, 'mha-trained-heads');
  // the element's model lives in the page's engine worker (getModelEngine)
  const state = () => page.evaluate(async () => {
    const api = await import('/dist/mha-trained.js');
    const mha = await api.getModelEngine();
    return { models: api.loadedModelCount(mha), heap: (await mha.memory()).inUseBytes };
  });
  const held = await state();
  assert.equal(held.models, 1);
  await page.evaluate(() => { window.__el = document.querySelector('mha-trained-heads'); window.__el.remove(); });
  await page.waitForFunction(async () => (await import('/dist/mha-trained.js')).loadedModelCount(await (await import('/dist/mha-trained.js')).getModelEngine()) === 0);
  const released = await state();
  assert.ok(released.heap < held.heap - 100_000, `wasm heap in use: ${held.heap} B with the model, ${released.heap} B after removal`);
  await page.evaluate(() => document.querySelector('main').append(window.__el));
  await ready(page, 'mha-trained-heads');
  assert.equal((await state()).models, 1);
  assert.equal(fetched.filter((f) => f.endsWith('.safetensors')).length, 1, 'no second fetch');
  // bad models: a missing file and a file that is not a model
  await page.evaluate(() => {
    const bad = ['../models/none.safetensors', '../models/index.json'].map((src) => {
      const e = document.createElement('mha-trained-heads');
      e.setAttribute('model', src);
      e.className = 'bad';
      return e;
    });
    document.querySelector('main').prepend(...bad);   // in view: a trained-model element fetches its model when seen
  });
  await page.waitForFunction(() => [...document.querySelectorAll('mha-trained-heads.bad')].every((e) => e.error));
  const msgs = await page.locator('mha-trained-heads.bad .error').allTextContents();
  assert.match(msgs[0], /models\/none\.safetensors could not be loaded.*HTTP 404/);
  assert.match(msgs[1], /models\/index\.json could not be loaded.*INVALID_ARGUMENT/);
  assert.ok(errors.every((e) => /404/.test(e)), errors.join(' | '));
  await context.close();
});

test('mha-twins: a manifest or a listed model that cannot be loaded is the score task\'s failure: one message under the table, one mha-error each, `error` stays null; a good manifest recovers', async () => {
  const { page, errors, context } = await env.newPage({ viewport: { width: 1280, height: 900 } });
  // a manifest that lists a model file that is not there
  await page.route('**/examples/listing-a-missing-model.json', (r) => r.fulfill({
    contentType: 'application/json', body: JSON.stringify({ models: [{ file: 'missing-model.safetensors', numHeads: 1, seed: 0 }] }),
  }));
  await page.goto(`${env.url}examples/twins.html`);
  await ready(page, 'mha-twins');
  await page.evaluate(() => {
    window.__events = [];
    document.querySelector('mha-twins').addEventListener('mha-error', (e) => window.__events.push(e.detail.error.message));
  });
  const state = () => page.evaluate(() => {
    const el = document.querySelector('mha-twins');
    return { error: el.error, rows: el.rows, messages: [...el.shadowRoot.querySelectorAll('[part="error"]')].map((p) => p.textContent.trim()),
      table: !!el.shadowRoot.querySelector('table'), cell: el.shadowRoot.querySelector('tbody td')?.textContent, verdict: el.shadowRoot.querySelector('.verdict').textContent.trim(),
      events: window.__events };
  });
  const failed = async (index) => {
    const seen = await page.evaluate(() => window.__events.length);
    await page.evaluate((i) => document.querySelector('mha-twins').setAttribute('index', i), index);
    await page.waitForFunction((n) => window.__events.length > n, seen);
    await page.evaluate(() => document.querySelector('mha-twins').updateComplete);
    return state();
  };
  let s = await failed('missing-index.json');
  assert.equal(s.error, null, 'the model loaded: `error` is not the score task\'s failure');
  assert.equal(s.rows, null);
  assert.equal(s.table, true, 'the table stays, its body a dash');
  assert.equal(s.cell, '—');
  assert.equal(s.verdict, '');
  assert.equal(s.messages.length, 1, s.messages.join(' | '));
  assert.match(s.messages[0], /^The twins could not be scored\. .*missing-index\.json.*404/);
  assert.equal(s.events.length, 1);
  s = await failed('listing-a-missing-model.json');
  assert.equal(s.error, null);
  assert.equal(s.messages.length, 1, s.messages.join(' | '));
  assert.match(s.messages[0], /^The twins could not be scored\. .*missing-model\.safetensors.*404/);
  assert.equal(s.events.length, 2, 'one mha-error per failure');
  // back to the shipped manifest: scored again, the message gone, no further event
  await page.evaluate(() => document.querySelector('mha-twins').removeAttribute('index'));
  await page.waitForFunction(() => document.querySelector('mha-twins').rows?.length === 4, null, { timeout: 150_000 });
  await page.evaluate(() => document.querySelector('mha-twins').updateComplete);
  s = await state();
  assert.deepEqual(s.messages, []);
  assert.equal(s.events.length, 2);
  assert.match(s.verdict, /^On these \d+ held-out passages/);
  assert.ok(errors.every((e) => /404/.test(e)), errors.join(' | '));
  await context.close();
});

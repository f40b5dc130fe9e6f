// <mha-surprisal> alone on its example page (web/site/examples/surprisal.html) under the strict CSP:
// the mean bits per character and the per-copy split equal the JS API's (CharModel.run's loss and
// log-probabilities), the baselines equal log2(V) and the unigram entropy computed here from the
// text, switching heads off changes the numbers as run({ablate}) does, the keyboard moves the
// readout, a bad attribute shows a message naming it and keeps the last good strips, axe-clean in
// light and dark, 390 px wide.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, ARTIFACTS, ROOT } from './helpers.mjs';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = (page) => page.waitForFunction(() => {
  const el = document.querySelector('mha-surprisal');
  return el && (el.error || el.measured);
}, null, { timeout: 150_000 });

/** The page's numbers and, from an independent copy of the model, the JS API's. */
const read = (page) => page.evaluate(async () => {
  const api = await import('/dist/mha-trained.js');
  const el = document.querySelector('mha-surprisal');
  const mha = await api.getEngine();
  const lm = await mha.loadModel(await (await fetch(api.DEFAULT_MODEL_URL)).arrayBuffer());
  try {
    const m = el.measured;
    const V = lm.config.vocabSize;
    const full = m.text;
    const r = lm.run(full);
    const ablate = api.parseAblateStrict(el.getAttribute('ablate'), lm.config);
    const ra = ablate.length ? lm.run(full, { ablate }) : null;
    // per character, from the log-probabilities: row t − 1 predicts character t
    const bits = (run) => Array.from(run.ids, (id, t) => (t === 0 ? null : -run.logProbs.data[(t - 1) * V + id] / Math.LN2));
    // unigram entropy of the scored characters (2 … T), counted here
    const counts = {};
    for (const ch of Array.from(full).slice(1)) counts[ch] = (counts[ch] ?? 0) + 1;
    const n = Array.from(full).length - 1;
    let H = 0;
    for (const c of Object.values(counts)) H -= (c / n) * Math.log2(c / n);
    const root = el.shadowRoot;
    return {
      full, V, apiLoss: r.loss, apiAblated: ra?.loss ?? null, H,
      apiBits: bits(r), apiAblatedBits: ra ? bits(ra) : null,
      copies: m.copies, ablated: m.ablated && { mean: m.ablated.mean, first: m.ablated.first, second: m.ablated.second },
      mean: m.mean, uniform: m.uniform, unigram: m.unigram,
      copyBits: m.copies ? api.copyBits(r, m.copies.n, V) : null,
      copyBitsAblated: m.copies && ra ? api.copyBits(ra, m.copies.n, V) : null,
      cells: [...root.querySelectorAll('.strip:not([data-ablated]) .cell')].map((c) => c.dataset.bits),
      c2: [...root.querySelectorAll('.strip:not([data-ablated]) .cell.c2')].map((c) => Number(c.dataset.bits)),
      c1: [...root.querySelectorAll('.strip:not([data-ablated]) .cell.c1')].map((c) => Number(c.dataset.bits)),
      ablatedCells: [...root.querySelectorAll('.strip[data-ablated] .cell')].map((c) => c.dataset.bits),
      rows: [...root.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent.trim().replace(/\s+/g, ' '))),
      definition: root.querySelector('.definition').textContent.replace(/\s+/g, ' ').trim(),
      readout: root.querySelector('.readout').textContent,
      summary: root.querySelector('.summary').textContent,
      error: root.querySelector('.error')?.textContent ?? null,
    };
  } finally {
    lm.dispose();
  }
});

const near = (a, b, msg, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${msg}: ${a} vs ${b}`);

test('alone under the strict CSP at 390 px: the means, the copies and the baselines are the JS API\'s; switching heads off changes them as run({ablate}) does', async () => {
  const { page, errors, context } = await env.newPage({ viewport: { width: 390, height: 800 } });
  const res = await page.goto(`${env.url}examples/surprisal.html`);
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  await ready(page);
  const c = await read(page);
  assert.equal(c.error, null);
  assert.equal(c.full, 'purple kites drift north purple kites drift north', 'repeat writes the phrase twice');
  assert.ok(c.definition.startsWith('Bits per character: the average of −log₂ of the probability the model gave the character that came next.'), c.definition);
  // mean bits per character = run().loss; each cell = −log2 p of its character
  near(c.mean, c.apiLoss, 'mean');
  assert.equal(c.cells.length, c.apiBits.length);
  c.cells.forEach((b, t) => (t === 0 ? assert.equal(b, '') : near(Number(b), c.apiBits[t], `cell ${t}`, 1e-6)));
  // baselines
  near(c.uniform, Math.log2(c.V), 'uniform');
  assert.equal(c.V, 97);
  near(c.unigram.whole, c.H, 'unigram entropy');
  // per copy: the induction probe's definition (copyBits), the second copy far cheaper
  assert.deepEqual([c.copies.n, c.copies.start2], [24, 25]);
  near(c.copies.first, c.copyBits.first, 'copy 1');
  near(c.copies.second, c.copyBits.second, 'copy 2');
  assert.ok(c.copies.second < c.copies.first - 1, `${c.copies.first} → ${c.copies.second}`);
  // the cells underlined as a copy are exactly those its mean averages: n − 1 each
  const avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.deepEqual([c.c1.length, c.c2.length], [23, 23]);
  near(avg(c.c1), c.copies.first, 'copy 1 underlined cells', 1e-6);
  near(avg(c.c2), c.copies.second, 'copy 2 underlined cells', 1e-6);
  // ablation: the second strip and row are run({ablate: L2 heads 1 and 2}); the second copy gets dearer
  near(c.ablated.mean, c.apiAblated, 'ablated mean');
  near(c.ablated.first, c.copyBitsAblated.first, 'ablated copy 1');
  near(c.ablated.second, c.copyBitsAblated.second, 'ablated copy 2');
  assert.ok(c.ablated.second > c.copies.second + 1, `switching the heads off: copy 2 ${c.copies.second} → ${c.ablated.second}`);
  c.ablatedCells.forEach((b, t) => (t === 0 ? assert.equal(b, '') : near(Number(b), c.apiAblatedBits[t], `ablated cell ${t}`, 1e-6)));
  // the table shows those numbers, rounded
  // a real minus sign; a value that rounds to zero at two decimals has no sign
  const f = (v) => (Number(v.toFixed(2)) === 0 ? Math.abs(v).toFixed(2) : v.toFixed(2).replace('-', '−'));
  const sf = (v) => `${Number(v.toFixed(2)) > 0 ? '+' : ''}${f(v)}`;
  assert.deepEqual(c.rows, [
    ['the model, all heads on', f(c.apiLoss), f(c.copyBits.first), f(c.copyBits.second)],
    ['the model, heads 2:1 2:2 switched off', f(c.apiAblated), f(c.copyBitsAblated.first), f(c.copyBitsAblated.second)],
    ['change from switching them off', sf(c.apiAblated - c.apiLoss), sf(c.copyBitsAblated.first - c.copyBits.first), sf(c.copyBitsAblated.second - c.copyBits.second)],
    ['uniform guess (all 97 characters equally likely): log₂ 97', '6.60', '6.60', '6.60'],
    ['unigram guess (this text\'s character frequencies)', f(c.H), f(c.unigram.first), f(c.unigram.second)],
  ]);
  assert.ok(c.summary.includes(`${f(c.copyBits.first)} bits per character on the first copy and ${f(c.copyBits.second)} on the second`), c.summary);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `page overflows 390 px by ${overflow} px`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'element-mha-surprisal-390.png'), fullPage: true });
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard: Tab to the strips, arrows move the readout; a text written twice is split without repeat; bad attributes name themselves and keep the last good strips', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(`${env.url}examples/surprisal.html`);
  await ready(page);
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.querySelector('mha-surprisal').shadowRoot.activeElement?.className);
  assert.equal(focused, 'strips');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  let c = await read(page);
  assert.ok(c.readout.startsWith(`Character 4 of 49, ‘p’ (copy 1): ${c.apiBits[3].toFixed(2)} bits`), c.readout);
  assert.ok(c.readout.includes(`with heads 2:1 2:2 off: ${c.apiAblatedBits[3].toFixed(2)} bits`), c.readout);
  await page.keyboard.press('Home');
  c = await read(page);
  assert.match(c.readout, /^Character 1 of 49, ‘p’ \(copy 1\): not scored/);
  // copy 2's first character is scored, and said to be in neither copy's mean
  for (let i = 0; i < 25; i++) await page.keyboard.press('ArrowRight');
  c = await read(page);
  assert.ok(c.readout.startsWith(`Character 26 of 49, ‘p’ (copy 2, its first character: in neither copy's mean): ${c.apiBits[25].toFixed(2)} bits`), c.readout);

  // a phrase written twice in the text itself: found without the repeat attribute; no ablation: one strip
  await page.evaluate(() => {
    const el = document.querySelector('mha-surprisal');
    el.removeAttribute('repeat');
    el.removeAttribute('ablate');
    el.setAttribute('text', 'Hello there. Hello there.');
  });
  await page.waitForFunction(() => document.querySelector('mha-surprisal').measured?.text === 'Hello there. Hello there.');
  c = await read(page);
  // the summary is not a live region: one short line with each copy's bits is announced
  assert.equal(await page.evaluate(() => document.querySelector('mha-surprisal').shadowRoot.querySelector('[part="summary"]').getAttribute('aria-live')), null);
  const said = `Copy 1: ${c.copyBits.first.toFixed(2)}, copy 2: ${c.copyBits.second.toFixed(2)} bits per character.`;
  await page.waitForFunction((t) => document.querySelector('mha-surprisal').shadowRoot.querySelector('[part="announcement"]').textContent === t,
    said, { timeout: 5_000 });
  assert.deepEqual([c.copies.n, c.copies.start2], [12, 13]);
  near(c.mean, c.apiLoss, 'mean');
  assert.equal(c.ablated, null);
  assert.equal(c.ablatedCells.length, 0);
  assert.equal(c.rows.length, 3);

  // bad attributes: a message naming the attribute, the expected and the given value; last good kept; mha-error
  const bad = async (attr, value, pattern) => {
    const r = await page.evaluate(([a, v]) => new Promise((resolve) => {
      const el = document.querySelector('mha-surprisal');
      const before = el.measured;
      el.addEventListener('mha-error', (e) => resolve({ code: e.detail.error.code, kept: el.measured === before, attr: el.getAttribute(a) }), { once: true });
      el.setAttribute(a, v);
    }), [attr, value]);
    assert.equal(r.code, 'INVALID_ARGUMENT');
    assert.ok(r.kept, 'the last good result is kept');
    assert.equal(r.attr, value, 'the attribute stays as written');
    await page.waitForFunction(() => document.querySelector('mha-surprisal').shadowRoot.querySelector('.error'));
    const msg = await page.evaluate(() => document.querySelector('mha-surprisal').shadowRoot.querySelector('.error').textContent);
    assert.match(msg, pattern);
    assert.ok(msg.includes('The strips show the last good value.'), msg);
  };
  await bad('ablate', '3:1', /^ablate: expected 1-based layer:head pairs .*\(layer 1–2, head 1–4\); "3:1" in "3:1" names layer 3, and this model has layers 1–2/);
  await bad('ablate', '2-1', /^ablate: expected .*; "2-1" in "2-1" is not a layer:head pair/);
  await page.evaluate(() => document.querySelector('mha-surprisal').setAttribute('ablate', '2:1'));
  await page.waitForFunction(() => !document.querySelector('mha-surprisal').shadowRoot.querySelector('.error'));
  await bad('text', 'x', /^text: expected 2 to 96 characters .*; got 1/);
  await bad('text', 'y'.repeat(97), /^text: expected 2 to 96 characters .*; got 97/);
  await page.evaluate(() => { const el = document.querySelector('mha-surprisal'); el.setAttribute('repeat', ''); });
  await bad('text', 'z'.repeat(48), /^text: with repeat, the phrase is read twice with a space between, so it must have 2 to 47 characters .*; got 48/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('axe-core finds no serious or critical violation, light and dark', { timeout: 300_000 }, async () => {
  for (const colorScheme of ['light', 'dark']) {
    const context = await env.browser.newContext({ bypassCSP: true, colorScheme });
    const page = await context.newPage();
    await page.goto(`${env.url}examples/surprisal.html`);
    await ready(page);
    await page.addScriptTag({ content: readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const violations = await page.evaluate(async () => (await window.axe.run(document)).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.slice(0, 2).map((n) => n.target.join(' ')).join(', ')}`));
    assert.deepEqual(violations, [], colorScheme);
    await page.screenshot({ path: path.join(ARTIFACTS, `element-mha-surprisal-${colorScheme}.png`), fullPage: true });
    await context.close();
  }
});

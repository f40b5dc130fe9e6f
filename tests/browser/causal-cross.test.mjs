// <mha-causal-mask> and <mha-cross-attention>, each alone on its example page under the strict CSP of
// examples/, loaded from /dist/mha-lesson-elements.js: the numbers shown equal the JS API's on the same
// input (computed in the page with getEngine + createLayer), the causal mask zeroes every weight above
// the diagonal exactly while each row still sums to 1 (and without the mask it does not), the
// cross-attention map is Tq × Tk with every French word's largest weight on its English translation,
// keyboard toggling, bad attributes shown in place, no console error or CSP violation, axe-clean in
// light and dark, no overflow at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setup, deepFocus, ARTIFACTS, axeSeriousViolations, checkNarrowPage, elementError, openExample } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const close = (a, b, what, tol = 1e-6) => {
  const fa = a.flat(3), fb = b.flat(3);
  assert.equal(fa.length, fb.length, `${what}: length`);
  fa.forEach((v, i) => assert.ok(Math.abs(v - fb[i]) <= tol, `${what}[${i}]: ${v} vs ${fb[i]}`));
};

/** page.waitForFunction, and on a timeout the page's failed requests and errors in the message. */
async function waitOn(page, fn, arg) {
  const seen = [];
  const onFail = (r) => seen.push(`requestfailed ${r.url()} ${r.failure()?.errorText}`);
  const onResp = (r) => { if (r.status() >= 400) seen.push(`http ${r.status()} ${r.url()}`); };
  const onErr = (e) => seen.push(`pageerror ${e.message}`);
  page.on('requestfailed', onFail); page.on('response', onResp); page.on('pageerror', onErr);
  try {
    await page.waitForFunction(fn, arg);
  } catch (e) {
    const state = await page.evaluate(() => [...document.querySelectorAll('mha-causal-mask, mha-cross-attention')].map((el) => `${el.localName} defined=${!!customElements.get(el.localName)} result=${!!el.result} error=${el.error?.message}`)).catch(() => []);
    throw new Error(`${e.message}; page: ${state.join('; ')}; ${seen.join('; ')}`);
  } finally {
    page.off('requestfailed', onFail); page.off('response', onResp); page.off('pageerror', onErr);
  }
}

const readyCausal = (page, causal) => waitOn(page, (c) => {
  const el = document.querySelector('mha-causal-mask');
  return el?.result && el.result.causal === c && !el.shadowRoot.querySelector('mha-heads')?.shadowRoot?.querySelector('.empty');
}, causal);

/** The JS API's forward and trace of the element's layer (its seeded inputs), in the page. */
const causalReference = (page, o) => page.evaluate(async ({ T, dModel, heads, seed, causal }) => {
  const { getEngine, causalMaskInputs } = await import('/dist/mha-lesson-elements.js');
  const mha = await getEngine();
  const { x, weights } = causalMaskInputs({ T, dModel, seed });
  const layer = mha.createLayer({ dModel, numHeads: heads, bias: false, weights });
  const w = layer.forward(x, { causal }).weights.toArray();
  const scores = layer.trace(x, { causal }).heads.map((h) => h.scores.toArray());
  layer.dispose();
  return { w, scores };
}, o);

/** What the element shows in one of its tables: [row][col] of data-value (or text). */
const tableValues = (page, part, attr = 'data-value') => page.evaluate(([p, a]) => {
  const t = document.querySelector('mha-causal-mask').shadowRoot.querySelector(`table[part="${p}"]`);
  return [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td[data-c]')].map((td) => td.getAttribute(a) ?? td.textContent.trim()));
}, [part, attr]);

test('<mha-causal-mask> under the CSP: the engine’s weights and scores, the triangle, row sums, keyboard toggle', async () => {
  const { page, errors } = await openExample(env, 'causal-mask.html');
  await readyCausal(page, true);
  const el = page.locator('mha-causal-mask');
  const mine = await page.evaluate(() => { const r = document.querySelector('mha-causal-mask').result; return { heads3: r.heads3, scores: r.scores, rowSums: r.rowSums, tokens: r.tokens, heads: r.heads, dModel: r.dModel }; });
  assert.deepEqual(mine.tokens, ['the', 'cat', 'sat', 'on', 'the', 'mat']);
  assert.equal(mine.heads, 2);
  const ref = await causalReference(page, { T: 6, dModel: 16, heads: 2, seed: 7, causal: true });
  close(mine.heads3, ref.w, 'causal weights');
  close(mine.scores, ref.scores, 'scores before the mask');
  // with the mask: every weight above the diagonal is exactly 0, every row sums to 1, diagonal of row 0 is 1
  for (const [h, m] of ref.w.entries()) {
    m.forEach((row, i) => {
      row.forEach((v, j) => { if (j > i) assert.equal(v, 0, `head ${h} [${i}][${j}] above the diagonal`); });
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5, `head ${h} row ${i} sums to 1`);
    });
    assert.ok(Math.abs(m[0][0] - 1) < 1e-6);
  }
  // the tables show head 1's numbers: mask, −∞ scores, weights (exact 0 printed as "0"), row sums
  const mask = await tableValues(page, 'mask', 'data-masked');
  mask.forEach((row, i) => row.forEach((v, j) => assert.equal(v, String(j > i), `mask [${i}][${j}]`)));
  const shownScores = await tableValues(page, 'scores');
  shownScores.forEach((row, i) => row.forEach((v, j) => {
    if (j > i) assert.equal(v, '-Infinity');
    else assert.ok(Math.abs(Number(v) - ref.scores[0][i][j]) < 1e-5, `shown score [${i}][${j}]`);
  }));
  assert.equal((await tableValues(page, 'scores', 'x-none'))[0][1], '−∞');
  const shownW = await tableValues(page, 'weights');
  close(shownW.map((r) => r.map(Number)), ref.w[0], 'shown weights');
  const weightText = await tableValues(page, 'weights', 'x-none');
  assert.equal(weightText[0][5], '0');
  const sums = await el.locator('td.sum').allTextContents();
  assert.deepEqual(sums.map((s) => s.trim()), ref.w[0].map((row) => row.reduce((a, b) => a + b, 0).toFixed(3)));
  assert.ok(sums.every((s) => s.trim() === '1.000'));
  const explain = await el.locator('[part="explain"]').textContent();
  assert.match(explain, /with the mask, token 1 \(“the”\) can only attend to itself: weight 1\.00\./);
  assert.match(explain, /15 of the 15 weights above the diagonal are exactly 0/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'causal-mask-on.png'), fullPage: true });

  // keyboard: Tab to the toggle, Enter switches the mask off (attribute removed, change event), Space on again
  await page.evaluate(() => { window.__changes = []; document.querySelector('mha-causal-mask').addEventListener('change', (e) => window.__changes.push(e.detail)); });
  let focus = null;
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    focus = await deepFocus(page);
    if (focus?.text === 'causal mask') break;
  }
  assert.equal(focus?.text, 'causal mask', 'Tab reaches the toggle');
  await page.keyboard.press('Enter');
  await readyCausal(page, false);
  assert.equal(await el.getAttribute('causal'), null);
  assert.equal(await el.locator('[part="toggle"]').getAttribute('aria-pressed'), 'false');
  const off = await page.evaluate(() => document.querySelector('mha-causal-mask').result.heads3);
  const refOff = await causalReference(page, { T: 6, dModel: 16, heads: 2, seed: 7, causal: false });
  close(off, refOff.w, 'weights without the mask');
  // without the mask: weights above the diagonal are not 0, rows still sum to 1
  for (const m of refOff.w) {
    let above = 0;
    m.forEach((row, i) => row.forEach((v, j) => { if (j > i && v > 0) above++; }));
    assert.equal(above, 15, 'every weight above the diagonal is positive without the mask');
  }
  assert.deepEqual((await tableValues(page, 'mask', 'data-masked')).flat().filter((v) => v === 'true'), []);
  assert.match(await el.locator('[part="explain"]').textContent(), /without the mask, token 1 \(“the”\) puts \d\.\d\d of its weight on the 5 tokens after it/);
  await page.keyboard.press('Space');
  await readyCausal(page, true);
  assert.equal(await el.getAttribute('causal'), '');
  assert.deepEqual(await page.evaluate(() => window.__changes), [{ causal: false }, { causal: true }]);

  // head 2's tables
  await el.locator('[part="head-button"][data-head="1"]').click();
  close((await tableValues(page, 'weights')).map((r) => r.map(Number)), ref.w[1], 'head 2 shown weights');
  assert.match(await el.locator('[part="explain"]').textContent(), /In head 2, with the mask/);
  // the sentences are not a live region; the change says their first line, once, when it settles
  assert.equal(await el.locator('[part="explain"]').getAttribute('aria-live'), null);
  await page.waitForFunction(() => /^In head 2, with the mask, token 1 \(“the”\) can only attend to itself: weight 1\.00\.\u200b?$/
    .test(document.querySelector('mha-causal-mask').shadowRoot.querySelector('[part="announcement"]').textContent), null, { timeout: 5_000 });

  // attributes: another text and size run through the engine
  await page.evaluate(() => { const e = document.querySelector('mha-causal-mask'); e.setAttribute('text', 'a b c d'); e.setAttribute('d-model', '12'); e.setAttribute('heads', '3'); });
  await page.waitForFunction(() => document.querySelector('mha-causal-mask').result.tokens.length === 4);
  const r4 = await page.evaluate(() => document.querySelector('mha-causal-mask').result.heads3);
  close(r4, (await causalReference(page, { T: 4, dModel: 12, heads: 3, seed: 7, causal: true })).w, 'T=4, d=12, h=3');

  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(errors, []);
});

test('<mha-causal-mask>: a bad attribute is named with the expected and the written value, the last good state stays', async () => {
  const { page, errors } = await openExample(env, 'causal-mask.html');
  await readyCausal(page, true);
  let msg = await elementError(page, 'mha-causal-mask', { heads: '3' });
  assert.equal(msg.event, 'heads: expected a divisor of d-model = 16 (d_k = d_model / h), got "3"');
  assert.match(msg.shown, /heads: expected a divisor of d-model = 16.*got "3"/);
  msg = await elementError(page, 'mha-causal-mask', { 'd-model': 'twelve' });
  assert.match(msg.event, /^d-model: expected a whole number from 1 to 128, got "twelve"$/);
  msg = await elementError(page, 'mha-causal-mask', { text: '   ' });
  assert.match(msg.event, /^text: expected 1 to 16 space-separated words \(found 0\), got "   "$/);
  msg = await elementError(page, 'mha-causal-mask', { seed: '-1' });
  assert.match(msg.event, /^seed: expected a whole number from 0 to 1000000, got "-1"$/);
  // on a running element: the numbers stay, the attribute stays as written, no NaN anywhere
  const el = page.locator('mha-causal-mask').last();
  const before = await page.evaluate(() => [...document.querySelectorAll('mha-causal-mask')].at(-1).result.heads3);
  await el.evaluate((e) => e.setAttribute('d-model', '2.5'));
  await page.waitForFunction(() => /d-model: expected/.test([...document.querySelectorAll('mha-causal-mask')].at(-1).shadowRoot.querySelector('[part="error"]')?.textContent));
  assert.equal(await el.getAttribute('d-model'), '2.5');
  assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('mha-causal-mask')].at(-1).result.heads3), before);
  assert.doesNotMatch(await el.evaluate((e) => e.shadowRoot.textContent), /NaN/);
  assert.match(await el.locator('[part="error"]').textContent(), /Showing the last valid settings/);
  assert.deepEqual(errors, []);
});

const readyCross = (page) => waitOn(page, () => document.querySelector('mha-cross-attention')?.result);

/** The JS API's cross-attention forward of the element's hand-set layer, in the page. */
const crossReference = (page, o) => page.evaluate(async (o) => {
  const { getEngine, crossAttentionInputs } = await import('/dist/mha-lesson-elements.js');
  const mha = await getEngine();
  const inp = crossAttentionInputs(o);
  const layer = mha.createLayer({ dModel: o.dModel, numHeads: o.heads, kDim: o.dModel, vDim: o.dModel, bias: false, weights: inp.weights });
  const r = layer.forward(inp.xTarget, { key: inp.xSource, value: inp.xSource });
  const out = { w: r.weights.toArray(), wShape: r.weights.shape, oShape: r.output.shape };
  layer.dispose();
  return out;
}, o);

const TRANSLATION = { le: 'the', chat: 'cat', est: 'sat', assis: 'sat', sur: 'on', tapis: 'mat' };

test('<mha-cross-attention> under the CSP: Tq × Tk weights equal the JS API’s, each French word attends to its translation, shapes from the passport', async () => {
  const { page, errors } = await openExample(env, 'cross-attention.html');
  await readyCross(page);
  const el = page.locator('mha-cross-attention');
  const mine = await page.evaluate(() => { const r = document.querySelector('mha-cross-attention').result; return { w: r.heads3, shape: r.weights.shape, source: r.source, target: r.target }; });
  const source = 'the cat sat on the mat'.split(' '), target = 'le chat est assis sur le tapis'.split(' ');
  assert.deepEqual(mine.source, source);
  assert.deepEqual(mine.target, target);
  const ref = await crossReference(page, { source, target, dModel: 32, heads: 2, seed: 7 });
  assert.deepEqual(mine.shape, [2, 7, 6]);
  assert.deepEqual(ref.wShape, [2, 7, 6]);
  assert.deepEqual(ref.oShape, [7, 32]);
  close(mine.w, ref.w, 'cross-attention weights');
  // head 1: the argmax of every target row is its translation; rows sum to 1; no mask (no zero weights)
  ref.w[0].forEach((row, i) => {
    const j = row.indexOf(Math.max(...row));
    assert.equal(source[j], TRANSLATION[target[i]], `${target[i]} attends to ${source[j]}`);
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  });
  assert.ok(ref.w[0][1][1] > 0.99, 'chat → cat is sharp');
  // the heatmaps: Tq rows of Tk cells each, the shown values the engine's
  const cells = await page.evaluate(() => {
    const heads = document.querySelector('mha-cross-attention').shadowRoot.querySelector('mha-heads');
    return [...heads.shadowRoot.querySelectorAll('mha-heatmap')].map((hm) => [...hm.shadowRoot.querySelectorAll('[role="gridcell"]')].map((c) => [Number(c.dataset.r), Number(c.dataset.c), Number(c.dataset.value)]));
  });
  assert.equal(cells.length, 2);
  for (const [h, list] of cells.entries()) {
    assert.equal(list.length, 42);
    for (const [r, c, v] of list) assert.ok(Math.abs(v - ref.w[h][r][c]) < 1e-6, `head ${h} cell [${r}][${c}]`);
  }
  // shapes from the passport
  const shapes = await el.locator('[part="shapes"] td.shape').evaluateAll((tds) => tds.map((td) => JSON.parse(td.dataset.shape)));
  assert.deepEqual(shapes, [[7, 32], [6, 32], [7, 16], [6, 16], [6, 16], [2, 7, 6], [2, 7, 6], [7, 32]]);
  const explain = await el.locator('[part="explain"]').textContent();
  assert.match(explain, /“chat” → “cat”: weight 1\.00/);
  assert.match(explain, /“le” → “the”: 0\.50 \+ 0\.50 split equally over the 2 copies/);
  assert.match(await el.evaluate((e) => e.shadowRoot.textContent), /hand-set to align meanings, not trained/);
  assert.equal(await el.locator('[part="unknown"]').count(), 0);
  // the sentences are not a live region, and the first result is read with the page, not announced
  assert.equal(await el.locator('[part="explain"]').getAttribute('aria-live'), null);
  assert.equal(await el.locator('[part="announcement"]').textContent(), '');
  await page.screenshot({ path: path.join(ARTIFACTS, 'cross-attention.png'), fullPage: true });

  // the author's sentences: unknown words are named, the map is Tq × Tk for any lengths
  await el.evaluate((e) => { e.setAttribute('source', 'the black dog sleeps'); e.setAttribute('target', 'le chien noir dort bien'); });
  await page.waitForFunction(() => document.querySelector('mha-cross-attention').result.target.length === 5);
  const r2 = await page.evaluate(() => { const r = document.querySelector('mha-cross-attention').result; return { w: r.heads3, shape: r.weights.shape, unknown: r.unknown }; });
  assert.deepEqual(r2.shape, [2, 5, 4]);
  assert.deepEqual(r2.unknown, ['bien']);
  assert.match(await el.locator('[part="unknown"]').textContent(), /No meaning in the lexicon for “bien”/);
  close(r2.w, (await crossReference(page, { source: ['the', 'black', 'dog', 'sleeps'], target: ['le', 'chien', 'noir', 'dort', 'bien'], dModel: 32, heads: 2, seed: 7 })).w, 'author sentences');
  const src2 = ['the', 'black', 'dog', 'sleeps'];
  const want = ['the', 'dog', 'black', 'sleeps'];
  r2.w[0].slice(0, 4).forEach((row, i) => assert.equal(src2[row.indexOf(Math.max(...row))], want[i]));

  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(errors, []);
});

test('<mha-cross-attention>: bad attributes are named with the expected and the written value', async () => {
  const { page, errors } = await openExample(env, 'cross-attention.html');
  await readyCross(page);
  let msg = await elementError(page, 'mha-cross-attention', { source: '' });
  assert.equal(msg.event, 'source: expected 1 to 12 space-separated words (found 0), got ""');
  assert.match(msg.shown, /source: expected 1 to 12/);
  msg = await elementError(page, 'mha-cross-attention', { heads: '5' });
  assert.equal(msg.event, 'heads: expected a divisor of d-model = 32 (d_k = d_model / h), got "5"');
  msg = await elementError(page, 'mha-cross-attention', { target: 'a b c d e f g h i j k l m' });
  assert.match(msg.event, /^target: expected 1 to 12 space-separated words \(found 13\)/);
  const el = page.locator('mha-cross-attention').first();
  assert.equal(await el.getAttribute('target'), 'a b c d e f g h i j k l m');
  assert.doesNotMatch(await el.evaluate((e) => e.shadowRoot.textContent), /NaN/);
  assert.deepEqual(errors, []);
});

for (const [file, tag, ready] of [
  ['causal-mask.html', 'mha-causal-mask', (page) => readyCausal(page, true)],
  ['cross-attention.html', 'mha-cross-attention', readyCross],
]) {
  test(`${tag}: axe-clean light and dark at full width; 390 px: no overflow, axe-clean`, async () => {
    for (const colorScheme of ['light', 'dark']) {
      const context = await env.browser.newContext({ bypassCSP: true, colorScheme, viewport: { width: 1000, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${env.url}examples/${file}`);
      await ready(page);
      assert.deepEqual(await axeSeriousViolations(page), [], `${colorScheme}`);
      if (tag === 'mha-causal-mask') {
        await page.locator('mha-causal-mask [part="toggle"]').click();
        await readyCausal(page, false);
        assert.deepEqual(await axeSeriousViolations(page), [], `${colorScheme}, mask off`);
      }
      await context.close();
    }
    await checkNarrowPage(env, { page: `examples/${file}`, tag, ready });
  });
}

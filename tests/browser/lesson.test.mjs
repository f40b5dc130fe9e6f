// The lesson page in a real browser (Debian's Chromium via playwright-core).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { interpolateViridis } from 'd3-scale-chromatic';
import { setup, deepFocus, referenceWeights, axeSeriousViolations, ARTIFACTS, ROOT, reveal } from './helpers.mjs';
import { decodePNG } from './png.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

async function openLesson(opts = {}, hash = '') {
  const { page, errors, context } = await env.newPage(opts);
  await page.goto(env.url + hash);
  await page.waitForSelector('body[data-ready]', { state: 'attached' }).catch(() => {});
  const ready = await page.evaluate(() => document.body.dataset.ready);
  assert.equal(ready, 'true', `lesson not ready: ${await page.locator('#engine-status p').textContent()} ${errors.join(' | ')}`);
  await page.locator('#widget mha-heatmap').first().waitFor();
  return { page, errors, context };
}

/** Click "h = n" in the widget and wait until the engine's result for n is on screen. */
async function pickHeads(page, n) {
  await page.locator(`#widget button[data-h="${n}"]`).click();
  await page.waitForFunction((n) => {
    const w = document.querySelector('#widget');
    const heads = w.shadowRoot?.querySelector('mha-heads');
    const pp = w.shadowRoot?.querySelector('mha-passport');
    return w.result?.heads === n && heads?.shadowRoot?.querySelectorAll('mha-heatmap').length === n &&
      pp?.passport?.dK === 24 / n;
  }, n);
}

const passportCell = (page, key) => page.locator(`#widget mha-passport tr[data-k="${key}"] td`).first().textContent();

test('the lesson loads with no console errors, the first heatmaps and the formulas rendered', async () => {
  const { page, errors, context } = await openLesson();
  assert.equal(await page.locator('#widget mha-heatmap').count(), 2);
  // every formula of the prose typeset by KaTeX, and the elements' formulas as MathML
  const prose = await page.evaluate(() => [...document.querySelectorAll('[data-tex]')].map((el) => !!el.querySelector('.katex')));
  assert.ok(prose.length >= 6 && prose.every(Boolean), `prose formulas rendered: ${prose}`);
  assert.equal(await page.locator('#stepper [part="formula"] math').count(), 1);
  assert.equal(await page.locator('#kv [part="formula"] math').count(), 1);
  // 'auto' threads in a browser: one fewer than the cores, at least 1, at most 4 (web/lib/src/engine/threads.js)
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const n = Math.max(1, Math.min(4, cores - 1));
  assert.equal(await page.locator('#engine-status p').textContent(),
    `Engine ready · version ${JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version} · build relaxed-simd (SIMD with fused multiply-add) · ${n} thread${n > 1 ? 's' : ''}.`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('h = 1, 2, 4, 8 update the passport (from the engine) and the number of 5×5 heatmaps', async () => {
  const { page, errors, context } = await openLesson();
  await page.evaluate(() => {
    window.__changes = [];
    document.querySelector('#widget').addEventListener('change', (e) => window.__changes.push(e.detail.heads));
  });
  const flops = new Set();
  for (const h of [1, 2, 4, 8]) {
    await pickHeads(page, h);
    assert.equal(await page.locator(`#widget button[data-h="${h}"]`).getAttribute('aria-checked'), 'true');
    assert.equal(await page.locator('#widget mha-heatmap').count(), h);
    assert.equal(await page.locator('#widget mha-heatmap [role="gridcell"]').count(), h * 25);
    const dk = 24 / h;
    assert.equal((await passportCell(page, 'wQPerHead')).trim(), `24 × ${dk} = ${24 * dk}`);
    assert.equal((await passportCell(page, 'wQ')).trim(), `${h} × ${24 * dk} = 576`);
    assert.equal((await passportCell(page, 'singleHeadWQ')).trim(), '24 × 24 = 576');
    flops.add((await passportCell(page, 'matmul')).trim());
    // scaling + softmax: h·T·(6·T + 1) = 155·h, in the total; h·T² scores held in memory
    assert.equal((await passportCell(page, 'softmax')).trim(), (155 * h).toLocaleString('en-US'));
    assert.equal((await passportCell(page, 'flops')).trim(), (25440 + 155 * h).toLocaleString('en-US'));
    assert.equal((await passportCell(page, 'scores')).trim(), String(25 * h));
    // the passport shows the engine's numbers, not numbers of its own
    const engine = await page.evaluate(async (h) => {
      const { getEngine } = await import('/dist/mha-components.js');
      const mha = await getEngine();
      return mha.passport({ seqLen: 5, dModel: 24, numHeads: h, bias: false });
    }, h);
    assert.equal(engine.dK, dk);
    assert.equal((await passportCell(page, 'flops')).trim(), engine.flops.total.toLocaleString('en-US'));
    assert.equal((await passportCell(page, 'total')).trim(), engine.params.total.toLocaleString('en-US'));
    const shapes = await page.locator('#widget mha-passport tbody:not(.summary) tr td.shape').allTextContents();
    assert.deepEqual(shapes, engine.steps.map((s) => s.shape.join(' × ')));
    const captions = await page.locator('#widget mha-heads button.cap').allTextContents();
    assert.equal(captions.length, h);
    captions.forEach((c, i) => assert.match(c.replace(/\s+/g, ' '), new RegExp(`head ${i + 1} · dk = ${dk}`)));
  }
  assert.deepEqual(await page.evaluate(() => window.__changes), [1, 2, 4, 8]);
  assert.equal(flops.size, 1, 'same matrix-product FLOPs at every h');
  assert.equal([...flops][0], '25,440');
  assert.deepEqual(errors, []);
  await context.close();
});

test('KV cache calculator: LLaMA-2 70B bytes, and its layer passport without biases (GPT-2 with)', async () => {
  const { page, errors, context } = await openLesson();
  // <mha-kv-calculator id="kv">: Playwright's CSS locators pierce its (open) shadow root
  const kv = page.locator('#kv mha-passport');
  const total = () => kv.locator('tr[data-k="total"]').first();
  // Defaults: LLaMA-2 70B (80 layers, 64 query heads, 8 K/V heads, d_k = 128), T = 4096, B = 1, 2 bytes.
  assert.equal(await page.evaluate(() => document.querySelector('#kv').bytes), 2 * 80 * 1 * 4096 * 8 * 128 * 2);
  assert.equal(await page.locator('#kv [part="result"]').getAttribute('data-bytes'), String(2 * 80 * 1 * 4096 * 8 * 128 * 2));
  assert.match(await page.locator('#kv [part="result"]').textContent(), /8× smaller than with 64 K\/V heads/);
  await page.waitForFunction(() => document.querySelector('#kv').shadowRoot.querySelector('mha-passport')?.passport?.params?.total > 0);
  // W_Q and W_O 8192 × 8192, W_K and W_V 8192 × 1024 (8 K/V heads of 128): LLaMA's projections have no biases.
  assert.equal((await total().locator('td').first().textContent()).trim(), (2 * 8192 * 8192 + 2 * 8192 * 1024).toLocaleString('en-US'));
  assert.match(await total().locator('th').textContent(), /no bias/);
  await page.locator('#kv select[name="model"]').selectOption({ label: 'GPT-2 (small) (12 layers)' });
  await page.waitForFunction(() => document.querySelector('#kv').shadowRoot.querySelector('mha-passport')?.passport?.dK === 64);
  // T follows the model: GPT-2's trained context is 1,024 tokens, and no note flags it
  assert.equal(await page.evaluate(() => document.querySelector('#kv').bytes), 2 * 12 * 1 * 1024 * 12 * 64 * 2);
  assert.equal(await page.locator('#kv [part="context-note"]').count(), 0);
  assert.equal(await page.locator('#kv').getAttribute('model'), 'GPT-2 (small)');
  assert.equal((await total().locator('td').first().textContent()).trim(), (4 * 768 * 768 + 4 * 768).toLocaleString('en-US'));
  assert.match(await total().locator('th').textContent(), /incl\. 3,072 bias/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a focused heatmap cell shows the engine weight for that cell, which matches a JS reference', async () => {
  const { page, errors, context } = await openLesson();
  await pickHeads(page, 4);
  const data = await page.evaluate(async () => {
    const w = document.querySelector('#widget');
    const { getEngine, toMatrix } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const layer = mha.createLayer({ dModel: 24, numHeads: 4, bias: false, weights: w.packedWeights });
    const r = layer.forward(w.input);
    const weights = r.weights.toArray();
    layer.dispose();
    const W = w.packedWeights;
    return { weights, X: toMatrix(w.input), wQ: toMatrix(W.wQ), wK: toMatrix(W.wK), wV: toMatrix(W.wV), tokens: w.tokenLabels };
  });
  const ref = referenceWeights(data.X, data.wQ, data.wK, data.wV, 4);
  for (let i = 0; i < 4; i++) for (let r = 0; r < 5; r++) for (let c = 0; c < 5; c++) {
    assert.ok(Math.abs(ref[i][r][c] - data.weights[i][r][c]) < 1e-5, `engine vs reference at ${i},${r},${c}`);
  }
  for (const [head, r, c] of [[0, 0, 0], [1, 3, 1], [2, 4, 2], [3, 2, 4]]) {
    const map = page.locator('#widget mha-heatmap').nth(head);
    await map.locator(`[role="gridcell"][data-r="${r}"][data-c="${c}"]`).focus();
    const readout = (await map.locator('.readout').textContent()).trim();
    const v = data.weights[head][r][c];
    assert.equal(readout, `${data.tokens[r]} → ${data.tokens[c]}: ${v.toFixed(3)}`);
  }
  // heads see different slices: their patterns are not the same
  assert.notDeepEqual(data.weights[0], data.weights[1]);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the worked example shows Alex’s final “cheap” as 4.050 and follows an edited input', async () => {
  const { page, errors, context } = await openLesson();
  // <mha-stepper id="stepper"> and <mha-wo-mix id="wo-mix">: CSS locators pierce their shadow roots
  const cheap = page.locator('#stepper [part="output"] td[data-r="0"][data-c="1"]');
  assert.equal((await cheap.textContent()).trim(), '4.050');
  const outputCheap = () => page.evaluate(() => document.querySelector('#stepper').trace?.output?.[0]?.[1]);
  // per-head attention weights of both heads, exact engine values, drawn by two heatmaps
  assert.equal(await page.locator('#stepper mha-heatmap').count(), 2);
  assert.equal((await page.evaluate(() => document.querySelector('#stepper').trace.heads[1].weights[0][0])).toFixed(3), '0.909');
  // the stepper's last step computes the same number; the step is kept in the URL hash
  await page.locator('#stepper button[data-step="7"]').click();
  assert.equal(await page.locator('#stepper').getAttribute('step'), '7');
  assert.match(await page.evaluate(() => location.hash), /step=7/);
  const stepCell = page.locator('#stepper [part="result"] td[data-r="0"][data-c="1"]');
  assert.equal((await stepCell.textContent()).trim(), '4.050');
  await stepCell.hover();
  await page.locator('#stepper [part="cell-formula"] math').waitFor();
  assert.match(await page.locator('#stepper [part="cell-formula"] math').textContent(), /4\.050/);
  // edit Alex's "cheap" input: everything downstream changes
  await page.locator('#stepper input[aria-label="Alex, cheap"]').fill('0.5');
  await page.waitForFunction(() => document.querySelector('#stepper').trace?.output[0][1].toFixed(3) !== '4.050');
  const edited = Number((await cheap.textContent()).trim());
  assert.ok(Number.isFinite(edited) && Math.abs(edited - 4.05) > 0.01, `changed output ${edited}`);
  const engine = await page.evaluate(async () => {
    const { getEngine, restaurantLayerOptions, X0 } = await import('/dist/mha-lesson-elements.js');
    const mha = await getEngine();
    const layer = mha.createLayer(restaurantLayerOptions());
    const X = X0.map((r) => r.slice()); X[0][1] = 0.5;
    const out = layer.forward(X).output.toArray()[0][1];
    layer.dispose();
    return out;
  });
  assert.equal(edited.toFixed(3), engine.toFixed(3));
  assert.equal((await outputCheap()).toFixed(3), engine.toFixed(3));
  // section 4 follows the stepper's X
  await page.waitForFunction((v) => document.querySelector('#wo-mix').contributions?.full[1].toFixed(3) === v, engine.toFixed(3));
  assert.equal((await page.locator('#wo-mix [part="table"] tbody tr').nth(2).locator('td').nth(1).textContent()).trim(), engine.toFixed(3));
  // section 8's FlashAttention replay follows it too: after the last tile, the engine's head output for the edited X
  await page.waitForFunction(() => document.querySelector('#flash').x?.[0]?.[1] === 0.5);
  await page.evaluate(() => document.querySelector('#flash').goTo(99));
  const flash = await page.evaluate(async () => {
    const { getEngine, restaurantLayerOptions, X0, toMatrix } = await import('/dist/mha-lesson-elements.js');
    const layer = (await getEngine()).createLayer(restaurantLayerOptions());
    const X = X0.map((r) => r.slice()); X[0][1] = 0.5;
    const head = toMatrix(layer.trace(X).heads[0].output);
    layer.dispose();
    const r = document.querySelector('#flash').replay;
    return { head, out: r.output, maxDiff: r.maxDiff };
  });
  flash.out.forEach((row, i) => row.forEach((v, c) => assert.ok(Math.abs(v - flash.head[i][c]) < 1e-5, `flash [${i}][${c}]`)));
  assert.ok(flash.maxDiff < 1e-5);
  // a value out of range is refused with a message naming the cell; the numbers keep their state
  await page.locator('#stepper input[aria-label="Alex, spicy"]').fill('2e6');
  assert.match(await page.locator('#stepper [part="input-error"]').textContent(), /Alex · spicy: not accepted/);
  assert.equal((await outputCheap()).toFixed(3), engine.toFixed(3));
  await page.locator('#stepper [part="reset"]').click();
  await page.waitForFunction(() => document.querySelector('#stepper').trace?.output[0][1].toFixed(3) === '4.050');
  await page.waitForFunction(() => document.querySelector('#wo-mix').contributions?.full[1].toFixed(3) === '4.050');
  assert.equal(await page.locator('#stepper [part="input-error"]').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the stepper follows the URL hash (step, head) and writes it back from Previous / Next and the head tabs', async () => {
  const { page, errors, context } = await openLesson({}, '#worked&step=3&head=1');
  const stepper = page.locator('#stepper');
  assert.equal(await stepper.getAttribute('step'), '3');
  assert.equal(await stepper.getAttribute('head'), '1');
  assert.equal(await page.locator('#stepper button[data-step="3"]').getAttribute('aria-checked'), 'true');
  assert.match(await page.locator('#stepper [part="title"]').textContent(), /Step 4 of 8 · Scores.*head 2 \(budget\)/);
  await page.locator('#stepper [part="next"]').click();
  assert.match(await page.evaluate(() => location.hash), /step=4&head=1/);
  await page.locator('#stepper button[data-head="0"]').click();
  assert.match(await page.evaluate(() => location.hash), /step=4&head=0/);
  await page.locator('#stepper [part="prev"]').click();
  assert.match(await page.evaluate(() => location.hash), /step=3&head=0/);
  // the result matrix is one tab stop; arrows move inside it and the cell formula follows
  await page.locator('#stepper [part="result"] td[data-r="0"][data-c="0"]').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const focused = await page.evaluate(() => {
    const a = document.querySelector('#stepper').shadowRoot.activeElement;
    return [a?.dataset.r, a?.dataset.c];
  });
  assert.deepEqual(focused, ['1', '1']);
  assert.match(await page.locator('#stepper [part="cell-formula"] math').textContent(), /Emma/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard only: Tab reaches the h group (arrows pick h) and the heatmap cells, arrows move, the readout follows', async () => {
  const { page, errors, context } = await openLesson();
  let f = null;
  // the h buttons are one radio group: Tab reaches the checked one, the arrow keys pick
  for (let i = 0; i < 80 && !(f && f.h); i++) { await page.keyboard.press('Tab'); f = await deepFocus(page); }
  assert.equal(f?.role, 'radio', 'Tab reached the h group');
  assert.equal(f.h, await page.locator('#widget [data-h][aria-checked="true"]').getAttribute('data-h'), 'at its checked option');
  for (let i = 0; i < 8 && f.h !== '4'; i++) { await page.keyboard.press('ArrowRight'); f = await deepFocus(page); }
  assert.equal(f?.h, '4', 'the arrow keys reached "h = 4"');
  await page.waitForFunction(() => document.querySelector('#widget').result?.heads === 4);
  for (let i = 0; i < 40 && f?.role !== 'gridcell'; i++) { await page.keyboard.press('Tab'); f = await deepFocus(page); }
  assert.equal(f?.role, 'gridcell', 'Tab reached a heatmap cell');
  assert.deepEqual([f.r, f.c], ['0', '0']);
  const readout = page.locator('#widget mha-heatmap').first().locator('.readout');
  assert.match((await readout.textContent()).trim(), /^the → the: 0\.\d{3}$/);
  await page.keyboard.press('ArrowRight');
  f = await deepFocus(page);
  assert.deepEqual([f.r, f.c], ['0', '1']);
  assert.match((await readout.textContent()).trim(), /^the → river: 0\.\d{3}$/);
  await page.keyboard.press('ArrowDown');
  f = await deepFocus(page);
  assert.deepEqual([f.r, f.c], ['1', '1']);
  assert.match((await readout.textContent()).trim(), /^river → river: 0\.\d{3}$/);
  // the highlighted query row follows focus in every head
  const hl = await page.locator('#widget mha-heatmap .row.hl .rl').allTextContents();
  assert.deepEqual(hl, ['river', 'river', 'river', 'river']);
  // one more Tab leaves the grid (roving tabindex: one tab stop per heatmap)
  await page.keyboard.press('Tab');
  f = await deepFocus(page);
  assert.notEqual(f?.role, 'gridcell');
  assert.deepEqual(errors, []);
  await context.close();
});

test('heads can be enlarged, heatmaps export PNG, and an invalid h shows the engine message in place', async () => {
  const { page, errors, context } = await openLesson();
  // "New weights" re-seeds: other attention weights, same passport
  const before = await page.evaluate(() => Array.from(document.querySelector('#widget').result.weights.data));
  // the compact passport is two tables (the steps, the counts)
  const passportBefore = await page.locator('#widget mha-passport table').allTextContents();
  await page.locator('#widget button[part="reseed"]').click();
  await page.waitForFunction((b) => {
    const w = document.querySelector('#widget').result?.weights?.data;
    return w && w.some((v, i) => Math.abs(v - b[i]) > 1e-6);
  }, before);
  assert.deepEqual(await page.locator('#widget mha-passport table').allTextContents(), passportBefore);
  const cap = page.locator('#widget mha-heads button.cap').nth(1);
  await cap.click();
  assert.equal(await cap.getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('#widget mha-heatmap').nth(1).getAttribute('show-values'), '');
  const png = await page.evaluate(async () => {
    const map = document.querySelector('#widget').shadowRoot.querySelector('mha-heads').shadowRoot.querySelector('mha-heatmap');
    const blob = await map.toPNG();
    return [...new Uint8Array(await blob.arrayBuffer()).slice(0, 8)].concat(blob.size);
  });
  assert.deepEqual(png.slice(0, 8), [137, 80, 78, 71, 13, 10, 26, 10]);
  assert.ok(png[8] > 2000);
  const msg = await page.evaluate(async () => {
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    try { mha.passport({ seqLen: 5, dModel: 24, numHeads: 5 }); return null; } catch (e) { return e.message; }
  });
  assert.match(msg, /divi/);
  await page.evaluate(() => {
    const p = document.createElement('mha-passport');
    p.id = 'bad'; p.setAttribute('d-model', '24'); p.setAttribute('heads', '5');
    document.querySelector('#split').append(p);
  });
  await page.waitForSelector('#bad .error');
  assert.ok((await page.locator('#bad .error').textContent()).includes(msg));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a widget on a slow engine: passport asked once per configuration, only the latest of overtaken inputs shown', async () => {
  const { page, errors, context } = await openLesson();
  const r = await page.evaluate(async () => {
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const calls = [];
    // the same engine, counting passport calls; handed over as a promise that resolves late
    const counting = Object.create(mha);
    counting.passport = (cfg) => { calls.push(cfg.numHeads); return mha.passport(cfg); };
    let release;
    const slow = new Promise((res) => { release = () => res(counting); });
    const w = document.createElement('mha-widget');
    w.engine = slow;
    document.querySelector('#split').append(w);
    const seen = [];
    w.addEventListener('mha-computed', (e) => seen.push(e.detail.heads));
    for (const h of [1, 4, 8, 2]) { w.heads = h; await w.updateComplete; }
    release();
    await new Promise((res) => { const t = setInterval(() => { if (w.result) { clearInterval(t); res(); } }, 10); });
    await new Promise((res) => setTimeout(res, 100));
    const p = w.shadowRoot.querySelector('mha-passport');
    await p.updateComplete;
    const row = p.shadowRoot.querySelector('tr[data-k="wQPerHead"] td').textContent.trim();
    w.remove();
    return { calls, seen, heads: w.result.heads, passportDK: p.passport?.dK, row };
  });
  // one engine call for the latest configuration (h = 2), none for the overtaken ones
  assert.deepEqual(r.calls, [2]);
  assert.deepEqual(r.seen, [2]);
  assert.equal(r.heads, 2);
  assert.equal(r.passportDK, 12);
  assert.equal(r.row, '24 × 12 = 288');
  assert.deepEqual(errors, []);
  await context.close();
});

test('self-check: each answer graded by its "Check" button (not while the arrow keys pass), score k / n, checked answers kept in the URL hash', async () => {
  const { page, errors, context } = await openLesson();
  const check = (q) => page.locator(`fieldset[data-q="${q}"] button.check`).click();
  const feedback = (q) => page.locator(`fieldset[data-q="${q}"] .feedback`).textContent();
  assert.equal(await page.locator('#quiz-score').textContent(), '0 / 10');
  await page.locator('input[name="dk"]').fill('32');
  assert.equal(await feedback('dk'), '', 'no grade before Check');
  await check('dk');
  assert.equal(await page.locator('#quiz-score').textContent(), '0 / 10');
  assert.match(await feedback('dk'), /Not quite/);
  await page.locator('input[name="dk"]').fill('64');
  assert.equal(await feedback('dk'), '', 'a changed answer loses its grade');
  await page.locator('input[name="dk"]').press('Enter');   // Enter in the field checks it
  assert.match(await feedback('dk'), /Right/);
  // arrow keys through the options of a question grade nothing
  await page.locator('input[name="one"][value="single"]').check();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await feedback('one'), '');
  assert.equal(await page.locator('#quiz-score').textContent(), '1 / 10');
  for (const [name, value] of [['ratio', '1'], ['shape', 'b'], ['wo', 'wo']]) {
    await page.locator(`input[name="${name}"][value="${value}"]`).check();
    await check(name);
  }
  await page.locator('input[name="gqa"]').fill('8');
  await check('gqa');
  assert.equal(await page.locator('#quiz-score').textContent(), '5 / 10');
  await page.locator('input[name="causal"]').fill('16');
  await check('causal');
  assert.match(await feedback('causal'), /Not quite/);
  await page.locator('input[name="causal"]').fill('10');
  await check('causal');
  for (const [name, value] of [['one', 'budget'], ['cross', 'a'], ['cost', 'weights'], ['induction', 'b']]) {
    await page.locator(`input[name="${name}"][value="${value}"]`).check();
    await check(name);
  }
  assert.equal(await page.locator('#quiz-score').textContent(), '10 / 10');
  await page.locator('#stepper button[data-step="4"]').click();
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /q\.dk=64/);
  assert.match(hash, /step=4/);
  const again = await openLesson({}, hash);
  assert.equal(await again.page.locator('#quiz-score').textContent(), '10 / 10');
  assert.equal(await again.page.locator('#stepper button[data-step="4"]').getAttribute('aria-checked'), 'true');
  assert.deepEqual(again.errors, []);
  await again.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('axe-core finds no serious or critical violations, in light and dark themes', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openLesson({ colorScheme });
    await pickHeads(page, 4);
    await page.locator('#widget mha-heatmap').first().locator('[role="gridcell"]').first().focus();
    const bad = await axeSeriousViolations(page);
    assert.deepEqual(bad, [], `${colorScheme}: ${JSON.stringify(bad, null, 1)}`);
    await context.close();
  }
});

/** sRGB bytes of a CSS colour string as d3 and getComputedStyle write it: `rgb(r, g, b)` or `#rrggbb`. */
function rgbOf(css) {
  const m = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(css) ?? /^#(..)(..)(..)$/.exec(css);
  assert.ok(m, `a CSS colour: ${css}`);
  return m.slice(1, 4).map((v) => (css.startsWith('#') ? parseInt(v, 16) : Number(v)));
}
const near = (got, want, tol) => got.slice(0, 3).every((v, i) => Math.abs(v - want[i]) <= tol);

test('screenshots show every heatmap cell in the viridis colour of its engine weight, on the theme\'s background', async () => {
  // The picture is read back from the PNG (tests/browser/png.mjs) and checked against what it must
  // show, not against a stored image, so fonts and layout may differ between machines: every cell
  // of the four heads of h = 4 at its centre is viridis(weight) on the shared range 0..1 (matplotlib's
  // viridis as d3-scale-chromatic tabulates it; its ends #440154 and #fde725 checked), and the page
  // margin beside the widget is the body's computed background, light or dark by the theme.
  assert.deepEqual(rgbOf(interpolateViridis(0)), [0x44, 0x01, 0x54]);
  assert.deepEqual(rgbOf(interpolateViridis(1)), [0xfd, 0xe7, 0x25]);
  for (const colorScheme of ['light', 'dark']) {
    const { page, errors, context } = await openLesson({ colorScheme });
    await pickHeads(page, 4);
    const suffix = colorScheme === 'light' ? '' : '-dark';
    await page.screenshot({ path: path.join(ARTIFACTS, `lesson${suffix}.png`), fullPage: true });
    await page.locator('#widget').screenshot({ path: path.join(ARTIFACTS, `widget${suffix}.png`) });
    await page.locator('#widget mha-heatmap').first().scrollIntoViewIfNeeded();
    const info = await page.evaluate(() => {
      const w = document.querySelector('#widget');
      const heads = w.shadowRoot.querySelector('mha-heads');
      const maps = [...heads.shadowRoot.querySelectorAll('mha-heatmap')];
      const cells = maps.flatMap((m, head) => [...m.shadowRoot.querySelectorAll('[role="gridcell"]')].map((el) => {
        const b = el.getBoundingClientRect();
        return { head, r: Number(el.dataset.r), c: Number(el.dataset.c), x: b.x + b.width / 2, y: b.y + b.height / 2, w: b.width };
      }));
      const wb = w.getBoundingClientRect();
      return {
        cells, dpr: devicePixelRatio, scales: maps.map((m) => m.scaleInUse), showValues: maps.map((m) => m.showValues),
        weights: Array.from(w.result.weights.data), shape: w.result.weights.shape,
        background: getComputedStyle(document.body).backgroundColor, margin: { x: 4, y: wb.y + wb.height / 2 },
      };
    });
    assert.deepEqual(info.shape, [4, 5, 5]);
    assert.deepEqual(info.scales, ['shared', 'shared', 'shared', 'shared']);
    assert.deepEqual(info.showValues, [false, false, false, false], 'no printed values over the sampled centres');
    assert.equal(info.cells.length, 100);
    const png = decodePNG(await page.screenshot());
    const at = ({ x, y }) => png.pixel(Math.floor(x * info.dpr), Math.floor(y * info.dpr));
    const bg = rgbOf(info.background);
    assert.ok(near(at(info.margin), bg, 2), `${colorScheme}: page margin ${at(info.margin)} vs background ${bg}`);
    const lum = (bg[0] + bg[1] + bg[2]) / 765;
    assert.ok(colorScheme === 'light' ? lum > 0.85 : lum < 0.25, `${colorScheme} theme background ${bg}`);
    const wrong = [];
    for (const cell of info.cells) {
      assert.ok(cell.w >= 8, `cells large enough to sample: ${cell.w}px`);
      const v = info.weights[(cell.head * 5 + cell.r) * 5 + cell.c];
      const want = rgbOf(interpolateViridis(v));
      if (!near(at(cell), want, 3)) wrong.push(`head ${cell.head} (${cell.r}, ${cell.c}) weight ${v.toFixed(3)}: ${at(cell).slice(0, 3)} vs ${want}`);
    }
    assert.deepEqual(wrong, [], `${colorScheme}: cells not in the colour of their weight`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('the whole lesson fits a 390 px wide phone: no horizontal scrolling of the page', async () => {
  const { page, errors, context } = await openLesson({ viewport: { width: 390, height: 844 } });
  // the trained-model elements fetch their models when seen: scroll to each, so every one is drawn
  await reveal(page, ['#explorer', '#surprisal', '#induction', '#composition', '#ov-circuit', '#phase-change', '#generate', '#twins', '#gqa-twins', '#gqa-story']);
  await page.waitForFunction(() => document.querySelector('#twins')?.rows && document.querySelector('#explorer')?.textScores, null, { timeout: 90_000 });
  // the composition experiment's results drawn too (its widest view)
  await page.evaluate(() => { const el = document.querySelector('#composition'); el.revealed = true; return el.updateComplete; });
  await page.waitForFunction(() => document.querySelector('#composition').shadowRoot.querySelectorAll('mha-heatmap').length === 2 && document.querySelector('#ov-circuit').rows, null, { timeout: 90_000 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(overflow, 0, `the page is ${overflow} px wider than the screen`);
  assert.deepEqual(errors, []);
  await context.close();
});

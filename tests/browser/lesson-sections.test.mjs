// The lesson's sections on the layer map, the causal mask, cross-attention, the cost ledger and the
// surprisal strip, in a real browser: each element computes on the lesson page, and what it holds
// equals what the JS API gives in the same page (the page's own engine, window.mhaLesson.engine).
// The section heights: no section is taller than sections 1-4 together.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setup, ARTIFACTS, revealUntil } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

async function openLesson(opts = {}) {
  const { page, errors, context } = await env.newPage(opts);
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready]', { state: 'attached', timeout: 60_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true', errors.join(' | '));
  return { page, errors, context };
}

test('the layer map shows the engine\'s passport and opens on Q\'s reshape with the engine\'s numbers', async () => {
  const { page, errors, context } = await openLesson();
  await revealUntil(page, '#layer-map', (el) => el.passport);
  const r = await page.evaluate(() => {
    const el = document.querySelector('#layer-map');
    const p = window.mhaLesson.engine.passport({ seqLen: 5, dModel: 24, numHeads: 2 });
    return { map: el.passport.steps.map((s) => s.shape.join('×')), api: p.steps.map((s) => s.shape.join('×')),
      text: el.shadowRoot.textContent, selected: el.getAttribute('selected'),
      masked: el.shadowRoot.querySelectorAll('[data-masked], .masked').length };
  });
  assert.deepEqual(r.map, r.api);
  assert.equal(r.selected, 'q');
  // Q [T, d_model] → view(T, h, d_k) → transpose: [h, T, d_k] = [2, 5, 12]
  assert.match(r.text, /\.view\(5, 2, 12\)\.transpose\(0, 1\)\s+# \[2, 5, 12\]/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the causal mask toggles on the lesson: weights above the diagonal exactly 0 with it, positive without, rows sum to 1', async () => {
  const { page, errors, context } = await openLesson();
  await revealUntil(page, '#causal-mask', (el) => el.result);
  const above = (w) => w.flatMap((m) => m.flatMap((row, i) => row.filter((_, j) => j > i)));
  const read = () => page.evaluate(() => {
    const el = document.querySelector('#causal-mask');
    return { causal: el.result.causal, w: el.result.heads3 };
  });
  const on = await read();
  assert.equal(on.causal, true);
  assert.ok(above(on.w).length > 0 && above(on.w).every((v) => v === 0));
  for (const m of on.w) for (const row of m) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  await page.locator('#causal-mask').locator('button[aria-pressed]', { hasText: /causal/i }).first().click();
  await page.waitForFunction(() => document.querySelector('#causal-mask').result?.causal === false);
  const off = await read();
  assert.ok(above(off.w).every((v) => v > 0));
  await page.screenshot({ path: path.join(ARTIFACTS, 'lesson-causal-off.png'), clip: await page.locator('#causal-mask').boundingBox() })
    .catch(() => {});
  assert.deepEqual(errors, []);
  await context.close();
});

test('cross-attention on the lesson: weights [h, Tq, Tk] equal a forward of the same inputs through the JS API', async () => {
  const { page, errors, context } = await openLesson();
  await revealUntil(page, '#cross-attention', (el) => el.result);
  const r = await page.evaluate(async () => {
    const el = document.querySelector('#cross-attention');
    const { source, target, heads, dModel, seed, weights } = el.result;
    // the same hand-set inputs through the page's engine
    const { crossAttentionInputs } = await import('/dist/mha-lesson-elements.js');
    const inp = crossAttentionInputs({ source, target, dModel, heads, seed });
    const layer = window.mhaLesson.engine.createLayer({ dModel, numHeads: heads, bias: false, weights: inp.weights });
    const ref = layer.forward(inp.xTarget, { key: inp.xSource, value: inp.xSource }).weights;
    layer.dispose();
    let maxDiff = 0;
    for (let i = 0; i < ref.data.length; i++) maxDiff = Math.max(maxDiff, Math.abs(ref.data[i] - weights.data[i]));
    return { shape: weights.shape, want: [heads, target.length, source.length], refShape: ref.shape, maxDiff };
  });
  assert.deepEqual(r.shape, r.want);
  assert.deepEqual(r.refShape, r.want);
  assert.ok(r.maxDiff < 1e-6, `max |Δ| ${r.maxDiff}`);
  assert.notEqual(r.want[1], r.want[2], 'the default pair has a non-square map');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the cost ledger and the surprisal strip compute on the lesson; switching the induction heads off makes the second copy dearer', async () => {
  const { page, errors, context } = await openLesson();
  await revealUntil(page, '#ledger', (el) => el.result);
  assert.equal(await page.evaluate(() => document.querySelector('#ledger').error), null);
  await revealUntil(page, '#surprisal', (el) => el.measured?.ablated);
  const m = await page.evaluate(() => {
    const { copies, ablated, uniform } = document.querySelector('#surprisal').measured;
    return { second: copies.second, first: copies.first, ablatedSecond: ablated.second, uniform };
  });
  assert.ok(m.second < m.first, `the second copy is cheaper (${m.second} < ${m.first})`);
  assert.ok(m.ablatedSecond > m.second, `switching the induction heads off makes it dearer (${m.ablatedSecond} > ${m.second})`);
  assert.ok(m.first < m.uniform);
  assert.deepEqual(errors, []);
  await context.close();
});

test('no section is taller than sections 1-4 together (1280 px)', async () => {
  const { page, errors, context } = await openLesson({ viewport: { width: 1280, height: 900 } });
  // let every element below the fold compute (the trained ones fetch their models when seen)
  for (const id of ['trained', 'gqa', 'stories']) await page.locator(`#${id}`).scrollIntoViewIfNeeded();
  await revealUntil(page, '#gqa-story', (el) => el.measured, 120_000);
  await revealUntil(page, '#explorer', (el) => el.textScores, 120_000);
  const h = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('main section')]
    .map((s) => [s.id, Math.round(s.getBoundingClientRect().height)])));
  console.log('section heights (px):', JSON.stringify(h));
  const firstFour = h.map + h.why + h.split + h.worked;
  for (const [id, px] of Object.entries(h)) assert.ok(px <= firstFour, `${id} is ${px} px, sections 1-4 together ${firstFour} px`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the layer map drives the lesson: a tensor selected there opens the stepper on its step; the map follows the widget\'s h', async () => {
  const { page, errors, context } = await openLesson();
  await revealUntil(page, '#layer-map', (el) => el.passport);
  const map = page.locator('#layer-map');
  await map.locator('button[aria-pressed]', { hasText: /^\s*scores/ }).first().click();
  await page.waitForFunction(() => document.querySelector('#stepper').step === 3);
  assert.match(await page.evaluate(() => location.hash), /step=3/);
  assert.equal(await page.locator('#layer-map-note').isVisible(), true);
  await page.locator('#widget button[data-h="4"]').click();
  await page.waitForFunction(() => document.querySelector('#layer-map').passport?.steps.some((s) => s.shape.join() === '4,5,5'));
  assert.equal(await map.getAttribute('heads'), '4');
  assert.deepEqual(errors, []);
  await context.close();
});

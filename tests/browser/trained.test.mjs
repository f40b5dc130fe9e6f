// The trained-heads section (web/site/lesson/trained.js) in Chromium: the numbers the page shows equal
// the engine's in Node on the same file, typing and ablation update them, generation grows the KV
// cache, heatmaps export SVG, keyboard use, axe, no console errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, axeSeriousViolations, ARTIFACTS, ROOT } from './helpers.mjs';
import { createMHA } from '../../web/lib/src/index.js';

let env;
let lm;
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'web', 'lib', 'models', 'index.json'), 'utf8'));
const mainFile = manifest.models.find((m) => m.numHeads === 4 && m.seed === 0).file;
before(async () => {
  env = await setup();
  lm = await (await createMHA()).loadModel(readFileSync(path.join(ROOT, 'web', 'lib', 'models', mainFile)));
});
after(async () => { lm?.dispose(); await env?.close(); });

async function openTrained(opts = {}) {
  const { page, errors, context } = await env.newPage(opts);
  await page.goto(`${env.url}#trained`);
  await page.waitForSelector('#trained[data-ready]', { state: 'attached', timeout: 60_000 });
  const ready = await page.evaluate(() => document.querySelector('#trained').dataset.ready);
  assert.equal(ready, 'true', `section not ready: ${await page.locator('#trained-about').textContent()} ${errors.join(' | ')}`);
  return { page, errors, context };
}

const pageLoss = (page) => page.evaluate(() => Number(document.querySelector('#trained').dataset.loss));

/** Sets the text field as a user would (input event) and waits for the new loss. */
async function typeText(page, text) {
  const before = await page.evaluate(() => document.querySelector('#trained').dataset.loss);
  await page.locator('#trained-text').fill(text);
  await page.waitForFunction((b) => document.querySelector('#trained').dataset.loss !== b, before).catch(() => {});
}

test('every head of every layer is shown with its measured label; loss and predictions equal the engine in Node', async () => {
  const { page, errors, context } = await openTrained();
  const { numLayers, numHeads } = lm.config;
  assert.equal(await page.locator('#trained-heads mha-heatmap').count(), numLayers * numHeads);
  const labels = await page.locator('#trained-heads .head-type').allTextContents();
  assert.deepEqual(labels, lm.heads.map((h) => h.type));
  const text = await page.locator('#trained-text').inputValue();
  const r = lm.run(text);
  assert.ok(Math.abs((await pageLoss(page)) - r.loss) < 1e-9, 'the loss on the page is the runner\'s');
  const shown = await page.locator('#trained-loss').textContent();
  assert.equal(shown, `${r.loss.toFixed(3)} bits per character`);
  const first = (await page.locator('#trained-next li').first().textContent()).trim();
  assert.ok(first.startsWith(r.next[0].char === ' ' ? '␣' : r.next[0].char), `${first} vs ${r.next[0].char}`);
  // The heatmap of layer 1, head 2 holds the engine's attention weights.
  const w = await page.evaluate(() => document.querySelector('#trained-heads mha-heatmap[data-layer="0"][data-head="1"]').weights);
  const T = text.length;
  for (const [q, k] of [[5, 4], [T - 1, T - 2], [T - 1, 0]]) {
    assert.ok(Math.abs(w[q][k] - r.attention[0].data[(1 * T + q) * T + k]) < 1e-6);
  }
  // Twins: four rows, each live figure equals the runner's mean loss over the probe texts.
  const rows = await page.locator('#twins tbody tr').count();
  assert.equal(rows, manifest.models.length);
  assert.match(await page.locator('#twins-result').textContent(), /h = 1 scores \d\.\d{3} and h = 4 scores \d\.\d{3}/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('typing updates the heatmaps and the loss; switching off the induction heads raises it, switching on restores it', async () => {
  const { page, errors, context } = await openTrained();
  const text = 'The quick fox naps. The quick fox naps.';
  await typeText(page, text);
  assert.equal(await page.locator('#trained-heads mha-heatmap').first().locator('[role="gridcell"]').count(), text.length * text.length);
  const base = await pageLoss(page);
  assert.ok(Math.abs(base - lm.run(text).loss) < 1e-9);
  const induction = lm.heads.filter((h) => h.type === 'induction');
  assert.ok(induction.length >= 1);
  for (const h of induction) await page.locator(`.head-toggle[data-layer="${h.layer}"][data-head="${h.head}"]`).click();
  const off = await pageLoss(page);
  const want = lm.run(text, { ablate: induction.map((h) => [h.layer, h.head]) }).loss;
  assert.ok(Math.abs(off - want) < 1e-9, `page ${off} vs runner ${want}`);
  assert.ok(off > base + 0.2, `loss ${base} → ${off}`);
  assert.equal(await page.locator(`.head-toggle[data-layer="${induction[0].layer}"][data-head="${induction[0].head}"]`).getAttribute('aria-checked'), 'false');
  await page.locator('#trained-all-on').click();
  assert.equal(await pageLoss(page), base);
  assert.equal(await page.locator('.head-toggle[aria-checked="false"]').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('induction on an edited phrase: the second copy is predicted better than the first', async () => {
  const { page, errors, context } = await openTrained();
  await page.locator('#induction-phrase').fill('purple kites drift north');
  await page.waitForFunction(() => document.querySelector('#trained').dataset.induction?.length > 0);
  const [first, second] = (await page.evaluate(() => document.querySelector('#trained').dataset.induction)).split(' ').map(Number);
  assert.ok(second < first / 2, `first copy ${first}, second ${second} bits per character`);
  assert.match(await page.locator('#induction-result').textContent(), /Second copy/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('generation grows the KV cache one position per step and shows the newest query\'s row for every head', async () => {
  const { page, errors, context } = await openTrained();
  const prompt = await page.locator('#trained-text').inputValue();
  const cache = () => page.evaluate(() => Number(document.querySelector('#trained').dataset.cache));
  await page.locator('#gen-step').click();
  assert.equal(await cache(), prompt.length);
  await page.locator('#gen-step').click();
  assert.equal(await cache(), prompt.length + 1);
  await page.locator('#gen-ten').click();
  assert.equal(await cache(), prompt.length + 11);
  assert.match(await page.locator('#gen-cache').textContent(), new RegExp(`KV cache: ${prompt.length + 11} of ${lm.config.context}`));
  const rows = page.locator('#gen-rows mha-heatmap');
  assert.equal(await rows.count(), lm.config.numLayers * lm.config.numHeads);
  assert.equal(await rows.first().locator('[role="gridcell"]').count(), prompt.length + 11);
  // Greedy generation on the page equals the runner's.
  await page.locator('#gen-temp').selectOption('0');
  await page.locator('#gen-ten').click();
  const generated = await page.locator('#gen-text mark').textContent();
  assert.equal(generated, lm.generate(prompt, 10, { temperature: 0 }).text.slice(prompt.length));
  assert.deepEqual(errors, []);
  await context.close();
});

test('heatmaps export SVG (one cell per weight, a valid document) as well as PNG', async () => {
  const { page, errors, context } = await openTrained();
  const text = await page.locator('#trained-text').inputValue();
  const svg = await page.evaluate(() => {
    const m = document.querySelector('#trained-heads mha-heatmap');
    const doc = new DOMParser().parseFromString(m.toSVG(), 'image/svg+xml');
    return { root: doc.documentElement.nodeName, cells: doc.querySelectorAll('g.cell').length, error: !!doc.querySelector('parsererror') };
  });
  assert.deepEqual(svg, { root: 'svg', cells: text.length * text.length, error: false });
  const download = page.waitForEvent('download');
  await page.locator('#trained-heads mha-heatmap').first().locator('button', { hasText: 'Save SVG' }).click();
  const file = await download;
  assert.match(file.suggestedFilename(), /\.svg$/);
  await file.saveAs(path.join(ARTIFACTS, 'trained-head.svg'));
  assert.match(readFileSync(path.join(ARTIFACTS, 'trained-head.svg'), 'utf8'), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard only: Tab reaches a head toggle, Space switches the head off and on', async () => {
  const { page, errors, context } = await openTrained();
  await page.locator('#trained-text').focus();
  let found = false;
  for (let i = 0; i < 12 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement?.classList.contains('head-toggle'));
  }
  assert.ok(found, 'a head toggle is reachable with Tab');
  const before = await pageLoss(page);
  await page.keyboard.press('Space');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-checked')), 'false');
  assert.notEqual(await pageLoss(page), before);
  await page.keyboard.press('Space');
  assert.equal(await pageLoss(page), before);
  assert.deepEqual(errors, []);
  await context.close();
});

test('axe-core: no serious or critical violations with the section ready, light and dark; screenshots', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openTrained({ colorScheme });
    await page.locator('#gen-step').click();
    const bad = await axeSeriousViolations(page, '#trained');
    assert.deepEqual(bad, [], `${colorScheme}: ${JSON.stringify(bad, null, 1)}`);
    await page.locator('#trained').screenshot({ path: path.join(ARTIFACTS, `trained${colorScheme === 'dark' ? '-dark' : ''}.png`) });
    await context.close();
  }
});

test('one run of 64 characters in Chromium (printed, not asserted)', async () => {
  const { page, context } = await openTrained();
  const ms = await page.evaluate(async (file) => {
    const lm = await window.mhaLesson.engine.loadModel(new URL(`models/${file}`, document.baseURI));
    const text = 'The cat sat on the mat. The cat sat on the mat. The cat sat on t';
    for (let i = 0; i < 5; i++) lm.run(text);
    const times = [];
    for (let i = 0; i < 21; i++) { const t = performance.now(); lm.run(text); times.push(performance.now() - t); }
    lm.dispose();
    return times.sort((a, b) => a - b)[10];
  }, mainFile);
  console.log(`# run() of 64 characters in Chromium: median ${ms.toFixed(2)} ms (timer resolution ~0.1 ms)`);
  await context.close();
});

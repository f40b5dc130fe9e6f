// Section 7 of the lesson, composed of the library's trained-model elements (web/site/lesson/trained.js):
// the numbers the page shows equal the runner's in Node on the same file, typing and ablation
// update them, the explorer's text and switches drive generation, generation grows the KV cache,
// heatmaps export SVG, keyboard use, axe, screenshots, one engine and one fetch per model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, reveal, axeSeriousViolations, deepFocus, ARTIFACTS, ROOT } from './helpers.mjs';
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

/** The lesson at #trained with its four elements computed. */
async function openTrained(opts = {}) {
  const { page, errors, context } = await env.newPage(opts);
  const fetched = [];
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  await page.goto(`${env.url}#trained`);
  // the elements fetch their models when they come near the viewport: scroll to each as a reader would
  await reveal(page, ['#explorer', '#induction', '#generate', '#twins']);
  await page.waitForFunction(() => {
    const q = (s) => document.querySelector(s);
    const els = ['#explorer', '#induction', '#generate', '#twins'].map(q);
    if (els.some((e) => e?.error)) return true;
    return q('#explorer')?.textScores && q('#induction')?.measured && q('#generate')?.lm && q('#twins')?.rows;
  }, null, { timeout: 90_000 });
  const err = await page.evaluate(() => ['#explorer', '#induction', '#generate', '#twins']
    .map((s) => document.querySelector(s).error?.message).filter(Boolean).join(' | '));
  assert.equal(err, '', `section not ready: ${err} ${errors.join(' | ')}`);
  return { page, errors, context, fetched };
}

const pageLoss = (page) => page.evaluate(() => document.querySelector('#explorer').result.loss);

/** Sets the explorer's text as a reader would (input event) and waits for its run. */
async function typeText(page, text) {
  await page.locator('#explorer textarea').fill(text);
  await page.waitForFunction((t) => document.querySelector('#explorer').result?.tokens.join('') === t, text);
}

test('every head of every layer is shown with its measured label; loss, predictions and weights equal the runner in Node; one wasm and one fetch per model', async () => {
  const { page, errors, context, fetched } = await openTrained();
  const { numLayers, numHeads } = lm.config;
  assert.equal(await page.locator('#explorer mha-heatmap').count(), numLayers * numHeads);
  const labels = await page.locator('#explorer .badge').allTextContents();
  assert.deepEqual(labels, lm.heads.map((h) => h.type));
  const text = await page.locator('#explorer textarea').inputValue();
  const r = lm.run(text);
  assert.ok(Math.abs((await pageLoss(page)) - r.loss) < 1e-9, 'the loss on the page is the runner\'s');
  assert.equal(await page.locator('#explorer .loss').textContent(), `${r.loss.toFixed(3)} bits per character`);
  const first = (await page.locator('#explorer .next li').first().textContent()).trim();
  assert.ok(first.startsWith(r.next[0].char === ' ' ? '␣' : r.next[0].char), `${first} vs ${r.next[0].char}`);
  // the heatmap of layer 1, head 2 holds the runner's attention weights
  const w = await page.evaluate(() => {
    const m = document.querySelector('#explorer').shadowRoot.querySelector('mha-heatmap[data-layer="0"][data-head="1"]');
    return { data: Array.from(m.weights.data), shape: m.weights.shape };
  });
  const T = text.length;
  assert.deepEqual(w.shape, [T, T]);
  for (const [q, k] of [[5, 4], [T - 1, T - 2], [T - 1, 0]]) {
    assert.ok(Math.abs(w.data[q * T + k] - r.attention[0].data[(1 * T + q) * T + k]) < 1e-6);
  }
  // twins: four rows, each live figure the runner's mean loss over the stored held-out passages
  const probes = JSON.parse(lm.metadata.probes).text;
  let sum = 0, n = 0;
  for (const p of probes) { sum += lm.run(p).loss * (p.length - 1); n += p.length - 1; }
  const rows = await page.evaluate(() => document.querySelector('#twins').rows);
  assert.equal(rows.length, manifest.models.length);
  assert.equal(await page.locator('#twins tbody tr').count(), manifest.models.length);
  const mine = rows.find((m) => m.file === mainFile);
  assert.ok(Math.abs(mine.live - sum / n) < 1e-6, `${mine.live} vs ${sum / n}`);
  assert.ok(await page.locator('#twins tbody td', { hasText: (sum / n).toFixed(3) }).count() >= 1);
  const verdict = await page.locator('#twins .verdict').textContent();
  assert.match(verdict, /h = 1 scores \d\.\d{3} and h = 4 scores \d\.\d{3}/);
  // the second sentence: the manifest's whole-held-out-set losses as the table prints them (whole thousandths),
  // seed means rounded as printed, and their gap
  const at = (h) => manifest.models.filter((m) => m.numHeads === h).map((m) => Math.round(m.heldoutBpc * 1000));
  const mean = (a) => Math.round(a.reduce((x, y) => x + y, 0) / a.length) / 1000;
  const [one, four] = [at(1), at(4)];
  // the held-out set's size from the model's training record, and the caveat of two seeds
  const size = await page.evaluate(() => document.querySelector('#twins').lm.training.heldout_chars);
  assert.ok(verdict.includes(`On the whole held-out set (${size.toLocaleString('en-US')} characters), measured at training: h = 1 ${mean(one).toFixed(3)}, h = 4 ${mean(four).toFixed(3)}; `), verdict);
  assert.match(verdict, /With 2 seeds per model, this is suggestive, not a test\.$/);
  assert.ok(verdict.includes(`better by ${(mean(one) - mean(four)).toFixed(3)} bits`), verdict);
  // the verdict is read in place; one short line is announced once every model is scored
  assert.equal(await page.locator('#twins .verdict').getAttribute('aria-live'), null);
  await page.waitForFunction(() => document.querySelector('#twins').shadowRoot.querySelector('[part="announcement"]').textContent !== '', null, { timeout: 10_000 });
  assert.equal(await page.locator('#twins [part="announcement"]').textContent(),
    `${manifest.models.length} models scored on the held-out passages; the verdict follows the table.`);
  // the section's elements and the widget above share two engines (the page's, and the engine worker
  // where the explorer and the generator compute) and one copy of each file
  const count = (re) => fetched.filter((f) => re.test(f)).length;
  assert.equal(count(/\.wasm$/), 2, fetched.filter((f) => /\.wasm$/.test(f)).join(' '));
  assert.equal(count(/charlm-h4-s0\.safetensors$/), 1);
  assert.equal(count(/charlm-h1-s0\.safetensors$/), 1);
  assert.deepEqual(errors, []);
  await context.close();
});

test('typing updates the heatmaps and the loss; switching off the induction heads raises it and carries over to generation', async () => {
  const { page, errors, context } = await openTrained();
  // the page's map-size: every map's plot at most that side whatever the text length (fixedCells' cells)
  const side = Number(await page.evaluate(() => document.querySelector('#explorer').getAttribute('map-size')));
  const plots = () => page.evaluate(() => [...document.querySelector('#explorer').shadowRoot.querySelectorAll('mha-heatmap')]
    .map((m) => m.shadowRoot.querySelector('.plot').getBoundingClientRect().width));
  const cellFor = (T) => Math.max(1, Math.floor((side + 1) / T) - 1);
  const before = await plots();
  const T0 = await page.evaluate(() => document.querySelector('#explorer').result.tokens.length);
  const text = 'The quick fox naps. The quick fox naps.';
  await typeText(page, text);
  assert.deepEqual(await page.evaluate(() => document.querySelector('#explorer').shadowRoot.querySelector('mha-heatmap').weights.shape), [text.length, text.length]);
  const after = await plots();
  for (const [w, T] of [...before.map((w) => [w, T0]), ...after.map((w) => [w, text.length])]) {
    assert.ok(Math.abs(w - (T * cellFor(T) + T - 1)) < 0.5 && w <= side, `a map of ${T} tokens is ${w} px (map-size ${side})`);
  }
  assert.equal(await page.evaluate(() => document.querySelector('#generate').prompt), text, 'the explorer\'s text is the prompt');
  const base = await pageLoss(page);
  assert.ok(Math.abs(base - lm.run(text).loss) < 1e-9);
  const induction = lm.heads.filter((h) => h.type === 'induction');
  assert.ok(induction.length >= 1);
  for (const h of induction) await page.locator(`#explorer button[role="switch"][data-layer="${h.layer}"][data-head="${h.head}"]`).click();
  const off = await pageLoss(page);
  const want = lm.run(text, { ablate: induction.map((h) => [h.layer, h.head]) }).loss;
  assert.ok(Math.abs(off - want) < 1e-9, `page ${off} vs runner ${want}`);
  assert.ok(off > base + 0.2, `loss ${base} → ${off}`);
  assert.equal(await page.evaluate(() => document.querySelector('#generate').ablate), induction.map((h) => `${h.layer + 1}:${h.head + 1}`).join(' '));
  await page.locator('#explorer button.all-on').click();
  assert.equal(await pageLoss(page), base);
  assert.equal(await page.locator('#explorer button[role="switch"][aria-checked="false"]').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('induction on an edited phrase: the second copy is predicted better than the first', async () => {
  const { page, errors, context } = await openTrained();
  await page.locator('#induction input').fill('purple kites drift north');
  await page.waitForFunction(() => document.querySelector('#induction').measured && document.querySelector('#induction').shadowRoot.querySelector('.result').textContent.includes('Second'));
  const { first, second } = await page.evaluate(() => document.querySelector('#induction').measured);
  assert.ok(second < first / 2, `first copy ${first}, second ${second} bits per character`);
  const r = lm.run('purple kites drift north purple kites drift north');
  const V = lm.config.vocabSize;
  let b = 0;
  for (let t = 25; t < 48; t++) b -= r.logProbs.data[t * V + r.ids[t + 1]] / Math.LN2;
  assert.ok(Math.abs(second - b / 23) < 1e-6, `second copy ${second} vs the runner's ${b / 23}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('generation grows the KV cache one position per step and shows the newest query\'s row for every head', async () => {
  const { page, errors, context } = await openTrained();
  const prompt = await page.locator('#explorer textarea').inputValue();
  // a click's steps may still be running when it returns (a busy machine): wait for the cache to
  // reach the length they should give (or time out), then compare
  const cache = async (n) => {
    await page.waitForFunction((n) => document.querySelector('#generate').cacheLength >= n, n, { timeout: 30_000 }).catch(() => {});
    return page.evaluate(() => document.querySelector('#generate').cacheLength);
  };
  await page.locator('#generate button.step1').click();
  assert.equal(await cache(prompt.length), prompt.length);
  await page.locator('#generate button.step1').click();
  assert.equal(await cache(prompt.length + 1), prompt.length + 1);
  await page.locator('#generate button.step10').click();
  assert.equal(await cache(prompt.length + 11), prompt.length + 11);
  assert.match(await page.locator('#generate .cache').textContent(), new RegExp(`KV cache: ${prompt.length + 11} of ${lm.config.context}`));
  const rows = page.locator('#generate mha-heatmap');
  assert.equal(await rows.count(), lm.config.numLayers * lm.config.numHeads);
  assert.deepEqual(await page.evaluate(() => document.querySelector('#generate').shadowRoot.querySelector('mha-heatmap').weights.shape), [1, prompt.length + 11]);
  // greedy generation on the page equals the runner's
  await page.locator('#generate select').selectOption('0');
  await page.locator('#generate button.step10').click();
  const want = lm.generate(prompt, 10, { temperature: 0 }).text.slice(prompt.length);
  await page.waitForFunction((w) => document.querySelector('#generate').shadowRoot.querySelector('mark')?.textContent === w, want, { timeout: 30_000 }).catch(() => {});
  assert.equal(await page.locator('#generate mark').textContent(), want);
  assert.deepEqual(errors, []);
  await context.close();
});

test('heatmaps export SVG (one cell per weight, a valid document) as well as PNG', async () => {
  const { page, errors, context } = await openTrained();
  const text = await page.locator('#explorer textarea').inputValue();
  const svg = await page.evaluate(() => {
    const m = document.querySelector('#explorer').shadowRoot.querySelector('mha-heatmap');
    const doc = new DOMParser().parseFromString(m.toSVG(), 'image/svg+xml');
    return { root: doc.documentElement.nodeName, cells: doc.querySelectorAll('g.cell').length, error: !!doc.querySelector('parsererror') };
  });
  assert.deepEqual(svg, { root: 'svg', cells: text.length * text.length, error: false });
  const download = page.waitForEvent('download');
  await page.locator('#explorer mha-heatmap').first().locator('summary').click();   // the save buttons sit in the map's disclosure
  await page.locator('#explorer mha-heatmap').first().locator('button', { hasText: 'Save SVG' }).click();
  const file = await download;
  assert.match(file.suggestedFilename(), /\.svg$/);
  await file.saveAs(path.join(ARTIFACTS, 'trained-head.svg'));
  assert.match(readFileSync(path.join(ARTIFACTS, 'trained-head.svg'), 'utf8'), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard only: Tab reaches a head switch, Space switches the head off and on', async () => {
  const { page, errors, context } = await openTrained();
  await page.locator('#explorer textarea').focus();
  let found = false;
  for (let i = 0; i < 12 && !found; i++) {
    await page.keyboard.press('Tab');
    found = (await deepFocus(page))?.role === 'switch';
  }
  assert.ok(found, 'a head switch is reachable with Tab');
  const before = await pageLoss(page);
  const computed = () => page.evaluate(() => document.querySelector('#explorer').computeComplete);   // the run in the engine worker
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('#explorer').getAttribute('ablate') !== '');
  await computed();
  assert.equal((await deepFocus(page)).label, null);
  assert.notEqual(await pageLoss(page), before);
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('#explorer').getAttribute('ablate') === '');
  await computed();
  assert.equal(await pageLoss(page), before);
  assert.deepEqual(errors, []);
  await context.close();
});

test('axe-core: no serious or critical violations with the section ready, light and dark; screenshots', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await openTrained({ colorScheme });
    await page.locator('#generate button.step1').click();
    const bad = await axeSeriousViolations(page, '#trained');
    assert.deepEqual(bad, [], `${colorScheme}: ${JSON.stringify(bad, null, 1)}`);
    await page.locator('#trained').screenshot({ path: path.join(ARTIFACTS, `trained${colorScheme === 'dark' ? '-dark' : ''}.png`) });
    await context.close();
  }
});

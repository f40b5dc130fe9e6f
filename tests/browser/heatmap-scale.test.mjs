// The colour scale of <mha-heatmap> in Chromium: a heatmap is coloured 0 to its own max by default and
// 0 to 1 with scale="shared" (a bad value keeps the last good one, names itself, fires mha-error);
// <mha-heads> puts every head on one 0-1 scale by default, stated under the maps, per-map on request;
// <mha-widget> keeps h = 1 and h = 8 on the same scale so that sharpness compares. The heatmap's
// drawing and interaction: heatmap.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';
import { W, weights, openHeatmapPage } from '../helpers/heatmap-page.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const openPage = (opts) => openHeatmapPage(env, opts);

const legends = (page, sel) => page.evaluate((s) => {
  const el = document.querySelector(s);
  const maps = el.localName === 'mha-heatmap' ? [el] : [...el.shadowRoot.querySelectorAll('mha-heatmap')];
  return {
    ends: maps.map((m) => [m.shadowRoot.querySelector('.legend .lo').textContent, m.shadowRoot.querySelector('.legend .hi').textContent]),
    maxes: maps.map((m) => Math.max(...m.matrix.flat())),
    note: el.shadowRoot.querySelector('[part="scale-note"]')?.textContent.trim() ?? null,
    error: el.shadowRoot.querySelector('[part="error"]')?.textContent.trim() ?? null,
    attr: el.getAttribute('scale'),
  };
}, sel);

test('scale: a heatmap is coloured 0 to its own max by default, 0 to 1 with scale="shared"; a bad value keeps the last good one, names itself, fires mha-error', async () => {
  const { page, errors, context } = await openPage();
  const small = W.slice(0, 5).map((row) => row.slice(0, 5));
  const max = Math.max(...small.flat());
  let got = await legends(page, '#small');
  assert.deepEqual(got.ends, [['0.00', max.toFixed(2)]]);
  // the brightest cell is the scale's top colour per map; with the shared 0-1 scale it is darker
  const colorOf = () => page.evaluate((m) => {
    const cells = [...document.getElementById('small').shadowRoot.querySelectorAll('.cell')];
    return cells.find((c) => Number(c.dataset.value) === m).style.background;
  }, Math.fround(max));
  const perMap = await colorOf();
  await page.evaluate(() => { document.getElementById('small').setAttribute('scale', 'shared'); document.getElementById('big').setAttribute('scale', 'shared'); });
  await page.evaluate(() => document.getElementById('small').updateComplete);
  got = await legends(page, '#small');
  assert.deepEqual(got.ends, [['0.00', '1.00']]);
  assert.notEqual(await colorOf(), perMap);
  assert.equal(await page.evaluate(() => document.getElementById('big').scaleInUse), 'shared');
  assert.deepEqual((await legends(page, '#big')).ends, [['0.00', '1.00']]);
  // a bad value: the message names the attribute, the expected and the actual value; the shared scale stays
  const ev = await page.evaluate(async () => {
    const el = document.getElementById('small');
    const p = new Promise((r) => el.addEventListener('mha-error', (e) => r({ code: e.detail.error.code, message: e.detail.error.message }), { once: true }));
    el.setAttribute('scale', 'wide');
    return p;
  });
  assert.deepEqual(ev, { code: 'INVALID_ARGUMENT', message: 'scale: expected "shared" or "per-map", got "wide"' });
  await page.evaluate(() => document.getElementById('small').updateComplete);
  got = await legends(page, '#small');
  assert.equal(got.error, 'scale: expected "shared" or "per-map", got "wide"');
  assert.equal(got.attr, 'wide');
  assert.deepEqual(got.ends, [['0.00', '1.00']]);
  // fixed: the message goes
  await page.evaluate(() => document.getElementById('small').setAttribute('scale', 'per-map'));
  await page.evaluate(() => document.getElementById('small').updateComplete);
  got = await legends(page, '#small');
  assert.equal(got.error, null);
  assert.deepEqual(got.ends, [['0.00', max.toFixed(2)]]);
  assert.deepEqual(errors, []);
  await context.close();
});

test('scale on <mha-heads>: one 0-1 scale for every head by default, stated under the maps; per-map on request; a bad value shows a message', async () => {
  const { page, errors, context } = await openPage();
  // two heads, one sharp and one flat: under the shared scale the flat head is dark, its max far below 1
  const sharp = [[1, 0, 0], [0.9, 0.1, 0], [0.05, 0.05, 0.9]];
  const flat = [[1, 0, 0], [0.5, 0.5, 0], [0.34, 0.33, 0.33]].map((r, i) => (i === 0 ? [0.4, 0.3, 0.3] : r));
  await page.evaluate(({ sharp, flat }) => {
    const el = document.createElement('mha-heads');
    el.id = 'heads';
    el.tokens = ['a', 'b', 'c'];
    el.weights = [sharp, flat];
    document.querySelector('#host').append(el);
    return el.updateComplete;
  }, { sharp, flat });
  await page.evaluate(async () => { for (const m of document.getElementById('heads').shadowRoot.querySelectorAll('mha-heatmap')) await m.updateComplete; });
  let got = await legends(page, '#heads');
  assert.deepEqual(got.ends, [['0.00', '1.00'], ['0.00', '1.00']]);
  assert.equal(got.note, 'Colour: 0 to 1, the same scale for every head, so colours compare between heads and between settings.');
  await page.evaluate(() => document.getElementById('heads').setAttribute('scale', 'per-map'));
  await page.evaluate(async () => { const h = document.getElementById('heads'); await h.updateComplete; for (const m of h.shadowRoot.querySelectorAll('mha-heatmap')) await m.updateComplete; });
  got = await legends(page, '#heads');
  assert.deepEqual(got.ends, got.maxes.map((m) => ['0.00', m.toFixed(2)]));
  assert.deepEqual(got.ends[1], ['0.00', '0.50']);
  assert.match(got.note, /^Colour: each head on its own scale, from 0 to its largest weight .*colours do not compare between heads\.$/);
  await page.evaluate(() => document.getElementById('heads').setAttribute('scale', 'global'));
  await page.evaluate(() => document.getElementById('heads').updateComplete);
  got = await legends(page, '#heads');
  assert.equal(got.error, 'scale: expected "shared" or "per-map", got "global"');
  assert.equal(got.attr, 'global');
  assert.deepEqual(got.ends[1], ['0.00', '0.50'], 'the last good scale (per-map) stays');
  assert.deepEqual(errors, []);
  await context.close();
});

test('scale on <mha-widget>: h = 1 and h = 8 on the same 0-1 scale by default (sharpness compares), per-map passed through', async () => {
  const { page, errors, context } = await openPage();
  await page.evaluate(() => {
    const w = document.createElement('mha-widget');
    w.id = 'w';
    w.setAttribute('seq-len', '5');
    w.setAttribute('d-model', '24');
    w.setAttribute('heads', '1');
    document.querySelector('#host').append(w);
  });
  const settle = (h) => page.waitForFunction((hh) => {
    const w = document.getElementById('w');
    const heads = w?.shadowRoot?.querySelector('mha-heads');
    return w?.result?.heads === hh && heads && heads.shadowRoot.querySelectorAll('mha-heatmap').length === hh &&
      [...heads.shadowRoot.querySelectorAll('mha-heatmap')].every((m) => m.shadowRoot?.querySelector('.legend .hi'));
  }, h, { timeout: 60_000 });
  const read = () => page.evaluate(() => {
    const heads = document.getElementById('w').shadowRoot.querySelector('mha-heads');
    return { ends: [...heads.shadowRoot.querySelectorAll('mha-heatmap')].map((m) => m.shadowRoot.querySelector('.legend .hi').textContent),
      note: heads.shadowRoot.querySelector('[part="scale-note"]').textContent.trim(), weights: Array.from(document.getElementById('w').result.weights.data) };
  });
  await settle(1);
  let got = await read();
  assert.deepEqual(got.ends, ['1.00']);
  assert.match(got.note, /^Colour: 0 to 1, the same scale for every head/);
  await page.evaluate(() => document.getElementById('w').shadowRoot.querySelector('button[data-h="8"]').click());
  await settle(8);
  assert.deepEqual((await read()).ends, Array(8).fill('1.00'));
  // per-map: each legend ends at its head's largest weight, as the engine computed it
  await page.evaluate(() => document.getElementById('w').setAttribute('scale', 'per-map'));
  await page.waitForFunction(() => document.getElementById('w').shadowRoot.querySelector('mha-heads').scaleInUse === 'per-map');
  await page.evaluate(async () => { const h = document.getElementById('w').shadowRoot.querySelector('mha-heads'); await h.updateComplete; for (const m of h.shadowRoot.querySelectorAll('mha-heatmap')) await m.updateComplete; });
  got = await read();
  const per = 25;
  assert.deepEqual(got.ends, Array.from({ length: 8 }, (_, j) => Math.max(...got.weights.slice(j * per, (j + 1) * per)).toFixed(2)));
  assert.ok(got.ends.some((e) => e !== '1.00'));
  assert.deepEqual(errors, []);
  await context.close();
});

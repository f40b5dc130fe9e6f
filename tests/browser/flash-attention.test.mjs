// <mha-flash-attention> alone on its example page (web/site/examples/flash-attention.html) under the
// strict CSP: the replay's output after the last tile equals the engine's full-softmax head output
// (layer.trace through the JS API, in the same page), for both heads and every tile size; the
// running values follow the online-softmax recurrence; keyboard only (slider, buttons, selects);
// the live status changes with each step; Play animates, and with reduced motion jumps to the end;
// a bad attribute shows one message naming it; axe-clean and no overflow at 390 px, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, checkNarrowPage, openExample, deepFocus } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = (page) => page.waitForFunction(() => document.querySelector('mha-flash-attention')?.replay, null, { timeout: 60_000 });
const el = 'mha-flash-attention';

/** The element's replay and the engine's head outputs of the example's layer, computed in the page. */
const read = (page) => page.evaluate(async () => {
  const api = await import('/dist/mha-lesson-elements.js');
  const mha = await api.getEngine();
  const layer = mha.createLayer(api.restaurantLayerOptions());
  try {
    const tr = layer.trace(api.X0);
    const e = document.querySelector('mha-flash-attention');
    return {
      step: e.step, tiles: e.replay.tiles.length, head: e.replay.head, tile: e.replay.tileSize, output: e.replay.output,
      engine: tr.heads.map((h) => api.toMatrix(h.output)),
      status: e.shadowRoot.querySelector('[part="status"]').textContent.trim(),
      check: e.shadowRoot.querySelector('[part="check"]').dataset.maxDiff ?? null,
      shownOut: [...e.shadowRoot.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].slice(-e.replay.output[0].length).map((td) => Number(td.dataset.value))),
    };
  } finally { layer.dispose(); }
});

test('the last tile ends on the engine\'s full softmax, for both heads and every tile size; keyboard only; the status follows', async () => {
  const { page, errors } = await openExample(env, 'flash-attention.html');
  await ready(page);
  let r = await read(page);
  assert.deepEqual([r.step, r.tiles, r.head, r.tile], [0, 3, 0, 1]);
  assert.match(r.status, /^No key read yet: every row starts with m = −∞, ℓ = 0/);
  // keyboard: Tab to the slider, arrows move one tile, End goes to the last
  // Tab from the top of the page reaches the slider (selects, Previous come first)
  let f = null;
  for (let i = 0; i < 12 && f?.label !== 'Tiles read'; i++) {
    await page.keyboard.press('Tab');
    f = await deepFocus(page);
  }
  assert.deepEqual([f?.tag, f?.label], ['input', 'Tiles read'], 'the slider is reached by Tab');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('mha-flash-attention').step === 1);
  r = await read(page);
  assert.match(r.status, /^Tile 1 of 3: the key of Alex; the first scores set m, ℓ and the accumulator\.$/);
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.querySelector('mha-flash-attention').step === 3);
  for (const head of [1, 2]) {
    for (const tile of [1, 2, 3]) {
      await page.locator(`${el} select[name="head"]`).selectOption(String(head));
      await page.locator(`${el} select[name="tile"]`).selectOption(String(tile));
      await page.waitForFunction(([h, t]) => { const e = document.querySelector('mha-flash-attention'); return e.replay.head === h - 1 && e.replay.tileSize === t; }, [head, tile]);
      await page.locator(`${el} button.next`).click({ clickCount: 3 });
      await page.evaluate(() => document.querySelector('mha-flash-attention').goTo(99));
      r = await read(page);
      assert.equal(r.tiles, Math.ceil(3 / tile));
      assert.equal(r.step, r.tiles);
      r.output.forEach((row, i) => row.forEach((v, c) => assert.ok(Math.abs(v - r.engine[head - 1][i][c]) < 1e-5, `head ${head} tile ${tile} [${i}][${c}]: ${v} vs ${r.engine[head - 1][i][c]}`)));
      assert.deepEqual(r.shownOut, r.output, 'the table shows the outputs');
      assert.ok(Number(r.check) < 1e-5 && Number(r.check) >= 0, `max difference ${r.check}`);
      assert.match(r.status, /Every key is read: output = accumulator \/ ℓ\.$/);
    }
  }
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
});

test('Play: animated without a reduced-motion preference, at once with it; a bad attribute names itself', async () => {
  // the helper's pages prefer reduced motion: Play goes to the last tile at once
  const { page, errors } = await openExample(env, 'flash-attention.html');
  await ready(page);
  await page.locator(`${el} button.play`).click();
  assert.equal(await page.evaluate(() => document.querySelector('mha-flash-attention').step), 3);
  assert.equal(await page.locator(`${el} button.play`).getAttribute('aria-pressed'), 'false');
  // a bad tile: one message naming it, the last valid value kept
  await page.evaluate(() => document.querySelector('mha-flash-attention').setAttribute('tile', '9'));
  await page.locator(`${el} [part="error"][data-attr="tile"]`).waitFor();
  assert.match(await page.locator(`${el} [part="error"]`).textContent(), /^tile: expected a whole number from 1 to 3 \(keys per tile B_c\), got "9"$/);
  assert.equal(await page.evaluate(() => document.querySelector('mha-flash-attention').replay.tileSize), 1);
  assert.deepEqual(errors, []);
  // without the preference: Play is a toggle that advances one tile at a time
  const context = await env.browser.newContext({ reducedMotion: 'no-preference' });
  const p2 = await context.newPage();
  await p2.goto(`${env.url}examples/flash-attention.html`);
  await ready(p2);
  await p2.locator(`${el} button.play`).click();
  assert.equal(await p2.locator(`${el} button.play`).getAttribute('aria-pressed'), 'true');
  assert.equal(await p2.evaluate(() => document.querySelector('mha-flash-attention').step), 0);
  await p2.waitForFunction(() => document.querySelector('mha-flash-attention').step === 1, null, { timeout: 5000 });
  await p2.locator(`${el} button.play`).click();   // pause
  assert.equal(await p2.locator(`${el} button.play`).getAttribute('aria-pressed'), 'false');
  const s = await p2.evaluate(() => document.querySelector('mha-flash-attention').step);
  await p2.waitForTimeout(1800);
  assert.equal(await p2.evaluate(() => document.querySelector('mha-flash-attention').step), s, 'paused');
  await context.close();
});

test('390 px, light and dark: no overflow, axe-clean', async () => {
  await checkNarrowPage(env, { page: 'examples/flash-attention.html', tag: el, ready });
});

// <mha-phase-change> on its example page (web/site/examples/phase-change.html): nothing fetched
// before the element is near the viewport (the placeholder names the file and its manifest size);
// the slider is keyboard operable and each step's heatmaps are the engine's attention weights of
// that checkpoint on the text (an independent load of the same checkpoint here), different from
// step to step; Play walks the checkpoints (and, with reduced motion, jumps to the last); the charts'
// values line is the file's; the element stays within 700 px at 1280 px; axe-clean light and dark
// at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, checkNarrowPage, ROOT } from './helpers.mjs';

const FILE = 'phase-change.safetensors';
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'web', 'lib', 'models', 'index.json'), 'utf8'));
const BYTES = manifest.other.find((m) => m.file === FILE).bytes;

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = (page) => page.waitForFunction(() => {
  const el = document.querySelector('mha-phase-change');
  return el && (el.error || (el.shown && el.shadowRoot.querySelectorAll('mha-heatmap').length > 0));
}, null, { timeout: 150_000 });

/** The element's state, and the maps of the step shown recomputed from an independent load. */
const read = (page) => page.evaluate(async () => {
  const api = await import('/dist/mha-trained.js');
  const el = document.querySelector('mha-phase-change');
  const s = el.shown;
  const ck = api.readCheckpoints(new Uint8Array(await (await fetch(api.DEFAULT_PHASE_URL)).arrayBuffer()));
  const mha = await api.getEngine();
  const lm = await mha.loadModel(ck.file(s.step));
  try {
    const r = lm.run(el.text);
    const maps = [...el.shadowRoot.querySelectorAll('mha-heatmap')];
    const h = lm.config.numHeads;
    let maxErr = 0;
    maps.forEach((m, k) => {
      const A = r.attention[Math.floor(k / h)];
      const T = A.shape[1];
      const w = m.weights;
      for (let q = 0; q < T; q++) for (let t = 0; t < T; t++) maxErr = Math.max(maxErr, Math.abs(w.data[q * T + t] - A.data[(k % h) * T * T + q * T + t]));
    });
    const row = el.checkpoints.find((c) => c.step === s.step);
    const slider = el.shadowRoot.querySelector('[part="slider"]');
    return {
      step: s.step, steps: el.checkpoints.map((c) => c.step), maps: maps.length, maxErr,
      first: Array.from(maps[maps.length - 1].weights.data.slice(0, 200)),
      values: el.shadowRoot.querySelector('[part="values"]').textContent.trim(),
      want: `copy 1 ${row.firstCopyBpc.toFixed(2)}, copy 2 ${row.secondCopyBpc.toFixed(2)} bits per character; best previous-token score ${row.previous.toFixed(2)}, best induction score ${row.induction.toFixed(2)}.`,
      sliderValue: Number(slider.value), valuetext: slider.getAttribute('aria-valuetext'),
      height: el.getBoundingClientRect().height,
    };
  } finally {
    lm.dispose();
  }
});

const stepShown = (page, step) => page.waitForFunction((s) => document.querySelector('mha-phase-change').shown?.step === s, step, { timeout: 60_000 });

test('fetched only when near; slider and keyboard pick checkpoints whose maps are the engine\'s; compact', { timeout: 300_000 }, async () => {
  const { page, errors, context } = await env.newPage({ viewport: { width: 1280, height: 900 } });
  const fetched = [];
  page.on('request', (r) => { if (r.url().endsWith('.safetensors')) fetched.push(path.basename(new URL(r.url()).pathname)); });
  // the example page with 3,000 px of text above the element: it is far from the viewport
  await page.route('**/examples/phase-change.html', async (route) => {
    const res = await route.fetch();
    const body = (await res.text()).replace('<mha-phase-change>', '<div id="spacer" style="height: 3000px"></div><mha-phase-change>');
    await route.fulfill({ response: res, body });
  });
  await page.goto(`${env.url}examples/phase-change.html`);
  await page.waitForFunction(() => document.querySelector('mha-phase-change')?.shadowRoot?.querySelector('[part="size"]'));
  await page.waitForTimeout(1500);
  assert.deepEqual(fetched, [], 'nothing fetched while the element is far');
  const size = await page.evaluate(() => document.querySelector('mha-phase-change').shadowRoot.querySelector('[part="size"]').dataset.bytes);
  assert.equal(Number(size), BYTES, 'the placeholder gives the manifest\'s size');
  await page.evaluate(() => document.querySelector('mha-phase-change').scrollIntoView());
  await ready(page);
  assert.deepEqual(fetched, [FILE], 'the checkpoints file, once');

  let c = await read(page);
  assert.ok(c.steps.length >= 40, `${c.steps.length} checkpoints`);
  assert.equal(c.step, c.steps[c.steps.length - 1], 'the last checkpoint is shown first');
  assert.equal(c.maps, 4, 'two layers of two heads');
  assert.ok(c.maxErr < 1e-6, `maps = the engine's weights of that checkpoint (${c.maxErr})`);
  assert.ok(c.values.endsWith(c.want), c.values);
  assert.ok(c.height <= 700, `${c.height} px tall at 1280 px`);
  const last = c.first;
  // every map whole in its column, its legend's "1.00" inside it, at the widths of the element's three layouts
  for (const width of [1280, 1024, 800, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const cut = await page.evaluate(() => [...document.querySelector('mha-phase-change').shadowRoot.querySelectorAll('.map')].map((box) => {
      const hi = box.querySelector('mha-heatmap').shadowRoot.querySelector('.legend .hi');
      return { scroll: box.scrollWidth - box.clientWidth, hi: Math.round(hi.getBoundingClientRect().right - box.getBoundingClientRect().right), text: hi.textContent };
    }));
    for (const m of cut) {
      assert.ok(m.scroll <= 0 && m.hi <= 0 && m.text === '1.00', `${width} px: a map cut off by ${m.scroll} px, its legend's ${m.text} by ${m.hi} px`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  // keyboard: Home, then ArrowRight
  await page.evaluate(() => document.querySelector('mha-phase-change').shadowRoot.querySelector('[part="slider"]').focus());
  await page.keyboard.press('Home');
  await stepShown(page, c.steps[0]);
  c = await read(page);
  assert.equal(c.sliderValue, 0);
  assert.ok(c.maxErr < 1e-6, `${c.maxErr}`);
  assert.ok(c.values.startsWith('Step 0 of') && c.values.endsWith(c.want), c.values);
  assert.notDeepEqual(c.first, last, 'the maps change with the step');
  await page.keyboard.press('ArrowRight');
  await stepShown(page, c.steps[1]);
  c = await read(page);
  assert.equal(c.sliderValue, 1);
  assert.match(c.valuetext, new RegExp(`^step ${c.steps[1].toLocaleString('en-US')} \\(checkpoint 2 of ${c.steps.length}\\)$`));

  // reduced motion (this context's setting): Play jumps to the last checkpoint
  await page.evaluate(() => document.querySelector('mha-phase-change').shadowRoot.querySelector('[part="play"]').click());
  await stepShown(page, c.steps[c.steps.length - 1]);
  assert.equal(await page.evaluate(() => document.querySelector('mha-phase-change').playing), false);
  // the step attribute: the nearest checkpoint is shown
  await page.evaluate((s) => document.querySelector('mha-phase-change').setAttribute('step', String(s)), c.steps[10] + 1);
  await stepShown(page, c.steps[10]);
  c = await read(page);
  assert.ok(c.maxErr < 1e-6 && c.sliderValue === 10, `${c.maxErr} ${c.sliderValue}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Play walks the checkpoints one by one and Pause stops', { timeout: 200_000 }, async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'no-preference' });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${env.url}examples/phase-change.html`);
  await ready(page);
  const seen = await page.evaluate(async () => {
    const el = document.querySelector('mha-phase-change');
    const steps = [];
    el.addEventListener('change', (e) => steps.push(e.detail.step));
    el.shadowRoot.querySelector('[part="play"]').click();   // at the last checkpoint: starts from the first
    await new Promise((r) => setTimeout(r, 2000));
    const playing = el.playing;
    el.shadowRoot.querySelector('[part="play"]').click();   // Pause
    const n = steps.length;
    await new Promise((r) => setTimeout(r, 1000));
    return { steps, playing, n, after: steps.length, all: el.checkpoints.map((c) => c.step), paused: !el.playing };
  });
  assert.ok(seen.playing, 'playing');
  assert.ok(seen.paused, 'paused');
  assert.equal(seen.after, seen.n, 'nothing changes after Pause');
  assert.ok(seen.n >= 3, `${seen.n} checkpoints in 2 s`);
  assert.deepEqual(seen.steps, seen.all.slice(0, seen.n), 'from the first checkpoint, one by one');
  assert.deepEqual(errors, []);
  await context.close();
});

test('390 px, light and dark: no overflow, axe-clean, no console error', { timeout: 400_000 }, async () => {
  await checkNarrowPage(env, { page: 'examples/phase-change.html', tag: 'mha-phase-change', ready });
});

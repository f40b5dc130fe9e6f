// <mha-model-view> in Chromium, on a GPT-2-small-shaped grid of heads: a character model of 12 layers ×
// 12 heads with random weights and probe texts (tests/helpers/random-charlm.mjs, made here, never
// committed), reading 128 characters, served at /mv/ by a playwright route on a page with the
// examples' strict CSP:
// - the run equals the JS API's own run of the same file; 144 thumbnails of 64 × 64 pixels whose colours
//   are viridis of the block maxima (checked against d3's viridis); painted ≤ 1 s after the run; the
//   element ≤ 2 viewports (1,800 px) tall at 1280 × 900;
// - the grid by keyboard: one Tab stop, arrows, Home/End, Ctrl+End, PageUp, Enter opens the right head
//   with the API's values and tokens, Escape closes it and gives the focus back; a click opens one;
// - the layer and head filters; <mha-trained-heads layer="all"> shows the same model as this view;
// - a run set as a property fetches nothing, and the renderer grows by ≤ 300 MB with the view and a head open;
// - axe-core (WCAG 2.0/2.1 A and AA rules) finds nothing in the element, light and dark, closed and open;
//   the example page at 390 px (no sideways scroll, no serious violation).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { interpolateViridis } from 'd3-scale-chromatic';
import { rgb } from 'd3-color';
import { setup, ROOT, ARTIFACTS, checkNarrowPage } from './helpers.mjs';
import { randomCharModel } from '../helpers/random-charlm.mjs';

const MODEL = Buffer.from(randomCharModel({ layers: 12, heads: 12 }));
const URL_ = '/mv/m12x12.safetensors';
const TEXT = 'the old fox hid by the red barn, and the old fox hid by the red barn. then the old fox ran off to the wood. the end of it all!!!';
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/** A page of the site under the strict CSP, emptied, the trained bundle loaded, the model served at /mv/. */
async function open({ viewport = { width: 1280, height: 900 }, colorScheme = 'light', bypassCSP = false } = {}) {
  let p;
  if (bypassCSP) {
    const context = await env.browser.newContext({ bypassCSP, colorScheme, viewport, reducedMotion: 'reduce' });
    p = { page: await context.newPage(), errors: [], context };
    p.page.on('pageerror', (e) => p.errors.push(e.message));
  } else {
    p = await env.newPage({ viewport, colorScheme });
  }
  p.requests = [];
  p.page.on('request', (r) => { if (/\.safetensors$/.test(new URL(r.url()).pathname)) p.requests.push(new URL(r.url()).pathname); });
  await p.page.route('**/mv/**', (route) => route.fulfill({ status: 200, contentType: 'application/octet-stream', body: MODEL }));
  await p.page.goto(`${env.url}examples/causal-mask.html`);
  await p.page.evaluate(async () => {
    document.querySelector('main').replaceChildren();
    await import('/dist/mha-trained.js');
  });
  return p;
}

/** Adds <mha-model-view model=URL_ text=TEXT> (eager) and waits for its first painted run: {computed, drawn, frame} times. */
async function addView(page, attrs = {}) {
  return page.evaluate(([url, text, a]) => new Promise((resolve, reject) => {
    const el = document.createElement('mha-model-view');
    el.id = 'mv';
    el.setAttribute('model', url);
    el.setAttribute('text', text);
    el.setAttribute('loading', 'eager');
    for (const [k, v] of Object.entries(a)) el.setAttribute(k, v);
    el.addEventListener('mha-error', (e) => reject(new Error(e.detail.error.message)));
    el.addEventListener('mha-computed', () => {
      const computed = performance.now();
      el.updateComplete.then(() => {
        const drawn = performance.now();
        requestAnimationFrame(() => resolve({ computed, drawn, frame: performance.now() }));
      });
    }, { once: true });
    document.querySelector('main').append(el);
  }), [URL_, TEXT, attrs]);
}

/**
 * The JS API's own run of the same file and text (an independent load of the model), kept in the page as
 * `window.__api` ({tokens, att: per layer Float32Array [h, T, T], shape}); returns its shape and tokens.
 */
function apiRun(page) {
  return page.evaluate(async ([url, text]) => {
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const lm = await mha.loadModel(new Uint8Array(await (await fetch(url)).arrayBuffer()));
    try {
      const r = lm.run(text);
      window.__api = { tokens: r.tokens, att: r.attention.map((a) => a.data.slice()), shape: r.attention[0].shape };
      window.__maxDiff = (a, b) => { let m = a.length === b.length ? 0 : Infinity; for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i])); return m; };
      return { tokens: r.tokens, shape: r.attention[0].shape };
    } finally {
      lm.dispose();
    }
  }, [URL_, TEXT]);
}

/** The focused cell of the view (through the shadow root): {layer, head} or a description of what has focus. */
const focused = (page) => page.evaluate(() => {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  if (el?.getAttribute('role') === 'gridcell') return { layer: Number(el.dataset.layer), head: Number(el.dataset.head) };
  return { tag: el?.tagName.toLowerCase(), cls: el?.className ?? '' };
});

test('144 heads at 128 characters: the API\'s run, 64-pixel thumbnails in viridis of the block maxima, painted ≤ 1 s after the run, ≤ 2 viewports tall', { timeout: 300_000 }, async () => {
  const { page, errors, context } = await open();
  const t = await addView(page);
  const api = await apiRun(page);
  const got = await page.evaluate(() => {
    const el = document.getElementById('mv');
    const canvases = [...el.shadowRoot.querySelectorAll('canvas[data-layer]')];
    return {
      diff: Math.max(...el.result.attention.map((a, l) => window.__maxDiff(a.data, window.__api.att[l]))), shape: el.result.attention[0].shape,
      canvases: canvases.length, sizes: [...new Set(canvases.map((c) => `${c.width}x${c.height}`))],
      css: [...new Set(canvases.map((c) => Math.round(c.getBoundingClientRect().width)))],
      height: el.getBoundingClientRect().height, cells: el.shadowRoot.querySelectorAll('[role=gridcell]').length,
      stops: el.shadowRoot.querySelectorAll('[role=gridcell][tabindex="0"]').length,
    };
  });
  assert.deepEqual(got.shape, [12, 128, 128]);
  assert.deepEqual(api.shape, [12, 128, 128]);
  assert.ok(got.diff < 1e-6, `the element's run differs from the API's by ${got.diff}`);
  assert.equal(got.canvases, 144);
  assert.equal(got.cells, 144);
  assert.equal(got.stops, 1, 'one Tab stop in the grid');
  assert.deepEqual(got.sizes, ['64x64']);
  assert.equal(got.css.length, 1, `every thumbnail the same size on screen: ${got.css}`);
  const paint = t.frame - t.computed;
  console.log(`# painted ${paint.toFixed(0)} ms after the run (drawn ${(t.drawn - t.computed).toFixed(0)} ms); element ${got.height.toFixed(0)} px tall, thumbnails ${got.css[0]} px`);
  assert.ok(paint <= 1000, `thumbnails painted ${paint} ms after the run`);
  assert.ok(got.height <= 1800, `element ${got.height} px tall at 1280 × 900`);
  // the colours of a thumbnail: viridis of each 2 × 2 block's largest weight (head 8 of layer 6)
  const { px: pixels, ...px } = await page.evaluate(() => {
    const el = document.getElementById('mv');
    const c = el.shadowRoot.querySelector('canvas[data-layer="5"][data-head="7"]');
    return { px: Array.from(c.getContext('2d').getImageData(0, 0, 64, 64).data), head: Array.from(window.__api.att[5].subarray(7 * 128 * 128, 8 * 128 * 128)) };
  });
  const T = 128, head = px.head;
  let worst = 0;
  for (let r = 0; r < 64; r++) {
    for (let c = 0; c < 64; c++) {
      const v = Math.max(head[2 * r * T + 2 * c], head[2 * r * T + 2 * c + 1], head[(2 * r + 1) * T + 2 * c], head[(2 * r + 1) * T + 2 * c + 1]);
      const want = rgb(interpolateViridis(v));
      const i = 4 * (r * 64 + c);
      worst = Math.max(worst, Math.abs(pixels[i] - want.r), Math.abs(pixels[i + 1] - want.g), Math.abs(pixels[i + 2] - want.b));
    }
  }
  assert.ok(worst <= 2, `thumbnail colours differ from viridis of the block maxima by up to ${worst}`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'model-view-1280.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard: one Tab stop, arrows, Home/End, Ctrl+End, PageUp; Enter opens the right head with the API\'s values, Escape gives the focus back; a click opens one', { timeout: 300_000 }, async () => {
  const { page, errors, context } = await open();
  await addView(page);
  const api = await apiRun(page);
  await page.locator('#mv select[part="head-filter"]').focus();
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(page), { layer: 0, head: 0 });
  const steps = [['ArrowRight', 0, 1], ['ArrowRight', 0, 2], ['ArrowDown', 1, 2], ['ArrowDown', 2, 2], ['ArrowDown', 3, 2], ['ArrowLeft', 3, 1],
    ['End', 3, 11], ['ArrowRight', 3, 11], ['Control+End', 11, 11], ['ArrowDown', 11, 11], ['Home', 11, 0], ['PageUp', 7, 0], ['ArrowRight', 7, 1]];
  for (const [key, layer, head] of steps) {
    await page.keyboard.press(key);
    assert.deepEqual(await focused(page), { layer, head }, `after ${key}`);
  }
  assert.equal(await page.evaluate(() => document.getElementById('mv').shadowRoot.querySelectorAll('[role=gridcell][tabindex="0"]').length), 1);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('mv').shadowRoot.querySelector('dialog[open] mha-heatmap')?.weights);
  const shown = await page.evaluate(() => {
    const el = document.getElementById('mv');
    const d = el.shadowRoot.querySelector('dialog');
    const m = d.querySelector('mha-heatmap');
    let f = document.activeElement;
    while (f?.shadowRoot?.activeElement) f = f.shadowRoot.activeElement;
    return { opened: el.opened, title: d.querySelector('h3').textContent, label: m.getAttribute('label'), tokens: m.tokens,
      diff: window.__maxDiff(m.weights.data, window.__api.att[7].subarray(128 * 128, 2 * 128 * 128)), shape: m.weights.shape,
      focus: f?.className, modal: d.matches(':modal') };
  });
  assert.deepEqual(shown.opened, [7, 1]);
  assert.equal(shown.title, 'Layer 8, head 2');
  assert.equal(shown.label, 'Layer 8, head 2');
  assert.deepEqual(shown.shape, [128, 128]);
  assert.ok(shown.diff < 1e-6, `the opened head's weights differ from the API's layer 8, head 2 by ${shown.diff}`);
  assert.deepEqual(shown.tokens, api.tokens.map((c) => (c === ' ' ? '␣' : c)));
  assert.ok(shown.modal, 'a modal dialog');
  assert.equal(shown.focus, 'close', 'the focus moves into the dialog');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.getElementById('mv').shadowRoot.querySelector('dialog'));
  assert.deepEqual(await focused(page), { layer: 7, head: 1 }, 'the focus returns to the head opened');
  assert.equal(await page.evaluate(() => document.getElementById('mv').opened), null);
  // Tab leaves the grid at once (one stop)
  await page.keyboard.press('Tab');
  assert.equal((await focused(page)).layer, undefined);
  // a click opens a head too, the Close button closes it
  await page.locator('#mv [role=gridcell][data-layer="2"][data-head="9"]').click();
  await page.waitForFunction(() => document.getElementById('mv').shadowRoot.querySelector('dialog[open]'));
  assert.deepEqual(await page.evaluate(() => document.getElementById('mv').opened), [2, 9]);
  await page.locator('#mv dialog button.close').click();
  await page.waitForFunction(() => !document.getElementById('mv').shadowRoot.querySelector('dialog'));
  assert.deepEqual(await focused(page), { layer: 2, head: 9 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('filters: one layer, then one head of it, then all again; the attributes follow; trained-heads layer="all" shows this view', { timeout: 300_000 }, async () => {
  const { page, errors, context } = await open();
  await addView(page);
  const cells = () => page.evaluate(() => [...document.getElementById('mv').shadowRoot.querySelectorAll('[role=gridcell]')]
    .map((c) => `${c.dataset.layer}:${c.dataset.head}`));
  await page.locator('#mv select[part="layer"]').selectOption('3');
  assert.deepEqual(await cells(), Array.from({ length: 12 }, (_, j) => `2:${j}`));
  assert.equal(await page.locator('#mv').getAttribute('layer'), '3');
  await page.locator('#mv select[part="head-filter"]').selectOption('5');
  assert.deepEqual(await cells(), ['2:4']);
  assert.equal(await page.locator('#mv').getAttribute('head'), '5');
  await page.locator('#mv select[part="layer"]').selectOption('all');
  assert.deepEqual(await cells(), Array.from({ length: 12 }, (_, l) => `${l}:4`));
  await page.locator('#mv select[part="head-filter"]').selectOption('all');
  assert.equal((await cells()).length, 144);
  // the filtered grid still paints its thumbnails
  const painted = await page.evaluate(() => [...document.getElementById('mv').shadowRoot.querySelectorAll('canvas')].every((c) => c.width === 64));
  assert.ok(painted);
  // <mha-trained-heads layer="all"> on this model: the model view, no full-size map
  await page.evaluate(([url, text]) => {
    const el = document.createElement('mha-trained-heads');
    el.id = 'th';
    for (const [k, v] of Object.entries({ model: url, text, layer: 'all', 'no-picker': '', loading: 'eager' })) el.setAttribute(k, v);
    document.querySelector('main').prepend(el);
  }, [URL_, TEXT]);
  await page.waitForFunction(() => document.getElementById('th').shadowRoot?.querySelector('mha-model-view')?.shadowRoot
    ?.querySelectorAll('canvas[data-layer]').length === 144, null, { timeout: 120_000 });
  const th = await page.evaluate(() => {
    const el = document.getElementById('th');
    const mv = el.shadowRoot.querySelector('mha-model-view');
    return { maps: el.shadowRoot.querySelectorAll('mha-heatmap').length, height: mv.getBoundingClientRect().height, same: mv.result === el.result };
  });
  assert.equal(th.maps, 0);
  assert.ok(th.same);
  assert.ok(th.height <= 1800, `the model view in trained-heads is ${th.height} px tall`);
  assert.deepEqual(errors, []);
  await context.close();
});

/** Resident memory of Chromium's renderer processes, MB (Linux /proc). */
async function rendererMB() {
  const cdp = await env.browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  await cdp.detach();
  let kb = 0;
  for (const p of processInfo.filter((x) => x.type === 'renderer')) {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.id}/status`, 'utf8'));
    if (m) kb += Number(m[1]);
  }
  return kb / 1024;
}

test('a run set as a property: nothing fetched, the same thumbnails; the renderer grows by ≤ 300 MB with the view and a head open', { timeout: 300_000 }, async () => {
  const { page, errors, context, requests } = await open();
  await page.evaluate(async ([url, text]) => {
    const { getEngine } = await import('/dist/mha-components.js');
    const lm = await (await getEngine()).loadModel(new Uint8Array(await (await fetch(url)).arrayBuffer()));
    window.__run = lm.run(text);
  }, [URL_, TEXT]);
  await page.waitForTimeout(500);
  const before = await rendererMB();
  const t = await page.evaluate(async () => {
    const el = document.createElement('mha-model-view');
    el.id = 'mv';
    el.result = window.__run;
    document.querySelector('main').append(el);
    const t0 = performance.now();
    await el.updateComplete;
    await new Promise((r) => requestAnimationFrame(r));
    const painted = performance.now() - t0;
    el.open(11, 11);
    await el.updateComplete;
    await el.shadowRoot.querySelector('mha-heatmap').updateComplete;
    await new Promise((r) => requestAnimationFrame(r));
    return { painted, canvases: el.shadowRoot.querySelectorAll('canvas[data-layer]').length, lm: el.lm, text: !!el.shadowRoot.querySelector('textarea') };
  });
  await page.waitForTimeout(500);
  const grown = (await rendererMB()) - before;
  console.log(`# a run set as a property: painted in ${t.painted.toFixed(0)} ms; renderer grew ${grown.toFixed(1)} MB with the view and a head open`);
  assert.equal(t.canvases, 144);
  assert.equal(t.lm, null);
  assert.equal(t.text, false, 'no text field: the page owns the run');
  assert.ok(t.painted <= 1000);
  assert.deepEqual(requests, [URL_], 'only the test\'s own fetch of the model');
  assert.ok(grown <= 300, `renderer grew ${grown} MB`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('axe-core, WCAG 2.0/2.1 A and AA rules: no violation in the element, light and dark, with and without a head open', { timeout: 400_000 }, async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context } = await open({ colorScheme, bypassCSP: true });
    await addView(page);
    await page.addScriptTag({ content: readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const run = () => page.evaluate(async (tags) => (await window.axe.run(document.getElementById('mv'), { runOnly: { type: 'tag', values: tags } }))
      .violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 2).map((n) => n.target.join(' ')).join(', ')}`), WCAG);
    assert.deepEqual(await run(), [], `${colorScheme}, closed`);
    await page.evaluate(() => document.getElementById('mv').open(4, 4));
    await page.waitForFunction(() => document.getElementById('mv').shadowRoot.querySelector('dialog[open] mha-heatmap')?.weights);
    assert.deepEqual(await run(), [], `${colorScheme}, a head open`);
    await page.screenshot({ path: path.join(ARTIFACTS, `model-view-open-${colorScheme}.png`) });
    await context.close();
  }
});

test('the example page at 390 px: no sideways scroll, no serious axe violation, light and dark', { timeout: 400_000 }, async () => {
  await checkNarrowPage(env, {
    page: 'examples/model-view.html', tag: 'mha-model-view',
    ready: (page) => page.waitForFunction(() => document.querySelector('mha-model-view')?.shadowRoot?.querySelectorAll('canvas[data-layer]').length === 8,
      null, { timeout: 120_000 }),
  });
});

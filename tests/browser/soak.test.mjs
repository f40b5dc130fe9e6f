// Soak: 2,000 random interactions across the whole lesson page (typing in the trained-heads text
// and phrase, switching heads off and on, generating, the widget's h buttons, the restaurant
// stepper, the KV-cache form, section links), then: no console error, and neither the JS heap
// (after a forced GC) nor the wasm heap in use grew beyond a stated bound.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, reveal } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

// Bounds. Wasm: the runner keeps one variant per layer of the heads switched off (~0.3 MB each)
// and the KV caches of one generator; the engine's workspace is sized by the largest call.
// JS: heatmap DOM and the runner's arrays are replaced, not accumulated.
const WASM_BOUND = 2 << 20;
const JS_BOUND = 4 << 20;
const INTERACTIONS = Number(process.env.SOAK_N) || 2000;

test(`${INTERACTIONS} random interactions: no console error, JS heap growth < ${JS_BOUND >> 20} MB, wasm heap in use growth < ${WASM_BOUND >> 20} MB`, { timeout: 300_000 }, async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(`${env.url}`);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60_000 });
  await reveal(page, ['#explorer', '#induction', '#generate', '#twins']);   // trained-model elements fetch when seen
  await page.waitForFunction(() => document.querySelector('#explorer').textScores && document.querySelector('#twins').rows, null, { timeout: 90_000 });
  const cdp = await context.newCDPSession(page);
  // The heap after rendering settles and several full GCs (DOM garbage needs more than one), the
  // least of three readings.
  // Both readings are taken in the same state (default texts, every head on, generation reset),
  // since the heatmaps' DOM grows with the square of the text length.
  const normalize = () => page.evaluate(async () => {
    const $ = (host, q) => document.querySelector(host).shadowRoot.querySelector(q);
    const set = (el, v) => { el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); };
    set($('#explorer', 'textarea'), 'The cat sat on the mat. The cat sat on the mat.');
    set($('#induction', 'input'), 'zebra quilts vex jumpy');
    $('#explorer', 'button.all-on').click();
    await document.querySelector('#explorer').computeComplete;   // its model answers from the engine worker
    await document.querySelector('#generate').computeComplete;
    $('#generate', 'button.reset').click();
    document.querySelector('#widget').shadowRoot.querySelector('button[data-h="2"]').click();
    await new Promise(requestAnimationFrame);
  });
  const measure = async () => {
    await normalize();
    let usedSize = Infinity;
    for (let i = 0; i < 3; i++) {
      await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
      for (let k = 0; k < 3; k++) await cdp.send('HeapProfiler.collectGarbage');
      usedSize = Math.min(usedSize, (await cdp.send('Runtime.getHeapUsage')).usedSize);
    }
    // the page's engine and the engine worker that holds the trained models
    const wasm = await page.evaluate(async () => window.mhaLesson.engine.memory().inUseBytes + (await (await window.mhaLesson.models()).memory()).inUseBytes);
    return { js: usedSize, wasm };
  };
  // A first round warms every code path (JIT, caches of ablated layers) before the baseline.
  const run = (n, seed) => page.evaluate(async ({ n, seed }) => {
    let s = seed >>> 0;
    const rand = () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
    const pick = (a) => a[Math.floor(rand() * a.length)];
    const $ = (q) => document.querySelector(q);
    const $$ = (host, q) => [...document.querySelector(host).shadowRoot.querySelectorAll(q)];
    const one = (host, q) => $$(host, q)[0];
    const words = ['the ', 'cat ', 'sat ', 'on ', 'mat. ', 'zebra ', 'fox ', 'naps ', 'é', '\u{1F600}', '<b>', '  ', '.'];
    const setValue = (el, v) => { el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); };
    const actions = [
      () => { const t = one('#explorer', 'textarea'); setValue(t, (t.value + pick(words)).slice(-90)); },
      () => setValue(one('#explorer', 'textarea'), Array.from({ length: 1 + Math.floor(rand() * 60) }, () => pick(words)).join('').slice(0, 90)),
      () => setValue(one('#explorer', 'textarea'), ''),
      () => pick($$('#explorer', 'button[role="switch"]'))?.click(),
      () => one('#explorer', 'button.all-on')?.click(),
      () => setValue(one('#induction', 'input'), Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(words)).join('')),
      () => one('#generate', 'button.step1').click(),
      () => one('#generate', 'button.step10').click(),
      () => one('#generate', 'button.reset').click(),
      () => { const w = $('#widget'); pick([...w.shadowRoot.querySelectorAll('button[data-h]')]).click(); },
      () => pick($$('#stepper', 'button[data-step]')).click(),
      () => { const f = one('#kv', 'input[name="context"]'); setValue(f, String(1 + Math.floor(rand() * 100000))); f.dispatchEvent(new Event('change', { bubbles: true })); },
      () => pick([...document.querySelectorAll('.toc a')]).click(),
    ];
    const only = (window.__soakOnly || '').split(',').filter(Boolean).map(Number);
    const use = only.length ? actions.filter((_, i) => only.includes(i)) : actions;
    for (let i = 0; i < n; i++) {
      pick(use)();
      if (i % 25 === 24) await new Promise(requestAnimationFrame);
    }
    await new Promise((r) => setTimeout(r, 200));
  }, { n, seed });
  if (process.env.SOAK_ONLY) await page.evaluate((o) => { window.__soakOnly = o; }, process.env.SOAK_ONLY);
  await run(200, 1);
  const start = await measure();
  await run(INTERACTIONS, 2);
  const end = await measure();
  console.log(`# soak: JS heap ${(start.js / 1e6).toFixed(1)} → ${(end.js / 1e6).toFixed(1)} MB, wasm in use ${(start.wasm / 1e6).toFixed(2)} → ${(end.wasm / 1e6).toFixed(2)} MB`);
  assert.deepEqual(errors, []);
  assert.ok(end.wasm - start.wasm < WASM_BOUND, `wasm heap in use grew by ${end.wasm - start.wasm} bytes`);
  assert.ok(end.js - start.js < JS_BOUND, `JS heap grew by ${end.js - start.js} bytes`);
  // Still working: the page's loss follows a new text.
  await page.locator('#explorer textarea').fill('After the soak, still computing.');
  await page.waitForFunction(() => document.querySelector('#explorer').result?.tokens.length === 32);
  assert.ok(await page.evaluate(() => document.querySelector('#explorer').result.loss) > 0);
  await context.close();
});

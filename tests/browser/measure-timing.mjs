#!/usr/bin/env node
// Measures (not a test): time from navigation to the first heatmap of the widget, and the time to
// re-render after an h change, in headless Chromium. Usage: node tests/browser/measure-timing.mjs [runs]
import { chromium } from 'playwright-core';
import path from 'node:path';
import { startServer } from '../../scripts/serve.mjs';
import { ensureBuilt, ROOT, CHROMIUM, CHROMIUM_ARGS } from './helpers.mjs';

ensureBuilt();
const runs = Number(process.argv[2] ?? 5);
const server = await startServer({ port: 0, root: path.join(ROOT, 'web', 'site') });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });

// Polls every animation frame (from the first script on) for the widget's first heatmap cell.
const probe = () => {
  window.__firstHeatmap = null;
  const find = () => {
    const w = document.querySelector('mha-widget');
    const heads = w?.shadowRoot?.querySelector('mha-heads');
    const cell = heads?.shadowRoot?.querySelector('mha-heatmap')?.shadowRoot?.querySelector('[role="gridcell"]');
    if (cell) window.__firstHeatmap = performance.now();
    else requestAnimationFrame(find);
  };
  requestAnimationFrame(find);
};

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const page of ['', 'examples/embed.html']) {
  const first = [], rerender = [];
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await context.newPage();
    await p.addInitScript(probe);
    await p.goto(server.url + page);
    await p.waitForFunction(() => window.__firstHeatmap !== null);
    first.push(await p.evaluate(() => window.__firstHeatmap));
    for (const h of [1, 4, 8, 2]) {
      rerender.push(await p.evaluate((h) => new Promise((resolve) => {
        const w = document.querySelector('mha-widget');
        const t0 = performance.now();
        w.shadowRoot.querySelector(`button[data-h="${h}"]`).click();
        const check = () => {
          const maps = w.shadowRoot.querySelector('mha-heads')?.shadowRoot?.querySelectorAll('mha-heatmap') ?? [];
          const done = w.result?.heads === h && maps.length === h &&
            [...maps].every((m) => m.shadowRoot?.querySelectorAll('[role="gridcell"]').length === 25);
          // one more frame so the new cells have been painted
          if (done) requestAnimationFrame(() => resolve(performance.now() - t0));
          else requestAnimationFrame(check);
        };
        check();
      }), h));
    }
    await context.close();
  }
  console.log(`${page || 'lesson (index.html)'}: navigation → first heatmap median ${median(first).toFixed(0)} ms ` +
    `(min ${Math.min(...first).toFixed(0)}, max ${Math.max(...first).toFixed(0)}, n=${runs}); ` +
    `h change → re-rendered median ${median(rerender).toFixed(1)} ms (max ${Math.max(...rerender).toFixed(1)}, n=${rerender.length})`);
}
await browser.close();
await server.close();

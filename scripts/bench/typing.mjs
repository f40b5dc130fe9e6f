#!/usr/bin/env node
/**
 * How fast the lesson's trained-heads explorer (section 7) follows the keyboard.
 *
 *   node scripts/bench/typing.mjs [--keys 40] [--json]
 *
 * Serves web/site/ (scripts/serve.mjs, a free port), opens it in Debian's Chromium through
 * playwright-core at `#trained`, waits for `#trained[data-ready="true"]`, then types into the
 * section's text field one character at a time until it holds 96 characters (the model's context),
 * then keeps typing at 96 characters (each keystroke replaces the last character), `--keys` times.
 *
 * One keystroke is measured inside the page with performance.now(): from just before the field's
 * value is set and its `input` event dispatched, until every `<mha-heatmap>` under #trained has
 * finished its Lit update with the new weights and two requestAnimationFrame callbacks have run
 * (the second one runs after the frame that shows the new heatmaps was produced). The element's
 * model runs in the engine worker: the time includes the messages both ways and the model's
 * forward pass (`computeComplete` resolves once the result is drawn).
 *
 * The text field and the heatmaps are found robustly: `<mha-trained-heads>`'s shadow root first
 * (the section as an element), else `#trained-text`; heatmaps are every `mha-heatmap` under
 * #trained, piercing shadow roots. The page is ready when #trained has data-ready="true" or when
 * `<mha-trained-heads>` shows its text field and eight computed heatmaps.
 *
 * Prints the median and p90 at 96 characters, a few times on the way there, and the page's node
 * count (every node of the document and of every shadow root, and the elements among them).
 * Not a test: nothing is asserted but that the page works.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../serve.mjs';
import { ensureBuilt } from '../../tests/browser/helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding'];

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const KEYS = Math.max(30, opt('keys', 40));
const TARGET = 96;
const asJSON = argv.includes('--json');

// rebuilds web/site/dist/ when the library's or the lesson's sources are newer (as the browser tests do)
ensureBuilt();

const server = await startServer({ port: 0, root: path.join(root, 'web', 'site') });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`${server.url}#trained`);
  // ready: the section's data-ready="true" (lesson script), or the <mha-trained-heads> element with
  // its text field and computed heatmaps (the section as elements)
  await page.waitForFunction(() => {
    const sec = document.querySelector('#trained');
    if (sec?.dataset.ready) return true;
    const host = document.querySelector('mha-trained-heads');
    if (host?.error) return true;
    const maps = host?.shadowRoot?.querySelectorAll('mha-heatmap') ?? [];
    return !!host?.shadowRoot?.querySelector('textarea') && maps.length >= 8 && [...maps].every((m) => m.matrix?.length > 0);
  }, null, { timeout: 120_000 });
  const ready = await page.evaluate(() => {
    const host = document.querySelector('mha-trained-heads');
    if (host?.error) return `error: ${host.error.message ?? host.error}`;
    return document.querySelector('#trained')?.dataset.ready ?? (host ? 'true' : 'missing');
  });
  if (ready !== 'true') throw new Error(`section not ready (${ready}): ${errors.join(' | ')}`);

  // helpers installed once in the page
  await page.evaluate(() => {
    const deep = (rootNode, sel, out = []) => {
      for (const el of rootNode.querySelectorAll('*')) {
        if (el.matches(sel)) out.push(el);
        if (el.shadowRoot) deep(el.shadowRoot, sel, out);
      }
      return out;
    };
    const field = () => {
      const host = document.querySelector('mha-trained-heads');
      return host?.shadowRoot?.querySelector('textarea') ?? document.querySelector('#trained-text');
    };
    const raf = () => new Promise((r) => requestAnimationFrame(() => r()));
    window.__typing = {
      field,
      maps: () => deep(document.querySelector('#trained') ?? document, 'mha-heatmap'),
      maxLength: () => field().maxLength,
      /** one keystroke: the new value, then input, then the maps' updates, then two frames */
      async key(value) {
        const ta = field();
        const hosts = [...document.querySelectorAll('mha-trained-heads')];
        const n = [...value].length;
        const fresh = (maps) => maps.filter((m) => m.matrix?.length === n && m.matrix[0]?.length === n).length;
        const t0 = performance.now();
        ta.value = value;
        ta.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        // wait until the section's element (if any) and every heatmap have no update pending and
        // eight heatmaps hold the new n × n weights
        let maps = [];
        for (let i = 0; i < 20; i++) {
          // computeComplete: the element's model answered (it runs in the engine worker) and the view drew it
          const hostsDone = await Promise.all(hosts.map((h) => (h.computeComplete ?? h.updateComplete).then(() => true)));
          maps = window.__typing.maps();
          const done = await Promise.all(maps.map((m) => m.updateComplete));
          if (hostsDone.every(Boolean) && done.every(Boolean) && fresh(maps) >= 8) break;
        }
        await raf();
        await raf();
        const ms = performance.now() - t0;
        return { ms, fresh: fresh(maps) };
      },
      nodes() {
        let all = 0, elements = 0, shadowRoots = 0;
        const walk = (n) => {
          all++;
          if (n.nodeType === 1) {
            elements++;
            if (n.shadowRoot) { shadowRoots++; walk(n.shadowRoot); }
          }
          for (let c = n.firstChild; c; c = c.nextSibling) walk(c);
        };
        walk(document);
        return { all, elements, shadowRoots };
      },
    };
  });

  const max = await page.evaluate(() => window.__typing.maxLength());
  if (max > 0 && max < TARGET) throw new Error(`the text field takes at most ${max} characters, not ${TARGET}`);
  const alphabet = 'the cat sat on the mat. a dog ran to the big red barn, ';
  let text = '';
  const growth = [];
  for (let i = 1; i <= TARGET; i++) {
    text += alphabet[(i - 1) % alphabet.length];
    const { ms, fresh } = await page.evaluate((v) => window.__typing.key(v), text);
    if (fresh < 8) throw new Error(`after typing ${i} characters only ${fresh} heatmaps hold ${i}×${i} weights`);
    if ([8, 16, 32, 48, 64, 80, 96].includes(i)) growth.push({ chars: i, ms });
  }
  const at96 = [];
  for (let i = 0; i < KEYS; i++) {
    text = text.slice(0, TARGET - 1) + alphabet[(i * 7 + 3) % alphabet.length];
    const { ms, fresh } = await page.evaluate((v) => window.__typing.key(v), text);
    if (fresh < 8) throw new Error(`only ${fresh} heatmaps hold 96×96 weights`);
    at96.push(ms);
  }
  const nodes = await page.evaluate(() => window.__typing.nodes());
  const maps = await page.evaluate(() => window.__typing.maps().map((m) => m.mode ?? 'dom'));
  const sorted = [...at96].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  const result = {
    chromium: browser.version(),
    cpu: `${os.cpus()[0]?.model} × ${os.cpus().length}`,
    keystrokes: at96.length,
    medianMs: +median.toFixed(1),
    p90Ms: +q(0.9).toFixed(1),
    minMs: +sorted[0].toFixed(1),
    maxMs: +sorted.at(-1).toFixed(1),
    growth: growth.map((g) => ({ chars: g.chars, ms: +g.ms.toFixed(1) })),
    heatmaps: maps.length,
    modes: maps.reduce((o, m) => ({ ...o, [m]: (o[m] ?? 0) + 1 }), {}),
    nodes,
    errors,
  };
  if (asJSON) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(`Chromium ${result.chromium}, ${result.cpu}`);
    console.log(`typing at ${TARGET} characters, ${result.keystrokes} keystrokes: median ${result.medianMs} ms, p90 ${result.p90Ms} ms (min ${result.minMs}, max ${result.maxMs})`);
    console.log(`on the way: ${result.growth.map((g) => `${g.chars} chars ${g.ms} ms`).join(', ')}`);
    console.log(`heatmaps under #trained: ${result.heatmaps} (${Object.entries(result.modes).map(([k, v]) => `${v} ${k}`).join(', ')})`);
    console.log(`DOM nodes (document + shadow roots): ${nodes.all} (${nodes.elements} elements, ${nodes.shadowRoots} shadow roots)`);
    if (errors.length) console.log(`page errors: ${errors.join(' | ')}`);
  }
  await context.close();
} finally {
  await browser.close();
  await server.close();
}

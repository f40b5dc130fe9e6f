// WCAG 2.1 AA over the whole lesson page: axe-core with the wcag2a, wcag2aa, wcag21a and wcag21aa
// rules (every impact, shadow roots included) at 390 px and 1280 px, light and dark, once every
// element on the page has rendered and again after the interactions a reader makes (a head switched
// off, the causal mask toggled, h changed, a generation step); the edges of text fields and selects
// at 3:1 or more (WCAG 1.4.11, which axe leaves out); and a keyboard run in which focus stays
// on the control a reader was using while the element re-renders. One page load per layout.
// The elements are found by tag (every <mha-*> in the page), so an element added to the lesson is
// checked without editing this file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, deepFocus, ROOT, allRendered, revealUntil, recordErrors } from './helpers.mjs';

const AXE = readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

let env;
let kept = null;   // the 1280 px light page, reused by the keyboard test
before(async () => { env = await setup(); });
after(async () => { await kept?.context.close(); await env?.close(); });

/** Opens the lesson and scrolls to every element in turn (the trained ones fetch when seen). */
async function openLesson(viewport, colorScheme) {
  const context = await env.browser.newContext({ bypassCSP: true, viewport, colorScheme, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const errors = [];
  recordErrors(page, errors, { console: 'console: ', pageerror: 'pageerror: ' });
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60_000 });
  const n = await page.evaluate(() => {
    const els = [...document.querySelectorAll('main *')].filter((e) => e.localName.startsWith('mha-'));
    els.forEach((e, i) => { e.dataset.a11yIndex = String(i); });
    return els.length;
  });
  for (let i = n - 1; i >= 0; i--) {
    await revealUntil(page, `[data-a11y-index="${i}"]`, (el) => el.shadowRoot && !el.shadowRoot.querySelector('[part="placeholder"]'), 60_000);
  }
  await allRendered(page, 120_000);
  await page.addScriptTag({ content: AXE });
  await page.evaluate(() => document.fonts.ready);
  return { page, context, errors, n };
}

/** axe-core's WCAG 2.1 A/AA violations on the page, each with its first targets and a summary. */
async function axeViolations(page) {
  await allRendered(page, 120_000);
  return page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id, impact: v.impact, count: v.nodes.length,
      nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' >> ')}: ${n.failureSummary?.split('\n')[1]?.trim() ?? ''}`),
    }));
  }, TAGS);
}

const pierce = (sel) => sel;   // playwright's CSS locators pierce open shadow roots

/**
 * WCAG 1.4.11, which axe does not check: the edge of every visible text field, textarea and select
 * against the background behind it (the nearest opaque one up the tree, across shadow roots), by
 * the WCAG relative-luminance formula. Returns those under 3:1.
 */
function fieldEdges(page) {
  return page.evaluate(() => {
    const rgb = (c) => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
      .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const behind = (el) => {
      for (let n = el.parentElement ?? el.getRootNode().host; n; n = n.parentElement ?? n.getRootNode().host) {
        const c = getComputedStyle(n).backgroundColor;
        if (rgb(c).length === 3 || rgb(c)[3] === 1) return rgb(c).slice(0, 3);
      }
      return [255, 255, 255];
    };
    const bad = [];
    const walk = (root) => {
      for (const el of root.querySelectorAll('input, select, textarea')) {
        if (['radio', 'checkbox', 'hidden', 'range'].includes(el.type) || !el.getClientRects().length) continue;
        const st = getComputedStyle(el);
        const side = ['Bottom', 'Top'].find((x) => parseFloat(st[`border${x}Width`]) > 0);
        const where = `${el.getRootNode().host?.localName ?? 'page'} ${el.localName}${el.getAttribute('part') ? `[part=${el.getAttribute('part')}]` : ''}`;
        if (!side) { bad.push(`${where}: no border`); continue; }
        const r = ratio(rgb(st[`border${side}Color`]).slice(0, 3), behind(el));
        if (r < 3) bad.push(`${where}: ${r.toFixed(2)}:1`);
      }
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
    };
    walk(document);
    return [...new Set(bad)];
  });
}

/** The interactions the audit names: heads switched off, the causal mask toggled, h changed, a generation step. */
async function interact(page) {
  // a head switched off in the trained explorer and in the GQA story
  for (const host of ['#explorer', '#gqa-story']) {
    const sw = page.locator(pierce(`${host} button[role="switch"][aria-checked="true"]`)).first();
    if (await sw.count()) {
      await sw.scrollIntoViewIfNeeded();
      await sw.click();
    }
  }
  await page.waitForFunction(() => document.querySelector('#explorer').getAttribute('ablate') !== '', null, { timeout: 60_000 });
  // the causal mask toggled
  const toggle = page.locator('#causal-mask [part="toggle"]');
  await toggle.scrollIntoViewIfNeeded();
  await toggle.click();
  // h changed in the widget
  const h4 = page.locator('#widget [data-h="4"]');
  await h4.scrollIntoViewIfNeeded();
  await h4.click();
  await page.waitForFunction(() => document.querySelector('#widget').result?.heads === 4);
  // a generation step
  const step = page.locator('#generate button.step1');
  await step.scrollIntoViewIfNeeded();
  await step.click();
  await page.waitForFunction(() => document.querySelector('#generate').shadowRoot.querySelector('button.step1:not([disabled])'), null, { timeout: 60_000 });
}

const LAYOUTS = [
  { name: '390 px light', viewport: { width: 390, height: 800 }, colorScheme: 'light' },
  { name: '390 px dark', viewport: { width: 390, height: 800 }, colorScheme: 'dark' },
  { name: '1280 px dark', viewport: { width: 1280, height: 900 }, colorScheme: 'dark' },
  { name: '1280 px light', viewport: { width: 1280, height: 900 }, colorScheme: 'light', keep: true },
];

for (const L of LAYOUTS) {
  test(`axe-core WCAG 2.1 A/AA, ${L.name}: no violation with every element rendered, nor after the interactions`, { timeout: 600_000 }, async () => {
    const o = await openLesson(L.viewport, L.colorScheme);
    try {
      assert.ok(o.n >= 18, `the lesson's elements found: ${o.n}`);
      const found = { rendered: await axeViolations(o.page), fieldEdges: await fieldEdges(o.page) };
      await interact(o.page);
      found.afterInteractions = await axeViolations(o.page);
      assert.deepEqual(found, { rendered: [], fieldEdges: [], afterInteractions: [] }, `${L.name}:\n${JSON.stringify(found, null, 1)}`);
      assert.deepEqual(o.errors, []);
    } finally {
      if (L.keep) kept = o;
      else await o.context.close();
    }
  });
}

/** Focus the control, press the key, wait for the element's re-render; focus must be on a control with the same identity. */
async function keepsFocus(page, { locator, key, after, arg = null, same }) {
  await locator.scrollIntoViewIfNeeded();
  await locator.focus();
  const before = await deepFocus(page);
  await page.keyboard.press(key);
  await page.waitForFunction(after, arg, { timeout: 60_000 });
  await allRendered(page, 120_000);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const now = await deepFocus(page);
  assert.notEqual(now?.tag, 'body', `focus fell to <body> after ${key} (was on ${JSON.stringify(before)})`);
  same(before, now);
  return now;
}

test('keyboard: focus stays on the control through the re-renders it causes', { timeout: 300_000 }, async () => {
  assert.ok(kept, 'the 1280 px light page');
  const { page } = kept;
  // the trained explorer's "Model" select: ArrowDown picks the next model, the element re-renders
  const select = page.locator('#explorer select[part="picker"]');
  const model0 = await select.inputValue();
  await page.evaluate(() => { window.__model0 = document.querySelector('#explorer').modelHref; });
  await keepsFocus(page, {
    locator: select, key: 'ArrowDown',
    after: () => document.querySelector('#explorer').modelHref !== window.__model0,
    same: (b, a) => assert.equal(a.tag, 'select', `focus on ${JSON.stringify(a)}`),
  });
  assert.notEqual(await select.inputValue(), model0, 'ArrowDown changed the model');
  // <mha-gqa-twins>: "seed 1"
  const seed1 = page.locator('#gqa-twins button.seed[data-seed="1"]');
  await keepsFocus(page, {
    locator: seed1, key: 'Enter',
    after: () => document.querySelector('#gqa-twins').seed === 1,
    same: (b, a) => assert.match(a.text, /seed 1/, `focus on ${JSON.stringify(a)}`),
  });
  // the stepper: "Next →" from step 7 to step 8
  await page.locator('#stepper [data-step="6"]').click();
  const next = page.locator('#stepper [part="next"]');
  await keepsFocus(page, {
    locator: next, key: 'Enter',
    after: () => document.querySelector('#stepper').shadowRoot.querySelector('[data-step="7"][aria-pressed="true"], [data-step="7"][aria-selected="true"], [data-step="7"][aria-checked="true"]'),
    same: (b, a) => assert.match(a.text, /Next/, `focus on ${JSON.stringify(a)}`),
  });
  // a single-choice set is one Tab stop, and the arrow keys choose (the widget's h: 4 → the next)
  const groups = await page.evaluate(() => {
    const out = [];
    const walk = (root) => {
      for (const g of root.querySelectorAll('[role="radiogroup"]')) {
        const radios = [...g.querySelectorAll('[role="radio"]')];
        out.push({ name: g.getAttribute('aria-label') ?? g.getAttribute('aria-labelledby'), stops: radios.filter((r) => r.tabIndex === 0).length,
          checked: radios.filter((r) => r.getAttribute('aria-checked') === 'true').length });
      }
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
    };
    walk(document);
    return out;
  });
  assert.ok(groups.length >= 6, `radio groups: ${JSON.stringify(groups)}`);
  for (const g of groups) assert.deepEqual([g.stops, g.checked], [1, 1], JSON.stringify(g));
  const h = page.locator('#widget [role="radio"][aria-checked="true"]');
  assert.equal(await h.getAttribute('data-h'), '4');
  const hNext = await page.locator('#widget [role="radio"][aria-checked="true"] + [role="radio"]').getAttribute('data-h');
  await keepsFocus(page, {
    locator: h, key: 'ArrowRight',
    after: (n) => document.querySelector('#widget').result?.heads === n,
    arg: Number(hNext),
    same: (b, a) => assert.deepEqual([a.role, a.label], ['radio', `h = ${hNext}`]),
  });
  assert.equal(await page.locator(`#widget [data-h="${hNext}"]`).getAttribute('aria-checked'), 'true');
  // an edit of X is announced once, shortly, after it settles; a refused value's message is tied to its field
  const cell = page.locator('#stepper table.input input[data-r="0"][data-c="0"]');
  await cell.scrollIntoViewIfNeeded();
  await cell.fill('0.5');
  const said = page.locator('#stepper [part="announcement"]');
  await page.waitForFunction(() => document.querySelector('#stepper').shadowRoot.querySelector('[part="announcement"]').textContent !== '', null, { timeout: 10_000 });
  assert.match(await said.textContent(), /set to 0\.5: every step recomputed\.$/);
  assert.equal(await said.getAttribute('aria-live'), 'polite');
  await cell.fill('1e12');
  assert.equal(await cell.getAttribute('aria-invalid'), 'true');
  const described = await cell.getAttribute('aria-describedby');
  assert.match(await page.locator(`#stepper #${described}`).textContent(), /not accepted/);
  await cell.fill('0.5');
  assert.equal(await cell.getAttribute('aria-describedby'), null);
});

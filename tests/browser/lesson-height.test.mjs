// The lesson's length: the page height with every element revealed and drawn, at 1280 × 900 and at
// 390 px wide, printed. The target is a page a teacher can plan in one lesson, TARGET below; the page
// does not reach it yet, so the test holds the height it has reached (LIMIT, about 1 % above the
// measured height, for font differences between machines): a change that makes it longer fails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, allRendered } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });


/** The lesson's full height at `viewport`, every lazy element scrolled into view and drawn. */
async function lessonHeight(viewport) {
  const { page, errors, context } = await env.newPage({ viewport });
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60_000 });
  const n = await page.evaluate(() => {
    const els = [...document.querySelectorAll('main *')].filter((e) => e.localName.startsWith('mha-'));
    els.forEach((e, i) => { e.dataset.heightIndex = String(i); });
    return els.length;
  });
  // last to first, each scrolled to until it has drawn: an element above that loads meanwhile can push
  // the one waited for out of the loading margin again (the browser keeps the anchor in view), so it
  // is scrolled to once more, as a reader would
  for (let i = n - 1; i >= 0; i--) {
    const el = page.locator(`[data-height-index="${i}"]`);
    const drawn = () => page.waitForFunction((i) => {
      const e = document.querySelector(`[data-height-index="${i}"]`);
      return e.shadowRoot && !e.shadowRoot.querySelector('[part="placeholder"]');
    }, i, { timeout: 5_000 }).then(() => true, () => false);
    const until = Date.now() + 90_000;
    for (;;) {
      await el.scrollIntoViewIfNeeded();
      if (await drawn()) break;
      if (Date.now() > until) throw new Error(`element ${i} (${await el.evaluate((e) => `${e.localName}#${e.id}`)}) not drawn in 90 s`);
    }
  }
  // the composition experiment's results drawn too (it shows them after the reader's prediction)
  await page.evaluate(() => { const el = document.querySelector('#composition'); if (el) { el.revealed = true; return el.updateComplete; } });
  await allRendered(page, 180_000);
  await page.evaluate(() => document.fonts.ready);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await context.close();
  return { height, errors };
}

/** The heights the lesson should reach (px), by viewport width. */
const TARGET = { 1280: 18_000, 390: 36_000 };
/** The heights it is held to today (px), by viewport width. */
const LIMIT = { 1280: 21_510, 390: 39_460 };

for (const width of [1280, 390]) {
  const limit = LIMIT[width];
  test(`the lesson is at most ${limit.toLocaleString('en-US')} px tall at ${width} px wide, every element drawn`, async () => {
    const { height, errors } = await lessonHeight({ width, height: width === 1280 ? 900 : 844 });
    console.log(`lesson height at ${width} px: ${height} px (target ${TARGET[width]} px)`);
    assert.deepEqual(errors, []);
    assert.ok(height <= limit, `${height} px tall at ${width} px (limit ${limit})`);
  });
}

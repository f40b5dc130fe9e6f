// Prints the lesson's height and each lesson element's height (biggest first) at the given widths,
// every element revealed and drawn as tests/browser/lesson-height.test.mjs does.
// Usage: node scripts/lesson-heights.mjs [1280 390 …] [--shots DIR] [--dark]
import { setup, allRendered } from '../tests/browser/helpers.mjs';
import path from 'node:path';

const args = process.argv.slice(2);
const shotsAt = args.indexOf('--shots');
const shots = shotsAt >= 0 ? args[shotsAt + 1] : null;
const dark = args.includes('--dark');
const widths = args.filter((a, i) => /^\d+$/.test(a) && (shotsAt < 0 || i !== shotsAt + 1)).map(Number);
const env = await setup();
try {
  for (const width of widths.length ? widths : [1280, 390]) {
    const { page, errors, context } = await env.newPage({ viewport: { width, height: width >= 1000 ? 900 : 844 }, colorScheme: dark ? 'dark' : 'light' });
    await page.goto(env.url);
    await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60_000 });
    const n = await page.evaluate(() => {
      const els = [...document.querySelectorAll('main *')].filter((e) => e.localName.startsWith('mha-'));
      els.forEach((e, i) => { e.dataset.heightIndex = String(i); });
      return els.length;
    });
    for (let i = n - 1; i >= 0; i--) {
      const el = page.locator(`[data-height-index="${i}"]`);
      for (let k = 0; k < 20; k++) {
        await el.scrollIntoViewIfNeeded();
        const ok = await page.waitForFunction((i) => {
          const e = document.querySelector(`[data-height-index="${i}"]`);
          return e.shadowRoot && !e.shadowRoot.querySelector('[part="placeholder"]');
        }, i, { timeout: 5_000 }).then(() => true, () => false);
        if (ok) break;
      }
    }
    await page.evaluate(() => { const el = document.querySelector('#composition'); if (el) { el.revealed = true; return el.updateComplete; } });
    await allRendered(page, 180_000);
    await page.evaluate(() => document.fonts.ready);
    // each element's height and width, and how far its widest box inside scrolls sideways
    const rows = await page.evaluate(() => [...document.querySelectorAll('main [data-height-index]')]
      .map((e) => ({ tag: e.localName, id: e.id, h: Math.round(e.getBoundingClientRect().height), w: Math.round(e.getBoundingClientRect().width),
        sw: e.shadowRoot ? Math.max(0, ...[...e.shadowRoot.querySelectorAll('*')].map((x) => x.scrollWidth - x.clientWidth).filter((v) => v > 1)) : 0 })));
    const total = await page.evaluate(() => document.documentElement.scrollHeight);
    rows.sort((a, b) => b.h - a.h);
    console.log(`\n== ${width} px${dark ? ' dark' : ''}: page ${total} px, elements ${rows.reduce((s, r) => s + r.h, 0)} px`);
    for (const r of rows) console.log(`${String(r.h).padStart(6)}  ${r.tag}${r.id ? '#' + r.id : ''}  (w ${r.w}${r.sw ? `, inner overflow ${r.sw}` : ''})`);
    if (errors.length) console.log('errors:', errors);
    if (shots) {
      await page.screenshot({ path: path.join(shots, `lesson-${width}${dark ? '-dark' : ''}.png`), fullPage: true });
      // one PNG per element too
      for (const r of rows) {
        if (!r.id) continue;
        await page.locator(`#${r.id}`).screenshot({ path: path.join(shots, `${width}${dark ? '-dark' : ''}-${r.id}.png`) }).catch(() => {});
      }
    }
    await context.close();
  }
} finally {
  await env.close();
}

// Prints the lesson's height and each lesson element's height (biggest first) at the given widths,
// every element revealed and drawn as tests/browser/lesson-height.test.mjs does (openDrawnLesson).
// Usage: node scripts/lesson-heights.mjs [1280 390 …] [--shots DIR] [--dark]
import { setup, openDrawnLesson } from '../tests/browser/helpers.mjs';
import path from 'node:path';

const args = process.argv.slice(2);
const shotsAt = args.indexOf('--shots');
const shots = shotsAt >= 0 ? args[shotsAt + 1] : null;
const dark = args.includes('--dark');
const widths = args.filter((a, i) => /^\d+$/.test(a) && (shotsAt < 0 || i !== shotsAt + 1)).map(Number);
const env = await setup();
try {
  for (const width of widths.length ? widths : [1280, 390]) {
    const { page, errors, context } = await openDrawnLesson(env, { width, height: width >= 1000 ? 900 : 844 }, dark ? 'dark' : 'light');
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

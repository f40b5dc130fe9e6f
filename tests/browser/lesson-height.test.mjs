// The lesson's length: the page height with every element revealed and drawn, at 1280 × 900 and at
// 390 px wide, printed, held to the target: a page a teacher can plan in one lesson, half the height
// it once had, with every claim, quiz answer and interaction kept. A change that makes the page
// longer than the target fails; it has to win its height back elsewhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openDrawnLesson } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });


/** The lesson's full height at `viewport`, every lazy element scrolled into view and drawn. */
async function lessonHeight(viewport) {
  const { page, errors, context } = await openDrawnLesson(env, viewport);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await context.close();
  return { height, errors };
}

/** The heights the lesson may reach (px), by viewport width. */
const LIMIT = { 1280: 18_000, 390: 36_000 };

for (const width of [1280, 390]) {
  const limit = LIMIT[width];
  test(`the lesson is at most ${limit.toLocaleString('en-US')} px tall at ${width} px wide, every element drawn`, async () => {
    const { height, errors } = await lessonHeight({ width, height: width === 1280 ? 900 : 844 });
    console.log(`lesson height at ${width} px: ${height} px (limit ${limit} px)`);
    assert.deepEqual(errors, []);
    assert.ok(height <= limit, `${height} px tall at ${width} px (limit ${limit})`);
  });
}

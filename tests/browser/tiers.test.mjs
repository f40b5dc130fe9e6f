// The tiers in Chromium: the lesson's engine is the relaxed-simd build (Chromium ships relaxed
// SIMD), each tier loads when forced, and all three compute the same layer within float32 rounding.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('Chromium: automatic choice is relaxed-simd; every tier loads and agrees; no console errors', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  assert.equal(await page.evaluate(() => window.mhaLesson.engine.info.tier), 'relaxed-simd');
  const r = await page.evaluate(async () => {
    const { createMHA, TIERS } = await import('/dist/mha-components.js');
    const x = Array.from({ length: 40 }, (_, t) => Array.from({ length: 64 }, (_, e) => Math.sin(0.3 * t + e)));
    const out = {};
    for (const tier of TIERS) {
      const m = await createMHA({ tier });
      const l = m.createLayer({ dModel: 64, numHeads: 4, seed: 3 });
      out[tier] = { info: m.info.tier, y: Array.from(l.forward(x, { causal: true }).output.data) };
      l.dispose();
    }
    return out;
  });
  for (const tier of ['relaxed-simd', 'simd', 'scalar']) assert.equal(r[tier].info, tier);
  let d = 0;
  for (let i = 0; i < r.simd.y.length; i++) {
    d = Math.max(d, Math.abs(r['relaxed-simd'].y[i] - r.simd.y[i]), Math.abs(r.scalar.y[i] - r.simd.y[i]));
  }
  assert.ok(d > 0 && d < 1e-5, `largest difference between tiers ${d}`);
  assert.deepEqual(errors, []);
  await context.close();
});

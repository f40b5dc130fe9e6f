// <mha-composition> alone on its example page (web/site/examples/composition.html) under the strict
// CSP: the reader predicts with the keyboard, runs, and the table shows what run({ablate}) gives on
// the phrase written twice, recomputed here from an independent copy of the model (attention on the
// character after the earlier copy, read from the attention weights; bits from the log-probabilities);
// the verdict is announced; typing a new phrase measures again; axe-clean light and dark at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, checkNarrowPage } from './helpers.mjs';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = (page) => page.waitForFunction(() => {
  const el = document.querySelector('mha-composition');
  return el && (el.error || el.measured);
}, null, { timeout: 150_000 });

/**
 * The page's table and, from an independent copy of the model, the numbers it should show: for
 * each arm, the mean over the reader heads of their attention from each query t of the second
 * copy (from its 4th character on, where the last 4 characters repeat) to t − n, and the second
 * copy's mean −log2 p over its characters after the first.
 */
const read = (page) => page.evaluate(async () => {
  const api = await import('/dist/mha-trained.js');
  const el = document.querySelector('mha-composition');
  const mha = await api.getEngine();
  const lm = await mha.loadModel(await (await fetch(api.DEFAULT_MODEL_URL)).arrayBuffer());
  try {
    const m = el.measured;
    const p = m.phrase, n = p.length, V = lm.config.vocabSize;
    const arm = (ablate) => {
      const r = lm.run(`${p} ${p}`, { ablate });
      const T = r.ids.length;
      let att = 0, k = 0;
      for (const [l, j] of m.heads.readers) {
        const w = r.attention[l].data;
        // queries whose 4 last characters repeat an earlier 4 (the phrase has no inner repeat): t = n + 4 … 2n
        for (let t = n + 4; t < T; t++) { att += w[j * T * T + t * T + (t - n)]; k++; }
      }
      let s = 0;
      for (let t = n + 1; t < 2 * n; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
      return [att / k, s / (n - 1) / Math.LN2];
    };
    const root = el.shadowRoot;
    return {
      phrase: p, heads: m.heads,
      want: [arm([]), arm(m.heads.writers), arm(m.heads.control)],
      rows: [...root.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent.trim().replace(/\s+/g, ' '))),
      status: root.querySelector('[role="status"]').textContent.trim().replace(/\s+/g, ' '),
      maps: root.querySelectorAll('mha-heatmap').length,
    };
  } finally {
    lm.dispose();
  }
});

test('predict with the keyboard, run: the table is run({ablate})\'s, recomputed here; the verdict is announced; a new phrase measures again', async () => {
  const { page, errors, context } = await env.newPage({ viewport: { width: 1000, height: 900 } });
  const res = await page.goto(`${env.url}examples/composition.html`);
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  await ready(page);
  let c = await read(page);
  assert.equal(c.phrase, 'purple kites drift north');
  assert.deepEqual(c.heads.writers, [[0, 1], [0, 3]], 'layer 1\'s previous-token heads of the shipped h = 4 model');
  assert.deepEqual(c.heads.readers, [[1, 0], [1, 1]], 'its induction heads');
  assert.deepEqual(c.rows, [], 'nothing measured is shown before Run');
  assert.equal(c.status, 'Choose a prediction, then run the experiment.');
  // keyboard: Tab to the field, Tab into the radio group, arrow to the second choice, Tab to Run, Enter
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.querySelector('mha-composition').shadowRoot.activeElement?.textContent.trim());
  assert.equal(focused, 'Run the experiment');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('mha-composition').shadowRoot.querySelectorAll('tbody tr').length === 3);
  c = await read(page);
  assert.equal(await page.evaluate(() => document.querySelector('mha-composition').prediction), 'collapse');
  const f2 = (v) => v.toFixed(2);
  assert.deepEqual(c.rows, [
    ['Whole model', f2(c.want[0][0]), f2(c.want[0][1])],
    ['Layer 1, heads 2 and 4 off', f2(c.want[1][0]), f2(c.want[1][1])],
    ['Control: layer 1, heads 1 and 3 off', f2(c.want[2][0]), f2(c.want[2][1])],
  ]);
  // the measurement: the induction heads lose the earlier copy, the second copy gets dear
  assert.ok(c.want[1][0] < c.want[0][0] / 4 && c.want[1][1] > c.want[0][1] + 2, JSON.stringify(c.want));
  assert.ok(c.status.startsWith('Your prediction holds. On this text: their attention on the earlier copy collapses'), c.status);
  assert.ok(c.status.endsWith(`Induction attention ${f2(c.want[0][0])} → ${f2(c.want[1][0])}; second copy ${f2(c.want[0][1])} → ${f2(c.want[1][1])} bits per character.`), c.status);
  assert.equal(c.maps, 2);
  // a new phrase measures again, the result stays revealed
  await page.evaluate(() => { document.querySelector('mha-composition').phrase = 'zebra quilts vex jumpy'; });
  await page.waitForFunction(() => document.querySelector('mha-composition').measured?.phrase === 'zebra quilts vex jumpy');
  c = await read(page);
  assert.equal(c.rows[1][1], f2(c.want[1][0]));
  assert.equal(c.rows[1][2], f2(c.want[1][1]));
  assert.deepEqual(errors, []);
  await context.close();
});

test('390 px, light and dark: no overflow, axe-clean, no console error (after Run)', { timeout: 400_000 }, async () => {
  await checkNarrowPage(env, {
    page: 'examples/composition.html', tag: 'mha-composition',
    ready: async (page) => {
      await ready(page);
      await page.evaluate(() => { const el = document.querySelector('mha-composition'); el.revealed = true; return el.updateComplete; });
    },
  });
});

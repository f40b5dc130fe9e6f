// <mha-ov-circuit> alone on its example page (web/site/examples/ov-circuit.html) under the strict CSP:
// the table's copying scores and eigenvalue positivities are the JS API's (copyingScores,
// eigenPositivity, on an independent copy of the model); the heatmap shows the selected head's OV
// logits with each row scaled to [0, 1] (checked here from ovLogits), its diagonal's row maxima are
// the copying score; choosing another head with the keyboard (arrow keys in the radio group) redraws
// and announces it; axe-clean light and dark at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, checkNarrowPage } from './helpers.mjs';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = (page) => page.waitForFunction(() => {
  const el = document.querySelector('mha-ov-circuit');
  return el && (el.error || (el.rows && el.shadowRoot.querySelector('mha-heatmap')));
}, null, { timeout: 150_000 });

const read = (page) => page.evaluate(async () => {
  const api = await import('/dist/mha-trained.js');
  const el = document.querySelector('mha-ov-circuit');
  const mha = await api.getEngine();
  const lm = await mha.loadModel(await (await fetch(api.DEFAULT_MODEL_URL)).arrayBuffer());
  try {
    const [l, j] = el.selected;
    const V = lm.config.vocabSize;
    const M = api.ovLogits(lm, l)[j];
    const map = el.shadowRoot.querySelector('mha-heatmap');
    const w = map.weights;
    let maxErr = 0, diagTop = 0;
    for (let s = 0; s < V; s++) {
      let lo = Infinity, hi = -Infinity;
      for (let t = 0; t < V; t++) { lo = Math.min(lo, M[s * V + t]); hi = Math.max(hi, M[s * V + t]); }
      for (let t = 0; t < V; t++) maxErr = Math.max(maxErr, Math.abs(w[s][t] - (M[s * V + t] - lo) / (hi - lo)));
      if (w[s][s] === 1 && w[s].filter((v) => v === 1).length === 1) diagTop++;
    }
    const f2 = (v) => v.toFixed(2).replace('-', '−');
    const copying = api.copyingScores(lm), pos = api.eigenPositivity(lm);
    return {
      selected: [l, j], maxErr, diagTop, V, tokens: map.tokens.length,
      want: copying.map((c, i) => [`${c.layer + 1}:${c.head + 1}`, f2(c.score), f2(pos[i].positivity)]),
      rows: [...el.shadowRoot.querySelectorAll('tbody tr')].map((tr) => {
        const td = [...tr.children].map((c) => c.textContent.trim().replace(/\s+/g, ' '));
        return [td[0], td[2], td[3]];
      }),
      copied: copying[l * lm.config.numHeads + j].copied,
      summary: el.shadowRoot.querySelector('[part="summary"]').textContent.trim().replace(/\s+/g, ' '),
      label: map.getAttribute('label'),
    };
  } finally {
    lm.dispose();
  }
});

test('the table and the heatmap are the JS API\'s; the keyboard chooses another head', async () => {
  const { page, errors, context } = await env.newPage({ viewport: { width: 1000, height: 900 } });
  const res = await page.goto(`${env.url}examples/ov-circuit.html`);
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  await ready(page);
  let c = await read(page);
  assert.deepEqual(c.rows, c.want);
  assert.deepEqual(c.selected, [1, 0], 'the head that copies most is shown first (layer 2, head 1)');
  assert.ok(c.maxErr < 1e-12, `row scaling: ${c.maxErr}`);
  assert.equal(c.tokens, c.V);
  assert.equal(c.diagTop, c.copied, 'the rows whose diagonal is the brightest are the copied tokens');
  assert.ok(c.summary.startsWith(`Layer 2, head 1: the diagonal is the largest entry of its row for ${c.copied} of the 97 tokens (copying score ${c.want[4][1]}); eigenvalue positivity ${c.want[4][2]}.`), c.summary);
  // keyboard: focus the checked radio, ArrowDown selects the next head
  await page.evaluate(() => document.querySelector('mha-ov-circuit').shadowRoot.querySelector('input[type="radio"]:checked').focus());
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.querySelector('mha-ov-circuit').selected[1] === 1);
  c = await read(page);
  assert.deepEqual(c.selected, [1, 1]);
  assert.ok(c.maxErr < 1e-12);
  assert.equal(c.diagTop, c.copied);
  assert.ok(c.summary.startsWith('Layer 2, head 2:'), c.summary);
  assert.deepEqual(errors, []);
  await context.close();
});

test('390 px, light and dark: no overflow, axe-clean, no console error', { timeout: 400_000 }, async () => {
  await checkNarrowPage(env, { page: 'examples/ov-circuit.html', tag: 'mha-ov-circuit', ready });
});

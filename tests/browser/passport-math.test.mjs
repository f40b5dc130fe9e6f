// The stand-alone <mha-passport> at 390 px: its "how" column is MathML (the engine's
// formula strings drawn by formula-math.js), one formula per line (no letter-per-line wrapping), and
// a table wider than the element scrolls sideways inside it with the scroll cue, never widening the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setup, openExample, ARTIFACTS } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('the passport\'s formulas are MathML, each on one line, at 390 px; the wide table scrolls with a cue', { timeout: 120_000 }, async () => {
  const { page, errors } = await openExample(env, 'embed.html');
  await page.setViewportSize({ width: 390, height: 900 });
  await page.evaluate(() => {
    const main = document.querySelector('main') ?? document.body;
    main.replaceChildren();
    for (const [id, attrs] of [['mha', {}], ['gqa', { 'seq-len': '10', 'd-model': '512', heads: '8', 'kv-heads': '2', batch: '2' }]]) {
      const p = document.createElement('mha-passport');
      p.id = id;
      for (const [k, v] of Object.entries(attrs)) p.setAttribute(k, v);
      main.append(p);
    }
  });
  await page.waitForFunction(() => [...document.querySelectorAll('mha-passport')].every((p) => p.passport));
  await page.waitForTimeout(200);
  for (const id of ['mha', 'gqa']) {
    const r = await page.evaluate((sel) => {
      const el = document.getElementById(sel);
      const root = el.shadowRoot;
      const steps = [...root.querySelectorAll('tbody:not(.summary) tr')].map((tr) => {
        const td = tr.querySelector('td.formula');
        const m = td.querySelector('math');
        const line = parseFloat(getComputedStyle(td).lineHeight) || 20;
        return { name: tr.dataset.step, formula: td.dataset.formula, math: !!m && m.namespaceURI === 'http://www.w3.org/1998/Math/MathML',
          alt: m?.getAttribute('alttext'), height: m ? m.getBoundingClientRect().height : 0, line,
          tags: m ? [...m.querySelectorAll('*')].map((n) => n.localName) : [] };
      });
      const box = root.querySelector('.scroll');
      return { steps, engine: el.passport.steps.map((s) => s.formula), overflow: box.getAttribute('data-overflow'),
        hint: getComputedStyle(root.querySelector('.scroll-hint')).display, boxW: box.clientWidth, tableW: box.scrollWidth,
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth };
    }, id);
    assert.deepEqual(r.steps.map((s) => s.formula), r.engine, `${id}: every step's formula is the engine's`);
    for (const s of r.steps) {
      assert.ok(s.math, `${id} ${s.name}: a MathML <math>`);
      assert.equal(s.alt, s.formula);
      assert.ok(s.height < 2 * s.line, `${id} ${s.name}: one line (${s.height} px for a ${s.line} px line)`);
    }
    const q = r.steps.find((s) => s.name === 'per-head Q');
    assert.ok(q.tags.includes('msubsup'), `${id}: W_Q^(i) has a subscript and a superscript (${q.tags})`);
    const sc = r.steps.find((s) => s.name === 'per-head scores');
    assert.ok(sc.tags.includes('msqrt') && sc.tags.includes('msubsup'), `${id}: √d_k and K_iᵀ (${sc.tags})`);
    assert.equal(r.page, 0, `${id}: the page is not widened`);
    // the count rows' "how": the formula of the number beside it, B included when the passport is batched
    const how = await page.evaluate((sel) => Object.fromEntries(['softmax', 'scores'].map((k) => [k,
      document.getElementById(sel).shadowRoot.querySelector(`tr[data-k="${k}"] td.formula math`)?.getAttribute('data-formula')])), id);
    assert.deepEqual(how, id === 'gqa' ? { softmax: 'B·h·T·(6·T + 1)', scores: 'B·h·T²' } : { softmax: 'h·T·(6·T + 1)', scores: 'h·T²' }, id);
    if (r.tableW > r.boxW) {
      assert.match(r.overflow ?? '', /end/, `${id}: the scroll cue marks the side with more`);
      assert.equal(r.hint, 'block', `${id}: "scroll sideways →" shows`);
    }
  }
  const kv = await page.evaluate(() => document.getElementById('gqa').shadowRoot.querySelector('tr[data-step="per-head K"] td.formula').textContent.replace(/\s+/g, ' ').trim());
  assert.match(kv, /shared by/, 'the prose of a formula stays words');
  await page.screenshot({ path: path.join(ARTIFACTS, 'passport-390.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

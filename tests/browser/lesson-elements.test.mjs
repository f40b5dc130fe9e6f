// The lesson's section 3–6 elements (<mha-stepper>, <mha-wo-mix>, <mha-model-table>, <mha-kv-calculator>),
// each on a plain course page under the strict CSP of examples/, loaded from /dist/mha-lesson-elements.js:
// rendered, driven by their controls and attributes, numbers equal to the JS API's on the same input,
// keyboard operable, no console error, no CSP violation, axe-clean in light and dark, no horizontal
// overflow at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, deepFocus, ROOT } from './helpers.mjs';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';
import { X0 } from '../../web/lib/components/logic/restaurant.js';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const PAGES = {
  stepper: { file: 'stepper.html', ready: () => document.querySelector('mha-stepper')?.trace && document.querySelector('mha-wo-mix')?.contributions },
  kv: { file: 'kv-calculator.html', ready: () => document.querySelector('mha-kv-calculator')?.bytes > 0 && document.querySelector('mha-kv-calculator').shadowRoot.querySelector('mha-passport')?.passport },
  models: { file: 'model-table.html', ready: () => document.querySelector('mha-model-table')?.rows },
};

async function open(name, opts = {}) {
  const { page, errors, context } = await env.newPage(opts);
  const res = await page.goto(env.url + 'examples/' + PAGES[name].file);
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  await page.waitForFunction(PAGES[name].ready);
  return { page, errors, context };
}

async function finish({ page, errors, context }) {
  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(errors, []);
  await context.close();
}

/** The engine's trace of the restaurant layer on X, as nested arrays (computed in the page). */
const engineTrace = (page, X) => page.evaluate(async (X) => {
  const { getEngine, restaurantLayerOptions, X0 } = await import('/dist/mha-lesson-elements.js');
  const mha = await getEngine();
  const layer = mha.createLayer(restaurantLayerOptions());
  const tr = layer.trace(X ?? X0);
  const r = {
    heads: tr.heads.map((h) => Object.fromEntries(['q', 'k', 'v', 'scores', 'weights', 'output'].map((k) => [k, h[k].toArray()]))),
    concat: tr.concat.toArray(), output: tr.output.toArray(),
  };
  layer.dispose();
  return r;
}, X);

const close = (a, b, what) => {
  assert.equal(a.length, b.length, what);
  a.flat(2).forEach((v, i) => assert.ok(Math.abs(v - b.flat(2)[i]) < 1e-6, `${what}[${i}]: ${v} vs ${b.flat(2)[i]}`));
};

test('<mha-stepper> under the CSP: the engine’s numbers, steps and heads by tabs, Previous / Next and attributes', async () => {
  const p = await open('stepper');
  const { page } = p;
  const st = page.locator('mha-stepper');
  // every intermediate equals the JS API's trace of the same layer on the same X
  const mine = await page.evaluate(() => document.querySelector('mha-stepper').trace);
  const ref = await engineTrace(page);
  for (const [i, h] of ref.heads.entries()) for (const k of Object.keys(h)) close(mine.heads[i][k], h[k], `head ${i} ${k}`);
  close(mine.output, ref.output, 'output');
  close(mine.concat, ref.concat, 'concat');
  const cells = await st.locator('[part="output"] tbody td').allTextContents();
  assert.deepEqual(cells.map((c) => c.trim()), ref.output.flat().map((v) => v.toFixed(3)));
  assert.equal(cells[1].trim(), '4.050');
  // the step's result matrix is the engine's Q of head 1
  assert.deepEqual((await st.locator('[part="result"] tbody td').allTextContents()).map((c) => c.trim()), ref.heads[0].q.flat().map((v) => v.toFixed(3)));
  assert.match(await st.locator('[part="formula"]').innerHTML(), /<math/);
  // X is drawn once: step 1 names it (W_Q and Q are its only tables), and a result cell lights up its row of X in the editable table
  assert.equal(await st.locator('[part="matrices"] table').count(), 2);
  assert.equal(await st.locator('[part="matrices"] [data-operand="X"]').count(), 1);
  await st.locator('[part="result"] td[data-r="1"][data-c="0"]').hover();
  assert.equal(await st.locator('[part="x-table"] tbody tr').nth(1).locator('td.hl').count(), 6, 'Emma’s row of X');
  assert.equal(await st.locator('[part="x-table"] td.hl').count(), 6, 'only that row');
  // tabs: change event with {step, head}, reflected attributes
  await page.evaluate(() => { window.__changes = []; document.querySelector('mha-stepper').addEventListener('change', (e) => window.__changes.push(e.detail)); });
  await st.locator('button[data-step="4"]').click();
  await st.locator('button[data-head="1"]').click();
  await st.locator('[part="next"]').click();
  assert.deepEqual(await page.evaluate(() => window.__changes), [{ step: 4, head: 0 }, { step: 4, head: 1 }, { step: 5, head: 1 }]);
  assert.equal(await st.getAttribute('step'), '5');
  assert.equal(await st.getAttribute('head'), '1');
  assert.deepEqual((await st.locator('[part="result"] tbody td').allTextContents()).map((c) => c.trim()), ref.heads[1].output.flat().map((v) => v.toFixed(3)));
  // attributes drive it (no change event for a change the page made), out-of-range values are clamped
  await page.evaluate(() => { const s = document.querySelector('mha-stepper'); s.setAttribute('step', '3'); s.setAttribute('head', '0'); });
  await page.waitForFunction(() => document.querySelector('mha-stepper').shadowRoot.querySelector('[part="title"]')?.textContent.includes('Step 4 of 8'));
  assert.deepEqual((await st.locator('[part="result"] tbody td').allTextContents()).map((c) => c.trim()), ref.heads[0].scores.flat().map((v) => v.toFixed(3)));
  // a step out of range: one message naming it, the last valid step stays, the attribute as written (never clamped to 7)
  const stepErrors = page.evaluate(() => new Promise((res) => {
    const got = [];
    document.querySelector('mha-stepper').addEventListener('mha-error', (e) => got.push([Object.keys(e.detail), e.detail.error.code, e.detail.error.argument]));
    setTimeout(() => res(got), 300);
  }));
  await page.evaluate(() => document.querySelector('mha-stepper').setAttribute('step', '42'));
  assert.deepEqual(await stepErrors, [[['error'], 'INVALID_ARGUMENT', 'step']]);
  assert.equal(await st.locator('[part="error"]').textContent(), 'step: expected a whole number from 0 to 7, got "42"');
  assert.equal(await st.getAttribute('step'), '42');
  assert.match(await st.locator('[part="title"]').textContent(), /Step 4 of 8/);
  await page.evaluate(() => document.querySelector('mha-stepper').setAttribute('step', '7'));
  await page.waitForFunction(() => document.querySelector('mha-stepper').shadowRoot.querySelector('[part="title"]')?.textContent.includes('Step 8 of 8'));
  assert.equal(await st.locator('[part="error"]').count(), 0);
  // at the last step "Next" stays focusable (a reader who pressed it keeps focus) but does nothing
  assert.equal(await st.locator('[part="next"]').getAttribute('aria-disabled'), 'true');
  assert.equal(await st.locator('button[data-head="0"]').isDisabled(), true, 'no head tabs in the concat and W_O steps');
  assert.equal((await page.evaluate(() => window.__changes)).length, 3);
  // hover a result cell: its row and column light up in the operands, its formula appears
  await st.locator('[part="result"] td[data-r="0"][data-c="1"]').hover();
  assert.match(await st.locator('[part="cell-formula"] math').textContent(), /Alex.*cheap.*4\.050/s);
  assert.equal(await st.locator('[part="matrix"]').nth(0).locator('td.hl').count(), 5, 'Alex’s row of concat');
  assert.equal(await st.locator('[part="matrix"]').nth(1).locator('td.hl').count(), 5, 'the cheap column of W_O');
  await finish(p);
});

test('<mha-stepper> input: X by property and by its table, refused cells named, <mha-wo-mix for> follows', async () => {
  const p = await open('stepper');
  const { page } = p;
  const st = page.locator('mha-stepper');
  await page.evaluate(() => {
    window.__computed = [];
    document.querySelector('mha-stepper').addEventListener('mha-computed', (e) => window.__computed.push(e.detail));
  });
  // the x property
  const X = [[0.5, 0.1, 0.2, 0.3, 0.4, 0.9], [1, 0, 0, 0, 0, 1], [-0.5, 0.5, 0.25, 0, 2, 1]];
  await page.evaluate((X) => { document.querySelector('mha-stepper').x = X; }, X);
  await page.waitForFunction(() => window.__computed.length === 1);
  const ref = await engineTrace(page, X);
  const ev = await page.evaluate(() => window.__computed[0]);
  assert.deepEqual(ev.x, X);
  close(ev.output, ref.output, 'mha-computed output');
  assert.equal(await st.locator('input[aria-label="Daniel, flavor"]').inputValue(), '2');
  // <mha-wo-mix for="restaurant">: head contributions add up to the engine's output
  await page.waitForFunction((v) => Math.abs(document.querySelector('mha-wo-mix').contributions?.full[1] - v) < 1e-6, ref.output[0][1]);
  const k = await page.evaluate(() => document.querySelector('mha-wo-mix').contributions);
  k.full.forEach((v, j) => assert.ok(Math.abs(k.heads[0][j] + k.heads[1][j] - v) < 1e-5));
  const wo = await page.evaluate(async (X) => {
    const { getEngine, restaurantLayerOptions, woOnly } = await import('/dist/mha-lesson-elements.js');
    const mha = await getEngine();
    const layer = mha.createLayer(restaurantLayerOptions(woOnly(1)));
    const out = layer.forward(X).output.toArray()[0];
    layer.dispose();
    return out;
  }, X);
  close(k.heads[1], wo, 'budget head only');
  assert.match(await page.locator('mha-wo-mix [part="note"]').textContent(), new RegExp(`= ${ref.output[0][1].toFixed(3)}`));
  // the table: a valid edit recomputes, a refused one names its cell and changes nothing
  await page.locator('mha-stepper [part="reset"]').click();
  await page.waitForFunction(() => document.querySelector('mha-stepper').trace?.output[0][1].toFixed(3) === '4.050');
  const cell = st.locator('input[aria-label="Alex, cheap"]');
  for (const s of ['abc', '<img src=x onerror="window.__pwned=1">', '1e7', '-3.5e38', '']) {
    await cell.evaluate((el, text) => { el.value = text; el.dispatchEvent(new Event('input', { bubbles: true })); }, s);
    assert.equal(await cell.getAttribute('aria-invalid'), 'true', s);
    assert.match(await st.locator('[part="input-error"]').textContent(), /Alex · cheap: not accepted — enter a number between −1,000,000 and 1,000,000\. The results still use 0\.95/);
  }
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal((await page.evaluate(() => document.querySelector('mha-stepper').trace.output[0][1])).toFixed(3), '4.050');
  await cell.fill('0.5');
  await page.waitForFunction(() => document.querySelector('mha-stepper').trace?.output[0][1].toFixed(3) !== '4.050');
  assert.equal(await st.locator('[part="input-error"]').count(), 0);
  assert.equal(await cell.getAttribute('aria-invalid'), null);
  // the example's X with Alex's "cheap" set to 0.5, as typed above
  const X2 = X0.map((row, r) => row.map((v, c) => (r === 0 && c === 1 ? 0.5 : v)));
  const ref2 = await engineTrace(page, X2);
  assert.equal((await st.locator('[part="output"] td[data-r="0"][data-c="1"]').textContent()).trim(), ref2.output[0][1].toFixed(3));
  // an engine error (a non-finite X set as a property) is shown in place
  await page.evaluate(() => { document.querySelector('mha-stepper').x = [[NaN, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]; });
  await st.locator('[part="error"]').waitFor();
  assert.match(await st.locator('[part="error"]').textContent(), /NON_FINITE|finite/i);
  await page.locator('mha-stepper [part="reset"]').click();
  await page.waitForFunction(() => document.querySelector('mha-stepper').trace?.output[0][1].toFixed(3) === '4.050');
  await finish(p);
});

test('<mha-stepper> keyboard only: Tab reaches Reset and the step group, arrows pick a step, arrows move in the result', async () => {
  const p = await open('stepper');
  const { page } = p;
  let f = null;
  for (let i = 0; i < 40 && !(f && f.text === 'Reset X'); i++) { await page.keyboard.press('Tab'); f = await deepFocus(page); }
  assert.equal(f?.text, 'Reset X');
  // the step tabs are one radio group: one Tab stop (the checked step), the arrow keys move and pick
  for (let i = 0; i < 20 && !(f && f.role === 'radio' && f.label?.startsWith('1 ')); i++) { await page.keyboard.press('Tab'); f = await deepFocus(page); }
  assert.match(f?.label ?? '', /^1 /);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  f = await deepFocus(page);
  assert.match(f?.label ?? '', /^3 V/);
  assert.equal(await page.locator('mha-stepper').getAttribute('step'), '2');
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('mha-stepper').getAttribute('step'), '2');
  for (let i = 0; i < 20 && f?.tag !== 'td'; i++) { await page.keyboard.press('Tab'); f = await deepFocus(page); }
  assert.equal(f?.tag, 'td');
  assert.deepEqual([f.r, f.c], ['0', '0']);
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowDown');
  f = await deepFocus(page);
  assert.deepEqual([f.r, f.c], ['1', '2']);
  assert.match(f.label, /^Emma, upscale: /);
  assert.match(await page.locator('mha-stepper [part="cell-formula"] math').textContent(), /Emma/);
  await finish(p);
});

test('<mha-wo-mix> alone (no stepper): the example’s X, person attribute, the engine’s contributions', async () => {
  const p = await open('models');
  const { page } = p;
  const r = await page.evaluate(async () => {
    const el = document.createElement('mha-wo-mix');
    el.setAttribute('person', '2');
    el.setAttribute('feature', '4');
    document.querySelector('main').append(el);
    await new Promise((res) => el.addEventListener('mha-computed', res, { once: true }));
    await el.updateComplete;
    const { getEngine, restaurantLayerOptions, X0 } = await import('/dist/mha-lesson-elements.js');
    const mha = await getEngine();
    const layer = mha.createLayer(restaurantLayerOptions());
    const out = layer.forward(X0).output.toArray();
    layer.dispose();
    return { k: el.contributions, out, note: el.shadowRoot.querySelector('[part="note"]').textContent };
  });
  r.k.full.forEach((v, j) => assert.ok(Math.abs(v - r.out[2][j]) < 1e-6));
  assert.match(r.note, new RegExp(`For flavor: .* = ${r.out[2][4].toFixed(3)}`, 's'));
  assert.match(await page.locator('mha-wo-mix caption').textContent(), /Daniel's output/);
  await finish(p);
});

test('<mha-kv-calculator> under the CSP: bytes from the engine’s d_k, controls and attributes, errors in place', async () => {
  const p = await open('kv');
  const { page } = p;
  const kv = page.locator('mha-kv-calculator');
  const bytes = () => page.evaluate(() => document.querySelector('mha-kv-calculator').bytes);
  const dK = await page.evaluate(async () => {
    const { getEngine } = await import('/dist/mha-lesson-elements.js');
    return (await getEngine()).passport({ seqLen: 4096, dModel: 8192, numHeads: 64, kvHeads: 8, bias: false }).dK;
  });
  assert.equal(dK, 128);
  assert.equal(await bytes(), 2 * 80 * 1 * 4096 * 8 * dK * 2);
  assert.equal(await kv.locator('[part="result"]').getAttribute('data-bytes'), String(2 * 80 * 4096 * 8 * 128 * 2));
  assert.match(await kv.locator('[part="result"]').textContent(), /8× smaller than with 64 K\/V heads/);
  assert.match(await kv.locator('[part="formula"]').innerHTML(), /<math/);
  await page.evaluate(() => { window.__changes = []; document.querySelector('mha-kv-calculator').addEventListener('change', (e) => window.__changes.push(e.detail)); });
  // controls
  await kv.locator('select[name="kv-heads"]').selectOption('1');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 4096 * 1 * 128 * 2);
  assert.equal(await kv.getAttribute('kv-heads'), '1');
  assert.match(await kv.locator('[part="result"]').textContent(), /64× smaller/);
  await kv.locator('input[name="context"]').fill('32768');
  await kv.locator('input[name="batch"]').fill('4');
  await kv.locator('select[name="dtype"]').selectOption('1');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 4 * 32768 * 1 * 128 * 1);
  assert.deepEqual([await kv.getAttribute('context'), await kv.getAttribute('batch'), await kv.getAttribute('dtype-bytes')], ['32768', '4', '1']);
  assert.deepEqual((await page.evaluate(() => window.__changes)).at(-1), { model: 'LLaMA-2 70B', kvHeads: 1, context: 32768, batch: 4, dtypeBytes: 1 });
  // the embedded passport follows (one layer, T = 32768, 1 K/V head)
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').shadowRoot.querySelector('mha-passport')?.passport?.steps?.[0]?.shape?.[0] === 32768);
  // a refused number keeps the last valid value
  await kv.locator('input[name="context"]').fill('0');
  assert.match(await kv.locator('[part="input-error"]').textContent(), /context T: not accepted.*still uses 32,768/);
  assert.equal(await bytes(), 2 * 80 * 4 * 32768 * 1 * 128 * 1);
  await kv.locator('input[name="context"]').fill('100');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 4 * 100 * 128);
  assert.equal(await kv.locator('[part="input-error"]').count(), 0);
  // attributes
  await page.evaluate(() => {
    const el = document.querySelector('mha-kv-calculator');
    el.setAttribute('model', 'GPT-3 175B'); el.removeAttribute('kv-heads');
    el.setAttribute('context', '2048'); el.setAttribute('batch', '1'); el.setAttribute('dtype-bytes', '2');
  });
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 96 * 2048 * 96 * 128 * 2);
  assert.match(await kv.locator('[part="result"]').textContent(), /standard multi-head attention/);
  assert.equal(await kv.locator('select[name="model"]').inputValue(), 'GPT-3 175B');
  // the model select resets g to the new model's own
  await kv.locator('select[name="model"]').selectOption({ label: 'LLaMA-2 70B (80 layers)' });
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 2048 * 8 * 128 * 2);
  // a g that does not divide h: one message naming the attribute, the last valid g stays, the attribute as written
  await page.evaluate(() => document.querySelector('mha-kv-calculator').setAttribute('kv-heads', '5'));
  await kv.locator('[part="error"][data-attr="kv-heads"]').waitFor();
  assert.equal(await kv.locator('[part="error"]').count(), 1);
  assert.equal(await kv.locator('[part="error"]').textContent(), 'kv-heads: expected a divisor of LLaMA-2 70B\'s h = 64, got "5"');
  assert.equal(await kv.getAttribute('kv-heads'), '5');
  assert.equal(await bytes(), 2 * 80 * 2048 * 8 * 128 * 2);
  // words and out-of-range numbers: the same (never turned into 4096 or NaN)
  for (const [k, v] of [['context', 'lots'], ['model', 'GPT-5'], ['batch', '-1']]) {
    await page.evaluate(([a, x]) => document.querySelector('mha-kv-calculator').setAttribute(a, x), [k, v]);
    await kv.locator(`[part="error"][data-attr="${k}"]`).waitFor();
    assert.equal(await kv.getAttribute(k), v);
    assert.equal(await bytes(), 2 * 80 * 2048 * 8 * 128 * 2, `${k}="${v}" keeps the last valid value`);
    await page.evaluate(([a, x]) => document.querySelector('mha-kv-calculator').setAttribute(a, x), [k, { context: '2048', model: 'LLaMA-2 70B', batch: '1' }[k]]);
  }
  assert.equal(await kv.locator('select[name="model"]').inputValue(), 'LLaMA-2 70B');
  await page.evaluate(() => document.querySelector('mha-kv-calculator').setAttribute('kv-heads', '16'));
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 2048 * 16 * 128 * 2);
  await finish(p);
});

test('<mha-kv-calculator> keyboard only: Tab to the controls, arrow keys change g', async () => {
  const p = await open('kv');
  const { page } = p;
  let f = null;
  for (let i = 0; i < 20 && !(f && f.tag === 'select' && (await page.evaluate(() => document.querySelector('mha-kv-calculator').shadowRoot.activeElement?.name)) === 'kv-heads'); i++) {
    await page.keyboard.press('Tab'); f = await deepFocus(page);
  }
  assert.equal(f?.tag, 'select');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').getAttribute('kv-heads') === '16');
  assert.equal(await page.evaluate(() => document.querySelector('mha-kv-calculator').bytes), 2 * 80 * 4096 * 16 * 128 * 2);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('8192');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 8192 * 16 * 128 * 2);
  await finish(p);
});

test('<mha-model-table> under the CSP: d_k and W_Q,K,V,O parameters equal the engine’s passport, errors per row', async () => {
  const p = await open('models');
  const { page } = p;
  const ref = await page.evaluate(async () => {
    const { getEngine, MODELS } = await import('/dist/mha-lesson-elements.js');
    const mha = await getEngine();
    return MODELS.map((m) => {
      const pp = mha.passport({ seqLen: 1, dModel: m.dModel, numHeads: m.heads, kvHeads: m.kvHeads });
      return { name: m.name, dK: pp.dK, params: pp.params.wQ + pp.params.wK + pp.params.wV + pp.params.wO };
    });
  });
  assert.equal(ref.length, 7);
  const rows = await page.locator('mha-model-table tbody tr').all();
  assert.equal(rows.length, ref.length);
  for (const [i, r] of ref.entries()) {
    assert.equal((await rows[i].locator('th').textContent()).trim(), r.name);
    assert.equal((await rows[i].locator('td.dk').textContent()).trim(), String(r.dK));
    assert.equal((await rows[i].locator('td.params').textContent()).trim(), r.params.toLocaleString('en-US'));
  }
  assert.equal((await rows[0].locator('td.params').textContent()).trim(), (4 * 512 * 512).toLocaleString('en-US'));
  assert.equal((await rows[6].locator('td.params').textContent()).trim(), (2 * 8192 * 8192 + 2 * 8192 * 1024).toLocaleString('en-US'));
  // a property with a configuration the engine refuses: its message in that row, the others computed
  await page.evaluate(() => {
    document.querySelector('mha-model-table').models = [{ name: 'ok', dModel: 64, heads: 4 }, { name: 'bad', dModel: 64, heads: 5 }];
  });
  await page.locator('mha-model-table tr[data-model="bad"] [part="error"]').waitFor();
  assert.match(await page.locator('mha-model-table tr[data-model="bad"] [part="error"]').textContent(), /INVALID_CONFIG/);
  assert.equal((await page.locator('mha-model-table tr[data-model="ok"] td.dk').textContent()).trim(), '16');
  // the scrolling wrapper is focusable
  await page.keyboard.press('Tab');
  assert.equal((await deepFocus(page))?.label, 'Attention configuration of well-known models (one attention block)');
  await finish(p);
});

test('the three pages: axe-clean in light and dark, no horizontal overflow at 390 px', async () => {
  const axe = readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  for (const name of Object.keys(PAGES)) {
    for (const colorScheme of ['light', 'dark']) {
      for (const width of [1280, 390]) {
        // axe is injected as a script, which the page's own CSP would (rightly) refuse: bypass it here only
        const context = await env.browser.newContext({ bypassCSP: true, colorScheme, viewport: { width, height: 900 }, reducedMotion: 'reduce' });
        const page = await context.newPage();
        await page.goto(env.url + 'examples/' + PAGES[name].file);
        await page.waitForFunction(PAGES[name].ready);
        for (const step of name === 'stepper' ? [0, 3, 7] : [null]) {
          if (step !== null) {
            await page.evaluate((s) => document.querySelector('mha-stepper').setAttribute('step', String(s)), step);
            await page.locator('mha-stepper [part="result"] td[data-r="0"][data-c="1"]').hover();
            await page.locator('mha-stepper [part="cell-formula"] math').waitFor();
          }
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.ok(overflow <= 0, `${name} step ${step} at ${width} px (${colorScheme}): page ${overflow} px wider than the viewport`);
          await page.addScriptTag({ content: axe });
          const bad = await page.evaluate(async () => (await window.axe.run(document)).violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => ({ id: v.id, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })));
          assert.deepEqual(bad, [], `${name} step ${step} ${colorScheme} ${width}px: ${JSON.stringify(bad)}`);
        }
        await context.close();
      }
    }
  }
});

test('one sideways-scroll cue everywhere: at 390 px every box that overflows is marked (data-overflow) and shaded on the side with more, the others not', async () => {
  const cues = [];
  for (const name of Object.keys(PAGES)) {
    const s = await open(name, { viewport: { width: 390, height: 900 } });
    if (name === 'stepper') {
      await s.page.locator('mha-stepper [part="result"] td[data-r="0"][data-c="1"]').hover();
      await s.page.locator('mha-stepper [part="cell-formula"] math').waitFor();
    }
    await s.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const boxes = await s.page.evaluate(() => {
      const out = [];
      const walk = (root) => {
        for (const el of root.querySelectorAll('*')) {
          if (el.shadowRoot) walk(el.shadowRoot);
          if (!el.matches('.scroll, .tex, .formula, .table-wrap, .cell-formula') || getComputedStyle(el).overflowX === 'visible') continue;
          out.push({ host: root.host?.localName, cls: el.className, more: el.scrollWidth - el.clientWidth,
            overflow: el.getAttribute('data-overflow'), image: getComputedStyle(el).backgroundImage });
        }
      };
      walk(document);
      return out;
    });
    for (const b of boxes) {
      const what = `${name}: <${b.host}> .${b.cls} (${b.more} px more)`;
      if (b.more > 1) {
        assert.equal(b.overflow, 'end', what);
        assert.match(b.image, /^none, radial-gradient/, `${what}: a shade at the right edge only`);
      } else {
        assert.equal(b.overflow, null, what);
        assert.doesNotMatch(b.image, /radial-gradient/, what);
      }
      cues.push(b);
    }
    // scrolled to the far end, the shade moves to the left
    const scrolled = await s.page.evaluate(async () => {
      const find = (root) => {
        for (const el of root.querySelectorAll('*')) {
          if (el.hasAttribute?.('data-overflow')) return el;
          const inner = el.shadowRoot && find(el.shadowRoot);
          if (inner) return inner;
        }
        return null;
      };
      const box = find(document);
      if (!box) return null;
      box.scrollLeft = box.scrollWidth;
      await new Promise((r) => setTimeout(r, 100));
      return { overflow: box.getAttribute('data-overflow'), image: getComputedStyle(box).backgroundImage };
    });
    if (scrolled) {
      assert.equal(scrolled.overflow, 'start', name);
      assert.match(scrolled.image, /^radial-gradient\(.*\), none$/, name);
    }
    await finish(s);
  }
  assert.ok(cues.some((b) => b.more > 1), 'at least one box overflows at 390 px');
  assert.ok(new Set(cues.map((b) => b.host)).size >= 3, `boxes of several elements: ${[...new Set(cues.map((b) => b.host))]}`);
});

test('<mha-kv-calculator>: T follows the model\'s trained context until the reader sets it; a T beyond it is flagged with the cache at the model\'s own context', async () => {
  const p = await open('kv');
  const { page } = p;
  const kv = page.locator('mha-kv-calculator');
  const bytes = () => page.evaluate(() => document.querySelector('mha-kv-calculator').bytes);
  assert.equal(await bytes(), 2 * 80 * 4096 * 8 * 128 * 2, 'LLaMA-2 70B at its 4,096 tokens');
  assert.equal(await kv.locator('[part="context-note"]').count(), 0);
  // GPT-3 175B: T becomes its 2,048 tokens, the ledger's 9.66 GB
  await kv.locator('select[name="model"]').selectOption({ label: 'GPT-3 175B (96 layers)' });
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 96 * 2048 * 96 * 128 * 2);
  assert.equal(await kv.locator('input[name="context"]').inputValue(), '2048');
  assert.equal(await kv.locator('[part="context-note"]').count(), 0);
  // the reader asks for 4,096: computed, and flagged
  await kv.locator('input[name="context"]').fill('4096');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 96 * 4096 * 96 * 128 * 2);
  const note = kv.locator('[part="context-note"]');
  assert.equal(await note.getAttribute('data-bytes'), String(2 * 96 * 2048 * 96 * 128 * 2));
  assert.equal((await note.textContent()).trim(),
    'T = 4,096 is beyond the 2,048 tokens GPT-3 175B was trained to read: it never holds this cache. At its own context the cache is 9.66 GB (9.00 GiB).');
  await finish(p);
});

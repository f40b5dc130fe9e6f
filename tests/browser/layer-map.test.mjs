// <mha-layer-map> alone on its example page (examples/layer-map.html, strict CSP): every shape it
// shows equals the JS API's passport (two configurations, computed here in Node), the packed W_Q /
// W_K / W_V have h (or g) slices and follow `heads`, the causal mask appears only with `causal`,
// tensors are selected by click and keyboard (select event, reflected `selected`), the PyTorch line
// carries the engine's numbers, bad attributes give a message naming attribute, expectation and value
// (the attribute untouched, the last map kept), no CSP violation or console error, axe-core clean in
// light and dark, nothing clipped at 390 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setup, ARTIFACTS, deepFocus, checkNarrowPage, elementError, openExample } from './helpers.mjs';
import { createMHA } from '../../web/lib/src/index.js';

let env, mha;
before(async () => { env = await setup(); mha = await createMHA(); });
after(async () => { mha?.dispose(); await env?.close(); });

const A = { seqLen: 5, dModel: 24, numHeads: 2 };
const B = { seqLen: 10, dModel: 512, numHeads: 8, batch: 2 };
const bracket = (s) => `[${s.join(', ')}]`;
/** The tensors that take their shape from a passport step. */
const FROM_STEP = { x: 'input X', q: 'per-head Q', k: 'per-head K', v: 'per-head V', scores: 'per-head scores',
  weights: 'per-head attention weights', heads: 'per-head outputs', concat: 'concat', wo: 'W_O', attn: 'output' };

/** Waits until the element has drawn its map; on a timeout, says what the element shows instead. */
async function ready(page) {
  try {
    await page.waitForFunction(() => {
      const m = document.querySelector('mha-layer-map');
      return m?.passport && m.shadowRoot.querySelector('[part="tensor"]');
    }, null, { timeout: 20000 });
  } catch (e) {
    const state = await page.evaluate(() => document.querySelector('mha-layer-map')?.shadowRoot?.textContent.trim().slice(0, 300));
    throw new Error(`<mha-layer-map> did not draw: ${state}`, { cause: e });
  }
}

/** What the element shows: per tensor {shape (data-shape), text (the visible shape), derived, label}. */
const shown = (page) => page.evaluate(() => {
  const m = document.querySelector('mha-layer-map');
  return Object.fromEntries([...m.shadowRoot.querySelectorAll('[part="tensor"]')].map((b) => [b.dataset.tensor, {
    shape: b.dataset.shape.split(',').map(Number), text: b.querySelector('[part="shape"]').textContent.trim(),
    derived: b.querySelector('[part="shape"]').hasAttribute('data-derived'), label: b.getAttribute('aria-label'),
  }]));
});

/** Set attributes on the page's element and wait until it shows `cfg`. */
async function configure(page, attrs, cfg) {
  await page.evaluate((a) => {
    const m = document.querySelector('mha-layer-map');
    for (const [k, v] of Object.entries(a)) (v === null ? m.removeAttribute(k) : m.setAttribute(k, v));
  }, attrs);
  const x = cfg.batch ? [cfg.batch, cfg.seqLen, cfg.dModel] : [cfg.seqLen, cfg.dModel];
  await page.waitForFunction(([x, h]) => {
    const m = document.querySelector('mha-layer-map');
    const b = m?.shadowRoot.querySelector('[data-tensor="x"]');
    return b?.dataset.shape === x.join(',') && m.shadowRoot.querySelector('[data-tensor="wq"] [part="slices"]')?.dataset.slices === String(h);
  }, [x, cfg.numHeads]);
}

function assertShapesMatch(s, p, cfg, what) {
  for (const [name, step] of Object.entries(FROM_STEP)) {
    const want = p.steps.find((x) => x.name === step).shape;
    assert.deepEqual(s[name].shape, want, `${what}: ${name} = passport “${step}”`);
    assert.equal(s[name].text, bracket(want), `${what}: ${name} shown`);
    assert.equal(s[name].derived, false, `${what}: ${name} is not marked derived`);
    assert.ok(s[name].label.includes(` ${bracket(want)}: `) && s[name].label.endsWith('shape from the engine'), `${what}: ${name} aria-label ${s[name].label}`);
  }
  const d = cfg.dModel, X = p.steps[0].shape, pre = X.slice(0, -1);
  const derived = { wq: [d, p.params.wQ / d], wk: [d, p.params.wK / d], wv: [d, p.params.wV / d], ln1: X, resid: X, ln2: X,
    w1: [d, 4 * d], hidden: [...pre, 4 * d], w2: [4 * d, d], mlp: X, y: X };
  for (const [name, want] of Object.entries(derived)) {
    assert.deepEqual(s[name].shape, want, `${what}: ${name}`);
    assert.equal(s[name].text, bracket(want), `${what}: ${name} shown`);
    assert.equal(s[name].derived, true, `${what}: ${name} is marked derived`);
    assert.ok(s[name].label.includes(` ${bracket(want)}: `) && s[name].label.endsWith('shape derived'), `${what}: ${name} aria-label ${s[name].label}`);
  }
  assert.deepEqual(Object.keys(s).sort(), [...Object.keys(FROM_STEP), ...Object.keys(derived)].sort());
}

test('shapes equal mha.passport for T=5, d=24, h=2 and B=2, T=10, d=512, h=8; slices and maps follow heads', async () => {
  const { page, errors } = await openExample(env, 'layer-map.html');
  await ready(page);
  const pA = mha.passport(A);
  let s = await shown(page);
  assertShapesMatch(s, pA, A, 'A');
  // the values themselves, so that an engine and an element wrong the same way fail too
  assert.deepEqual([s.q.shape, s.scores.shape, s.concat.shape, s.wo.shape, s.wq.shape], [[2, 5, 12], [2, 5, 5], [5, 24], [24, 24], [24, 24]]);
  assert.equal(await page.locator('mha-layer-map [data-k="dK"]').textContent(), '12');
  const slices = () => page.evaluate(() => {
    const r = document.querySelector('mha-layer-map').shadowRoot;
    return {
      wq: r.querySelectorAll('[data-tensor="wq"] [part="slices"] rect[fill^="#"], [data-tensor="wq"] [part="slices"] rect[fill^="rgb"]').length,
      wk: r.querySelectorAll('[data-tensor="wk"] [part="slices"] rect[fill^="#"], [data-tensor="wk"] [part="slices"] rect[fill^="rgb"]').length,
      wo: r.querySelectorAll('[data-tensor="wo"] [part="slices"] rect[fill^="#"], [data-tensor="wo"] [part="slices"] rect[fill^="rgb"]').length,
      scores: r.querySelectorAll('[data-map="scores"]').length, weights: r.querySelectorAll('[data-map="weights"]').length,
    };
  });
  assert.deepEqual(await slices(), { wq: 2, wk: 2, wo: 2, scores: 2, weights: 2 });

  await configure(page, { batch: '2', 'seq-len': '10', 'd-model': '512', heads: '8' }, B);
  const pB = mha.passport(B);
  s = await shown(page);
  assertShapesMatch(s, pB, B, 'B');
  assert.deepEqual([s.x.shape, s.q.shape, s.scores.shape, s.concat.shape, s.hidden.shape], [[2, 10, 512], [2, 8, 10, 64], [2, 8, 10, 10], [2, 10, 512], [2, 10, 2048]]);
  assert.deepEqual(await slices(), { wq: 8, wk: 8, wo: 8, scores: 8, weights: 8 });
  // heads 8 → 4 → 16: the slices and maps follow
  await configure(page, { heads: '4' }, { ...B, numHeads: 4 });
  assert.deepEqual(await slices(), { wq: 4, wk: 4, wo: 4, scores: 4, weights: 4 });
  assertShapesMatch(await shown(page), mha.passport({ ...B, numHeads: 4 }), B, 'B, h = 4');
  await configure(page, { heads: '16' }, { ...B, numHeads: 16 });
  assert.deepEqual(await slices(), { wq: 16, wk: 16, wo: 16, scores: 16, weights: 16 });
  // h = 64: 64 slices, 32 of the 64 maps drawn with the rest summed up
  await configure(page, { heads: '64', 'd-model': '4096' }, { ...B, dModel: 4096, numHeads: 64 });
  assert.deepEqual(await slices(), { wq: 64, wk: 64, wo: 64, scores: 32, weights: 32 });
  assert.equal(await page.locator('mha-layer-map [data-map="scores"]').last().getAttribute('data-n'), '64');
  assert.equal(await page.locator('mha-layer-map .more').first().getAttribute('data-n'), '… 33 more …');
  await configure(page, { 'd-model': '512' }, { ...B, numHeads: 64 });
  // grouped-query: W_K has g slices, K is [B, g, T, d_k]
  await configure(page, { heads: '8', 'kv-heads': '2' }, B);
  await page.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelector('[data-tensor="k"]').dataset.shape === '2,2,10,64');
  const pG = mha.passport({ ...B, kvHeads: 2 });
  assertShapesMatch(await shown(page), pG, B, 'B, g = 2');
  assert.deepEqual(await slices(), { wq: 8, wk: 2, wo: 8, scores: 8, weights: 8 });
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
});

test('the causal mask: one grey triangle per map with causal, none without', async () => {
  const { page, errors } = await openExample(env, 'layer-map.html');
  await ready(page);
  const masks = () => page.evaluate(() => document.querySelector('mha-layer-map').shadowRoot.querySelectorAll('[part="mask"]').length);
  assert.equal(await masks(), 4, 'h = 2: two score maps and two weight maps');
  // the staircase covers exactly the cells above the diagonal: T(T−1)/2 of T² (T = 5: 10 of 25)
  const area = await page.evaluate(() => {
    const poly = document.querySelector('mha-layer-map').shadowRoot.querySelector('[data-map="scores"] [part="mask"]');
    const pts = poly.getAttribute('points').trim().split(/\s+/).map((p) => p.split(',').map(Number));
    let a = 0;
    for (let i = 0; i < pts.length; i++) { const [x1, y1] = pts[i], [x2, y2] = pts[(i + 1) % pts.length]; a += x1 * y2 - x2 * y1; }
    const side = Number(poly.parentElement.querySelector('rect').getAttribute('width'));
    return Math.abs(a / 2) / side ** 2;
  });
  assert.ok(Math.abs(area - 10 / 25) < 1e-9, `masked share ${area}`);
  await page.evaluate(() => document.querySelector('mha-layer-map').removeAttribute('causal'));
  await page.waitForFunction(() => !document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="mask"]'));
  assert.equal(await masks(), 0);
  assert.doesNotMatch(await page.locator('mha-layer-map [part="caption"]').textContent(), /causal/);
  await page.evaluate(() => { const m = document.querySelector('mha-layer-map'); m.setAttribute('heads', '4'); m.toggleAttribute('causal', true); });
  await page.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelectorAll('[part="mask"]').length === 8);
  assert.deepEqual(errors, []);
});

test('keyboard: Tab to a tensor, Enter and Space select it; select event, reflected attribute, detail panel', async () => {
  const { page, errors } = await openExample(env, 'layer-map.html');
  await ready(page);
  await page.evaluate(() => { window.__sel = []; document.querySelector('mha-layer-map').addEventListener('select', (e) => window.__sel.push(e.detail)); });
  const tabTo = async (name) => {
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      const f = await page.evaluate(() => {
        let el = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        return el?.dataset?.tensor;
      });
      if (f === name) return;
    }
    assert.fail(`Tab never reached ${name}`);
  };
  await page.locator('h1').click();
  await tabTo('k');
  const f = await deepFocus(page);
  assert.equal(f.tag, 'button');
  assert.equal(f.label, 'K [2, 5, 12]: per-head keys, shape from the engine');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('mha-layer-map').getAttribute('selected') === 'k');
  assert.deepEqual(await page.evaluate(() => window.__sel), [{ tensor: 'k', shape: [2, 5, 12] }]);
  const detail = page.locator('mha-layer-map [part="detail"]');
  assert.equal(await detail.getAttribute('data-tensor'), 'k');
  assert.equal((await detail.locator('[data-k="shape"]').textContent()).trim(), '[2, 5, 12] = [h, T, d_k]');
  assert.equal((await detail.locator('[data-k="formula"]').textContent()).trim(), mha.passport(A).steps.find((s) => s.name === 'per-head K').formula.replace(/\bX·/g, 'x̂·'),
    'the engine\'s formula with its input named as the block feeds it, x̂ = LN₁(X)');
  assert.match(await detail.locator('[data-k="source"]').textContent(), /passport, step “per-head K”/);
  assert.equal(await page.locator('mha-layer-map button[data-tensor="k"]').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('mha-layer-map button[data-tensor="q"]').getAttribute('aria-pressed'), 'false');
  await tabTo('scores');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('mha-layer-map').getAttribute('selected') === 'scores');
  assert.equal(await detail.getAttribute('data-tensor'), 'scores');
  assert.match(await detail.locator('[part="code"]').textContent(), /s = q @ k\.transpose\(-2, -1\) \/ math\.sqrt\(12\)  # \[2, 5, 5\]\nmask = torch\.ones\(5, 5, dtype=torch\.bool\)\.triu\(1\)/);
  // a derived tensor says so
  await tabTo('hidden');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('mha-layer-map').getAttribute('selected') === 'hidden');
  assert.match(await detail.locator('[data-k="source"]').textContent(), /derived: d_ff = 4·d_model = 96/);
  assert.equal((await page.evaluate(() => window.__sel)).length, 3);
  // the page sets `selected`: no select event
  await page.evaluate(() => { document.querySelector('mha-layer-map').selected = 'wo'; });
  await page.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="detail"]')?.dataset.tensor === 'wo');
  assert.equal(await page.locator('mha-layer-map').getAttribute('selected'), 'wo');
  assert.equal((await page.evaluate(() => window.__sel)).length, 3);
  // reduced motion: no transition on the buttons
  assert.equal(await page.locator('mha-layer-map button[data-tensor="x"]').evaluate((b) => getComputedStyle(b).transitionDuration), '0s');
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
});

test('the reshape view and the PyTorch line of Q, K, V carry the engine’s numbers', async () => {
  const { page, errors } = await openExample(env, 'layer-map.html');
  await ready(page);
  await configure(page, { batch: '2', 'seq-len': '10', 'd-model': '512', heads: '8' }, B);
  const p = mha.passport(B);
  for (const [name, which, step] of [['q', 'Q', 'per-head Q'], ['k', 'K', 'per-head K'], ['v', 'V', 'per-head V']]) {
    await page.locator(`mha-layer-map button[data-tensor="${name}"]`).click();
    await page.waitForFunction((n) => document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="detail"]')?.dataset.tensor === n, name);
    const [b, h, t, dk] = p.steps.find((x) => x.name === step).shape;
    const code = await page.locator('mha-layer-map [part="code"]').textContent();
    assert.ok(code.includes(`${name} = (x_hat @ W_${which}).view(${b}, ${t}, ${h}, ${dk}).transpose(1, 2)  # [${b}, ${h}, ${t}, ${dk}]`), code);
    assert.ok(code.includes(`# x_hat: [2, 10, 512], W_${which}: [512, 512]`), code);
    const caps = await page.locator('mha-layer-map [part="reshape"] .shape').allTextContents();
    assert.deepEqual(caps, [`[${b}, ${t}, ${h * dk}]`, `[${b}, ${t}, ${h}, ${dk}]`, `[${b}, ${h}, ${t}, ${dk}]`]);
    assert.equal(await page.locator('mha-layer-map [part="reshape"] figure').nth(1).locator('rect').count(), h, 'one block per head in the view');
  }
  assert.match(await page.locator('mha-layer-map [part="code"]').textContent(), /v = \(x_hat @ W_V\)\.view\(2, 10, 8, 64\)\.transpose\(1, 2\)  # \[2, 8, 10, 64\]/);
  // unbatched and grouped-query: transpose(0, 1), K's g heads repeated for the h query heads
  await configure(page, { batch: null, 'kv-heads': '2' }, { ...B, batch: undefined });
  await page.locator('mha-layer-map button[data-tensor="k"]').click();
  await page.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="detail"]')?.dataset.tensor === 'k');
  const code = await page.locator('mha-layer-map [part="code"]').textContent();
  assert.match(code, /k = \(x_hat @ W_K\)\.view\(10, 2, 64\)\.transpose\(0, 1\)  # \[2, 10, 64\]\nk = k\.repeat_interleave\(4, dim=0\)/);
  assert.deepEqual(mha.passport({ seqLen: 10, dModel: 512, numHeads: 8, kvHeads: 2 }).steps.find((x) => x.name === 'per-head K').shape, [2, 10, 64]);
  await page.locator('mha-layer-map button[data-tensor="concat"]').click();
  await page.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="detail"]')?.dataset.tensor === 'concat');
  assert.match(await page.locator('mha-layer-map [part="code"]').textContent(), /^c = o\.transpose\(0, 1\)\.reshape\(10, 512\)  # \[10, 512\]$/);
  assert.deepEqual(errors, []);
});

test('bad attributes: a message naming attribute, expectation and value; the attribute stays; the last map stays', async () => {
  const { page, errors } = await openExample(env, 'layer-map.html');
  await ready(page);
  const before = await shown(page);
  const cases = [
    [{ heads: '7' }, /heads: expected a divisor of d-model = 24 \(1, 2, 3, 4, 6, 8, 12, 24\) so that d_k = d_model \/ h is whole, got "7"/],
    [{ heads: '2', 'seq-len': 'abc' }, /seq-len: expected a whole number ≥ 1 \(tokens T\), got "abc"/],
    [{ 'seq-len': '5', 'd-model': '-24' }, /d-model: expected a whole number ≥ 1 \(the model width d_model\), got "-24"/],
    [{ 'd-model': '24', batch: '1.5' }, /batch: expected a whole number ≥ 1 \(batch size B, or leave it out for an unbatched input\), got "1\.5"/],
    [{ batch: '', 'kv-heads': '3' }, /^kv-heads: expected a divisor of heads = 2 \(1, 2\), got "3"\.?$/],
    // heads that do not divide d-model: one message, not a second one about kv-heads
    [{ heads: '5' }, /^heads: expected a divisor of d-model = 24 [^;]*, got "5"\.?$/],
    // a size the engine refuses: its message, after the attributes as written
    [{ 'kv-heads': '2', heads: '64', 'd-model': '65536' }, /<mha-layer-map seq-len="5" d-model="65536" heads="64" kv-heads="2">: the engine refused: weights too large: d_model = 65536/],
  ];
  await page.evaluate(() => { window.__errs = []; document.querySelector('mha-layer-map').addEventListener('mha-error', (e) => window.__errs.push(e.detail.error.message)); });
  for (const [attrs, re] of cases) {
    const n = await page.evaluate(() => window.__errs.length);
    await page.evaluate((a) => { const m = document.querySelector('mha-layer-map'); for (const [k, v] of Object.entries(a)) m.setAttribute(k, v); }, attrs);
    await page.waitForFunction((n) => window.__errs.length > n, n);
    assert.match(await page.evaluate(() => window.__errs.at(-1)), re);
    const msg = await page.locator('mha-layer-map [part="error"]').textContent();
    const attr = await page.locator('mha-layer-map [part="error"]').getAttribute('data-attr');
    if (!/engine refused/.test(msg)) assert.equal(attr, msg.split(':')[0], 'data-attr names the attribute');
    assert.match(msg.replace(/ The map still shows.*$/, ''), re);
    assert.match(msg, /still shows the last valid attributes/);
    for (const [k, v] of Object.entries(attrs)) assert.equal(await page.locator('mha-layer-map').getAttribute(k), v, `${k} as written`);
    assert.deepEqual(await shown(page), before, 'the last good map stays');
    assert.doesNotMatch(await page.locator('mha-layer-map').evaluate((m) => m.shadowRoot.textContent), /NaN|undefined/);
  }
  // fixed: the message goes
  await page.evaluate(() => { const m = document.querySelector('mha-layer-map'); m.setAttribute('d-model', '24'); m.setAttribute('heads', '2'); });
  await page.waitForFunction(() => !document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="error"]'));
  // an unknown selected name lists the valid ones and keeps the last selection
  await page.evaluate(() => document.querySelector('mha-layer-map').setAttribute('selected', 'W_Q'));
  await page.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="selected-error"]'));
  assert.equal(await page.locator('mha-layer-map [part="selected-error"]').textContent(),
    'selected: expected one of x, ln1, wq, wk, wv, q, k, v, scores, weights, heads, concat, wo, attn, resid, ln2, w1, hidden, w2, mlp, y, got "W_Q"; still showing q.');
  assert.equal(await page.locator('mha-layer-map').getAttribute('selected'), 'W_Q');
  assert.equal(await page.locator('mha-layer-map [part="detail"]').getAttribute('data-tensor'), 'q');
  assert.match(await page.evaluate(() => window.__errs.at(-1)), /selected: expected one of x, ln1/);
  // a fresh element with a bad attribute from the start: message, no map, mha-error
  const fresh = await elementError(page, 'mha-layer-map', { 'd-model': '30', heads: '4' });
  assert.match(fresh.event, /heads: expected a divisor of d-model = 30 \(1, 2, 3, 5, 6, 10, 15, 30\).*got "4"/);
  assert.match(fresh.shown, /heads: expected a divisor of d-model = 30/);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
});

test('wide page: the panel beside the map; 390 px light and dark: axe clean, nothing clipped', async () => {
  const { page, errors } = await openExample(env, 'layer-map.html');
  await ready(page);
  const side = await page.evaluate(() => {
    const r = document.querySelector('mha-layer-map').shadowRoot;
    const d = r.querySelector('[part="detail"]').getBoundingClientRect(), q = r.querySelector('[data-tensor="q"]').getBoundingClientRect();
    return d.left > q.right;
  });
  assert.ok(side, 'at 1000 px the detail panel sits to the right of the map');
  await page.locator('mha-layer-map').screenshot({ path: path.join(ARTIFACTS, 'element-mha-layer-map-1000-light.png') });
  assert.deepEqual(errors, []);
  const clipped = (page) => page.evaluate(() => {
    const out = [];
    const W = document.documentElement.clientWidth;
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        const r = el.getBoundingClientRect();
        if (r.width && (r.left < -0.5 || r.right > W + 0.5)) out.push(`${el.tagName} ${el.className?.baseVal ?? el.className} outside: ${r.left}..${r.right}`);
        const cs = getComputedStyle(el);
        if (el.scrollWidth > el.clientWidth + 1 && ['hidden', 'clip'].includes(cs.overflowX) && !el.classList.contains('sr-only')) out.push(`${el.tagName} ${el.className} clips ${el.scrollWidth} > ${el.clientWidth}`);
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return out;
  });
  for (const cfg of [null, { batch: '2', 'seq-len': '10', 'd-model': '512', heads: '8', 'kv-heads': '2', selected: 'k' }]) {
    await checkNarrowPage(env, {
      page: 'examples/layer-map.html', tag: cfg ? 'mha-layer-map-B' : 'mha-layer-map',
      ready: async (p) => {
        await ready(p);
        if (cfg) await configure(p, cfg, B);
        await p.waitForFunction(() => document.querySelector('mha-layer-map').shadowRoot.querySelector('[part="detail"] [part="reshape"]'));
        assert.deepEqual(await clipped(p), [], 'nothing clipped or outside the 390 px page');
      },
    });
  }
  // the dark scheme really is dark inside the element
  const { page: dark, errors: e2 } = await env.newPage({ colorScheme: 'dark', viewport: { width: 390, height: 800 } });
  await dark.goto(`${env.url}examples/layer-map.html`);
  await ready(dark);
  assert.equal(await dark.locator('mha-layer-map button[data-tensor="x"]').evaluate((b) => getComputedStyle(b).backgroundColor), 'rgb(13, 17, 23)');
  assert.deepEqual(await dark.evaluate(() => window.__csp), []);
  assert.deepEqual(e2, []);
});

// Models fetched when seen: the trained-model elements fetch their models only
// when they come within one viewport of the visible page (trained-shared.js, loading="lazy" by
// default), show a placeholder with the download size until then, and `loading="eager"` fetches at
// once. The lesson's first paint (everything fetched before the reader scrolls) stays under 1.5 MB of
// response bodies (uncompressed); scrolled to the bottom, every shipped model is fetched exactly once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, openExample, revealUntil, ROOT } from './helpers.mjs';

const FIRST_PAINT_LIMIT = 1.5e6;   // bytes, uncompressed response bodies
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'web', 'lib', 'models', 'index.json'), 'utf8'));
const sizeOf = new Map(Object.values(manifest).filter(Array.isArray).flat().map((m) => [m.file, m.bytes]));

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/** Records every response's body size, tagged with the phase it arrived in. */
function recorder(page) {
  const log = [];
  const state = { phase: 'first-paint' };
  const pending = [];
  page.on('response', (r) => {
    const phase = state.phase;
    pending.push(r.body().then((b) => log.push({ phase, path: new URL(r.url()).pathname, bytes: b.length }), () => {}));
  });
  return { log, state, settle: () => Promise.all(pending) };
}

const modelsIn = (log) => log.filter((x) => x.path.endsWith('.safetensors')).map((x) => path.basename(x.path));

test('the lesson: at most 1.5 MB before the reader scrolls and no model; each model fetched once after scrolling to the bottom', { timeout: 240_000 }, async () => {
  const { page, errors } = await env.newPage({ viewport: { width: 1280, height: 900 } });
  const rec = recorder(page);
  await page.goto(env.url);
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 120_000 });
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(1500);
  await rec.settle();
  const first = rec.log.filter((x) => x.phase === 'first-paint');
  const firstBytes = first.reduce((a, x) => a + x.bytes, 0);
  console.log(`first paint: ${firstBytes} bytes in ${first.length} responses`);
  assert.ok(firstBytes > 100_000, `the measurement counts the page's bytes (${firstBytes})`);
  assert.ok(firstBytes <= FIRST_PAINT_LIMIT, `first paint downloads ${firstBytes} bytes (limit ${FIRST_PAINT_LIMIT}): ${first
    .sort((a, b) => b.bytes - a.bytes).slice(0, 6).map((x) => `${x.path} ${x.bytes}`).join(', ')}`);
  assert.deepEqual(modelsIn(first), [], 'no model before the reader scrolls');

  // the placeholders say what each element will fetch, with the manifest's sizes
  const explorer = await page.evaluate(() => {
    const p = document.querySelector('#explorer').shadowRoot.querySelector('[part="placeholder"]');
    return p && { text: p.textContent.replace(/\s+/g, ' '), bytes: p.querySelector('[part="size"]')?.dataset.bytes };
  });
  assert.ok(explorer, 'the explorer shows its placeholder');
  assert.match(explorer.text, /charlm-h4-s0\.safetensors \(347\.2 kB\) is fetched when this part of the page comes into view/);
  assert.equal(Number(explorer.bytes), sizeOf.get('charlm-h4-s0.safetensors'));
  const twins = await page.evaluate(() => document.querySelector('#twins').shadowRoot.querySelector('[part="size"]')?.dataset.bytes);
  assert.equal(Number(twins), manifest.models.reduce((a, m) => a + m.bytes, 0), 'the twins: the four models of the manifest together');
  const story = await page.evaluate(() => document.querySelector('#gqa-story').shadowRoot.querySelector('[part="size"]')?.dataset.bytes);
  assert.equal(Number(story), sizeOf.get('stories260K.safetensors'));

  // scroll to the bottom as a reader would (the page grows as elements fill in)
  rec.state.phase = 'scrolled';
  for (let y = 600; ; y += 600) {
    const done = await page.evaluate((yy) => { scrollTo(0, yy); return scrollY + innerHeight >= document.documentElement.scrollHeight - 2; }, y);
    await page.waitForTimeout(150);
    if (done) break;
  }
  const tags = ['#explorer', '#surprisal', '#induction', '#phase-change', '#generate', '#twins', '#gqa-twins', '#gqa-story'];
  // an element the quick scroll passed before it had held still near the viewport (whenNear) is
  // scrolled back to, as a reader who stops there would
  for (const s of tags) await revealUntil(page, s, (el) => !el.shadowRoot.querySelector('[part="placeholder"]'), 60_000);
  await page.waitForFunction(() => document.querySelector('#gqa-twins').rows && document.querySelector('#twins').rows && document.querySelector('#gqa-story').lm, null, { timeout: 120_000 });
  await page.waitForLoadState('networkidle');
  await rec.settle();
  const models = modelsIn(rec.log).sort();
  const shipped = [...sizeOf.keys()].sort();
  assert.deepEqual(models, shipped, 'every shipped model, each fetched once');
  const after = rec.log.filter((x) => x.phase === 'scrolled').reduce((a, x) => a + x.bytes, 0);
  console.log(`after scrolling to the bottom: ${firstBytes + after} bytes in all (${after} more)`);
  assert.deepEqual(errors, []);
});

test('loading="eager" fetches at once; a lazy element far below waits until it is scrolled to; load() and the button fetch at once', { timeout: 120_000 }, async () => {
  const { page, errors, fetched } = await openExample(env, 'induction.html');
  await page.waitForFunction(() => document.querySelector('mha-induction').measured, null, { timeout: 60_000 });
  assert.deepEqual(fetched.filter((f) => f.endsWith('.safetensors')), ['/models/charlm-h4-s0.safetensors'], 'the element in view fetched its model');
  await page.evaluate(() => {
    const spacer = document.createElement('div');
    spacer.style.height = '6000px';
    const add = (id, attrs) => {
      const el = document.createElement('mha-induction');
      el.id = id;
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      return el;
    };
    document.querySelector('main').append(spacer,
      add('eager', { loading: 'eager', model: '../models/charlm-h1-s0.safetensors' }),
      add('lazy', { model: '../models/charlm-h1-s1.safetensors' }),
      add('button', { model: '../models/charlm-h4-s1.safetensors' }));
  });
  await page.waitForFunction(() => document.querySelector('#eager').measured, null, { timeout: 60_000 });
  await page.waitForTimeout(1000);
  const models = () => fetched.filter((f) => f.endsWith('.safetensors'));
  assert.deepEqual(models(), ['/models/charlm-h4-s0.safetensors', '/models/charlm-h1-s0.safetensors'], 'eager: fetched 6000 px below the fold; lazy: not yet');
  const shown = await page.evaluate(() => document.querySelector('#lazy').shadowRoot.querySelector('[part="placeholder"]')?.textContent.replace(/\s+/g, ' '));
  assert.match(shown, /charlm-h1-s1\.safetensors \(345\.3 kB\) is fetched when this part of the page comes into view\. Fetch now \(345\.3 kB\)/);
  // the button of the placeholder fetches at once, without scrolling
  await page.evaluate(() => document.querySelector('#button').shadowRoot.querySelector('[part="load"]').click());
  await page.waitForFunction(() => document.querySelector('#button').measured, null, { timeout: 60_000 });
  assert.deepEqual(models().slice(2), ['/models/charlm-h4-s1.safetensors']);
  assert.equal(await page.evaluate(() => window.scrollY), 0, 'the button did not scroll');
  // scrolled to, the lazy one fetches
  await page.locator('#lazy').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector('#lazy').measured, null, { timeout: 60_000 });
  assert.deepEqual(models().slice(3), ['/models/charlm-h1-s1.safetensors']);
  assert.deepEqual(errors, []);
});

// A course page of elements only: the elements above the trained one are one line tall until the
// engine has computed them, so at the first layout the trained element sits within the first screen.
const BELOW_OTHERS = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>elements above a lazy one</title>
<script type="module" src="/dist/mha-components.js"></script>
<script type="module" src="/dist/mha-lesson-elements.js"></script>
<script type="module" src="/dist/mha-trained.js"></script></head><body><main>
<mha-widget heads="4"></mha-widget><mha-stepper step="3"></mha-stepper><mha-layer-map></mha-layer-map>
<mha-cost-ledger></mha-cost-ledger><mha-kv-calculator></mha-kv-calculator><mha-causal-mask></mha-causal-mask>
<mha-cross-attention></mha-cross-attention><mha-wo-mix></mha-wo-mix><mha-model-table></mha-model-table>
<mha-widget heads="8" seq-len="8"></mha-widget><mha-stepper step="5"></mha-stepper>
<mha-trained-heads id="far" text="a cat sat. a cat sat."></mha-trained-heads></main></body></html>`;

test('a lazy element below other elements that grow as they compute: no model until the reader scrolls to it', { timeout: 120_000 }, async () => {
  const { page, errors } = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await page.route('**/below-others.html', (r) => r.fulfill({ contentType: 'text/html', body: BELOW_OTHERS }));
  // counted by the server: the trained-heads explorer fetches its model in the engine worker, whose
  // requests the page's request events do not report
  const fetched = [];
  const count = (req) => { const p = new URL(req.url, 'http://x').pathname; if (/\.safetensors$/.test(p)) fetched.push(p); };
  env.server.server.on('request', count);
  await page.goto(`${env.url}below-others.html`);
  await page.waitForFunction(() => document.querySelector('mha-model-table').rows && document.querySelectorAll('mha-widget')[1].shadowRoot.querySelector('mha-heads'), null, { timeout: 60_000 });
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(1500);
  const top = await page.evaluate(() => document.querySelector('#far').getBoundingClientRect().top);
  assert.ok(top >= 5000, `the trained element ends ${top} px down`);
  assert.deepEqual(fetched, [], 'no model before the reader scrolls');
  assert.ok(await page.evaluate(() => !!document.querySelector('#far').shadowRoot.querySelector('[part="placeholder"]')), 'the placeholder is shown');
  await page.locator('#far').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => !document.querySelector('#far').shadowRoot.querySelector('[part="placeholder"]'), null, { timeout: 60_000 });
  await page.waitForFunction(() => document.querySelector('#far').lm, null, { timeout: 60_000 });
  env.server.server.off('request', count);
  assert.deepEqual(fetched, ['/models/charlm-h4-s0.safetensors'], 'scrolled to, it fetches its model once');
  assert.deepEqual(errors, []);
});

test('a bad loading value: one message naming it, mha-error {error} with the argument, the attribute kept, lazy behaviour', { timeout: 60_000 }, async () => {
  const { page, errors } = await openExample(env, 'induction.html');
  const r = await page.evaluate(async () => {
    const el = document.createElement('mha-induction');
    el.setAttribute('loading', 'soon');
    const ev = new Promise((res) => el.addEventListener('mha-error', (e) => res(e.detail)));
    const spacer = document.createElement('div');
    spacer.style.height = '6000px';
    document.querySelector('main').append(spacer, el);
    const detail = await ev;
    await el.updateComplete;
    return { message: detail.error.message, code: detail.error.code, argument: detail.error.argument,
      shown: [...el.shadowRoot.querySelectorAll('[part="error"]')].map((p) => p.textContent), attr: el.getAttribute('loading'),
      placeholder: !!el.shadowRoot.querySelector('[part="placeholder"]') };
  });
  assert.equal(r.code, 'INVALID_ARGUMENT');
  assert.equal(r.argument, 'loading');
  assert.equal(r.message, 'loading: expected one of "lazy", "eager", got "soon"');
  assert.deepEqual(r.shown, [r.message]);
  assert.equal(r.attr, 'soon');
  assert.ok(r.placeholder, 'taken as lazy: still waiting to be seen');
  assert.deepEqual(errors, []);
});

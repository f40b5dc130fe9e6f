// <mha-cost-ledger> alone on its example page (examples/cost-ledger.html) under the strict CSP of
// examples/: weights, KV cache, score memory and FLOPs equal to the engine's passport and to numbers
// computed by hand; h changed with d_model fixed; bad attributes named in place; keyboard; axe in
// light and dark; 390 px. And the weights line of <mha-kv-calculator>.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, deepFocus, checkNarrowPage, ARTIFACTS } from './helpers.mjs';
import path from 'node:path';
import { EXAMPLES_CSP } from '../../scripts/serve.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = () => document.querySelector('mha-cost-ledger')?.result?.byHeads?.length > 0;

async function open(file = 'cost-ledger.html', opts = {}) {
  const { page, errors, context } = await env.newPage(opts);
  const res = await page.goto(env.url + 'examples/' + file);
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  return { page, errors, context };
}

async function finish({ page, errors, context }) {
  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(errors, []);
  await context.close();
}

/** The data-value of a ledger row's size cell. */
const cell = (page, k) => page.locator(`mha-cost-ledger tr[data-k="${k}"] td.bytes`).getAttribute('data-value').then(Number);
const cellText = (page, k) => page.locator(`mha-cost-ledger tr[data-k="${k}"] td.bytes`).textContent().then((s) => s.trim());

test('<mha-cost-ledger> under the CSP: LLaMA-2 70B figures equal the engine’s passport and the hand-computed bytes', async () => {
  const p = await open();
  const { page } = p;
  await page.waitForFunction(ready);
  // by hand: 68,976,648,192 parameters × 2 bytes; 2·80·4096·8·128·2; 64·4096² × 2
  assert.equal(await cell(page, 'weights'), 137953296384);
  assert.equal(await cellText(page, 'weights'), '138.0 GB');
  assert.equal(await cell(page, 'attnWeights'), 2 * (2 * 8192 * 8192 + 2 * 8192 * 1024));
  assert.equal(await cell(page, 'kv'), 1342177280);
  assert.equal(await cellText(page, 'kv'), '1.34 GB');
  assert.equal(await cell(page, 'scores'), 2147483648);
  // the FLOPs: 80 × the engine's passport of one layer
  const eng = await page.evaluate(async () => {
    const { getEngine } = await import('/dist/mha-lesson-elements.js');
    const p = (await getEngine()).passport({ seqLen: 4096, batch: 1, dModel: 8192, numHeads: 64, kvHeads: 8, bias: false });
    return { flops: p.flops, memory: p.memory };
  });
  assert.equal(await cell(page, 'softmax'), 80 * eng.flops.softmax);
  assert.equal(eng.flops.softmax, 64 * 4096 * (6 * 4096 + 1));
  assert.equal(await cell(page, 'matmul'), 80 * eng.flops.matmul);
  assert.equal(await cell(page, 'projections'), 80 * (eng.flops.projections + eng.flops.output));
  assert.equal(await cell(page, 'mlp'), 80 * 2 * 4096 * 3 * 8192 * 28672);
  assert.equal(await cell(page, 'total'), 80 * eng.flops.total + 80 * 2 * 4096 * 3 * 8192 * 28672 + 2 * 4096 * 8192 * 32000);
  const sentence = await page.locator('mha-cost-ledger [data-k="memory-sentence"]').textContent();
  assert.match(sentence, /^Largest: the weights \(138\.0 GB\), 64× one layer's attention scores \(2\.15 GB\) and 103× the KV cache \(1\.34 GB\)\./);
  assert.match(sentence, /outweigh the whole KV cache/);
  assert.match(await page.locator('mha-cost-ledger [data-k="flops-sentence"]').textContent(), /^The softmax is 0\.36 % of the attention FLOPs/);
  await finish(p);
});

test('<mha-cost-ledger> h with d_model fixed: projections stay, softmax and score memory grow with h; change event; attribute untouched', async () => {
  const p = await open();
  const { page } = p;
  await page.waitForFunction(ready);
  const proj64 = await cell(page, 'projections');
  const soft64 = await cell(page, 'softmax');
  const scores64 = await cell(page, 'scores');
  await page.evaluate(() => { window.__changes = []; document.querySelector('mha-cost-ledger').addEventListener('change', (e) => window.__changes.push(e.detail)); });
  await page.locator('mha-cost-ledger select[name="heads"]').selectOption('8');
  await page.waitForFunction(() => document.querySelector('mha-cost-ledger').result?.config.heads === 8);
  // LLaMA-2's groups of 8 query heads per K/V head are kept: g = 1 at h = 8
  assert.equal(await page.locator('mha-cost-ledger select[name="kv-heads"]').inputValue(), '1');
  assert.equal(await cell(page, 'projections'), proj64);
  assert.equal(await cell(page, 'softmax'), soft64 / 8);
  assert.equal(await cell(page, 'scores'), scores64 / 8);
  assert.equal(await cell(page, 'kv'), 2 * 80 * 4096 * 1 * 1024 * 2);      // g = 1, d_k = 1024: the same KV bytes
  assert.deepEqual((await page.evaluate(() => window.__changes)).at(-1), { model: 'LLaMA-2 70B', heads: 8, kvHeads: 1, context: 4096, batch: 1, dModel: 8192, layers: 80, dtypeBytes: 2 });
  // the sentences are not a live region: one short line is announced once the choice settles
  assert.equal(await page.locator('mha-cost-ledger [part="sentence"]').getAttribute('aria-live'), null);
  const line = `LLaMA-2 70B, h = 8, g = 1, T = 4,096, B = 1: largest the weights (138.0 GB); ${await cellText(page, 'total')} in total.`;
  await page.waitForFunction((t) => document.querySelector('mha-cost-ledger').shadowRoot.querySelector('[part="announcement"]').textContent === t,
    line, { timeout: 5_000 });
  assert.equal(await page.locator('mha-cost-ledger').getAttribute('heads'), null, 'the author’s attributes are not rewritten');
  // the h table: one row per offered h, the current one marked
  const rows = await page.locator('mha-cost-ledger table[part="heads-table"] tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    h: Number(tr.dataset.h), cur: tr.getAttribute('aria-current'), proj: Number(tr.children[3].dataset.value),
    soft: Number(tr.children[4].dataset.value), scores: Number(tr.children[5].dataset.value),
  })));
  // each row keeps LLaMA-2's 8 query heads per K/V head: h from 8 up, the projections the same in every row
  assert.deepEqual(rows.map((r) => r.h), [8, 16, 32, 64, 128, 256, 512]);
  assert.deepEqual(rows.map((r) => r.proj), rows.map(() => proj64));
  assert.deepEqual(rows.filter((r) => r.cur === 'true').map((r) => r.h), [8]);
  for (const r of rows) {
    assert.equal(r.scores, r.h * 4096 * 4096);
    assert.equal(r.soft, 80 * r.h * 4096 * (6 * 4096 + 1));
  }
  await finish(p);
});

test('<mha-cost-ledger> widget config by attributes (T = 5, d_model = 24, 1 layer, float32), h = 1…8, and bad attributes', async () => {
  const p = await open();
  const { page } = p;
  await page.waitForFunction(ready);
  await page.evaluate(() => {
    window.__errors = [];
    const el = document.querySelector('mha-cost-ledger');
    el.addEventListener('mha-error', (e) => window.__errors.push(e.detail.error.message));
    for (const [k, v] of [['model', 'none'], ['d-model', '24'], ['context', '5'], ['layers', '1'], ['dtype-bytes', '4'], ['heads', '1']]) el.setAttribute(k, v);
  });
  for (const h of [1, 2, 4, 8]) {
    await page.evaluate((h) => document.querySelector('mha-cost-ledger').setAttribute('heads', String(h)), h);
    await page.waitForFunction((h) => { const r = document.querySelector('mha-cost-ledger').result; return r?.config.heads === h && r.config.dModel === 24; }, h);
    assert.equal(await cell(page, 'weights'), 4 * (4 * 24 * 24 + 4 * 24));   // with biases: 2,400 params × 4 bytes
    assert.equal(await cell(page, 'kv'), 4 * 2 * 5 * 24);
    assert.equal(await cell(page, 'scores'), 4 * h * 25);
    assert.equal(await cell(page, 'projections'), 2 * 5 * 24 * 24 * 4);
    assert.equal(await cell(page, 'softmax'), 155 * h);
    assert.equal(await cell(page, 'total'), 25440 + 155 * h);
    assert.equal(await page.locator('mha-cost-ledger tr[data-k="mlp"]').count(), 0);
  }
  // a bad number: named, expected and actual shown, the last good ledger kept, the attribute as written
  await page.evaluate(() => document.querySelector('mha-cost-ledger').setAttribute('context', 'lots'));
  const msg = page.locator('mha-cost-ledger [part="error"][data-attr="context"]');
  await msg.waitFor();
  assert.equal((await msg.textContent()).trim(), 'context: expected a whole number from 1 to 1048576, got "lots"');
  assert.equal(await page.locator('mha-cost-ledger').getAttribute('context'), 'lots');
  assert.equal(await cell(page, 'softmax'), 155 * 8);
  await page.evaluate(() => document.querySelector('mha-cost-ledger').setAttribute('model', 'GPT-5'));
  await page.locator('mha-cost-ledger [part="error"][data-attr="model"]').waitFor();
  assert.match(await page.locator('mha-cost-ledger [part="error"][data-attr="model"]').textContent(), /model: expected one of "GPT-2 \(small\)", "GPT-3 175B", "LLaMA-2 70B", "none", got "GPT-5"/);
  await page.evaluate(() => document.querySelector('mha-cost-ledger').setAttribute('dtype-bytes', '-2'));
  await page.locator('mha-cost-ledger [part="error"][data-attr="dtype-bytes"]').waitFor();
  assert.deepEqual(await page.evaluate(() => window.__errors.length), 3);
  // a configuration the engine refuses: its message in place
  await page.evaluate(() => document.querySelector('mha-cost-ledger').setAttribute('kv-heads', '3'));
  await page.waitForFunction(() => document.querySelector('mha-cost-ledger').error);
  assert.match(await page.locator('mha-cost-ledger [part="error"][role="alert"]').last().textContent(), /INVALID_CONFIG: kvHeads must divide numHeads \(8\), got kvHeads = 3/);
  // fixed: every message goes and the ledger comes back
  await page.evaluate(() => {
    const el = document.querySelector('mha-cost-ledger');
    el.setAttribute('context', '5'); el.setAttribute('model', 'none'); el.setAttribute('dtype-bytes', '4'); el.setAttribute('kv-heads', '4');
  });
  await page.waitForFunction(() => document.querySelector('mha-cost-ledger').result?.config.kvHeads === 4);
  assert.equal(await page.locator('mha-cost-ledger [part="error"]').count(), 0);
  await page.screenshot({ path: path.join(ARTIFACTS, 'element-mha-cost-ledger-widget-config.png'), fullPage: true });
  await finish(p);
});

test('<mha-cost-ledger> keyboard only: Tab to the heads select, arrow keys change h', async () => {
  const p = await open();
  const { page } = p;
  await page.waitForFunction(ready);
  let name = null;
  for (let i = 0; i < 20 && name !== 'heads'; i++) {
    await page.keyboard.press('Tab');
    name = await page.evaluate(() => document.querySelector('mha-cost-ledger').shadowRoot.activeElement?.name ?? null);
  }
  assert.equal((await deepFocus(page))?.tag, 'select');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.querySelector('mha-cost-ledger').result?.config.heads === 128);
  assert.equal(await cell(page, 'scores'), 2 * 128 * 4096 * 4096);
  await finish(p);
});

test('<mha-cost-ledger> page: axe-clean in light and dark, no overflow at 390 px', async () => {
  await checkNarrowPage(env, { page: 'examples/cost-ledger.html', tag: 'mha-cost-ledger', ready: (page) => page.waitForFunction(ready) });
  for (const colorScheme of ['light', 'dark']) {
    const context = await env.browser.newContext({ bypassCSP: true, colorScheme, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(env.url + 'examples/cost-ledger.html');
    await page.waitForFunction(ready);
    const { axeSeriousViolations } = await import('./helpers.mjs');
    assert.deepEqual(await axeSeriousViolations(page), [], colorScheme);
    await context.close();
  }
});

test('<mha-kv-calculator> shows the model’s weights beside the cache, with a computed comparison', async () => {
  const p = await open('kv-calculator.html');
  const { page } = p;
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator')?.result?.weightBytes > 0);
  const w = page.locator('mha-kv-calculator [part="weights"]');
  assert.equal(await w.getAttribute('data-bytes'), String(2 * 68976648192));
  assert.match(await w.textContent(), /^138\.0 GB/);
  assert.equal((await page.locator('mha-kv-calculator [part="comparison"]').textContent()).trim(),
    "The weights are 103× the KV cache: here the weights, not the cache, take most of the accelerator's memory. The cache would equal them at B·T = 421,001 cached tokens (a batch of 103 at T = 4,096).");
  // a batch of 128 at T = 4096: the cache overtakes the weights
  await page.locator('mha-kv-calculator input[name="batch"]').fill('128');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').bytes === 2 * 80 * 128 * 4096 * 8 * 128 * 2);
  assert.match(await page.locator('mha-kv-calculator [part="comparison"]').textContent(), /^The KV cache is 1\.2× the weights: at this context and batch the cache, not the weights/);
  // the long result is not a live region: one short line is announced once the edit settles
  assert.equal(await page.locator('mha-kv-calculator [part="result"]').getAttribute('aria-live'), null);
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').shadowRoot.querySelector('[part="announcement"]').textContent
    === 'LLaMA-2 70B, g = 8, T = 4,096, B = 128: 171.8 GB (160.0 GiB) of KV cache.', null, { timeout: 5_000 });
  // GPT-2 small at float32: 124,439,808 × 4 bytes
  await page.locator('mha-kv-calculator select[name="model"]').selectOption({ label: 'GPT-2 (small) (12 layers)' });
  await page.locator('mha-kv-calculator select[name="dtype"]').selectOption('4');
  await page.waitForFunction(() => document.querySelector('mha-kv-calculator').result?.weightBytes === 4 * 124439808);
  await finish(p);
});

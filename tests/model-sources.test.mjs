// Where a model's files come from (web/lib/src/formats/sources.js) and what loadModel says about
// them: every source (bytes, path, file: URL, http URL, File, a list of Files, a folder) opened as a
// folder {name, main, files, read, absent}; a llama2.c checkpoint with its tokenizer from a File
// list or a File option; GPT-2's vocab.json without merges.txt (and the reverse) refused naming the
// missing file; a tokenizer.json of another model type refused with "loadModel:" first; a folder
// answering 404 names the status and the URL; a GPT-2 folder over http is asked for no file it does
// not have, and a 404 is not asked again; `lm.heads` of a folder (random-token probes, checked
// against the attention by hand); the wasm heap reused by a model loaded after another is disposed;
// one model file read once (detection and reading share its bytes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { openSource, modelFileOf } from '../web/lib/src/formats/sources.js';
import { tokenProbes } from '../web/lib/src/lm/heads.js';
import { mulberry32 } from '../web/lib/src/engine/weights.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { gpt2Folder } from './helpers/gpt2-folder.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STORIES = path.join(ROOT, 'tests', 'fixtures', 'stories260K');
const GPT2 = path.join(ROOT, 'tests', 'golden-hf', 'gpt2-tied-gelu-new');   // 2 layers × 4 heads, vocab 40, context 16, no tokenizer
const read = (...p) => new Uint8Array(fs.readFileSync(path.join(...p)));
const enc = (s) => new TextEncoder().encode(typeof s === 'string' ? s : JSON.stringify(s));
// a byte-level BPE of 7 tokens (ids below the folder's vocab_size of 40): "ab a" → [5, 4]
const VOCAB = enc({ a: 0, b: 1, c: 2, 'Ġ': 3, 'Ġa': 4, ab: 5, '<|endoftext|>': 6 });
const MERGES = enc('#version: 0.2\nĠ a\na b\n');

let mha, TMP, server, base;
const requests = [];   // [path, status] of every request the server answered

before(async () => {
  mha = await createMHA({ threads: 1 });
  TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-sources-'));
  // gpt2-bpe/: the golden GPT-2 folder with vocab.json + merges.txt; gpt2-vocab-only/: without merges.txt
  for (const [name, extra] of [['gpt2-bpe', { 'vocab.json': VOCAB, 'merges.txt': MERGES }], ['gpt2-vocab-only', { 'vocab.json': VOCAB }], ['gpt2-bare', {}]]) {
    fs.mkdirSync(path.join(TMP, name));
    for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(GPT2, f), path.join(TMP, name, f));
    for (const [f, b] of Object.entries(extra)) fs.writeFileSync(path.join(TMP, name, f), b);
  }
  server = http.createServer((req, res) => {
    const rel = decodeURIComponent(req.url.split('?')[0]).replace(/^\/+/, '');
    const p = path.join(TMP, rel);
    if (rel.includes('..') || !fs.existsSync(p) || !fs.statSync(p).isFile()) { requests.push([rel, 404]); res.writeHead(404).end(); return; }
    requests.push([rel, 200]);
    res.writeHead(200).end(fs.readFileSync(p));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
});

after(() => {
  server?.close();
  if (TMP) fs.rmSync(TMP, { recursive: true, force: true });
});

const files = (dir) => fs.readdirSync(dir).map((f) => new File([read(dir, f)], f));

/** Asserts that `p` rejects with an MHAError INVALID_ARGUMENT whose message matches every pattern. */
async function refused(p, ...patterns) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof MHAError, `${e && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, 'INVALID_ARGUMENT', e.message);
    for (const re of patterns) assert.match(e.message, re);
    return true;
  });
}

test('openSource: every kind of source is a folder; one that names one file has it as `main`', async () => {
  const bin = path.join(STORIES, 'stories260K.bin');
  const cases = [
    [new Uint8Array([1, 2, 3]), { main: 'bytes', files: ['bytes'] }],
    [bin, { main: 'stories260K.bin', files: ['stories260K.bin'] }],
    [pathToFileURL(bin), { main: 'stories260K.bin' }],
    [`${base}gpt2-bpe/model.safetensors`, { main: 'model.safetensors' }],
    [new File([new Uint8Array(4)], 'x.bin'), { main: 'x.bin', files: ['x.bin'] }],
    [files(STORIES), { main: 'stories260K.bin' }],
    [files(path.join(TMP, 'gpt2-bpe')), { main: null }],
    [path.join(TMP, 'gpt2-bpe'), { main: null, files: ['config.json', 'merges.txt', 'model.safetensors', 'vocab.json'] }],
    [`${base}gpt2-bpe/`, { main: null, files: null, name: `${base}gpt2-bpe/` }],
  ];
  for (const [source, want] of cases) {
    const f = await openSource(source);
    for (const [k, v] of Object.entries(want)) assert.deepEqual(k === 'files' && v ? [...f[k]].sort() : f[k], v, `${String(source).slice(0, 60)}: ${k}`);
  }
  assert.deepEqual(await (await openSource(new Uint8Array([7, 8]))).read('bytes'), new Uint8Array([7, 8]));
  const dir = await openSource(path.join(TMP, 'gpt2-bare'));
  assert.equal(await dir.read('vocab.json', { optional: true }), null);
  assert.match(dir.absent('vocab.json'), /^no file .*gpt2-bare\/vocab\.json$/);
  const list = await openSource(files(path.join(TMP, 'gpt2-bare')));
  assert.equal(list.absent('vocab.json'), 'not among the chosen files (config.json, model.safetensors)');
  // the model file of a list: one .safetensors or .bin that is not a tokenizer, and no file of a folder
  assert.equal(modelFileOf(['stories260K.bin', 'tok512.bin']), 'stories260K.bin');
  assert.equal(modelFileOf(['m.safetensors']), 'm.safetensors');
  assert.equal(modelFileOf(['a.bin', 'b.bin']), null);
  assert.equal(modelFileOf(['model.safetensors', 'config.json']), null);
  assert.equal(modelFileOf(['model.safetensors']), null, 'a folder\'s weights without its config.json is a folder (that lacks config.json)');
  await refused(openSource([new File([new Uint8Array(4)], 'a.bin'), new File([new Uint8Array(4)], 'b.bin')]),
    /^loadModel: source: the chosen files \(a\.bin, b\.bin\) must be a Hugging Face model folder/);
  await refused(openSource(42), /^loadModel: source must be bytes \(ArrayBuffer, Uint8Array\) or a URL, got number$/);
});

test('llama2.c: the checkpoint and its tokenizer as one File list, or the tokenizer as a File, read as from paths', async () => {
  const want = await mha.loadModel(path.join(STORIES, 'stories260K.bin'), { tokenizer: path.join(STORIES, 'tok512.bin') });
  const ref = want.run('Once upon a time').logProbs.data;
  for (const [source, opts] of [
    [files(STORIES), {}],
    [new File([read(STORIES, 'stories260K.bin')], 'stories260K.bin'), { tokenizer: new File([read(STORIES, 'tok512.bin')], 'tok512.bin') }],
    [[new File([read(STORIES, 'stories260K.bin')], 'stories260K.bin')], { tokenizer: read(STORIES, 'tok512.bin') }],
  ]) {
    const lm = await mha.loadModel(source, opts);
    assert.equal(lm.config.tokenizer, 'llama2c');
    assert.deepEqual(Array.from(lm.encode('Once upon a time')), [1, 403, 407, 261, 378]);   // llama2.c's run.c
    assert.deepEqual(lm.run('Once upon a time').logProbs.data, ref);
    lm.dispose();
  }
  // a checkpoint File alone: no tokenizer, token ids
  const bare = await mha.loadModel(new File([read(STORIES, 'stories260K.bin')], 'stories260K.bin'));
  assert.equal(bare.config.tokenizer, 'none');
  bare.dispose();
  await refused(mha.loadModel(files(STORIES), { tokenizer: `${base}gpt2-bpe/` }), /^loadModel: tokenizer must name one file/);
  want.dispose();
});

test('one model file is read once: detecting its format and reading it share the bytes (one request over http, one read of a File)', async () => {
  fs.copyFileSync(path.join(STORIES, 'stories260K.bin'), path.join(TMP, 'once.bin'));
  const from = requests.length;
  const lm = await mha.loadModel(`${base}once.bin`);
  assert.deepEqual(requests.slice(from), [['once.bin', 200]]);
  assert.equal(lm.config.family, 'llama2c');
  lm.dispose();
  // a File: its bytes asked for once (this project's file, detected as not llama2.c, then read)
  const bytes = read(ROOT, 'web', 'lib', 'models', 'charlm-h1-s0.safetensors');
  let reads = 0;
  const file = new File([bytes], 'charlm-h1-s0.safetensors');
  const counted = { name: file.name, size: file.size, arrayBuffer: () => { reads++; return file.arrayBuffer(); } };
  const m = await mha.loadModel(counted);
  assert.equal(reads, 1);
  assert.equal(m.config.tokenizer, 'characters');
  m.dispose();
});

test('GPT-2 tokenizer files: both or neither; one without the other is refused naming the missing file', async () => {
  const dir = path.join(TMP, 'gpt2-bpe');
  const lm = await mha.loadModel(dir);
  assert.equal(lm.config.tokenizer, 'hf');
  assert.deepEqual(Array.from(lm.encode('ab a')), [5, 4]);
  lm.dispose();
  const bare = await mha.loadModel(path.join(TMP, 'gpt2-bare'));
  assert.equal(bare.config.tokenizer, 'none');
  bare.dispose();
  const only = (names) => files(dir).filter((f) => names.includes(f.name));
  for (const source of [path.join(TMP, 'gpt2-vocab-only'), only(['config.json', 'model.safetensors', 'vocab.json']), `${base}gpt2-vocab-only/`]) {
    await refused(mha.loadModel(source), /^loadModel: merges\.txt: missing in the model folder .*, which has vocab\.json: a GPT-2 tokenizer is vocab\.json and merges\.txt together/);
  }
  await refused(mha.loadModel(`${base}gpt2-vocab-only/`), new RegExp(`\\(HTTP 404 at ${base}gpt2-vocab-only/merges\\.txt\\)`));
  await refused(mha.loadModel(only(['config.json', 'model.safetensors', 'merges.txt'])),
    /^loadModel: vocab\.json: missing in the model folder the chosen files \(not among the chosen files \(config\.json, merges\.txt, model\.safetensors\)\), which has merges\.txt/);
});

test('a tokenizer.json of another model type: the message begins "loadModel: tokenizer.json:"', async () => {
  const wordPiece = { model: { type: 'WordPiece', vocab: { a: 0, '[UNK]': 1 }, unk_token: '[UNK]' } };
  const list = [...files(path.join(TMP, 'gpt2-bare')), new File([enc(wordPiece)], 'tokenizer.json')];
  await refused(mha.loadModel(list), /^loadModel: tokenizer\.json: model\.type must be "BPE" .*"WordPiece"/);
});

test('over http: a missing folder names the status and the URL; a GPT-2 folder is asked for no file it lacks; a 404 is not asked again', async () => {
  await refused(mha.loadModel(`${base}no-such-model/`),
    new RegExp(`^loadModel: config\\.json: missing in the model folder ${base}no-such-model/ \\(HTTP 404 at ${base}no-such-model/config\\.json; a Hugging Face model folder holds`));
  requests.length = 0;
  const lm = await mha.loadModel(`${base}gpt2-bpe/`);
  assert.equal(lm.config.tokenizer, 'hf');
  lm.dispose();
  assert.deepEqual(requests, [['gpt2-bpe/config.json', 200], ['gpt2-bpe/model.safetensors', 200], ['gpt2-bpe/vocab.json', 200], ['gpt2-bpe/merges.txt', 200]]);
  // a folder without tokenizer files: asked once for each (404), then not again
  requests.length = 0;
  (await mha.loadModel(`${base}gpt2-bare/`)).dispose();
  const first = requests.filter(([, s]) => s === 404).map(([p]) => p);
  assert.deepEqual(first, ['gpt2-bare/vocab.json', 'gpt2-bare/tokenizer.json']);
  requests.length = 0;
  const again = await mha.loadModel(`${base}gpt2-bare/`);
  assert.equal(again.config.tokenizer, 'none');
  again.dispose();
  assert.deepEqual(requests, [['gpt2-bare/config.json', 200], ['gpt2-bare/model.safetensors', 200]]);
});

test('lm.heads of a folder: measured on seeded random tokens; each previous-token score is the mean attention on the previous token', async () => {
  const lm = await mha.loadModel(GPT2);
  assert.equal(lm.headsProbes, 'random-tokens');
  const heads = lm.heads;
  const { numLayers: L, numHeads: h } = lm.config;
  assert.deepEqual(heads.map((x) => [x.layer, x.head]), Array.from({ length: L * h }, (_, i) => [Math.floor(i / h), i % h]));
  const probes = tokenProbes(lm.config);
  assert.equal(probes.repeat_span, 8, 'context 16: spans of 8 tokens');
  assert.ok(probes.repeat.every((t) => t.length === 16 && t.subarray(0, 8).every((v, i) => v === t[8 + i])));
  assert.ok(probes.text.flatMap((t) => Array.from(t)).every((v) => Number.isInteger(v) && v >= 0 && v < 40));
  // the previous-token and induction scores by hand, from the attention of each probe
  for (const { layer, head, scores, type } of heads) {
    let prev = 0, np = 0, ind = 0, ni = 0;
    for (const t of probes.text) {
      const a = lm.run(t).attention[layer];
      const T = a.shape[2];
      for (let q = 1; q < T; q++) { prev += a.data[head * T * T + q * T + q - 1]; np++; }
    }
    for (const t of probes.repeat) {
      const a = lm.run(t).attention[layer];
      const T = a.shape[2], n = 8;
      for (let q = n; q <= 2 * n - 2; q++) { ind += a.data[head * T * T + q * T + q - n + 1]; ni++; }
    }
    assert.ok(Math.abs(scores.previous - prev / np) < 1e-6, `L${layer} H${head} previous`);
    assert.ok(Math.abs(scores.induction - ind / ni) < 1e-6, `L${layer} H${head} induction`);
    assert.equal(typeof type, 'string');
  }
  const again = await mha.loadModel(GPT2);
  assert.deepEqual(again.heads, heads, 'the same probes on every load');
  again.dispose();
  lm.dispose();
  // a llama2.c checkpoint too
  const story = await mha.loadModel(path.join(STORIES, 'stories260K.bin'));
  assert.equal(story.headsProbes, 'random-tokens');
  assert.equal(story.heads.length, 5 * 8);
  story.dispose();
});

test('memory: a model loaded after another was disposed reuses the wasm heap (heapBytes does not grow; inUseBytes returns)', async () => {
  // a GPT-2-shaped folder of ≈ 13 MB float32 (d_model 64, vocabulary 50,257), random weights, as a File list
  const folder = (seed) => {
    const rand = mulberry32(seed);
    const values = (n) => Float32Array.from({ length: n }, () => (rand() - 0.5) * 0.1);
    const { tensors: t, config } = gpt2Folder({ dModel: 64, layers: 2, context: 64, vocab: 50257, values });
    return [new File([enc(config)], 'config.json'), new File([encodeSafetensors({ format: 'pt' }, t)], 'model.safetensors')];
  };
  const m = await createMHA({ threads: 1 });   // an engine of its own: its heap holds only these models
  const start = m.memory();
  const a = await m.loadModel(folder(1));
  a.run([464, 2068, 7586]);
  const loaded = m.memory();
  assert.ok(loaded.inUseBytes - start.inUseBytes > 12e6, `the weights are in wasm memory: ${loaded.inUseBytes - start.inUseBytes} bytes`);
  a.dispose();
  const freed = m.memory();
  assert.ok(freed.inUseBytes - start.inUseBytes < 1e6, `dispose frees the model: ${freed.inUseBytes - start.inUseBytes} bytes still in use`);
  const b = await m.loadModel(folder(2));
  b.run([464, 2068, 7586]);
  const second = m.memory();
  b.dispose();
  console.log(`# heap: start ${start.heapBytes}, first model ${loaded.heapBytes}, second model ${second.heapBytes} bytes; in use ${loaded.inUseBytes} / ${second.inUseBytes}`);
  assert.equal(second.heapBytes, loaded.heapBytes, 'the second model fits in the heap the first one left');
  m.dispose?.();
});

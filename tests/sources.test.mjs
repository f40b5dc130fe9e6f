// formats/sources.js without an engine: every kind of source opened as a folder, checked against
// the bytes written here: bytes (and views into a larger buffer), one File, File lists (a folder,
// or one model file with its llama2.c tokenizer), a directory handle (a stub of the File System
// Access API), a directory and a file path in Node, a file: URL, an http folder (a fetch stub);
// what each says of an absent file, sizes, ranges, the model file read once, and every refusal's
// exact message.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSource, modelFileOf, LLAMA2C_TOKENIZER_NAME } from '../web/lib/src/formats/sources.js';
import { MHAError } from '../web/lib/src/engine/errors.js';

const bytesOf = (n, seed = 3) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 0xff);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-sources-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const refused = (p, message) => assert.rejects(p, (e) => (e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === message) || assert.fail(`${e?.message}\n!== ${message}`));

test('modelFileOf and the llama2.c tokenizer names', () => {
  assert.equal(modelFileOf(['m.safetensors']), 'm.safetensors');
  assert.equal(modelFileOf(['stories.bin', 'tok512.bin']), 'stories.bin');
  assert.equal(modelFileOf(['x.BIN', 'Tokenizer.bin']), 'x.BIN');
  assert.equal(modelFileOf(['a.bin', 'b.safetensors']), null, 'two model files');
  assert.equal(modelFileOf(['tokenizer.bin']), null, 'a tokenizer only');
  assert.equal(modelFileOf(['m.bin', 'notes.TXT']), null, 'a .txt: a folder');
  assert.equal(modelFileOf(['m.bin', 'config.json']), null);
  assert.equal(modelFileOf(['model.safetensors']), null, 'a Hugging Face folder\'s weights');
  assert.equal(modelFileOf(['model-00001-of-00002.safetensors']), null);
  assert.equal(modelFileOf(['my-model.safetensors']), 'my-model.safetensors');
  assert.equal(modelFileOf(['m.gguf']), null);
  for (const n of ['tokenizer.bin', 'tok.bin', 'tok512.bin', 'TOK4096.BIN']) assert.ok(LLAMA2C_TOKENIZER_NAME.test(n), n);
  for (const n of ['tokenizer.bin.bak', 'mytok.bin', 'tok_a.bin', 'tokenizer.json']) assert.ok(!LLAMA2C_TOKENIZER_NAME.test(n), n);
});

test('bytes: one file named "bytes", read once, ranges cut from it; a view into a larger buffer is its own bytes', async () => {
  const big = bytesOf(64);
  for (const [source, want] of [[big, big], [big.buffer, big], [new DataView(big.buffer, 8, 16), big.subarray(8, 24)], [new Uint16Array(big.buffer, 4, 6), big.subarray(4, 16)]]) {
    const events = [];
    const { progressCounter } = await import('../web/lib/src/formats/sources.js');
    const f = await openSource(source, progressCounter((p) => events.push(p)));
    assert.deepEqual([f.name, f.main, f.files], ['the bytes given', 'bytes', ['bytes']]);
    assert.deepEqual(await f.read('bytes'), want);
    assert.deepEqual(await f.read('bytes', { offset: 2, length: 3 }), want.subarray(2, 5));
    assert.equal(await f.size('bytes'), want.length);
    assert.equal(await f.read('tokenizer.bin', { optional: true }), null);
    await refused(f.read('config.json'), 'loadModel: config.json: not in the bytes given (one file)');
    assert.equal(f.absent('x'), 'the bytes given is one file');
    assert.equal(events.length, 3, 'read once: one start, one add, one end');
    assert.deepEqual(events.at(-1), { file: 'bytes', loaded: want.length, total: want.length, fraction: 1 });
  }
  for (const [bad, what] of [[null, 'null'], [42, 'number'], [{}, 'object'], [undefined, 'undefined'], [[], 'object']]) {
    await refused(openSource(bad), `loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got ${what}`);
  }
});

test('Files: one File is its model file; a list is a folder, or one model file with its tokenizer; neither refused', async () => {
  const data = bytesOf(40);
  const one = await openSource(new File([data], 'm.safetensors'));
  assert.deepEqual([one.name, one.main, one.files], ['m.safetensors', 'm.safetensors', ['m.safetensors']]);
  assert.deepEqual(await one.read('m.safetensors'), data);
  assert.deepEqual(await one.read('m.safetensors', { offset: 30, length: 20 }), data.subarray(30));
  assert.equal(await one.size('m.safetensors'), 40);
  const files = [new File([data], 'config.json'), new File([bytesOf(10)], 'model.safetensors')];
  const f = await openSource(files);
  assert.deepEqual([f.name, f.main, f.files], ['the chosen files', null, ['config.json', 'model.safetensors']]);
  assert.deepEqual(await f.read('config.json', { maxBytes: 40 }), data);
  await refused(f.read('config.json', { maxBytes: 39 }), 'loadModel: config.json: file size must be at most 39 bytes, got 40');
  assert.deepEqual(await f.read('model.safetensors', { offset: 4, length: 2, maxBytes: 1 }), bytesOf(10).subarray(4, 6), 'a range is not held to maxBytes');
  assert.equal(await f.read('tokenizer.json', { optional: true }), null);
  await refused(f.read('vocab.json'), 'loadModel: vocab.json: not among the chosen files (config.json, model.safetensors)');
  assert.equal(f.absent('x'), 'not among the chosen files (config.json, model.safetensors)');
  assert.equal(await f.size('config.json'), 40);
  assert.equal(await f.size('nope'), null);
  const many = Array.from({ length: 14 }, (_, i) => new File([bytesOf(1)], `f${i}.json`));
  assert.equal((await openSource(many)).absent('x'), 'not among the chosen files (f0.json, f1.json, f2.json, f3.json, f4.json, f5.json, f6.json, f7.json, f8.json, f9.json, f10.json, f11.json, …)');
  const twelve = many.slice(0, 12);
  assert.equal((await openSource(twelve)).absent('x'), 'not among the chosen files (f0.json, f1.json, f2.json, f3.json, f4.json, f5.json, f6.json, f7.json, f8.json, f9.json, f10.json, f11.json)');
  const llama = await openSource([new File([bytesOf(8)], 'tok512.bin'), new File([data], 'stories.bin')]);
  assert.deepEqual([llama.name, llama.main, llama.files], ['stories.bin', 'stories.bin', ['tok512.bin', 'stories.bin']]);
  assert.deepEqual(await llama.read('tok512.bin'), bytesOf(8));
  assert.equal((await openSource([new File([data], 'only.json')])).name, 'only.json');
  await refused(openSource([new File([data], 'a.bin'), new File([data], 'b.bin')]),
    'loadModel: source: the chosen files (a.bin, b.bin) must be a Hugging Face model folder (config.json, model.safetensors, the tokenizer) or hold one model file (.safetensors, or a llama2.c .bin with its tokenizer.bin)');
});

/** A FileSystemDirectoryHandle stub over {name: bytes}; `opened` counts getFileHandle calls. */
function handle(files, name = 'picked') {
  const h = {
    kind: 'directory', name, opened: 0,
    async getFileHandle(file) {
      h.opened++;
      if (file === 'locked') throw Object.assign(new Error('The request is not allowed'), { name: 'NotAllowedError' });
      if (!files[file]) throw Object.assign(new Error(`${file} not found`), { name: 'NotFoundError' });
      return { getFile: async () => new File([files[file]], file) };
    },
  };
  return h;
}

test('a directory handle: files by name, ranges from one opened File, absent ones, other errors named', async () => {
  const data = bytesOf(30);
  const h = handle({ 'config.json': data, 'model.safetensors': bytesOf(100) });
  const f = await openSource(h);
  assert.deepEqual([f.name, f.main, f.files], ['picked', null, null]);
  assert.deepEqual(await f.read('config.json', { maxBytes: 30 }), data);
  await refused(f.read('config.json', { maxBytes: 29 }), 'loadModel: config.json: file size must be at most 29 bytes, got 30');
  assert.equal(await f.read('tokenizer.json', { optional: true }), null);
  await refused(f.read('tokenizer.json'), 'loadModel: tokenizer.json: cannot open it in the folder "picked": tokenizer.json not found');
  await refused(f.read('locked', { optional: true }), 'loadModel: locked: cannot open it in the folder "picked": The request is not allowed');
  const before = h.opened;
  assert.deepEqual(await f.read('model.safetensors', { offset: 0, length: 8 }), bytesOf(100).subarray(0, 8));
  assert.deepEqual(await f.read('model.safetensors', { offset: 95, length: 10 }), bytesOf(100).subarray(95));
  assert.equal(h.opened, before + 1, 'the ranges of a file share one opened File');
  f.done('model.safetensors');
  await f.read('model.safetensors', { offset: 0, length: 1 });
  assert.equal(h.opened, before + 2, 'done(): opened again');
  assert.equal(await f.size('model.safetensors'), 100);
  assert.equal(f.absent('vocab.json'), 'no file vocab.json in the folder "picked"');
});

test('Node paths: a directory (its listing), a file, a file: URL; missing files named with the path', async () => {
  const data = bytesOf(50);
  fs.writeFileSync(path.join(dir, 'config.json'), data);
  fs.writeFileSync(path.join(dir, 'm.bin'), bytesOf(20));
  const f = await openSource(`${dir}/`);
  assert.deepEqual([f.name, f.main, [...f.files].sort()], [`${dir}/`, null, ['config.json', 'm.bin']]);
  assert.deepEqual(await f.read('config.json'), data);
  assert.deepEqual(await f.read('config.json', { offset: 45, length: 10 }), data.subarray(45));
  await refused(f.read('config.json', { maxBytes: 49 }), 'loadModel: config.json: file size must be at most 49 bytes, got 50');
  assert.equal(await f.read('vocab.json', { optional: true }), null);
  assert.equal(await f.size('config.json'), 50);
  await refused(f.size('vocab.json'), `loadModel: vocab.json: cannot read ${dir}/vocab.json: ENOENT`);
  assert.equal(f.absent('vocab.json'), `no file ${dir}/vocab.json`);
  const noSlash = await openSource(dir);
  assert.equal(noSlash.absent('x'), `no file ${dir}/x`);
  // a file: URL of the directory reads the same files, without a listing
  const u = await openSource(pathToFileURL(`${dir}/`));
  assert.deepEqual([u.main, u.files], [null, null]);
  assert.deepEqual(await u.read('config.json'), data);
  assert.equal(u.absent('x'), `no file ${pathToFileURL(`${dir}/x`).href}`);
  // one file by path and by file: URL: its name is the last part
  const one = await openSource(path.join(dir, 'm.bin'));
  assert.deepEqual([one.name, one.main], [path.join(dir, 'm.bin'), 'm.bin']);
  assert.deepEqual(await one.read('m.bin'), bytesOf(20));
  assert.equal(await one.size('m.bin'), 20);
  const url = await openSource(pathToFileURL(path.join(dir, 'm.bin')).href);
  assert.deepEqual([url.main, await url.read('m.bin')], ['m.bin', bytesOf(20)]);
  const missing = await openSource(path.join(dir, 'none.bin'));
  await refused(missing.read('none.bin'), `loadModel: cannot read ${path.join(dir, 'none.bin')}: ENOENT`);
});

test('http: a URL ending in "/" is a folder (files asked by URL, ranges by Range), any other URL one file', async () => {
  const files = { 'config.json': bytesOf(12), 'model.bin': bytesOf(40) };
  const asked = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    const u = new URL(url);
    const name = decodeURIComponent(u.pathname.split('/').pop());
    asked.push([u.pathname, init?.headers?.Range ?? null]);
    if (u.pathname.startsWith('/down/')) return new Response('', { status: 503 });
    const b = files[name];
    if (!b) return new Response('', { status: 404 });
    const m = /bytes=(\d+)-(\d+)/.exec(init?.headers?.Range ?? '');
    if (m) {
      const [a, z] = [Number(m[1]), Math.min(Number(m[2]), b.length - 1)];
      return new Response(b.slice(a, z + 1), { status: 206, headers: { 'content-range': `bytes ${a}-${z}/${b.length}` } });
    }
    return new Response(b, { status: 200, headers: { 'content-length': String(b.length) } });
  };
  try {
    for (const source of ['http://h/models/x/', new URL('http://h/models/x/'), 'http://h/models/x/?v=2']) {
      const f = await openSource(source);
      assert.deepEqual([f.main, f.files], [null, null]);
      assert.deepEqual(await f.read('config.json'), files['config.json']);
      assert.equal(await f.size('model.bin'), null, 'unknown before a ranged read');
      assert.deepEqual(await f.read('model.bin', { offset: 36, length: 8 }), files['model.bin'].subarray(36));
      assert.equal(await f.size('model.bin'), 40);
      assert.equal(await f.read('vocab.json', { optional: true }), null);
      assert.equal(f.absent('vocab.json'), 'HTTP 404 at http://h/models/x/vocab.json');
      await refused(f.read('vocab.json'), 'loadModel: vocab.json: fetching http://h/models/x/vocab.json gave HTTP 404');
      f.done('model.bin');
    }
    const one = await openSource('http://h/models/x/model.bin?download=1#top');
    assert.deepEqual([one.name, one.main], ['http://h/models/x/model.bin?download=1#top', 'model.bin']);
    assert.deepEqual(await one.read('model.bin'), files['model.bin']);
    assert.deepEqual(await one.read('model.bin'), files['model.bin']);
    assert.equal(asked.filter(([p]) => p === '/models/x/model.bin').length, 4, 'the one-file source fetched once (3 ranged reads before)');
    const enc = await openSource('http://h/models/x/model%20v2.bin');
    assert.equal(enc.main, 'model v2.bin');
    const down = await openSource('http://h/down/m.bin');
    await refused(down.read('m.bin'), 'loadModel: fetching http://h/down/m.bin gave HTTP 503');
  } finally {
    globalThis.fetch = real;
  }
});

test('reads without `optional` refuse an absent file; sizes of other files than the one; progress of one-file sources; done() ends a ranged file', async () => {
  const { progressCounter } = await import('../web/lib/src/formats/sources.js');
  fs.writeFileSync(path.join(dir, 'p.bin'), bytesOf(30));
  await refused((await openSource(`${dir}//`)).read('missing.json'), `loadModel: missing.json: cannot read ${dir}/missing.json: ENOENT`);
  assert.equal((await openSource(`${dir}//`)).absent('x'), `no file ${dir}/x`);
  await refused((await openSource(handle({}))).size('missing'), 'loadModel: missing: cannot open it in the folder "picked": missing not found');
  const one = await openSource(bytesOf(4));
  assert.equal(await one.size('other'), null);
  // the progress of a file read by ranges ends when its reader is done with it
  for (const make of [async (pc) => openSource(`${dir}/`, pc), async (pc) => openSource([new File([bytesOf(30)], 'p.bin'), new File([bytesOf(2)], 'config.json')], pc)]) {
    const events = [];
    const f = await make(progressCounter((p) => events.push(p)));
    await f.read('p.bin', { offset: 0, length: 10 });
    f.done('p.bin');
    assert.deepEqual(events.at(-1), { file: 'p.bin', loaded: 30, total: 30, fraction: 1 });
  }
  // one file by path and by file: URL: counted
  for (const source of [path.join(dir, 'p.bin'), pathToFileURL(path.join(dir, 'p.bin')).href]) {
    const events = [];
    const f = await openSource(source, progressCounter((p) => events.push(p)));
    await f.read('p.bin');
    assert.deepEqual(events.at(-1), { file: 'p.bin', loaded: 30, total: 30, fraction: 1 }, source);
  }
  // a path with a colon inside is a path; a Windows drive letter is not a URL scheme
  fs.writeFileSync(path.join(dir, 'a:b.bin'), bytesOf(3));
  assert.deepEqual(await (await openSource(`${dir}/a:b.bin`)).read('a:b.bin'), bytesOf(3));
  const drive = await openSource('C:/no/such/m.bin');
  assert.equal(drive.main, 'm.bin');
  await refused(drive.read('m.bin'), 'loadModel: cannot read C:/no/such/m.bin: ENOENT');
  if (fs.existsSync('/dev/null')) await refused((await openSource('/dev/null')).read('null'), 'loadModel: cannot read /dev/null: null: /dev/null is not a file');
});

test('what is not a File, a File list or a directory handle is refused as a source; lists and names', async () => {
  const msg = 'loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got object';
  for (const bad of [{ name: 'm.bin', size: 3 }, { name: 3, size: 3, arrayBuffer() {} }, { name: 'm.bin', size: '3', arrayBuffer() {} },
    [new File([bytesOf(1)], 'm.bin'), 5], { kind: 'file', name: 'x', getFileHandle() {} }, { kind: 'directory', name: 'x', getFileHandle: 1 }]) {
    await refused(openSource(bad), msg);
  }
  const folderish = await openSource([new File([bytesOf(1)], 'config.json'), new File([bytesOf(1)], 'model.safetensors'), new File([bytesOf(1)], 'README.md')]);
  assert.equal(folderish.main, null);
  const names = Array.from({ length: 13 }, (_, i) => new File([bytesOf(1)], `x${i}.bin`));
  await refused(openSource(names), `loadModel: source: the chosen files (${names.slice(0, 12).map((f) => f.name).join(', ')}) must be a Hugging Face model folder (config.json, model.safetensors, the tokenizer) or hold one model file (.safetensors, or a llama2.c .bin with its tokenizer.bin)`);
  assert.equal(modelFileOf(['m.bin', 'a.json.bak']), 'm.bin');
  assert.equal(modelFileOf(['x.bin', 'model.safetensorsX']), 'x.bin');
  assert.equal(modelFileOf(['m.bin.bak']), null);
});

test('readModel: a tokenizer named as a file of the folder, or null; a tokenizer string beside a folder without a listing', async () => {
  const { readModel } = await import('../web/lib/src/formats/index.js');
  const d = new URL('./fixtures/stories260K/', import.meta.url);
  const bin = fs.readFileSync(new URL('stories260K.bin', d)), tok = fs.readFileSync(new URL('tok512.bin', d));
  const r = await readModel([new File([bin], 'stories260K.bin'), new File([tok], 'tok512.bin')], { tokenizer: 'tok512.bin' });
  assert.equal(r.tokenizer.type, 'llama2c');
  assert.equal(r.tokenizer.pieces.length, 512);
  const hfDir = new URL('./golden-hf/llama-gqa-tied/', import.meta.url);
  assert.equal((await readModel(hfDir, { tokenizer: null })).config.family, 'llama');
  assert.equal((await readModel(hfDir, { tokenizer: 'tok512.bin' })).config.family, 'llama', 'a folder without a listing: the string opened as a source of its own');
});

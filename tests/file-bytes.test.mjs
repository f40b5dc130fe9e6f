// formats/file-bytes.js without an engine: the progress counter's exact events; the bytes of a
// Blob, of a file on disk and of an http response (a fetch stub answering with Responses made
// here), whole or by ranges, at and past the file's end, checked against the bytes written; the
// size limit (inclusive) before anything is read; every error naming the file, the path or URL and
// the status; a 404 of an optional read remembered; a Range answer for another range refused.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { progressCounter, blobBytes, fileBytes, fetchBytes, fetchRange, tooBig, NO_PROGRESS } from '../web/lib/src/formats/file-bytes.js';
import { MHAError } from '../web/lib/src/engine/errors.js';

const CHUNK = 8 * 2 ** 20;
const bytesOf = (n, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-file-bytes-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A progress counter recording its events. */
function recorder() {
  const events = [];
  return { events, pc: progressCounter((p) => events.push({ ...p })) };
}
const refused = (promiseOrFn, message) => (typeof promiseOrFn === 'function'
  ? assert.throws(promiseOrFn, (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === message || assert.fail(`${e.message}\n!== ${message}`))
  : assert.rejects(promiseOrFn, (e) => (e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === message) || assert.fail(`${e.message}\n!== ${message}`)));

test('progressCounter: loaded, total and fraction of every event, files counted each on its own', () => {
  const { events, pc } = recorder();
  pc.start('a', 10);
  pc.start('a', 99);   // a file already started: nothing
  pc.add('a', 4);
  pc.start('b', null);   // an unknown size: total null
  pc.add('b', 3);
  pc.end('b');   // b's length is what was read
  pc.add('a', 6);
  pc.end('a');
  pc.end('a');   // not open: nothing
  pc.start('c', 8);
  pc.add('c', 2);
  pc.rest('c');   // the 6 bytes not read count as read
  pc.start('d', 0);
  pc.end('d');
  assert.deepEqual(events, [
    { file: 'a', loaded: 0, total: 10, fraction: 0 },
    { file: 'a', loaded: 4, total: 10, fraction: 0.4 },
    { file: 'b', loaded: 4, total: null, fraction: null },
    { file: 'b', loaded: 7, total: null, fraction: null },
    { file: 'b', loaded: 7, total: 13, fraction: 7 / 13 },
    { file: 'a', loaded: 13, total: 13, fraction: 1 },
    { file: 'a', loaded: 13, total: 13, fraction: 1 },
    { file: 'c', loaded: 13, total: 21, fraction: 13 / 21 },
    { file: 'c', loaded: 15, total: 21, fraction: 15 / 21 },
    { file: 'c', loaded: 21, total: 21, fraction: 1 },
    { file: 'c', loaded: 21, total: 21, fraction: 1 },
    { file: 'd', loaded: 21, total: 21, fraction: 1 },
    { file: 'd', loaded: 21, total: 21, fraction: 1 },
  ]);
  // a file read past its announced size: fraction capped at 1; an empty load: fraction 1
  const over = recorder();
  over.pc.start('x', 2);
  over.pc.add('x', 3);
  assert.deepEqual(over.events.at(-1), { file: 'x', loaded: 3, total: 2, fraction: 1 });
  const empty = recorder();
  empty.pc.start('e', 0);
  assert.deepEqual(empty.events, [{ file: 'e', loaded: 0, total: 0, fraction: 1 }]);
  // rest() of a file read past its size, or of unknown size: nothing added, then ended
  const r = recorder();
  r.pc.start('u', null);
  r.pc.add('u', 5);
  r.pc.rest('u');
  assert.deepEqual(r.events.at(-1), { file: 'u', loaded: 5, total: 5, fraction: 1 });
  // add() of a file never started counts in loaded only
  const s = recorder();
  s.pc.add('z', 4);
  assert.deepEqual(s.events, [{ file: 'z', loaded: 4, total: 0, fraction: 1 }]);
  for (const cb of [undefined, null]) progressCounter(cb).add('a', 1);
  refused(() => progressCounter(42), 'loadModel: progress must be a function ({file, loaded, total, fraction}) => void, got number');
  refused(() => progressCounter('f'), 'loadModel: progress must be a function ({file, loaded, total, fraction}) => void, got string');
  assert.equal(tooBig('f.bin', 11, 10).message, 'loadModel: f.bin: file size must be at most 10 bytes, got 11');
});

test('blobBytes: whole, by ranges, past the end, in 8 MB chunks', async () => {
  const small = bytesOf(100);
  const blob = new Blob([small]);
  const { events, pc } = recorder();
  assert.deepEqual(await blobBytes(blob, 's', pc), small);
  assert.deepEqual(events, [{ file: 's', loaded: 0, total: 100, fraction: 0 }, { file: 's', loaded: 100, total: 100, fraction: 1 }, { file: 's', loaded: 100, total: 100, fraction: 1 }]);
  assert.deepEqual(await blobBytes(blob, 's', NO_PROGRESS, { offset: 10, length: 5 }), small.subarray(10, 15));
  assert.deepEqual(await blobBytes(blob, 's', NO_PROGRESS, { offset: 95, length: 10 }), small.subarray(95));
  assert.deepEqual(await blobBytes(blob, 's', NO_PROGRESS, { offset: 200, length: 10 }), new Uint8Array(0));
  assert.deepEqual(await blobBytes(blob, 's', NO_PROGRESS, { offset: 0, length: 0 }), new Uint8Array(0));
  // over one chunk: read in slices, progress at each
  const big = bytesOf(CHUNK + 3, 1);
  const bigBlob = new Blob([big]);
  const b = recorder();
  const got = await blobBytes(bigBlob, 'big', b.pc);
  assert.equal(got.length, CHUNK + 3);
  assert.ok(got.every((v, i) => v === big[i]));
  assert.deepEqual(b.events.map((e) => e.loaded), [0, CHUNK, CHUNK + 3, CHUNK + 3]);
  // a range across the chunk boundary, read from the middle
  const mid = await blobBytes(bigBlob, 'big', NO_PROGRESS, { offset: CHUNK - 2, length: 4 });
  assert.deepEqual(mid, big.subarray(CHUNK - 2, CHUNK + 2));
  // exactly one chunk, whole: one read
  const one = recorder();
  assert.equal((await blobBytes(new Blob([bytesOf(CHUNK)]), 'one', one.pc)).length, CHUNK);
  assert.deepEqual(one.events.map((e) => e.loaded), [0, CHUNK, CHUNK]);
  // a Blob-like without slice(): its arrayBuffer, cut to the range
  const like = { size: 6, arrayBuffer: async () => Uint8Array.of(1, 2, 3, 4, 5, 6).buffer };
  assert.deepEqual(await blobBytes(like, 'l', NO_PROGRESS, { offset: 2, length: 3 }), Uint8Array.of(3, 4, 5));
});

test('fileBytes: whole, by positional ranges, past the end; the limit; absent, a directory, each named', async () => {
  const data = bytesOf(1000);
  const p = path.join(dir, 'w.bin');
  fs.writeFileSync(p, data);
  const { events, pc } = recorder();
  assert.deepEqual(await fileBytes(p, 'w.bin', { progress: pc, maxBytes: 1000 }), data);
  assert.deepEqual(events.map((e) => [e.loaded, e.total]), [[0, 1000], [1000, 1000], [1000, 1000]]);
  assert.deepEqual(await fileBytes(new URL(`file://${p}`), 'w.bin'), data);
  assert.deepEqual(await fileBytes(p, 'w.bin', { offset: 10, length: 20 }), data.subarray(10, 30));
  assert.deepEqual(await fileBytes(p, 'w.bin', { offset: 990, length: 20 }), data.subarray(990));
  assert.deepEqual(await fileBytes(p, 'w.bin', { offset: 2000, length: 20 }), new Uint8Array(0));
  // a ranged read is not held to maxBytes (the reader asks for what it needs of a large file)
  assert.deepEqual(await fileBytes(p, 'w.bin', { offset: 0, length: 4, maxBytes: 3 }), data.subarray(0, 4));
  await refused(fileBytes(p, 'w.bin', { maxBytes: 999 }), 'loadModel: w.bin: file size must be at most 999 bytes, got 1000');
  const missing = path.join(dir, 'none.bin');
  assert.equal(await fileBytes(missing, 'none.bin', { optional: true }), null);
  await refused(fileBytes(missing, 'none.bin'), `loadModel: none.bin: cannot read ${missing}: ENOENT`);
  await refused(fileBytes(dir, 'd', { optional: true }), `loadModel: d: ${dir} is not a file`);
  // over one chunk: read in 8 MB reads
  const bp = path.join(dir, 'big.bin');
  const big = bytesOf(CHUNK + 5, 3);
  fs.writeFileSync(bp, big);
  const b = recorder();
  const got = await fileBytes(bp, 'big.bin', { progress: b.pc });
  assert.equal(got.length, CHUNK + 5);
  assert.ok(got.every((v, i) => v === big[i]));
  assert.deepEqual(b.events.map((e) => e.loaded), [0, CHUNK, CHUNK + 5, CHUNK + 5]);
});

/** Runs fn with globalThis.fetch answering from `answer(url, init)`, recording each request. */
async function withFetch(answer, fn) {
  const real = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url, init) => { asked.push([String(url), init?.headers?.Range ?? null]); return answer(String(url), init); };
  try {
    await fn(asked);
  } finally {
    globalThis.fetch = real;
  }
}
/** A Response whose body arrives in the given parts. */
function streamed(parts, status = 200, headers = {}) {
  const body = new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } });
  return new Response(body, { status, headers });
}

test('fetchBytes: the body whole, with and without Content-Length; the limit; statuses named; a 404 of an optional read remembered', async () => {
  const data = bytesOf(50);
  await withFetch((url) => {
    if (url.endsWith('/len')) return streamed([data.subarray(0, 20), data.subarray(20)], 200, { 'content-length': '50' });
    if (url.endsWith('/nolen')) return streamed([data.subarray(0, 7), data.subarray(7)]);
    if (url.endsWith('/longer')) return streamed([data.subarray(0, 30), data.subarray(30)], 200, { 'content-length': '40' });
    if (url.endsWith('/shorter')) return streamed([data.subarray(0, 30)], 200, { 'content-length': '50' });
    if (url.endsWith('/gzip')) return streamed([data], 200, { 'content-length': '12', 'content-encoding': 'gzip' });
    if (url.endsWith('/big')) return streamed([data], 200, { 'content-length': ' 50 ' });
    if (url.endsWith('/throws')) throw new TypeError('network down');
    if (url.endsWith('/500')) return new Response('no', { status: 500 });
    return new Response('', { status: 404 });
  }, async (asked) => {
    const { events, pc } = recorder();
    assert.deepEqual(await fetchBytes('http://h/len', 'len', { progress: pc }), data);
    assert.deepEqual(events.map((e) => [e.loaded, e.total]), [[0, 50], [50, 50], [50, 50]]);
    const n = recorder();
    assert.deepEqual(await fetchBytes('http://h/nolen', 'nolen', { progress: n.pc }), data);
    assert.deepEqual(n.events.map((e) => [e.loaded, e.total]), [[0, null], [50, null], [50, 50]]);
    assert.deepEqual(await fetchBytes('http://h/longer', 'longer'), data);
    assert.deepEqual(await fetchBytes('http://h/shorter', 'shorter'), data.subarray(0, 30));
    const g = recorder();
    assert.deepEqual(await fetchBytes('http://h/gzip', 'gzip', { progress: g.pc, maxBytes: 50 }), data);
    assert.deepEqual(g.events[0], { file: 'gzip', loaded: 0, total: null, fraction: null }, 'a compressed length is not the body\'s');
    assert.deepEqual(await fetchBytes('http://h/big', 'big', { maxBytes: 50 }), data);
    await refused(fetchBytes('http://h/big', 'big', { maxBytes: 49 }), 'loadModel: big: file size must be at most 49 bytes, got 50');
    await refused(fetchBytes('http://h/nolen', 'nolen', { maxBytes: 49 }), 'loadModel: nolen: file size must be at most 49 bytes, got 50');
    await refused(fetchBytes('http://h/nolen', 'nolen', { maxBytes: 6 }), 'loadModel: nolen: file size must be at most 6 bytes, got 7');
    await refused(fetchBytes('http://h/gzip', 'gzip', { maxBytes: 49 }), 'loadModel: gzip: file size must be at most 49 bytes, got 50');
    await refused(fetchBytes('http://h/throws', 't'), 'loadModel: t: cannot fetch http://h/throws: network down');
    await refused(fetchBytes('http://h/500', 'x'), 'loadModel: x: fetching http://h/500 gave HTTP 500');
    await refused(fetchBytes('http://h/gone1', 'g'), 'loadModel: g: fetching http://h/gone1 gave HTTP 404');
    const before = asked.length;
    assert.equal(await fetchBytes('http://h/gone2', 'g', { optional: true }), null);
    assert.equal(await fetchBytes('http://h/gone2', 'g', { optional: true }), null);
    assert.equal(asked.length, before + 1, 'the second optional read of a 404 asks nothing');
    await refused(fetchBytes('http://h/gone2', 'g'), 'loadModel: g: fetching http://h/gone2 gave HTTP 404');
  });
});

test('fetchBytes: a Response without a readable stream is read whole and held to the limit', async () => {
  const data = bytesOf(9);
  const plain = (status = 200) => ({ status, ok: status < 300, headers: new Headers(), body: null, arrayBuffer: async () => data.slice().buffer });
  await withFetch(() => plain(), async () => {
    const { events, pc } = recorder();
    assert.deepEqual(await fetchBytes('http://h/p', 'p', { progress: pc }), data);
    assert.deepEqual(events.map((e) => [e.loaded, e.total]), [[0, null], [9, null], [9, 9]]);
    assert.deepEqual(await fetchBytes('http://h/p', 'p', { maxBytes: 9 }), data);
    await refused(fetchBytes('http://h/p', 'p', { maxBytes: 8 }), 'loadModel: p: file size must be at most 8 bytes, got 9');
  });
});

test('fetchRange: 206 with Content-Range, 416 past the end, a server that ignores Range, one that refuses it, a wrong range refused', async () => {
  const data = bytesOf(100, 5);
  const range206 = (init, { header = true, shift = 0 } = {}) => {
    const [, a, b] = /bytes=(\d+)-(\d+)/.exec(init.headers.Range).map(Number);
    if (a >= data.length) return new Response('', { status: 416, headers: { 'content-range': 'bytes */100' } });
    const end = Math.min(b, data.length - 1);
    const headers = header ? { 'content-range': `bytes ${a + shift}-${end + shift}/100` } : {};
    return streamed([data.subarray(a + shift, end + 1 + shift)], 206, headers);
  };
  await withFetch((url, init) => {
    if (url.endsWith('/ranges')) return range206(init);
    if (url.endsWith('/hidden')) return range206(init, { header: false });
    if (url.endsWith('/shifted')) return range206(init, { shift: 1 });
    if (url.endsWith('/whole')) return streamed([data], 200, { 'content-length': '100' });
    if (url.endsWith('/cors')) { if (init?.headers?.Range) throw new TypeError('preflight refused'); return streamed([data]); }
    if (url.endsWith('/err')) return new Response('', { status: 403 });
    return new Response('', { status: 404 });
  }, async (asked) => {
    const state = () => ({ sizes: new Map(), wholes: new Map() });
    const s = state();
    const { events, pc } = recorder();
    assert.deepEqual(await fetchRange('http://h/ranges', 'r', 10, 5, { progress: pc, state: s }), data.subarray(10, 15));
    assert.deepEqual(asked.at(-1), ['http://h/ranges', 'bytes=10-14']);
    assert.equal(s.sizes.get('r'), 100);
    assert.deepEqual(events.map((e) => [e.loaded, e.total]), [[0, 100], [5, 100]]);
    assert.deepEqual(await fetchRange('http://h/ranges', 'r', 95, 10, { progress: pc, state: s }), data.subarray(95));
    assert.deepEqual(await fetchRange('http://h/ranges', 'r', 100, 10, { progress: pc, state: s }), new Uint8Array(0));
    assert.equal(s.wholes.size, 0);
    // without Content-Range: the bytes, the size unknown
    const h = state();
    assert.deepEqual(await fetchRange('http://h/hidden', 'h', 3, 4, { progress: NO_PROGRESS, state: h }), data.subarray(3, 7));
    assert.equal(h.sizes.has('h'), false);
    // another range than asked
    await refused(fetchRange('http://h/shifted', 'sh', 10, 5, { progress: NO_PROGRESS, state: state() }),
      'loadModel: sh: http://h/shifted answered the range of bytes 10–14 with bytes 11–15');
    // a server that ignores Range: the whole file once, later ranges cut from it
    const w = state();
    const n = asked.length;
    assert.deepEqual(await fetchRange('http://h/whole', 'w', 20, 3, { progress: NO_PROGRESS, state: w }), data.subarray(20, 23));
    assert.deepEqual(await fetchRange('http://h/whole', 'w', 98, 5, { progress: NO_PROGRESS, state: w }), data.subarray(98));
    assert.equal(asked.length, n + 1);
    assert.equal(w.sizes.get('w'), 100);
    assert.deepEqual(w.wholes.get('w'), data);
    // a server whose preflight refuses the Range header: asked once without it
    const c = state();
    assert.deepEqual(await fetchRange('http://h/cors', 'c', 50, 2, { progress: NO_PROGRESS, state: c }), data.subarray(50, 52));
    assert.deepEqual(asked.slice(-2), [['http://h/cors', 'bytes=50-51'], ['http://h/cors', null]]);
    assert.deepEqual(await fetchRange('http://h/cors', 'c', 0, 2, { progress: NO_PROGRESS, state: c }), data.subarray(0, 2));
    assert.equal(c.sizes.get('c'), 100);
    await refused(fetchRange('http://h/err', 'e', 0, 2, { progress: NO_PROGRESS, state: state() }), 'loadModel: e: fetching http://h/err gave HTTP 403');
    assert.equal(await fetchRange('http://h/gone3', 'g', 0, 2, { optional: true, progress: NO_PROGRESS, state: state() }), null);
    const m = asked.length;
    assert.equal(await fetchRange('http://h/gone3', 'g', 0, 2, { optional: true, progress: NO_PROGRESS, state: state() }), null);
    assert.equal(asked.length, m, 'a remembered 404 is not asked again');
    await refused(fetchRange('http://h/gone4', 'g', 0, 2, { progress: NO_PROGRESS, state: state() }), 'loadModel: g: fetching http://h/gone4 gave HTTP 404');
  });
});

test('progress: an unknown size keeps total unknown whatever starts after it; rest() never takes bytes back', () => {
  const { events, pc } = recorder();
  pc.start('u', null);
  pc.start('k', 10);
  assert.deepEqual(events.at(-1), { file: 'k', loaded: 0, total: null, fraction: null });
  const r = recorder();
  r.pc.start('x', 2);
  r.pc.add('x', 3);
  r.pc.rest('x');
  assert.deepEqual(r.events, [
    { file: 'x', loaded: 0, total: 2, fraction: 0 }, { file: 'x', loaded: 3, total: 2, fraction: 1 }, { file: 'x', loaded: 3, total: 3, fraction: 1 },
  ]);
  const full = recorder();
  full.pc.start('f', 4);
  full.pc.add('f', 4);
  full.pc.rest('f');
  assert.equal(full.events.length, 3, 'a file read to its size: rest() adds nothing, then ends');
});

test('ranged reads leave their file open for progress; a read over 8 MB from an offset; an open error other than ENOENT is not "absent"; no file handle leaks', async () => {
  const data = bytesOf(100);
  const p = path.join(dir, 'r.bin');
  fs.writeFileSync(p, data);
  const { events, pc } = recorder();
  await fileBytes(p, 'r.bin', { progress: pc, offset: 10, length: 20 });
  assert.deepEqual(events.at(-1), { file: 'r.bin', loaded: 20, total: 100, fraction: 0.2 });
  const b = recorder();
  await blobBytes(new Blob([data]), 'b', b.pc, { offset: 0, length: 30 });
  assert.deepEqual(b.events.at(-1), { file: 'b', loaded: 30, total: 100, fraction: 0.3 });
  const bp = path.join(dir, 'big2.bin');
  const big = bytesOf(CHUNK + 9, 5);
  fs.writeFileSync(bp, big);
  const got = await fileBytes(bp, 'big2.bin', { offset: 3, length: CHUNK + 2 });
  assert.equal(got.length, CHUNK + 2);
  assert.ok(got.every((v, i) => v === big[i + 3]), 'the second 8 MB read continues at offset + 8 MB');
  const c = recorder();
  await blobBytes(new Blob([big]), 'c', c.pc, { offset: 1, length: CHUNK });
  assert.deepEqual(c.events.map((e) => e.loaded), [0, CHUNK], 'a range of exactly 8 MB: one slice');
  const notDir = path.join(p, 'x.bin');   // a path through a file: ENOTDIR, not absent
  await refused(fileBytes(notDir, 'x.bin', { optional: true }), `loadModel: x.bin: cannot read ${notDir}: ENOTDIR`);
  if (fs.existsSync('/proc/self/fd')) {
    const open = () => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) await fileBytes(p, 'r.bin', { offset: i, length: 1 });
    await assert.rejects(fileBytes(p, 'r.bin', { maxBytes: 1 }));
    assert.equal(open(), before, 'every file handle closed');
  }
});

test('http bodies: Content-Length parsed strictly (digits, trimmed, identity encoding) and refused before the body when over the limit; 8 MB progress steps', async () => {
  const data = bytesOf(50);
  await withFetch((url) => {
    const len = decodeURIComponent(url.split('/').pop());
    const enc = url.includes('/identity/') ? { 'content-encoding': 'identity' } : {};
    if (url.includes('/lies/')) return streamed([data], 200, { 'content-length': '100' });
    if (url.includes('/plainbody/')) return { status: 200, ok: true, headers: new Headers(), body: {}, arrayBuffer: async () => data.slice().buffer };
    return streamed([data], 200, { 'content-length': len, ...enc });
  }, async () => {
    const totalFor = async (url) => { const r = recorder(); await fetchBytes(url, 'f', { progress: r.pc }); return r.events[0].total; };
    assert.equal(await totalFor('http://h/len/50'), 50);
    assert.equal(await totalFor(`http://h/len/${encodeURIComponent(' 50 ')}`), 50);
    assert.equal(await totalFor('http://h/identity/50'), 50);
    assert.equal(await totalFor('http://h/len/x50'), null);
    assert.equal(await totalFor('http://h/len/50x'), null);
    // a Content-Length over the limit is refused before the body (which here is shorter) is read
    await refused(fetchBytes('http://h/lies/', 'l', { maxBytes: 60 }), 'loadModel: l: file size must be at most 60 bytes, got 100');
    // a body without a stream reader: read whole
    assert.deepEqual(await fetchBytes('http://h/plainbody/', 'p'), data);
  });
  const parts = [bytesOf(CHUNK - 1), bytesOf(1), bytesOf(3)];
  await withFetch(() => streamed(parts), async () => {
    const r = recorder();
    const got = await fetchBytes('http://h/big', 'big', { progress: r.pc });
    assert.equal(got.length, CHUNK + 3);
    assert.deepEqual(r.events.map((e) => e.loaded), [0, CHUNK, CHUNK + 3, CHUNK + 3]);
  });
});

test('fetchRange: Content-Range trimmed and anchored, an unknown total, a longer answer cut, the CORS fallback counted and optional', async () => {
  const data = bytesOf(100, 9);
  await withFetch((url, init) => {
    const range = init?.headers?.Range;
    if (url.endsWith('/spaces')) return streamed([data.subarray(0, 5)], 206, { 'content-range': '  bytes 0-4/100 ' });
    if (url.endsWith('/junk')) return streamed([data.subarray(0, 5)], 206, { 'content-range': 'bytes 0-4/100junk' });
    if (url.endsWith('/star')) return streamed([data.subarray(0, 5)], 206, { 'content-range': 'bytes 0-4/*' });
    if (url.endsWith('/more')) return streamed([data.subarray(0, 9)], 206, { 'content-range': 'bytes 0-8/100' });
    if (url.endsWith('/cors')) { if (range) throw new TypeError('preflight refused'); return streamed([data], 200, { 'content-length': '100' }); }
    if (url.endsWith('/cors404')) { if (range) throw new TypeError('preflight refused'); return new Response('', { status: 404 }); }
    return new Response('', { status: 500 });
  }, async () => {
    const state = () => ({ sizes: new Map(), wholes: new Map() });
    const s = state();
    assert.deepEqual(await fetchRange('http://h/spaces', 's', 0, 5, { progress: NO_PROGRESS, state: s }), data.subarray(0, 5));
    assert.equal(s.sizes.get('s'), 100);
    const j = state();
    await fetchRange('http://h/junk', 'j', 0, 5, { progress: NO_PROGRESS, state: j });
    assert.equal(j.sizes.has('j'), false);
    const st = state();
    await fetchRange('http://h/star', 'st', 0, 5, { progress: NO_PROGRESS, state: st });
    assert.equal(st.sizes.has('st'), false);
    assert.deepEqual(await fetchRange('http://h/more', 'm', 0, 5, { progress: NO_PROGRESS, state: state() }), data.subarray(0, 5));
    const r = recorder();
    assert.deepEqual(await fetchRange('http://h/cors', 'c', 10, 5, { progress: r.pc, state: state() }), data.subarray(10, 15));
    assert.deepEqual(r.events.at(-1), { file: 'c', loaded: 100, total: 100, fraction: 1 });
    const o = state();
    assert.equal(await fetchRange('http://h/cors404', 'o', 0, 5, { optional: true, progress: NO_PROGRESS, state: o }), null);
    assert.equal(o.wholes.size, 0);
  });
});

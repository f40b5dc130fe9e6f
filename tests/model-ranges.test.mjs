// A Hugging Face folder's weights are read by ranges (formats/safetensors.js openSafetensors through a
// folder's `read(file, {offset, length})`, formats/sources.js and file-bytes.js): the bytes of
// model.safetensors that are read, counted at the source, are its header and the tensors the model
// uses, never the causal-mask buffers GPT-2 files hold (`h.N.attn.bias`, 256 KB each here), over
// http from a server that honours Range requests (each answered 206), from Files (Blob.slice) and
// from a directory in Node (positional reads). A server that answers with the whole file (200) is
// asked once for it; one that hides Content-Range gets one ranged request, then one for the whole
// file. Every load gives the log-probs of the reference: the file fetched whole from a server that
// ignores Range and parsed from memory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { createMHA } from '../web/lib/src/index.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { gpt2Folder, lcgValues } from './helpers/gpt2-folder.mjs';

const C = 256, d = 64, V = 96, L = 2;
const IDS = [3, 14, 15, 92, 65, 35, 89, 79];

let dir, mha, server, base, size, skipped, reference;
const served = [];   // [mode, file, range header or null, status, bytes sent]

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-ranges-'));
  const { tensors: t, config } = gpt2Folder({ dModel: d, layers: L, context: C, vocab: V, values: lcgValues(4242, 0.1), maskBuffers: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), encodeSafetensors({ format: 'pt' }, t));
  size = fs.statSync(path.join(dir, 'model.safetensors')).size;
  skipped = L * C * C * 4;
  mha = await createMHA({ threads: 1 });
  // /ranges/<file>: Range requests answered 206 with Content-Range; /whole/<file>: Range ignored
  // (200, the whole file); /hidden/<file>: 206 without Content-Range (as a page sees a cross-origin
  // server that does not expose it)
  server = http.createServer((req, res) => {
    const [, mode, file] = req.url.split('/');
    const p = path.join(dir, path.basename(file));
    const log = (status, n) => served.push([mode, file, req.headers.range ?? null, status, n]);
    if (!fs.existsSync(p)) { log(404, 0); res.writeHead(404).end(); return; }
    const body = fs.readFileSync(p);
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (m && mode !== 'whole') {
      const a = Number(m[1]), b = Math.min(Number(m[2]), body.length - 1);
      if (a >= body.length) { log(416, 0); res.writeHead(416, { 'Content-Range': `bytes */${body.length}` }).end(); return; }
      const part = body.subarray(a, b + 1);
      log(206, part.length);
      res.writeHead(206, { 'Content-Length': part.length, ...(mode === 'ranges' ? { 'Content-Range': `bytes ${a}-${b}/${body.length}` } : {}) }).end(part);
      return;
    }
    log(200, body.length);
    res.writeHead(200, { 'Content-Length': body.length }).end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  // the reference: the whole file fetched once (the server ignores ranges) and parsed from memory
  const lm = await mha.loadModel(`${base}/whole/`);
  reference = lm.run(IDS).logProbs.data.slice();
  lm.dispose();
});

after(() => {
  server?.close();
  mha?.dispose?.();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Loads a source with a progress callback; returns the log-probs of IDS and the progress events. */
async function load(source) {
  const events = [];
  const lm = await mha.loadModel(source, { progress: (p) => events.push({ ...p }) });
  try {
    assert.equal(lm.config.tokenizer, 'none');
    return { logProbs: lm.run(IDS).logProbs.data.slice(), events };
  } finally {
    lm.dispose();
  }
}

/** The requests for model.safetensors since `from`. */
const weightRequests = (from) => served.slice(from).filter(([, file]) => file === 'model.safetensors');

test('the reference read the whole file in one request (a server that ignores Range)', () => {
  assert.deepEqual(weightRequests(0).map(([mode, , , status, n]) => [mode, status, n]), [['whole', 200, size]]);
  assert.ok(reference.every(Number.isFinite));
});

test('over http with Range: only the header and the weights are fetched, each request answered 206; the same log-probs; progress ends at every file\'s size', async () => {
  const from = served.length;
  const { logProbs, events } = await load(`${base}/ranges/`);
  assert.deepEqual(logProbs, reference);
  const reqs = weightRequests(from);
  assert.ok(reqs.every(([, , range, status]) => range !== null && status === 206), JSON.stringify(reqs));
  const bytes = reqs.reduce((n, r) => n + r[4], 0);
  assert.equal(bytes, size - skipped, `bytes fetched of ${size}: the buffers (${skipped} bytes) are never fetched`);
  // the header in two requests (its first 32 bytes, the rest), then a few per part: the globals
  // (wte + wpe together, ln_f) and each block (its tensors on either side of its buffer)
  assert.ok(reqs.length >= 2 + 1 + L && reqs.length <= 2 + 2 + 2 * L, `${reqs.length} requests`);
  const last = events.at(-1);
  assert.equal(last.loaded, fs.statSync(path.join(dir, 'config.json')).size + size, 'the skipped bytes count as read');
  assert.equal(last.total, last.loaded);
  assert.ok(events.every((e, i) => i === 0 || e.loaded >= events[i - 1].loaded));
});

test('over http, a server that hides Content-Range: one ranged request (the file\'s size unknown), then the whole file once', async () => {
  const from = served.length;
  const { logProbs } = await load(`${base}/hidden/`);
  assert.deepEqual(logProbs, reference);
  assert.deepEqual(weightRequests(from).map(([, , range, status, n]) => [range, status, n]), [['bytes=0-31', 206, 32], [null, 200, size]]);
});

test('Files (a folder picker\'s list): read by Blob.slice, the buffers never sliced', async () => {
  const sliced = [];
  const counted = (name) => {
    const file = new File([fs.readFileSync(path.join(dir, name))], name);
    return { name, size: file.size, arrayBuffer: () => { sliced.push([name, 0, file.size]); return file.arrayBuffer(); },
      slice: (a, b) => { sliced.push([name, a, b]); return file.slice(a, b); } };
  };
  const { logProbs } = await load([counted('config.json'), counted('model.safetensors')]);
  assert.deepEqual(logProbs, reference);
  const parts = sliced.filter(([name]) => name === 'model.safetensors');
  assert.ok(parts.every(([, a, b]) => b - a < size), 'never the whole file');
  assert.equal(parts.reduce((n, [, a, b]) => n + b - a, 0), size - skipped);
});

test('a directory in Node: positional reads of the header and the weights, not of the buffers', async () => {
  const fh = await fsp.open(path.join(dir, 'config.json'));
  const proto = Object.getPrototypeOf(fh);
  await fh.close();
  const read = proto.read;
  let bytes = 0, whole = 0;
  proto.read = async function counting(...args) {
    const r = await read.apply(this, args);
    bytes += r.bytesRead;
    if (r.bytesRead === size) whole++;
    return r;
  };
  try {
    const { logProbs } = await load(dir);
    assert.deepEqual(logProbs, reference);
  } finally {
    proto.read = read;
  }
  const configBytes = fs.statSync(path.join(dir, 'config.json')).size;
  assert.equal(whole, 0);
  assert.equal(bytes, configBytes + size - skipped);
});

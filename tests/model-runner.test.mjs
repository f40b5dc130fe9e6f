// The model runner (web/lib/src/lm/model.js) value by value, on the tiny models of tests/golden-decoder/
// and on stories260K (a second or so): every config key's default, bounds and refusal message
// (argument, expected and actual value), the tensors each architecture needs (each one removed in
// turn is named with its expected shape), the sources loadModel reads, encode/decode, run()'s
// tokens, loss and next characters against its own log-probabilities, the head mask, and the
// generator's sampler, cache sliding, reset and dispose against run() and an independent sampler.
// Written for the mutation testing of model.js (stryker.config.mjs); the numerics themselves are
// checked against PyTorch by tests/golden-decoder.test.mjs and tests/model.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMHA, MHAError, parseSafetensors, mulberry32, MODEL_FORMAT, analyzeHeads } from '../web/lib/src/index.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { throwsExactly } from './helpers/exact-error.mjs';
import { maxDiff } from './helpers/model-golden.mjs';

const mha = await createMHA();
const dir = new URL('./golden-decoder/', import.meta.url);
const goldenFiles = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
const read = (name) => JSON.parse(fs.readFileSync(new URL(`${name}.json`, dir)));
const bytesOf = (name) => fs.readFileSync(new URL(`${name}.safetensors`, dir));
const parsed = (name) => parseSafetensors(bytesOf(name));
const storiesBytes = fs.readFileSync(new URL('../web/lib/models/stories260K.safetensors', import.meta.url));

/** Asserts that a promise rejects with an MHAError of `code` whose message is exactly `message`. */
async function rejectsExactly(promise, code, message) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, `code of "${e.message}"`);
    assert.equal(e.message, message);
    return true;
  });
}

/** loadModel of a golden file with its config changed (undefined deletes a key) and other metadata. */
function configBytes(name, change, meta = {}) {
  const { metadata, tensors } = parsed(name);
  const cfg = { ...JSON.parse(metadata.config), ...change };
  for (const k of Object.keys(change)) if (change[k] === undefined) delete cfg[k];
  return encodeSafetensors({ ...metadata, config: JSON.stringify(cfg), ...meta }, tensors);
}
const withConfig = (name, change, meta) => mha.loadModel(configBytes(name, change, meta));

async function withModel(source, fn) {
  const lm = await mha.loadModel(source);
  try {
    return await fn(lm);
  } finally {
    lm.dispose();
  }
}


test('config: each architecture option read from the file, or its default when absent', async () => {
  const want = {
    default: { norm: 'layernorm', normEps: 1e-5, mlp: 'relu', bias: true, positions: 'learned', ropeBase: 10000, ropeInterleaved: false, tied: false, kvHeads: 4 },
    'ln-eps': { normEps: 0.05 },
    llama: { norm: 'rmsnorm', normEps: 1e-6, mlp: 'swiglu', bias: false, positions: 'rope', ropeBase: 10000, ropeInterleaved: true, tied: true, kvHeads: 2 },
    'neox-gelu': { mlp: 'gelu', ropeBase: 500, ropeInterleaved: false, positions: 'rope', bias: true, tied: false },
    'gelu-tanh-mqa-tied': { mlp: 'gelu_tanh', kvHeads: 1, tied: true },
    'rope-interleaved-bias-inproj': { ropeBase: 100, ropeInterleaved: true },
  };
  for (const [name, opts] of Object.entries(want)) {
    const cfg = JSON.parse(parsed(name).metadata.config);
    await withModel(bytesOf(name), (lm) => {
      const c = lm.config;
      assert.ok(Object.isFrozen(c));
      assert.deepEqual([c.vocabSize, c.dModel, c.numHeads, c.numLayers, c.dFF, c.context, c.unk],
        [cfg.vocab_size, cfg.d_model, cfg.num_heads, cfg.num_layers, cfg.d_ff, cfg.context, cfg.unk], name);
      assert.equal(c.dK, cfg.d_model / cfg.num_heads);
      assert.equal(c.tokenizer, 'characters');
      assert.ok(!('lnEps' in c), `${name}: the norm's eps has one name, normEps`);
      for (const [k, v] of Object.entries(opts)) assert.equal(c[k], v, `${name}: config.${k}`);
    });
  }
  // norm_eps wins over ln_eps (the file format's first name for it, still read); without both, 1e-5
  await withModel(configBytes('default', { norm_eps: 0.25, ln_eps: 7 }), (lm) => assert.equal(lm.config.normEps, 0.25));
  await withModel(configBytes('default', { ln_eps: 0.125 }), (lm) => assert.equal(lm.config.normEps, 0.125));
  await withModel(configBytes('default', { ln_eps: undefined }), (lm) => assert.deepEqual([lm.config.normEps, lm.config.lnEps], [1e-5, undefined]));
  await withModel(configBytes('default', { tokenizer: 'characters', rope_base: 3, unk: 0 }), (lm) => {
    assert.deepEqual([lm.config.ropeBase, lm.config.unk], [3, 0]);
  });
  // num_layers = 1 is a valid size: the second layer's tensors are not read
  await withModel(configBytes('default', { num_layers: 1 }), (lm) => assert.equal(lm.run('the').attention.length, 1));
});

test('config: every refusal names the key, the allowed values or range, and the value found', async () => {
  const bad = [
    [{ vocab_size: 0 }, 'config.vocab_size must be an integer in [1, 65536], got 0'],
    [{ vocab_size: 65537 }, 'config.vocab_size must be an integer in [1, 65536], got 65537'],
    [{ vocab_size: 12.5 }, 'config.vocab_size must be an integer in [1, 65536], got 12.5'],
    [{ vocab_size: '12' }, 'config.vocab_size must be an integer in [1, 65536], got "12"'],
    [{ d_model: 4097 }, 'config.d_model must be an integer in [1, 4096], got 4097'],
    [{ d_model: -16 }, 'config.d_model must be an integer in [1, 4096], got -16'],
    [{ num_heads: 257 }, 'config.num_heads must be an integer in [1, 256], got 257'],
    [{ num_layers: 65 }, 'config.num_layers must be an integer in [1, 64], got 65'],
    [{ num_layers: undefined }, 'config.num_layers must be an integer in [1, 64], got undefined'],
    [{ d_ff: 65537 }, 'config.d_ff must be an integer in [1, 65536], got 65537'],
    [{ context: 65537 }, 'config.context must be an integer in [1, 65536], got 65537'],
    [{ context: 0 }, 'config.context must be an integer in [1, 65536], got 0'],
    [{ num_heads: 3 }, 'config.num_heads = 3 must divide d_model = 16'],
    [{ norm: 'batchnorm' }, 'config.norm must be one of "layernorm", "rmsnorm", got "batchnorm"'],
    [{ mlp: 'swish' }, 'config.mlp must be one of "relu", "gelu", "gelu_tanh", "swiglu", got "swish"'],
    [{ bias: 1 }, 'config.bias must be one of true, false, got 1'],
    [{ positions: 'alibi' }, 'config.positions must be one of "learned", "rope", got "alibi"'],
    [{ rope_interleaved: 'yes' }, 'config.rope_interleaved must be one of false, true, got "yes"'],
    [{ tied: null }, 'config.tied must be one of false, true, got null'],
    [{ tokenizer: 'bytes' }, 'config.tokenizer must be one of "characters", "llama2c", got "bytes"'],
    [{ norm_eps: 0 }, 'config.norm_eps must be a number in (0, 1), got 0'],
    [{ norm_eps: 1 }, 'config.norm_eps must be a number in (0, 1), got 1'],
    [{ norm_eps: '1e-5' }, 'config.norm_eps must be a number in (0, 1), got "1e-5"'],
    [{ norm_eps: null }, 'config.norm_eps must be a number in (0, 1), got null'],
    [{ ln_eps: 1 }, 'config.ln_eps must be a number in (0, 1), got 1'],
    [{ ln_eps: -0.5 }, 'config.ln_eps must be a number in (0, 1), got -0.5'],
    [{ rope_base: 1e9 }, 'config.rope_base must be a number in (0, 1000000000), got 1000000000'],
    [{ rope_base: 0 }, 'config.rope_base must be a number in (0, 1000000000), got 0'],
    [{ kv_heads: 3 }, 'config.kv_heads must be a positive integer dividing num_heads = 4, got 3'],
    [{ kv_heads: 0 }, 'config.kv_heads must be a positive integer dividing num_heads = 4, got 0'],
    [{ kv_heads: -2 }, 'config.kv_heads must be a positive integer dividing num_heads = 4, got -2'],
    [{ kv_heads: 1.5 }, 'config.kv_heads must be a positive integer dividing num_heads = 4, got 1.5'],
    [{ kv_heads: '2' }, 'config.kv_heads must be a positive integer dividing num_heads = 4, got "2"'],
    [{ unk: 12 }, 'config.unk must be an integer in [0, 11], got 12'],
    [{ unk: -1 }, 'config.unk must be an integer in [0, 11], got -1'],
    [{ unk: 0.5 }, 'config.unk must be an integer in [0, 11], got 0.5'],
    [{ unk: undefined }, 'config.unk must be an integer in [0, 11], got undefined'],
  ];
  for (const [change, message] of bad) {
    await rejectsExactly(withConfig('default', change), 'INVALID_ARGUMENT', `loadModel: ${message}`);
  }
  // the largest valid sizes pass the config check and fail later, on the vocabulary or a tensor
  await rejectsExactly(withConfig('default', { vocab_size: 65536 }), 'INVALID_ARGUMENT', 'loadModel: __metadata__.vocab must be an array of 65536 one-character strings');
  await rejectsExactly(withConfig('default', { d_model: 4096 }), 'SHAPE_MISMATCH', 'loadModel: tensor "tok_emb.weight": expected shape [12, 4096], got [12, 16]');
  await rejectsExactly(withConfig('default', { num_heads: 256, d_model: 4096 }), 'SHAPE_MISMATCH', 'loadModel: tensor "tok_emb.weight": expected shape [12, 4096], got [12, 16]');
  await rejectsExactly(withConfig('default', { num_layers: 64 }), 'INVALID_ARGUMENT', 'loadModel: tensor "layers.2.ln1.weight" is missing (expected shape [16])');
  await rejectsExactly(withConfig('default', { d_ff: 65536 }), 'SHAPE_MISMATCH', 'loadModel: tensor "layers.0.mlp.fc.weight": expected shape [65536, 16], got [32, 16]');
  await rejectsExactly(withConfig('default', { context: 65536 }), 'SHAPE_MISMATCH', 'loadModel: tensor "pos_emb.weight": expected shape [65536, 16], got [16, 16]');
  // just inside the open bounds of norm_eps and rope_base (RoPE: the file's pos_emb.weight is then not read)
  await withModel(configBytes('default', { norm_eps: 0.999, rope_base: 999999999.5, positions: 'rope' }), (lm) => {
    assert.deepEqual([lm.config.normEps, lm.config.ropeBase, lm.config.positions], [0.999, 999999999.5, 'rope']);
  });
});

test('metadata: the format, config, vocabulary and scores fields are checked, naming the field', async () => {
  const { metadata, tensors } = parsed('default');
  const enc = (meta) => encodeSafetensors(meta, tensors);
  const load = (meta) => mha.loadModel(enc(meta));
  await rejectsExactly(load({ ...metadata, format: 'mha-wasm.charlm/2' }), 'INVALID_ARGUMENT', `loadModel: __metadata__.format must be "${MODEL_FORMAT}", got "mha-wasm.charlm/2"`);
  const { format, ...noFormat } = metadata;
  assert.equal(format, 'mha-wasm.charlm/1');
  await rejectsExactly(load(noFormat), 'INVALID_ARGUMENT', `loadModel: __metadata__.format must be "${MODEL_FORMAT}", got undefined`);
  const { config, ...noConfig } = metadata;
  await rejectsExactly(load(noConfig), 'INVALID_ARGUMENT', 'loadModel: __metadata__.config is missing');
  let jsonError;
  try { JSON.parse('{"a":'); } catch (e) { jsonError = e.message; }
  await rejectsExactly(load({ ...metadata, config: '{"a":' }), 'INVALID_ARGUMENT', `loadModel: __metadata__.config is not JSON (${jsonError})`);
  await rejectsExactly(load({ ...metadata, config: 'null' }), 'INVALID_ARGUMENT', 'loadModel: __metadata__.config must be a JSON object');
  await rejectsExactly(load({ ...metadata, config: '7' }), 'INVALID_ARGUMENT', 'loadModel: __metadata__.config must be a JSON object');
  const vocab = JSON.parse(metadata.vocab);
  const badVocab = 'loadModel: __metadata__.vocab must be an array of 12 one-character strings';
  const { vocab: _v, ...noVocab } = metadata;
  await rejectsExactly(load(noVocab), 'INVALID_ARGUMENT', 'loadModel: __metadata__.vocab is missing');
  await rejectsExactly(load({ ...metadata, vocab: '"etaoinsrh .?"' }), 'INVALID_ARGUMENT', badVocab);
  await rejectsExactly(load({ ...metadata, vocab: JSON.stringify(vocab.slice(1)) }), 'INVALID_ARGUMENT', badVocab);
  await rejectsExactly(load({ ...metadata, vocab: JSON.stringify([...vocab.slice(1), 'ab']) }), 'INVALID_ARGUMENT', badVocab);
  await rejectsExactly(load({ ...metadata, vocab: JSON.stringify([...vocab.slice(1), '']) }), 'INVALID_ARGUMENT', badVocab);
  await rejectsExactly(load({ ...metadata, vocab: JSON.stringify([...vocab.slice(1), 7]) }), 'INVALID_ARGUMENT', badVocab);
  // one-element arrays and array-likes are not one-character strings
  await rejectsExactly(load({ ...metadata, vocab: JSON.stringify([...vocab.slice(1), ['x']]) }), 'INVALID_ARGUMENT', badVocab);
  await rejectsExactly(load({ ...metadata, vocab: JSON.stringify([...vocab.slice(1), { length: 1 }]) }), 'INVALID_ARGUMENT', badVocab);
  // one character may be two UTF-16 units
  await withModel(enc({ ...metadata, vocab: JSON.stringify([...vocab.slice(0, 11), '😀']) }), (lm) => {
    assert.deepEqual(Array.from(lm.encode('e😀?')), [0, 11, 11]);
    assert.deepEqual(lm.run('e😀t').tokens, ['e', '😀', 't']);
    assert.equal(lm.decode([11, 0]), '😀e');
  });
  // the byte-pair tokenizer: pieces as strings, and scores
  const pieces = ['<unk>', '<s>', '</s>', ...vocab.slice(3)];
  const bpe = { ...metadata, config: JSON.stringify({ ...JSON.parse(config), tokenizer: 'llama2c' }), vocab: JSON.stringify(pieces) };
  const badPieces = 'loadModel: __metadata__.vocab must be an array of 12 strings (the tokenizer\'s pieces)';
  await rejectsExactly(load(bpe), 'INVALID_ARGUMENT', 'loadModel: __metadata__.scores is missing');
  await rejectsExactly(load({ ...bpe, vocab: JSON.stringify([...pieces.slice(1), 7]), scores: JSON.stringify(new Array(12).fill(0)) }), 'INVALID_ARGUMENT', badPieces);
  await rejectsExactly(load({ ...bpe, vocab: JSON.stringify(pieces.slice(1)), scores: JSON.stringify(new Array(12).fill(0)) }), 'INVALID_ARGUMENT', badPieces);
  await rejectsExactly(load({ ...bpe, vocab: '{}', scores: JSON.stringify(new Array(12).fill(0)) }), 'INVALID_ARGUMENT', badPieces);
  // (a byte-pair model that loads: stories260K, below)
  // training and probes: parsed when present
  await withModel(enc({ ...metadata, training: '{"steps": 3}' }), (lm) => {
    assert.deepEqual(lm.training, { steps: 3 });
    assert.ok(Object.isFrozen(lm.metadata) && Object.isFrozen(lm.vocab));
    assert.deepEqual(lm.metadata, { ...metadata, training: '{"steps": 3}' });
    assert.deepEqual(lm.vocab, vocab);
    throwsExactly(() => lm.heads, 'INVALID_ARGUMENT', 'heads: the file has no __metadata__.probes to measure the heads on');
  });
  await withModel(enc(metadata), (lm) => assert.deepEqual(lm.training, {}));
  await rejectsExactly(load({ ...metadata, training: '{' }), 'INVALID_ARGUMENT', `loadModel: __metadata__.training is not JSON (${(() => { try { JSON.parse('{'); } catch (e) { return e.message; } })()})`);
  const probes = { text: ['the rain in the', 'on the sea the'], repeat: ['rain?rain?', 'sheoasheoa'], repeat_span: 5 };
  await withModel(enc({ ...metadata, probes: JSON.stringify(probes) }), (lm) => {
    const h = lm.heads;
    assert.equal(lm.heads, h, 'computed once');
    assert.deepEqual(h.map((x) => [x.layer, x.head]), [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2], [1, 3]]);
    assert.deepEqual(h, analyzeHeads(probes, (text) => lm.run(text).attention, { numLayers: 2, numHeads: 4 }));
    assert.ok(h.some((x) => x.scores.induction > 0) && h.every((x) => x.scores.entropy > 0));
  });
});

test('tensors: each one the architecture needs, removed in turn, is named with its expected shape; a wrong shape or a non-finite value is named', async () => {
  for (const file of goldenFiles) {
    const name = file.replace(/\.json$/, '');
    const { metadata, tensors } = parsed(name);
    for (const t of Object.keys(tensors)) {
      const rest = { ...tensors };
      delete rest[t];
      const cfg = JSON.parse(metadata.config);
      if (t === 'layers.0.attn.in_proj_weight') {
        // without it the file is read in the q/k/v form
        const d = cfg.d_model;
        await rejectsExactly(mha.loadModel(encodeSafetensors(metadata, rest)), 'INVALID_ARGUMENT', `loadModel: tensor "layers.0.attn.q_proj.weight" is missing (expected shape [${d}, ${d}])`);
        continue;
      }
      await rejectsExactly(mha.loadModel(encodeSafetensors(metadata, rest)), 'INVALID_ARGUMENT',
        `loadModel: tensor "${t}" is missing (expected shape [${tensors[t].shape.join(', ')}])`);
    }
  }
  const { metadata, tensors } = parsed('default');
  const load = (ts) => mha.loadModel(encodeSafetensors(metadata, { ...tensors, ...ts }));
  await rejectsExactly(load({ 'ln_f.weight': { data: new Float32Array(16), shape: [1, 16] } }), 'SHAPE_MISMATCH', 'loadModel: tensor "ln_f.weight": expected shape [16], got [1, 16]');
  await rejectsExactly(load({ 'head.weight': { data: new Float32Array(16 * 12), shape: [16, 12] } }), 'SHAPE_MISMATCH', 'loadModel: tensor "head.weight": expected shape [12, 16], got [16, 12]');
  await rejectsExactly(load({ 'layers.1.mlp.proj.weight': { data: new Float32Array(16), shape: [16] } }), 'SHAPE_MISMATCH', 'loadModel: tensor "layers.1.mlp.proj.weight": expected shape [16, 32], got [16]');
  await rejectsExactly(load({ 'layers.1.mlp.proj.weight': { data: new Float32Array(16 * 32), shape: [16, 32, 1] } }), 'SHAPE_MISMATCH', 'loadModel: tensor "layers.1.mlp.proj.weight": expected shape [16, 32], got [16, 32, 1]');
  for (const [i, v] of [[0, Infinity], [31, -Infinity], [5, NaN]]) {
    const data = tensors['layers.1.attn.in_proj_bias'].data.slice();
    data[i] = v;
    await rejectsExactly(load({ 'layers.1.attn.in_proj_bias': { data, shape: [48] } }), 'NON_FINITE', `loadModel: tensor "layers.1.attn.in_proj_bias" has ${v} at flat index ${i}`);
  }
  const last = tensors['tok_emb.weight'].data.slice();
  last[last.length - 1] = NaN;
  await rejectsExactly(load({ 'tok_emb.weight': { data: last, shape: [12, 16] } }), 'NON_FINITE', `loadModel: tensor "tok_emb.weight" has NaN at flat index ${last.length - 1}`);
  // grouped K/V heads are always read in the q/k/v form, even beside an in_proj_weight
  const llama = parsed('llama');
  const g = read('llama');
  const extra = { ...llama.tensors, 'layers.0.attn.in_proj_weight': { data: new Float32Array(96 * 32), shape: [96, 32] } };
  await withModel(encodeSafetensors(llama.metadata, extra), (lm) => {
    const c = g.cases.find((k) => !k.ablate.length && k.ids.length > 3);
    assert.ok(maxDiff(lm.run(c.text).logProbs.data, c.logProbs.flat()) < 2e-4);
  });
});

test('sources: bytes, views at an offset, an ArrayBuffer, file: URLs and paths as URL strings; bad sources and HTTP failures are named', async () => {
  const bytes = bytesOf('default');
  const g = read('default');
  const c = g.cases[1];
  const check = async (source) => withModel(source, (lm) => assert.ok(maxDiff(lm.run(c.text).logProbs.data, c.logProbs.flat()) < 2e-4));
  await check(new Uint8Array(bytes));
  const padded = new Uint8Array(bytes.length + 8);
  padded.set(bytes, 3);
  await check(padded.subarray(3, 3 + bytes.length));
  await check(padded.buffer.slice(3, 3 + bytes.length));
  const url = new URL('default.safetensors', dir);
  await check(url);
  await check(url.href);
  await rejectsExactly(mha.loadModel(null), 'INVALID_ARGUMENT', 'loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got null');
  await rejectsExactly(mha.loadModel(42), 'INVALID_ARGUMENT', 'loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got number');
  await rejectsExactly(mha.loadModel({ href: url.href }), 'INVALID_ARGUMENT', 'loadModel: source must be bytes (ArrayBuffer, Uint8Array) or a URL, got object');
  // an http(s) URL is fetched
  const server = http.createServer((req, res) => {
    if (req.url === '/m.safetensors') { res.writeHead(200); res.end(bytes); } else { res.writeHead(404); res.end('no'); }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    await check(`${base}/m.safetensors`);
    await check(new URL(`${base}/m.safetensors`));
    await rejectsExactly(mha.loadModel(`${base}/none`), 'INVALID_ARGUMENT', `loadModel: fetching ${base}/none gave HTTP 404`);
  } finally {
    await new Promise((r) => server.close(r));
  }
  let fetchError;
  try { await fetch('http://127.0.0.1:1/x'); } catch (e) { fetchError = e.message; }
  await rejectsExactly(mha.loadModel('http://127.0.0.1:1/x'), 'INVALID_ARGUMENT', `loadModel: cannot fetch http://127.0.0.1:1/x: ${fetchError}`);
  // a file: URL of a file that is not there: read from disk, not fetched; the MHAError names the file and the reader's cause
  const missing = pathToFileURL(path.join(os.tmpdir(), `no-such-model-${process.pid}.safetensors`));
  await assert.rejects(mha.loadModel(missing), (e) => e.code === 'INVALID_ARGUMENT' &&
    e.message === `loadModel: no-such-model-${process.pid}.safetensors: cannot read ${missing.href}: ENOENT`);
});

test('encode and decode: characters, the unknown id, ids outside the vocabulary; refusals name the argument', async () => {
  await withModel(bytesOf('default'), (lm) => {
    // vocab: e t a o i n s r h ' ' . ?  (unk = 11)
    const ids = lm.encode('the zoo!');
    assert.ok(ids instanceof Int32Array);
    assert.deepEqual(Array.from(ids), [1, 8, 0, 9, 11, 3, 3, 11]);
    assert.equal(lm.decode(ids), 'the ?oo?');
    assert.equal(lm.decode([0, 12, -1, 10]), 'e\ufffd\ufffd.');
    assert.equal(lm.decode([]), '');
    assert.deepEqual(Array.from(lm.encode('')), []);
    throwsExactly(() => lm.encode(5), 'INVALID_ARGUMENT', 'encode: text must be a string, got number');
  });
});

test('run(): tokens, ids, attention shapes, the loss and the 5 next characters from its own log-probabilities', async () => {
  for (const name of ['default', 'llama']) {
    const g = read(name);
    await withModel(bytesOf(name), (lm) => {
      const { vocabSize: V, numLayers: L, numHeads: h, context: C } = lm.config;
      for (const c of g.cases) {
        const r = lm.run(c.text, { ablate: c.ablate });
        const T = c.ids.length;
        assert.deepEqual(r.tokens, Array.from(c.text));
        assert.ok(r.ids instanceof Int32Array);
        assert.deepEqual(Array.from(r.ids), c.ids);
        assert.equal(r.attention.length, L);
        for (let l = 0; l < L; l++) {
          assert.deepEqual(r.attention[l].shape, [h, T, T]);
          assert.ok(maxDiff(r.attention[l].data, c.attention[l].flat(2)) < 2e-5, `${name} layer ${l} attention`);
        }
        assert.deepEqual(r.logProbs.shape, [T, V]);
        const lp = r.logProbs.data;
        if (T === 1) assert.equal(r.loss, null);
        else {
          let s = 0;
          for (let t = 0; t + 1 < T; t++) s += lp[t * V + c.ids[t + 1]];
          assert.ok(Math.abs(r.loss - (-s / (T - 1) / Math.log(2))) < 1e-9, `${r.loss}`);
          assert.ok(Math.abs(r.loss - c.loss) < 1e-4);
        }
        const row = Array.from(lp.subarray((T - 1) * V, T * V));
        const order = row.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, 5);
        assert.deepEqual(r.next.map((x) => x.id), order.map((x) => x[1]));
        assert.deepEqual(r.next.map((x) => x.token), order.map((x) => lm.vocab[x[1]]));
        assert.deepEqual(r.next.map((x) => x.char), order.map((x) => lm.vocab[x[1]]));
        for (let k = 0; k < 5; k++) assert.equal(r.next[k].p, Math.exp(order[k][0]));
      }
      // two characters: the loss of the one prediction
      const two = lm.run('th');
      assert.equal(two.loss, -two.logProbs.data[8] / Math.LN2);
      // the context is the longest text; one character more is refused
      const full = 'the rain in the sea is on the sea'.slice(0, C);
      assert.equal(lm.run(full).ids.length, C);
      throwsExactly(() => lm.run(full + 'e'), 'INVALID_ARGUMENT', `run: text must have 1 to ${C} characters (the model's context), got ${C + 1}`);
      throwsExactly(() => lm.run(''), 'INVALID_ARGUMENT', `run: text must have 1 to ${C} characters (the model's context), got 0`);
      // an array is read as token ids (a model without a tokenizer takes them): 't' is not an id
      throwsExactly(() => lm.run(['t']), 'INVALID_ARGUMENT', 'run: token id 0 must be an integer in [0, 11], got "t"');
      throwsExactly(() => lm.run({}), 'INVALID_ARGUMENT', 'run: text must be a string or an array of token ids, got object');
    });
  }
});

test('ablate: checked pair by pair naming the value; null, undefined and [] switch nothing off; the last layer and head are valid', async () => {
  const g = read('default');
  await withModel(bytesOf('default'), (lm) => {
    const c = g.cases.find((k) => k.ablate.length);
    const plain = lm.run(c.text).logProbs.data;
    for (const opts of [{ ablate: null }, { ablate: undefined }, { ablate: [] }, null, undefined]) {
      assert.deepEqual(lm.run(c.text, opts).logProbs.data, plain, JSON.stringify(opts));
    }
    const abl = lm.run(c.text, { ablate: c.ablate });
    assert.ok(maxDiff(abl.logProbs.data, c.logProbs.flat()) < 2e-4);
    assert.ok(Math.abs(abl.loss - c.loss) < 1e-4);
    // each pair switches exactly its head off: [1, 3] alone differs from [0, 3] and [1, 0]
    const loss = (ablate) => lm.run(c.text, { ablate }).loss;
    const l13 = loss([[1, 3]]), l03 = loss([[0, 3]]), l10 = loss([[1, 0]]), l00 = loss([[0, 0]]);
    assert.equal(new Set([l13, l03, l10, l00, lm.run(c.text).loss]).size, 5);
    assert.equal(loss([[1, 3], [1, 3]]), l13);
    const err = (what, m) => `${what}: ${m}`;
    for (const what of ['run', 'generator']) {
      const call = (ablate) => (what === 'run' ? lm.run('the', { ablate }) : lm.generator('the', { ablate }));
      throwsExactly(() => call('0,1'), 'INVALID_ARGUMENT', err(what, 'ablate must be an array of [layer, head] pairs, got string'));
      throwsExactly(() => call({}), 'INVALID_ARGUMENT', err(what, 'ablate must be an array of [layer, head] pairs, got object'));
      throwsExactly(() => call([[0, 1, 2]]), 'INVALID_ARGUMENT', err(what, 'ablate entries must be [layer, head] pairs, got [0,1,2]'));
      throwsExactly(() => call([[0]]), 'INVALID_ARGUMENT', err(what, 'ablate entries must be [layer, head] pairs, got [0]'));
      throwsExactly(() => call([1]), 'INVALID_ARGUMENT', err(what, 'ablate entries must be [layer, head] pairs, got 1'));
      throwsExactly(() => call([[2, 0]]), 'INVALID_ARGUMENT', err(what, 'ablate layer must be an integer in [0, 1], got 2'));
      throwsExactly(() => call([[-1, 0]]), 'INVALID_ARGUMENT', err(what, 'ablate layer must be an integer in [0, 1], got -1'));
      throwsExactly(() => call([[0.5, 0]]), 'INVALID_ARGUMENT', err(what, 'ablate layer must be an integer in [0, 1], got 0.5'));
      throwsExactly(() => call([[0, 4]]), 'INVALID_ARGUMENT', err(what, 'ablate head must be an integer in [0, 3], got 4'));
      throwsExactly(() => call([[0, -1]]), 'INVALID_ARGUMENT', err(what, 'ablate head must be an integer in [0, 3], got -1'));
      throwsExactly(() => call([[0, '1']]), 'INVALID_ARGUMENT', err(what, 'ablate head must be an integer in [0, 3], got "1"'));
    }
    // generator with an ablation: its greedy steps are run()'s argmax with the same heads off
    const gen = lm.generator('the r', { temperature: 0, ablate: [[1, 3], [0, 0]] });
    let text = 'the r';
    for (let i = 0; i < 4; i++) {
      const s = gen.step();
      assert.equal(s.id, lm.run(text, { ablate: [[1, 3], [0, 0]] }).next[0].id);
      text += s.char;
    }
    gen.dispose();
  });
});

/** The sampler of model.js written again: weights exp(logp / T), the first index whose running sum passes u·Σ. */
function sample(logp, temperature, u) {
  const w = Array.from(logp, (v) => Math.exp(v / temperature));
  let r = u * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) { r -= w[i]; if (r < 0) return i; }
  return w.length - 1;
}

test('generator: seeded sampling equals an independent sampler on run()\'s log-probabilities; seed 0 is the default; reset restarts', async () => {
  await withModel(bytesOf('default'), (lm) => {
    const V = lm.config.vocabSize;
    for (const [temperature, seed] of [[1, 0], [0.7, 5], [2.5, 11]]) {
      const g = lm.generator('the ', seed === 0 ? { temperature } : { temperature, seed });
      const rand = mulberry32(seed);
      let text = 'the ';
      const got = [];
      for (let i = 0; i < 9; i++) {
        const s = g.step();
        const lp = lm.run(text).logProbs.data;
        const row = lp.subarray(lp.length - V);
        assert.equal(s.id, sample(row, temperature, rand()), `step ${i}, T = ${temperature}, seed ${seed}`);
        assert.equal(s.token, lm.vocab[s.id]);
        assert.equal(s.char, s.token);
        assert.ok(Math.abs(s.p - Math.exp(row[s.id])) < 1e-5);
        assert.equal(s.cacheLength, text.length);
        text += s.char;
        assert.equal(g.text, text);
        assert.equal(g.cacheLength, text.length - 1);
        got.push(s.id);
      }
      g.reset();
      assert.equal(g.text, 'the ');
      assert.equal(g.cacheLength, 0);
      assert.deepEqual(Array.from({ length: 9 }, () => g.step().id), got, 'after reset the same steps');
      g.dispose();
    }
    // the default temperature is 1
    assert.equal(lm.generate('on', 12, { seed: 4 }).text, lm.generate('on', 12, { seed: 4, temperature: 1 }).text);
    assert.notEqual(lm.generate('on', 12, { seed: 4 }).text, lm.generate('on', 12, { seed: 5 }).text);
  });
});

/**
 * Nucleus sampling written again from its definition (Holtzman et al. 2020): the weights exp(logp / T)
 * of the most probable tokens until their sum first reaches p of the total (tokens tied with the last
 * one kept too), the others 0; then the sampler above over what is left.
 */
function sampleTopP(logp, temperature, p, u) {
  const w = Array.from(logp, (v) => Math.exp(v / temperature));
  let s = 0;
  for (const x of w) s += x;
  const order = w.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const keep = new Set();
  let kept = 0, last = null;
  for (const [x, i] of order) {
    if (kept >= p * s && x !== last) break;
    keep.add(i); kept += x; last = x;
  }
  let r = u * kept;
  for (let i = 0; i < w.length; i++) { if (!keep.has(i)) continue; r -= w[i]; if (r < 0) return i; }
  return w.length - 1;
}

test('generator: top-p equals an independent nucleus sampler on run()\'s log-probabilities; topP is checked, naming the value', async () => {
  await withModel(bytesOf('default'), (lm) => {
    const V = lm.config.vocabSize;
    let differs = false;
    for (const [temperature, topP, seed] of [[1, 0.5, 2], [0.8, 0.9, 7], [1.5, 0.3, 9]]) {
      const g = lm.generator('on ', { temperature, topP, seed });
      const rand = mulberry32(seed);
      let text = 'on ';
      for (let i = 0; i < 10; i++) {
        const s = g.step();
        const lp = lm.run(text).logProbs.data;
        const u = rand();
        assert.equal(s.id, sampleTopP(lp.subarray(lp.length - V), temperature, topP, u), `step ${i}, T ${temperature}, topP ${topP}`);
        if (s.id !== sample(lp.subarray(lp.length - V), temperature, u)) differs = true;
        text += s.char;
      }
      g.dispose();
    }
    assert.ok(differs, 'the nucleus changed some draw');
    assert.equal(lm.generate('on ', 10, { seed: 3, topP: 1 }).text, lm.generate('on ', 10, { seed: 3 }).text);
    for (const t of [0, -0.1, 1.5, 1.0000001, '0.9', NaN, Infinity]) {
      throwsExactly(() => lm.generator('on', { topP: t }), 'INVALID_ARGUMENT', `generator: topP must be a number in (0, 1], got ${JSON.stringify(t)}`);
    }
  });
});

test('generator: greedy decoding takes the first of equally probable tokens (every output row the same: a uniform next token)', async () => {
  const { metadata, tensors } = parsed('default');
  const row = tensors['head.weight'].data.subarray(0, 16);
  const flat = {
    ...tensors,
    'head.weight': { data: Float32Array.from({ length: 12 * 16 }, (_, i) => row[i % 16]), shape: [12, 16] },
    'head.bias': { data: new Float32Array(12).fill(0.25), shape: [12] },
  };
  await withModel(encodeSafetensors(metadata, flat), (lm) => {
    const r = lm.run('the rain');
    assert.ok(r.logProbs.data.every((v) => v === r.logProbs.data[0]), 'every token equally probable');
    assert.deepEqual(r.next.map((x) => x.id), [0, 1, 2, 3, 4]);
    const g = lm.generate('the rain', 3, { temperature: 0 });
    assert.equal(g.text, 'the raineee');
    // every token tied: top-p keeps them all (ties at the boundary are kept), as plain sampling
    assert.equal(lm.generate('the rain', 8, { seed: 6, topP: 0.01 }).text, lm.generate('the rain', 8, { seed: 6 }).text);
    assert.notEqual(lm.generate('the rain', 8, { seed: 6 }).text, 'the rain' + 'e'.repeat(8));
    assert.ok(Math.abs(g.steps[0].p - 1 / 12) < 1e-6);
  });
});

test('generator: the cache slides to the last ⌊context/2⌋ characters when full; a prompt longer than the context starts there', async () => {
  await withModel(bytesOf('default'), (lm) => {
    const C = lm.config.context;   // 16
    const argmax = (text) => lm.run(text).next[0].id;
    const g = lm.generator('the', { temperature: 0 });
    let text = 'the';
    const lengths = [];
    for (let i = 0; i < C + 4; i++) {
      const s = g.step();
      lengths.push(s.cacheLength);
      // the text the caches hold: the whole text, or since the slide its last C/2 characters and what followed
      const held = text.slice(text.length - s.cacheLength);
      assert.equal(s.id, argmax(held), `step ${i}`);
      assert.equal(s.attention[0].shape[1], s.cacheLength);
      text += s.char;
    }
    assert.deepEqual(lengths, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 8, 9, 10, 11, 12, 13]);
    assert.equal(g.text, text);
    g.dispose();
    // a prompt of C + 3 characters: the first step sees its last C/2
    const long = 'the rain in the sea.';
    assert.equal(long.length, C + 4);
    const h = lm.generator(long, { temperature: 0 });
    const s = h.step();
    assert.equal(s.cacheLength, C / 2);
    assert.equal(s.id, argmax(long.slice(-C / 2)));
    assert.equal(h.text, long + s.char);
    h.reset();
    assert.equal(h.text, long);
    assert.equal(h.step().cacheLength, C / 2);
    h.dispose();
    // a prompt of exactly C characters fills the caches
    const exact = long.slice(0, C);
    const e = lm.generator(exact, { temperature: 0 });
    const s0 = e.step();
    assert.equal(s0.cacheLength, C);
    assert.equal(s0.id, argmax(exact));
    assert.equal(e.step().cacheLength, C / 2, 'the next step slides');
    e.reset();
    assert.equal(e.step().cacheLength, C);
    e.dispose();
  });
});

test('generator: the newest attention row of every layer and head equals run()\'s last row', async () => {
  await withModel(bytesOf('llama'), (lm) => {
    const { numLayers: L, numHeads: h } = lm.config;
    const g = lm.generator('the ra', { temperature: 0 });
    let text = 'the ra';
    for (let i = 0; i < 3; i++) {
      const s = g.step();
      const r = lm.run(text);
      const T = text.length;
      assert.equal(s.attention.length, L);
      for (let l = 0; l < L; l++) {
        assert.deepEqual(s.attention[l].shape, [h, T]);
        const want = new Float32Array(h * T);
        for (let j = 0; j < h; j++) want.set(r.attention[l].data.subarray((j * T + T - 1) * T, (j * T + T) * T), j * T);
        assert.ok(maxDiff(s.attention[l].data, want) < 1e-5, `step ${i} layer ${l}`);
      }
      text += s.char;
    }
    g.dispose();
  });
});

test('generator and generate: refusals name the argument; n = 0; dispose is idempotent and frees every generator', async () => {
  const lm = await mha.loadModel(bytesOf('default'));
  const before = mha.memory().inUseBytes;
  throwsExactly(() => lm.generator(''), 'INVALID_ARGUMENT', 'generator: prompt must be a non-empty string, got ""');
  throwsExactly(() => lm.generator(7), 'INVALID_ARGUMENT', 'generator: prompt must be a non-empty string, got 7');
  for (const t of [-1, NaN, Infinity, -Infinity, '1']) {
    throwsExactly(() => lm.generator('a', { temperature: t }), 'INVALID_ARGUMENT', `generator: temperature must be a finite number ≥ 0, got ${JSON.stringify(t)}`);
  }
  for (const n of [-1, 1.5, '3', undefined]) {
    throwsExactly(() => lm.generate('a', n), 'INVALID_ARGUMENT', `generate: n must be a non-negative integer, got ${JSON.stringify(n)}`);
  }
  assert.deepEqual(lm.generate('the', 0), { text: 'the', steps: [] });
  const r = lm.generate('the', 3, { temperature: 0 });
  assert.deepEqual(Object.keys(r.steps[0]), ['token', 'id', 'p', 'cacheLength', 'char']);
  for (const s of r.steps) assert.deepEqual([s.token, s.char], [lm.vocab[s.id], lm.vocab[s.id]], 'a step names its token by id and text; char is the same text');
  assert.deepEqual(r.steps.map((s) => s.cacheLength), [3, 4, 5]);
  assert.equal(r.text, 'the' + r.steps.map((s) => s.token).join(''));
  assert.equal(mha.memory().inUseBytes, before, 'generate disposed its generator');
  const g1 = lm.generator('the');
  const g2 = lm.generator('the');
  g2.step();
  g2.dispose();
  g2.dispose();
  assert.equal(g2.cacheLength, 0);
  throwsExactly(() => g2.step(), 'DISPOSED', 'step: this generator was disposed');
  throwsExactly(() => g2.reset(), 'DISPOSED', 'reset: this generator was disposed');
  g1.step();
  lm.dispose();
  lm.dispose();
  throwsExactly(() => g1.step(), 'DISPOSED', 'step: this generator was disposed');
  throwsExactly(() => lm.run('the'), 'DISPOSED', 'run: this model was disposed');
  throwsExactly(() => lm.heads, 'DISPOSED', 'heads: this model was disposed');
  throwsExactly(() => lm.generator('the'), 'DISPOSED', 'generator: this model was disposed');
});

test('byte-pair model (stories260K): pieces as tokens, "tokens" in the length error, an empty prompt, decode of the generated ids', async () => {
  await withModel(storiesBytes, (lm) => {
    assert.equal(lm.config.tokenizer, 'llama2c');
    const r = lm.run('Lily and Ben');
    assert.deepEqual(r.tokens, ['<s>', ' Lily', ' and', ' B', 'en']);
    assert.deepEqual(Array.from(r.ids), Array.from(lm.encode('Lily and Ben')));
    assert.equal(lm.decode(r.ids), 'Lily and Ben');
    assert.ok(r.next.every((x) => x.char === lm._piece(x.id)));
    assert.deepEqual(r.next.slice(0, 1).map((x) => typeof x.char), ['string']);
    throwsExactly(() => lm.run('a'.repeat(600)), 'INVALID_ARGUMENT', `run: text must have 1 to 512 tokens (the model's context), got ${lm.encode('a'.repeat(600)).length}`);
    // "" is BOS alone
    const g = lm.generator('', { temperature: 0 });
    const s = g.step();
    assert.equal(s.cacheLength, 1);
    assert.equal(s.id, lm.run('').next[0].id);
    const s2 = g.step();
    assert.equal(g.text, lm.decode([1, s.id, s2.id]));
    // reset: the text decodes from the prompt's ids again
    g.reset();
    assert.equal(g.text, '');
    assert.equal(g.step().id, s.id);
    assert.equal(g.text, lm.decode([1, s.id]));
    g.dispose();
    const story = lm.generate('Once upon a time', 8, { temperature: 0 });
    assert.equal(story.text, 'Once upon a time, there was a little girl');
  });
});

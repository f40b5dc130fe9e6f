// The model runner (web/lib/src/lm/model.js) value by value, loading: every config key's default,
// bounds and refusal message (argument, expected and actual value), the metadata fields, the
// tensors each architecture needs (each one removed in turn is named with its expected shape), and
// the sources loadModel reads (bytes, views, ArrayBuffers, file: URLs and paths; HTTP failures), on
// the tiny models of tests/golden-decoder/. Running the models: model-runner-run.test.mjs and
// model-runner-generate.test.mjs. Written for the mutation testing of model.js (stryker.config.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMHA, MHAError, MODEL_FORMAT, analyzeHeads } from '../web/lib/src/index.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';
import { throwsExactly } from './helpers/exact-error.mjs';
import { maxDiff } from './helpers/model-golden.mjs';
import { dir, goldenFiles, read, bytesOf, parsed, rejectsExactly, configBytes, loaders } from './helpers/model-runner.mjs';

const mha = await createMHA();
const { withConfig, withModel } = loaders(mha);

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


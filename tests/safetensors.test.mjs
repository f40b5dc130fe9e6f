// The safetensors reader (web/lib/src/formats/safetensors.js) is an attack surface: malformed files give an
// MHAError naming the tensor or field, never a RangeError, an out-of-bounds read or a hang; a
// fast-check fuzz of byte mutations of a real model file; and a PyTorch nn.MultiheadAttention
// state dict saved as safetensors runs in our layer as in PyTorch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import { createMHA, parseSafetensors, MHAError } from '../web/lib/src/index.js';
import { throwsMHA } from './helpers/errors.mjs';
import { encodeSafetensors } from './helpers/safetensors.mjs';

const mha = await createMHA();
const manifest = JSON.parse(fs.readFileSync(new URL('../web/lib/models/index.json', import.meta.url)));
const modelBytes = fs.readFileSync(new URL(`../web/lib/models/${manifest.models[0].file}`, import.meta.url));

/** A file from a header object and a data area of `dataBytes` bytes. */
function file(header, dataBytes = 0, headerLength) {
  const h = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + dataBytes);
  new DataView(out.buffer).setUint32(0, headerLength ?? h.length, true);
  out.set(h, 8);
  return out;
}

test('reads F32, F16 and BF16 tensors and the metadata', () => {
  const data = new Uint8Array(4 + 2 + 2);
  new DataView(data.buffer).setFloat32(0, 1.5, true);
  new DataView(data.buffer).setUint16(4, 0x3c00, true);   // half 1.0
  new DataView(data.buffer).setUint16(6, 0xc000, true);   // bf16 -2.0
  const header = {
    __metadata__: { note: 'hi' },
    a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
    b: { dtype: 'F16', shape: [1, 1], data_offsets: [4, 6] },
    c: { dtype: 'BF16', shape: [], data_offsets: [6, 8] },
  };
  const f = file(header, 8);
  f.set(data, f.length - 8);
  const { metadata, tensors, dtypes } = parseSafetensors(f);
  assert.deepEqual(metadata, { note: 'hi' });
  assert.deepEqual([tensors.a.data[0], tensors.b.data[0], tensors.c.data[0]], [1.5, 1, -2]);
  assert.deepEqual([tensors.a.shape, tensors.b.shape, tensors.c.shape], [[1], [1, 1], []]);
  assert.deepEqual(dtypes, { a: 'F32', b: 'F16', c: 'BF16' });
});

test('malformed files: an MHAError that names the tensor or field, the expected and the actual value', () => {
  const t = (shape, dtype = 'F32', off = [0, 4]) => ({ x: { dtype, shape, data_offsets: off } });
  throwsMHA(() => parseSafetensors(new Uint8Array(5)), 'INVALID_ARGUMENT', [/5 bytes/, /8/]);
  throwsMHA(() => parseSafetensors(file(t([1]), 4).subarray(0, 20)), 'INVALID_ARGUMENT', [/header length \d+ runs past the end of the file \(20 bytes\)/]);
  const huge = new Uint8Array(16);
  new DataView(huge.buffer).setUint32(4, 1, true);   // 2^32
  throwsMHA(() => parseSafetensors(huge), 'INVALID_ARGUMENT', [/header length 4294967296 exceeds the limit/]);
  throwsMHA(() => parseSafetensors(file('{"x": ', 0)), 'INVALID_ARGUMENT', [/not valid UTF-8 JSON/]);
  throwsMHA(() => parseSafetensors(file('[1, 2]', 0)), 'INVALID_ARGUMENT', [/must be a JSON object, got an array/]);
  throwsMHA(() => parseSafetensors(file(t([1], 'I64'), 4)), 'INVALID_ARGUMENT', [/tensor "x"/, /dtype must be one of/, /"I64"/]);
  throwsMHA(() => parseSafetensors(file(t([-1]), 4)), 'INVALID_ARGUMENT', [/tensor "x"/, /shape/, /\[-1\]/]);
  throwsMHA(() => parseSafetensors(file(t([1.5]), 4)), 'INVALID_ARGUMENT', [/tensor "x"/, /shape/]);
  throwsMHA(() => parseSafetensors(file(t([1], 'F32', [0, 8]), 4)), 'INVALID_ARGUMENT', [/tensor "x"/, /run past the end of the data \(4 bytes\)/]);
  throwsMHA(() => parseSafetensors(file(t([2], 'F32', [0, 4]), 4)), 'INVALID_ARGUMENT', [/tensor "x"/, /needs 8 bytes, data_offsets give 4/]);
  throwsMHA(() => parseSafetensors(file(t([1], 'F32', [4, 0]), 4)), 'INVALID_ARGUMENT', [/begin ≤ end/, /\[4,0\]/]);
  throwsMHA(() => parseSafetensors(file({ ...t([1]), y: { dtype: 'F32', shape: [1], data_offsets: [2, 6] } }, 8)), 'INVALID_ARGUMENT', [/"x" and "y" overlap/]);
  throwsMHA(() => parseSafetensors(file({ __metadata__: { a: 1 } }, 0)), 'INVALID_ARGUMENT', [/__metadata__\.a must be a string, got number/]);
  throwsMHA(() => parseSafetensors('not bytes'), 'INVALID_ARGUMENT', [/ArrayBuffer or a Uint8Array/]);
  // A shape whose element count overflows is refused by the byte count, without allocating.
  throwsMHA(() => parseSafetensors(file(t([2 ** 40, 2 ** 20]), 4)), 'INVALID_ARGUMENT', [/needs \d+ bytes/]);
});

test('fuzz: byte mutations of a real model file either parse into in-bounds tensors or throw MHAError; loadModel likewise; the engine keeps working', async () => {
  const base = modelBytes;
  const headerEnd = 8 + new DataView(base.buffer, base.byteOffset).getUint32(0, true);
  const mutation = fc.oneof(
    // Flip bytes, mostly in the header and its length, where the parser's decisions are.
    fc.record({ kind: fc.constant('set'), at: fc.integer({ min: 0, max: headerEnd + 64 }), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('truncate'), at: fc.integer({ min: 0, max: base.length }) }),
    fc.record({ kind: fc.constant('insert'), at: fc.integer({ min: 0, max: headerEnd }), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant('delete'), at: fc.integer({ min: 0, max: headerEnd }) }),
    fc.record({ kind: fc.constant('digit'), at: fc.integer({ min: 8, max: headerEnd - 1 }), value: fc.integer({ min: 0, max: 9 }) }),
  );
  let parsed = 0;
  let refused = 0;
  await fc.assert(fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (muts) => {
    let b = Uint8Array.from(base);
    for (const m of muts) {
      if (m.kind === 'set') { if (m.at < b.length) b[m.at] = m.value; }
      else if (m.kind === 'truncate') b = b.subarray(0, Math.min(m.at, b.length));
      else if (m.kind === 'insert') b = Uint8Array.from([...b.subarray(0, m.at), m.value, ...b.subarray(m.at)]);
      else if (m.kind === 'delete') b = Uint8Array.from([...b.subarray(0, m.at), ...b.subarray(m.at + 1)]);
      else if (b[m.at] >= 0x30 && b[m.at] <= 0x39) b[m.at] = 0x30 + m.value;   // change a number in the header
    }
    try {
      const { tensors } = parseSafetensors(b);
      for (const t of Object.values(tensors)) {
        assert.ok(t.data instanceof Float32Array);
        assert.equal(t.data.length, t.shape.reduce((x, y) => x * y, 1));
      }
      parsed++;
    } catch (e) {
      assert.ok(e instanceof MHAError, `${e && e.constructor.name}: ${e && e.message}`);
      refused++;
    }
    try {
      const lm = await mha.loadModel(b);
      const r = lm.run('fuzz');
      assert.ok(r.logProbs.data.every(Number.isFinite));
      lm.dispose();
    } catch (e) {
      assert.ok(e instanceof MHAError, `loadModel: ${e && e.constructor.name}: ${e && e.message}`);
    }
  }), { numRuns: 300, seed: 20261122 });
  assert.ok(parsed > 0 && refused > 0, `parsed ${parsed}, refused ${refused}`);
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 1 });
  assert.ok(l.forward([[1, 2, 3, 4, 5, 6, 7, 8]]).output.data.every(Number.isFinite));
  l.dispose();
});

test('a PyTorch nn.MultiheadAttention state dict saved as safetensors runs as in PyTorch (fromSafetensors)', () => {
  const fx = JSON.parse(fs.readFileSync(new URL('./fixtures/torch_mha_state_dict.json', import.meta.url)));
  const bytes = fs.readFileSync(new URL('./fixtures/torch_mha_state_dict.safetensors', import.meta.url));
  const weights = mha.fromSafetensors(bytes, { numHeads: fx.num_heads, prefix: 'attn.' });
  const layer = mha.createLayer({ numHeads: fx.num_heads, weights });
  const r = layer.forward(fx.x, { causal: true });
  const want = fx.output.flat();
  let m = 0;
  r.output.data.forEach((v, i) => { m = Math.max(m, Math.abs(v - want[i])); });
  assert.ok(m < 1e-5, `max |Δ| ${m}`);
  const w = fx.weights.flat(2);
  let mw = 0;
  r.weights.data.forEach((v, i) => { mw = Math.max(mw, Math.abs(v - w[i])); });
  assert.ok(mw < 1e-6, `weights max |Δ| ${mw}`);
  layer.dispose();
  // Round trip: the parsed tensors written again give the same weights.
  const again = mha.fromSafetensors(encodeSafetensors({}, parseSafetensors(bytes).tensors), { numHeads: fx.num_heads });
  assert.deepEqual(Array.from(again.wQ.data), Array.from(weights.wQ.data));
  throwsMHA(() => mha.fromSafetensors(bytes, { numHeads: fx.num_heads, prefix: 'nothing.' }), 'INVALID_ARGUMENT', [/out_proj\.weight/]);
});

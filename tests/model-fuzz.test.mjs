// The model file's config is an attack surface (a page may load any URL): fast-check draws configs
// whose every key is a valid value, an invalid one of the right type, or a value of the wrong type,
// over the tensors of the golden decoder files (whose shapes then fit or not). loadModel must either
// load a model whose run() gives finite log-probabilities or throw an MHAError (never another
// error, never an aborted wasm instance), and leave the heap as it found it once disposed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import { createMHA, MHAError, parseSafetensors } from '../web/lib/src/index.js';
import { encodeSafetensors } from './helpers/safetensors.mjs';

const mha = await createMHA();
const dir = new URL('./golden-decoder/', import.meta.url);
const bases = ['llama', 'default', 'neox-gelu', 'swiglu-bias-mqa'].map((n) => parseSafetensors(fs.readFileSync(new URL(`${n}.safetensors`, dir))));

const junk = fc.oneof(fc.constant(null), fc.string({ maxLength: 6 }), fc.double(), fc.integer({ min: -5, max: 70000 }), fc.boolean(), fc.constant([]), fc.constant({}));
// mostly the base file's own value (undefined), so that many drawn files stay loadable
const key = (valid, invalid = junk) => fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: invalid });
const config = fc.record({
  base: fc.integer({ min: 0, max: bases.length - 1 }),
  norm: key(['layernorm', 'rmsnorm'], fc.constantFrom('batchnorm', 'RMSNorm', 1)),
  norm_eps: key([1e-5, 1e-6, 0.5], fc.constantFrom(0, -1, 1, 1e308, Number.NaN, '1e-5')),
  mlp: key(['relu', 'gelu', 'gelu_tanh', 'swiglu'], fc.constantFrom('swish', 'geglu', '')),
  bias: key([true, false], fc.constantFrom(0, 1, 'true')),
  positions: key(['learned', 'rope'], fc.constantFrom('alibi', 'none')),
  rope_base: key([10000, 2, 1e6], fc.constantFrom(0, 1, -10, 1e300, Number.POSITIVE_INFINITY)),
  rope_interleaved: key([true, false]),
  kv_heads: key([1, 2, 4], fc.constantFrom(0, 3, 8, -2, 2.5)),
  tied: key([true, false]),
  tokenizer: key(['characters'], fc.constantFrom('llama2c', 'bytes')),
  num_heads: key([4, 2, 1], fc.constantFrom(0, 3, 5, 257)),
  context: key([24, 16, 1], fc.constantFrom(0, 65537, -1)),
});

test('fuzz: random model configs load and run finitely or throw MHAError; a second identical pass leaves the heap as the first', async () => {
  const probe = mha.createLayer({ dModel: 8, numHeads: 2 });
  let loaded = 0, refused = 0;
  const pass = () => fc.assert(fc.asyncProperty(config, async (c) => {
    const { metadata, tensors } = bases[c.base];
    const cfg = JSON.parse(metadata.config);
    for (const [k, v] of Object.entries(c)) if (k !== 'base' && v !== undefined) cfg[k] = v;
    const bytes = encodeSafetensors({ ...metadata, config: JSON.stringify(cfg) }, tensors);
    let lm;
    try {
      lm = await mha.loadModel(bytes);
    } catch (e) {
      assert.ok(e instanceof MHAError, `not an MHAError: ${e && e.stack}`);
      assert.ok(e.message.length > 10);
      refused++;
      return;
    }
    try {
      const r = lm.run('ab'.slice(0, Math.min(2, lm.config.context)));
      assert.ok(r.logProbs.data.every(Number.isFinite));
      loaded++;
    } finally {
      lm.dispose();
    }
  }), { numRuns: 300, seed: 23 });
  // The allocator's in-use count depends on the history of errors (the last one's message stays
  // allocated) and of chunk splits: the same 300 files a second time must end where the first did.
  await pass();
  const before = mha.memory().inUseBytes;
  await pass();
  assert.equal(mha.memory().inUseBytes, before, 'heap in use grew over an identical pass');
  assert.ok(loaded > 20 && refused > 20, `too one-sided: ${loaded} loaded, ${refused} refused`);
  // the engine still works
  assert.equal(probe.forward([[1, 2, 3, 4, 5, 6, 7, 8]]).output.shape[1], 8);
  probe.dispose();
});

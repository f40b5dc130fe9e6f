// Property-based tests of the JS API with fast-check, valid calls: random valid layers and calls
// (dModel 1–64, heads dividing it, kvHeads dividing heads, per-head uneven widths, self- and
// cross-attention with Tq ≠ Tk, batch 1–3 or unbatched, causal / key-padding / boolean / additive /
// per-head masks, needWeights, averageWeights, trace), and long key ranges (Tk 513..1100, no
// weights: the streaming online-softmax path over several key blocks), each against the float64
// reference of tests/helpers/property.mjs.
// The KV cache's property is in property-kv-cache.test.mjs, the invalid calls' in
// property-invalid.test.mjs. FC_NUM_RUNS / FC_SEED: see tests/helpers/property.mjs.
import { test, after } from 'node:test';
import fc from 'fast-check';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { fcParams, layerArb, callArb, checkCall } from './helpers/property.mjs';

const mha = await createMHA(tierOptions());
const runsDone = {};  // property name -> runs executed (printed at the end)

test('property: random valid layers and calls match the float64 reference', () => {
  let n = 0;
  fc.assert(fc.property(layerArb, callArb, (d, c) => { n++; checkCall(mha, d, c); }), fcParams());
  runsDone.valid = n;
});

test('property: long key ranges (streaming softmax over several key blocks, Tk 513..1100) match the reference', () => {
  let n = 0;
  const arb = fc.record({
    h: fc.integer({ min: 1, max: 4 }), per: fc.integer({ min: 1, max: 3 }),
    Tq: fc.integer({ min: 1, max: 3 }), Tk: fc.integer({ min: 513, max: 1100 }),  // > one key block of 512
    causal: fc.constantFrom(false, false, false, true),  // mostly off: causal cross-attention of Tq ≤ 3 reads one block
    kpm: fc.constantFrom('none', 'bool', 'additive'), attn: fc.constantFrom('none', 'bool', 'additive', 'additivePerHead'),
    maskDensity: fc.constantFrom(0.1, 1, 1.99), batched: fc.boolean(), B: fc.integer({ min: 1, max: 2 }),
    amp: fc.constantFrom(1, 4), seed: fc.integer(), mode: fc.constant('noWeights'),  // weights off: the streaming path
  });
  fc.assert(fc.property(arb, (a) => {
    n++;
    const d = { form: 'packed', dModel: a.h * a.per, h: a.h, g: a.h, dk: Array(a.h).fill(a.per), dv: Array(a.h).fill(a.per), bias: true };
    checkCall(mha, d, { ...a, cross: { kDim: 3, vDim: 2 }, inputForm: 0, weightForm: 0 });
  }), fcParams());
  runsDone.longKeys = n;
});

after(() => console.log(`# property runs: ${JSON.stringify(runsDone)}`));

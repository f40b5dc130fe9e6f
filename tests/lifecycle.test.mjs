// One lifecycle for every object that owns wasm memory (engine/handle.js, WasmObject): Layer,
// KVCache, LanguageModel, TokenGenerator, the decoder and its cache. After dispose() every method
// throws MHAError DISPOSED whose message starts with the call's name, dispose() is idempotent, the
// properties stay readable (disposed true, a cache's length 0), and a parent's dispose() disposes
// its children (a layer's caches; a model's decoder and generators; a generator's cache). The
// methods are enumerated from each class's prototype, so a method added later is held to the same rule.
// Children are disposed newest first and leave their parent's set when disposed alone; initHandle
// deletes its handle when the init throws or fails; a generator whose cache fails leaves its model
// as it was; generator prompts (null, [], text not in the vocabulary). Below the JS API, every
// embind handle refuses a call before a successful init with DISPOSED (lastError() says so) instead
// of dereferencing a null object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, MHAError, Layer, KVCache, LanguageModel } from '../web/lib/src/index.js';
import { TokenGenerator } from '../web/lib/src/lm/generator.js';
import { Decoder, DecoderCache } from '../web/lib/src/lm/decoder.js';
import { WasmObject, initHandle } from '../web/lib/src/engine/handle.js';

const mha = await createMHA();
const core = mha._core;
const modelBytes = fs.readFileSync(new URL('./golden-decoder/default.safetensors', import.meta.url));
const lm = await mha.loadModel(modelBytes);
const spec = lm._decoder.spec;

/** The public methods of a class (own prototype, not dispose, not _internal). */
const methods = (C) => Object.getOwnPropertyNames(C.prototype)
  .filter((k) => k !== 'constructor' && k !== 'dispose' && !k.startsWith('_') && typeof Object.getOwnPropertyDescriptor(C.prototype, k).value === 'function');

/** Every class, its methods (with valid arguments and the name their errors carry), and a maker. */
const x = [[1, 0, 0, 0], [0, 1, 0, 0]];
const ids = Int32Array.from([1, 2, 3]);
const cases = [
  { C: Layer, noun: 'layer', make: () => mha.createLayer({ dModel: 4, numHeads: 2, seed: 1 }),
    calls: { forward: [(o) => o.forward(x), 'forward'], trace: [(o) => o.trace(x), 'trace'], createKVCache: [(o) => o.createKVCache({ maxLen: 4 }), 'createKVCache'] } },
  { C: KVCache, noun: 'KV cache', make: () => mha.createLayer({ dModel: 4, numHeads: 2, seed: 1 }).createKVCache({ maxLen: 4 }),
    calls: { step: [(o) => o.step(x), 'step'], reset: [(o) => o.reset(), 'reset'] } },
  { C: Decoder, noun: 'decoder', make: () => new Decoder(core, spec),
    calls: { forward: [(o) => o.forward(ids, 1), 'forward'], createCache: [(o) => o.createCache(4), 'createCache'] } },
  { C: DecoderCache, noun: 'decoder cache', make: () => new Decoder(core, spec).createCache(4),
    calls: { step: [(o) => o.step(ids), 'step'], reset: [(o) => o.reset(), 'reset'] } },
  { C: TokenGenerator, noun: 'generator', make: () => lm.generator(ids),
    calls: { step: [(o) => o.step(), 'step'], reset: [(o) => o.reset(), 'reset'] } },
];

for (const { C, noun, make, calls } of cases) {
  test(`${C.name}: one base (WasmObject); every method works before dispose() and throws DISPOSED naming itself after`, () => {
    assert.ok(C.prototype instanceof WasmObject, `${C.name} extends WasmObject`);
    assert.deepEqual(methods(C).sort(), Object.keys(calls).sort(), `${C.name}: every public method is covered here`);
    const o = make();
    for (const [call] of Object.values(calls)) call(o);  // live: no throw
    assert.equal(o.disposed, false);
    o.dispose();
    assert.equal(o.disposed, true);
    for (const [method, [call, name]] of Object.entries(calls)) {
      assert.throws(() => call(o), (e) => {
        assert.ok(e instanceof MHAError, `${method}: ${e}`);
        assert.equal(e.code, 'DISPOSED', method);
        assert.equal(e.message, `${name}: this ${noun} was disposed`);
        return true;
      }, method);
    }
    o.dispose();  // idempotent
    assert.equal(o.disposed, true);
    if ('length' in o) assert.equal(o.length, 0);
  });
}

test("a parent's dispose() disposes its caches; a cache's dispose() leaves its parent working", () => {
  const layer = mha.createLayer({ dModel: 4, numHeads: 2, seed: 1 });
  const a = layer.createKVCache({ maxLen: 4 }), b = layer.createKVCache({ maxLen: 4 });
  a.step(x);
  assert.equal(a.length, 2);
  a.dispose();
  assert.equal(b.disposed, false);
  assert.equal(layer.forward(x).output.shape.join(), '2,4');
  layer.dispose();
  assert.equal(b.disposed, true);
  assert.throws(() => b.step(x), { code: 'DISPOSED', message: 'step: this KV cache was disposed' });
  const d = new Decoder(core, spec);
  const c = d.createCache(4);
  c.step(ids);
  assert.equal(c.length, 3);
  d.dispose();
  assert.equal(c.disposed, true);
  assert.equal(c.length, 0);
  assert.throws(() => c.reset(), { code: 'DISPOSED', message: 'reset: this decoder cache was disposed' });
});

test('a LanguageModel owns its decoder and generators, a TokenGenerator its cache: one dispose() frees them all', async () => {
  const before = mha.memory().inUseBytes;
  const m = await mha.loadModel(modelBytes);
  assert.ok(m instanceof WasmObject && m.generator(ids) instanceof WasmObject, 'both are WasmObjects');
  const g1 = m.generator(ids), g2 = m.generator(ids);
  assert.equal(g1.step().cacheLength, 3);
  g2.dispose();
  assert.equal(g2.disposed, true);
  assert.equal(g1.disposed, false, "a generator's dispose() leaves its model and the other generators");
  assert.equal(m.run(ids).ids.length, 3);
  const decoder = m._decoder, cache = g1._cache;
  assert.equal(cache.disposed, false);
  m.dispose();
  for (const o of [m, decoder, g1, cache]) assert.equal(o.disposed, true, o.constructor.name);
  assert.equal(g1.cacheLength, 0);
  const calls = { run: () => m.run(ids), generator: () => m.generator(ids), generate: () => m.generate(ids, 1), heads: () => m.heads };
  for (const [name, call] of Object.entries(calls)) {
    assert.throws(call, (e) => e instanceof MHAError && e.code === 'DISPOSED' && e.message === `${name}: this model was disposed`, name);
  }
  assert.throws(() => g1.step(), { code: 'DISPOSED', message: 'step: this generator was disposed' });
  // the tokenizer is JS alone: encode and decode keep working
  assert.deepEqual(m.decode(m.encode('ab')), lm.decode(lm.encode('ab')));
  m.dispose();  // idempotent
  assert.ok(LanguageModel.prototype instanceof WasmObject);
  assert.equal(mha.memory().inUseBytes, before, "the model's decoder, caches and staging are freed");
});

test('every embind handle refuses a call before a successful init with DISPOSED (lastError says why), and the module keeps working', () => {
  const DISPOSED = core.enums().codes.indexOf('DISPOSED');
  const refuse = (status, what) => {
    assert.equal(status, DISPOSED, what);
    assert.match(core.lastError().message, /is not initialized/, what);
  };
  const kv = new core.KVCacheHandle();
  refuse(kv.step(0), 'KVCacheHandle.step');
  refuse(kv.checkStep(1), 'KVCacheHandle.checkStep');
  assert.equal(kv.length(), 0);
  kv.reset();
  const layer = new core.LayerHandle();
  refuse(kv.init(layer, 4, 1), 'KVCacheHandle.init on an uninitialized layer');
  refuse(core._mha_layer_forward(layer.address(), 0), 'mha_layer_forward');
  const dc = new core.DecoderCacheHandle();
  refuse(dc.step(0), 'DecoderCacheHandle.step');
  refuse(dc.checkStep(1), 'DecoderCacheHandle.checkStep');
  const dh = new core.DecoderHandle();
  refuse(dh.forward(0), 'DecoderHandle.forward');
  refuse(dh.addBlock(0), 'DecoderHandle.addBlock');
  refuse(dc.init(dh, 4, 1), 'DecoderCacheHandle.init on an uninitialized decoder');
  for (const h of [kv, layer, dc, dh]) h.delete();
  // a cache whose init failed (maxLen 0) was never made; the layer and a new cache still work
  const l = mha.createLayer({ dModel: 4, numHeads: 2, seed: 1 });
  assert.throws(() => l.createKVCache({ maxLen: 0 }), { code: 'INVALID_ARGUMENT' });
  assert.equal(l.createKVCache({ maxLen: 2 }).step(x).output.shape.join(), '2,4');
  l.dispose();
});

test("dispose() disposes the children newest first, and a child's dispose() takes it out of its parent", () => {
  const order = [];
  const parent = new WasmObject(core, null, 'parent');
  const kids = ['a', 'b', 'c'].map((name) => {
    const k = new WasmObject(core, null, name, parent);
    const dispose = k.dispose.bind(k);
    k.dispose = () => { if (!k.disposed) order.push(name); dispose(); };
    return k;
  });
  kids[1].dispose();
  assert.deepEqual(order, ['b']);
  assert.deepEqual([...parent._children], [kids[0], kids[2]], 'a disposed child is no longer held by its parent');
  parent.dispose();
  assert.deepEqual(order, ['b', 'c', 'a'], 'the newest child first');
  assert.equal(parent._children.size, 0);
  // a model's generators, disposed one by one, leave only its decoder among its children
  const m = lm.generator(ids);
  assert.ok(lm._children.has(m));
  m.dispose();
  assert.equal(lm._children.has(m), false);
});

test('initHandle deletes the handle when its init throws or fails, and returns it initialized otherwise', () => {
  const made = [];
  class Handle {
    constructor() { this.deleted = false; made.push(this); }
    delete() { this.deleted = true; }
  }
  const boom = new TypeError('init threw');
  assert.throws(() => initHandle(core, Handle, () => { throw boom; }, 'createThing'), (e) => e === boom);
  assert.equal(made[0].deleted, true, 'deleted after a throw');
  // a failing status: the core's last error (here, a step of a cache never initialized), prefixed with the method
  const kv = new core.KVCacheHandle();
  assert.equal(kv.step(0), core.enums().codes.indexOf('DISPOSED'));
  kv.delete();
  const { message } = core.lastError();
  assert.match(message, /is not initialized/);
  assert.throws(() => initHandle(core, Handle, () => 1, 'createThing'),
    (e) => e instanceof MHAError && e.code === 'DISPOSED' && e.message === `createThing: ${message}`);
  assert.equal(made[1].deleted, true, 'deleted after a failed init');
  const h = initHandle(core, Handle, (hd) => { assert.equal(hd, made[2]); return 0; }, 'createThing');
  assert.equal(h, made[2]);
  assert.equal(h.deleted, false, 'an initialized handle is the caller\'s');
});

test("a generator whose cache cannot be made throws its error naming generator, and leaves its model's children as they were", () => {
  const m = lm;
  const children = [...m._children];
  const real = m._decoder.createCache;
  m._decoder.createCache = function zeroLength(maxLen, batch, opts) { return real.call(this, 0, batch, opts); };
  try {
    assert.throws(() => m.generator(ids), { code: 'INVALID_ARGUMENT', message: 'generator: maxLen must be a positive integer, got 0' });
  } finally {
    delete m._decoder.createCache;
  }
  assert.deepEqual([...m._children], children);
  const g = m.generator(ids);
  assert.equal(g.step().cacheLength, 3, 'the model still makes generators');
  g.dispose();
});

test('generator prompts: null and [] refused by name; a string prompt is its text as given, before and after reset()', () => {
  for (const p of [null, []]) {
    assert.throws(() => lm.generator(p), { code: 'INVALID_ARGUMENT', message: `generator: prompt must be a non-empty string, got ${JSON.stringify(p)}` });
  }
  // '☃' is not in the vocabulary: it encodes to the unknown id, whose decoded text differs
  assert.notEqual(lm.decode(lm.encode('ab☃')), 'ab☃');
  const g = lm.generator('ab☃');
  assert.equal(g.text, 'ab☃');
  g.step();
  g.reset();
  assert.equal(g.text, 'ab☃');
  g.dispose();
});

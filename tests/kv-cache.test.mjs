// logic/kv-cache.js, the one KV-cache formula of the elements: against hand-worked sizes of
// published models and against the engine's own count (passport memory.kvCache, computed in C++),
// and the callers that use it (the cost ledger, the trained views' kvCacheBytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { kvCacheFactors, kvCacheSize } from '../web/lib/components/logic/kv-cache.js';
import { costLedger } from '../web/lib/components/logic/cost-ledger.js';

const mha = await createMHA();

test('the formula: 2 · L · B · T · g · d_k · bytes, or L · B · T · g · (d_k + d_v) · bytes', () => {
  // Llama 2 7B: 32 layers, 32 heads of 128, 4096 tokens, fp16: 2 GiB per sequence
  assert.equal(kvCacheSize({ layers: 32, batch: 1, tokens: 4096, kvHeads: 32, dK: 128, bytesPerValue: 2 }), 2 * 1024 ** 3);
  // Llama 2 70B with g = 8 of 64 heads: 80 layers · 8 · 128 · 2 · 2 bytes = 327,680 bytes per token
  assert.equal(kvCacheSize({ layers: 80, kvHeads: 8, dK: 128, bytesPerValue: 2 }), 327680);
  assert.equal(kvCacheSize({ kvHeads: 1, dK: 1 }), 2, 'one key and one value');
  assert.equal(kvCacheSize({ layers: 2, batch: 3, tokens: 5, kvHeads: 2, dK: 4, dV: 6 }), 2 * 3 * 5 * 2 * 10);
  assert.deepEqual(kvCacheFactors({ layers: 2, batch: 1, tokens: 8, kvHeads: 12, dK: 4, bytesPerValue: 4 }), [2, 2, 1, 8, 12, 4, 4]);
  assert.deepEqual(kvCacheFactors({ kvHeads: 2, dK: 4, dV: 6 }), [1, 1, 1, 2, 10, 1]);
});

test("the same count as the engine's passport (memory.kvCache, one layer)", () => {
  const cfgs = [
    { seqLen: 7, dModel: 64, numHeads: 8, batch: 3 },
    { seqLen: 5, dModel: 64, numHeads: 8, kvHeads: 2, batch: 2 },
    { seqLen: 9, dModel: 48, numHeads: 4, kvHeads: 1 },
    { seqLen: 4, dModel: 32, numHeads: 4, dK: 6, dV: 10, batch: 2 },
  ];
  for (const cfg of cfgs) {
    const p = mha.passport(cfg);
    const ours = kvCacheSize({ batch: cfg.batch ?? 1, tokens: cfg.seqLen, kvHeads: cfg.kvHeads ?? cfg.numHeads, dK: p.dK, dV: p.dV });
    assert.equal(ours, p.memory.kvCache, JSON.stringify(cfg));
    assert.equal(kvCacheSize({ batch: cfg.batch ?? 1, tokens: cfg.seqLen, kvHeads: cfg.kvHeads ?? cfg.numHeads, dK: p.dK, dV: p.dV, bytesPerValue: 4 }), p.memory.kvCacheBytes);
  }
});

test('the cost ledger counts its KV cache with it (all layers, at the dtype)', () => {
  const r = costLedger(mha, { dModel: 64, heads: 8, kvHeads: 2, layers: 6, context: 10, batch: 3, dtypeBytes: 2 });
  assert.equal(r.kvCache.elements, 6 * r.passport.memory.kvCache);
  assert.equal(r.kvCache.elements, 2 * 6 * 3 * 10 * 2 * 8);
  assert.equal(r.kvCache.bytes, 2 * r.kvCache.elements);
});

test('contextNote: a T beyond the model\'s trained context is flagged, with the cache at that context', async () => {
  const { contextNote } = await import('../web/lib/components/logic/kv-cache.js');
  const { DECODERS } = await import('../web/lib/components/logic/models-data.js');
  const gpt3 = DECODERS.find((m) => m.name === 'GPT-3 175B');
  const at = (T) => kvCacheSize({ layers: 96, tokens: T, kvHeads: 96, dK: 128, bytesPerValue: 2 });
  const fmt = (b) => `${(b / 1e9).toFixed(2)} GB`;
  assert.equal(contextNote(gpt3, 2048, at(2048), fmt), null);
  assert.equal(contextNote(gpt3, 100, at(100), fmt), null);
  const n = contextNote(gpt3, 4096, at(4096), fmt);
  assert.equal(n.bytesAtContext, at(2048));
  assert.equal(n.context, 2048);
  assert.equal(n.text, 'T = 4,096 is beyond the 2,048 tokens GPT-3 175B was trained to read: it never holds this cache. At its own context the cache is 9.66 GB.');
  assert.equal(contextNote({ name: 'custom' }, 1e6, 1, fmt), null, 'a model without a published context');
});

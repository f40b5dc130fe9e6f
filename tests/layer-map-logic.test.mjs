// The model of <mha-layer-map> in Node: logic/layer-map.js (every tensor's shape, symbolic shape,
// source, PyTorch line) from the engine's passport, checked against shapes worked out here from
// d_model, h, g, T and B; and lesson/layer-map/config.js, the attributes through attr-check's parsers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { LAYER_MAP_TENSORS, TENSOR_WHAT, MLP_RATIO, bracket, layerMapTensors, divisorsText } from '../web/lib/components/logic/layer-map.js';
import { layerMapConfig } from '../web/lib/components/lesson/layer-map/config.js';

const mha = await createMHA();
const by = (ts) => new Map(ts.map((t) => [t.name, t]));

test('layerMapConfig: defaults, whole numbers ≥ 1, divisors; one MHAError per bad attribute', () => {
  assert.deepEqual(layerMapConfig({}), { cfg: { seqLen: 5, dModel: 24, numHeads: 2 }, errors: [], problems: [] });
  assert.deepEqual(layerMapConfig({ seqLen: '7', dModel: ' 64 ', heads: 8, batch: '3', kvHeads: '2' }).cfg,
    { seqLen: 7, dModel: 64, numHeads: 8, batch: 3, kvHeads: 2 });
  assert.deepEqual(layerMapConfig({ batch: '', kvHeads: '' }).cfg, { seqLen: 5, dModel: 24, numHeads: 2 }, "'' leaves an optional size out");
  const bad = layerMapConfig({ seqLen: 'abc', dModel: '-24', heads: '2', batch: '1.5' });
  assert.equal(bad.cfg, undefined);
  assert.deepEqual(bad.errors.map((e) => e.argument), ['seq-len', 'd-model', 'batch']);
  assert.ok(bad.errors.every((e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT'));
  assert.deepEqual(bad.problems, [
    'seq-len: expected a whole number ≥ 1 (tokens T), got "abc"',
    'd-model: expected a whole number ≥ 1 (the model width d_model), got "-24"',
    'batch: expected a whole number ≥ 1 (batch size B, or leave it out for an unbatched input), got "1.5"',
  ]);
  assert.deepEqual(layerMapConfig({ seqLen: '' }).problems, ['seq-len: expected a whole number ≥ 1 (tokens T), got ""'], "'' is not a size for seq-len");
  assert.deepEqual(layerMapConfig({ heads: '7' }).problems,
    ['heads: expected a divisor of d-model = 24 (1, 2, 3, 4, 6, 8, 12, 24) so that d_k = d_model / h is whole, got "7"']);
  // heads not dividing d-model: one message, not a second one about kv-heads
  assert.deepEqual(layerMapConfig({ heads: '5', kvHeads: '3' }).errors.map((e) => e.argument), ['heads']);
  assert.deepEqual(layerMapConfig({ kvHeads: '3' }).problems, ['kv-heads: expected a divisor of heads = 2 (1, 2), got "3"']);
  assert.deepEqual(layerMapConfig({ kvHeads: '0' }).errors.map((e) => e.argument), ['kv-heads']);
  assert.deepEqual(layerMapConfig({ heads: 'two', kvHeads: '-1' }).problems, [
    'heads: expected a whole number ≥ 1 (num_heads h), got "two"',
    'kv-heads: expected a whole number ≥ 1 (key/value heads g, or leave it out for g = h), got "-1"',
  ]);
  assert.equal(layerMapConfig({ dModel: '8', heads: '4', kvHeads: '4' }).cfg.kvHeads, 4);
});

test('divisorsText lists every divisor, or the first seven and the last', () => {
  assert.equal(divisorsText(24), '1, 2, 3, 4, 6, 8, 12, 24');
  assert.equal(divisorsText(7), '1, 7');
  assert.equal(divisorsText(720), '1, 2, 3, 4, 5, 6, 8, …, 720');
  assert.equal(divisorsText(36), '1, 2, 3, 4, 6, 9, 12, 18, 36');
});

test('every tensor of a batched grouped-query block: shapes worked out from B, T, d_model, h, g', () => {
  const [B, T, d, h, g] = [3, 7, 64, 8, 2];
  const dk = d / h, dff = MLP_RATIO * d;
  const cfg = { seqLen: T, dModel: d, numHeads: h, batch: B, kvHeads: g };
  const ts = layerMapTensors(mha.passport(cfg), cfg, false);
  assert.deepEqual(ts.map((t) => t.name), [...LAYER_MAP_TENSORS]);
  const m = by(ts);
  const shapes = Object.fromEntries(ts.map((t) => [t.name, t.shape]));
  assert.deepEqual(shapes, {
    x: [B, T, d], ln1: [B, T, d], wq: [d, h * dk], wk: [d, g * dk], wv: [d, g * dk],
    q: [B, h, T, dk], k: [B, g, T, dk], v: [B, g, T, dk], scores: [B, h, T, T], weights: [B, h, T, T],
    heads: [B, h, T, dk], concat: [B, T, h * dk], wo: [h * dk, d], attn: [B, T, d], resid: [B, T, d],
    ln2: [B, T, d], w1: [d, dff], hidden: [B, T, dff], w2: [dff, d], mlp: [B, T, d], y: [B, T, d],
  });
  const fromEngine = ts.filter((t) => t.source.step).map((t) => t.name);
  assert.deepEqual(fromEngine, ['x', 'q', 'k', 'v', 'scores', 'weights', 'heads', 'concat', 'wo', 'attn']);
  for (const t of ts) {
    assert.equal(t.sym.length, t.shape.length, `${t.name}: one symbol per axis`);
    assert.ok(TENSOR_WHAT[t.name], `${t.name} has a description`);
    assert.ok(t.purpose.length > 20 && t.code.length >= 1);
  }
  assert.deepEqual(m.get('k').sym, ['B', 'g', 'T', 'd_k']);
  assert.deepEqual(m.get('q').sym, ['B', 'h', 'T', 'd_k']);
  assert.deepEqual(m.get('wk').sym, ['d_model', 'g·d_k']);
  assert.equal(m.get('wk').n, g);
  assert.match(m.get('wk').source.derived, /params\.wK \/ d_model\] from the passport's parameter count wK = 1,024$/);
  assert.deepEqual(m.get('k').code, [
    `# x_hat: [3, 7, 64], W_K: [64, 16]`,
    `k = (x_hat @ W_K).view(3, 7, 2, 8).transpose(1, 2)  # [3, 2, 7, 8]`,
    `k = k.repeat_interleave(4, dim=1)  # each of the 2 heads serves 4 query heads`,
  ]);
  assert.deepEqual(m.get('q').reshape, { packed: [B, T, h * dk], view: [B, T, h, dk], final: [B, h, T, dk], n: h, W: 'wq' });
  assert.match(m.get('v').purpose, /each V head is shared by 4 query heads \(grouped-query attention\)/);
  assert.equal(m.get('concat').code[0], 'c = o.transpose(1, 2).reshape(3, 7, 64)  # [3, 7, 64]');
  assert.equal(m.get('scores').code.length, 1, 'no mask without causal');
  assert.match(m.get('w1').source.derived, /^d_ff = 4·d_model = 256, the usual choice/);
  assert.equal(bracket(m.get('hidden').shape), '[3, 7, 256]');
});

test('an unbatched causal block: T first, the mask in the score lines, multi-head (g = h) without repeat', () => {
  const cfg = { seqLen: 5, dModel: 24, numHeads: 2 };
  const m = by(layerMapTensors(mha.passport(cfg), cfg, true));
  assert.deepEqual(m.get('x').shape, [5, 24]);
  assert.deepEqual(m.get('q').shape, [2, 5, 12]);
  assert.deepEqual(m.get('k').sym, ['h', 'T', 'd_k']);
  assert.equal(m.get('q').code[1], 'q = (x_hat @ W_Q).view(5, 2, 12).transpose(0, 1)  # [2, 5, 12]');
  // the PyTorch lines say that they are unbatched; the formulas read the normalised x̂ the figure feeds in
  assert.equal(m.get('q').code[0], '# x_hat: [5, 24] (one sequence, no batch axis), W_Q: [24, 24]');
  assert.deepEqual(['q', 'k', 'v'].map((n) => m.get(n).formula), ['Q_i = x̂·W_Q^(i)', 'K_i = x̂·W_K^(i)', 'V_i = x̂·W_V^(i)']);
  assert.equal(m.get('k').code.length, 2, 'no repeat_interleave when g = h');
  assert.deepEqual(m.get('scores').code, [
    's = q @ k.transpose(-2, -1) / math.sqrt(12)  # [2, 5, 5]',
    'mask = torch.ones(5, 5, dtype=torch.bool).triu(1)  # true = masked (a future key)',
    's = s.masked_fill(mask, float("-inf"))',
  ]);
  assert.match(m.get('weights').purpose, /masked entries become exactly 0\.$/);
  assert.match(m.get('scores').purpose, /causal mask sets every entry above the diagonal/);
  assert.equal(m.get('concat').code[0], 'c = o.transpose(0, 1).reshape(5, 24)  # [5, 24]');
  assert.equal(m.get('wq').formula, 'W_Q = [W_Q^(1) | … | W_Q^(2)], 2 column slices of width 12');
  assert.deepEqual(m.get('wq').code, ['W_Q = torch.randn(24, 24)  # [in, out]: y = x·W', 'W_Q_0 = W_Q[:, 0:12]  # head 0’s slice [24, 12]']);
});

test('a passport without a step the map needs is refused, naming the step', () => {
  const cfg = { seqLen: 5, dModel: 24, numHeads: 2 };
  const p = mha.passport(cfg);
  const cut = { ...p, steps: p.steps.filter((s) => s.name !== 'concat') };
  assert.throws(() => layerMapTensors(cut, cfg, false), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && /no step "concat"/.test(e.message));
});

// The words of every tensor (labels, formulas, purposes, PyTorch lines, derivations) for three
// configurations, as reviewed on the lesson page and kept in tests/fixtures/lesson/layer-map-tensors.json:
// a change to any text shows here. After a deliberate change, rewrite the file with
// MHA_UPDATE_FIXTURES=1 node --experimental-wasm-relaxed-simd --test tests/layer-map-logic.test.mjs
test('every text of the map is the reviewed one (three configurations, causal and not)', async () => {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const file = new URL('./fixtures/lesson/layer-map-tensors.json', import.meta.url);
  const cases = [
    [{ seqLen: 5, dModel: 24, numHeads: 2 }, false],
    [{ seqLen: 5, dModel: 24, numHeads: 2 }, true],
    [{ seqLen: 7, dModel: 64, numHeads: 8, batch: 3, kvHeads: 2 }, true],
  ];
  const got = cases.map(([cfg, causal]) => ({ cfg, causal, tensors: layerMapTensors(mha.passport(cfg), cfg, causal) }));
  if (process.env.MHA_UPDATE_FIXTURES) writeFileSync(file, JSON.stringify(got, null, 1) + '\n');
  assert.deepEqual(JSON.parse(JSON.stringify(got)), JSON.parse(readFileSync(file, 'utf8')));
});

#!/usr/bin/env node
// A/B of the builds in one process: the same layers (self-attention, d_model = 768, h = 12, with
// biases, needWeights false) forwarded by each tier in interleaved rounds, both orders, medians.
// Prints each tier's median and GFLOP/s (dense count 8·T·d² + 4·T²·d) and the speed-up of
// relaxed-simd over simd. Node 20 needs the flag for the relaxed tier:
//   node --experimental-wasm-relaxed-simd scripts/bench/tiers.mjs [T ...]     (default T = 128 512)
import { createMHA, TIERS } from '../../web/lib/src/index.js';

const lengths = process.argv.slice(2).map(Number).filter((n) => n > 0);
const d = 768;
const h = 12;
const tiers = [];
for (const tier of TIERS.filter((t) => t !== 'scalar')) {
  try {
    tiers.push({ tier, mha: await createMHA({ tier }) });
  } catch (e) {
    console.log(`${tier}: not available here (${e.message})`);
  }
}
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (const T of lengths.length ? lengths : [128, 512]) {
  const x = { data: Float32Array.from({ length: T * d }, (_, i) => Math.sin(0.37 * i)), shape: [T, d] };
  const layers = tiers.map(({ tier, mha }) => ({ tier, layer: mha.createLayer({ dModel: d, numHeads: h, seed: 1 }), times: [] }));
  const rounds = T <= 256 ? 31 : 11;
  for (let r = 0; r < 3; r++) for (const l of layers) l.layer.forward(x, { needWeights: false });
  for (let r = 0; r < rounds; r++) {
    for (const l of r % 2 ? layers.slice().reverse() : layers) {
      const t0 = performance.now();
      l.layer.forward(x, { needWeights: false });
      l.times.push(performance.now() - t0);
    }
  }
  const flops = 8 * T * d * d + 4 * T * T * d;
  const row = layers.map((l) => `${l.tier} ${median(l.times).toFixed(2)} ms (${(flops / median(l.times) / 1e6).toFixed(1)} GFLOP/s)`);
  const rel = layers.find((l) => l.tier === 'relaxed-simd');
  const simd = layers.find((l) => l.tier === 'simd');
  const ratio = rel && simd ? `, relaxed-simd ${(median(simd.times) / median(rel.times)).toFixed(2)}× simd` : '';
  console.log(`T = ${T}, d_model = ${d}, h = ${h}, ${rounds} rounds: ${row.join(', ')}${ratio}`);
  for (const l of layers) l.layer.dispose();
}

// Smoke test of `npm run bench -- --browser`: W0 with short budgets in headless Chromium. A green
// run means the page loaded ours (from web/lib/src, fetching its own .wasm), onnxruntime-web and
// TensorFlow.js, and that their outputs agreed with ours (the bench exits 1 otherwise).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runBench } from '../helpers/bench.mjs';
import { ensureBuilt } from './helpers.mjs';

test('npm run bench -- --browser --quick --only W0 runs in Chromium on the relaxed-simd tier', { timeout: 300_000 }, () => {
  ensureBuilt();
  const md = runBench(['--browser', '--quick', '--only', 'W0', '--budget-scale', '0.2']);
  assert.match(md, /## mha-wasm benchmark: Chromium \d+/);
  assert.match(md, /ours = mha-wasm \(tier relaxed-simd, 1 thread, 6x8 tile\)/);  // Chromium ≥ 136: the 6 × 8 tile
  for (const impl of ['\\*\\*ours\\*\\*', 'ORT \\(', 'tfjs']) assert.match(md, new RegExp(`\\| W0 T=5 d=24 h=2 \\| false \\| ${impl}`));
  // both peaks are measured in the page
  assert.match(md, /f32x4\.relaxed_madd \(FMA\) \d/);
});

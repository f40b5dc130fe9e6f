// Smoke test of the benchmark (scripts/bench.mjs), so that it keeps running as the engine changes:
// W0 with short budgets in Node. The bench itself fails (exit 1) when a peer's output differs from
// ours by more than 1e-3 relative, so a green run also means onnxruntime-web and TensorFlow.js
// agree with the engine on that layer. Times are not asserted (speed is the bench's job).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peakModuleBytes, measurePeak } from '../scripts/bench/peak.mjs';
import { relaxedSimdSupported } from '../web/lib/src/loader.js';
import { runBench } from './helpers/bench.mjs';

test('the FMA peak module validates exactly where the engine runs relaxed SIMD', () => {
  const fma = peakModuleBytes('fma', 4, 1);
  // f32x4.relaxed_madd: 0xfd 0x85 0x02
  assert.ok(Buffer.from(fma).includes(Buffer.from([0xfd, 0x85, 0x02])), 'the module holds relaxed_madd');
  assert.equal(WebAssembly.validate(fma), relaxedSimdSupported());
  assert.ok(WebAssembly.validate(peakModuleBytes('chain', 4, 1)));
  const p = measurePeak({ seconds: 0.2 });
  assert.ok(p.gflops > 0.1, `mul + add peak ${p.gflops}`);
  assert.equal(p.fma === null, !relaxedSimdSupported());
});

test('npm run bench -- --quick --only W0 runs ours, onnxruntime-web and tfjs and checks them', { timeout: 300_000 }, () => {
  const md = runBench(['--quick', '--only', 'W0', '--budget-scale', '0.2', '--no-rss']);
  for (const impl of ['\\*\\*ours\\*\\*', 'ORT \\(', 'tfjs']) {
    for (const nw of ['true', 'false']) {
      assert.match(md, new RegExp(`\\| W0 T=5 d=24 h=2 \\| ${nw} \\| ${impl}`), `a W0 row for ${impl}, needWeights ${nw}`);
    }
  }
  // the children run with the relaxed-SIMD flag when this Node knows it, so ours picks that tier
  assert.match(md, /ours = mha-wasm \(tier (relaxed-simd|simd), 1 thread, (4x8|6x8|3x12) tile\)/);
  if (relaxedSimdSupported()) assert.match(md, /tier relaxed-simd/);
  assert.match(md, /\[x\] W0 needWeights=false ≥ 10× onnxruntime-web|\[ \] W0 needWeights=false ≥ 10×/);
  assert.match(md, /f32x4\.relaxed_madd \(FMA\) /);
});

test('npm run bench -- --threads 2: ours at 2 threads and at 1 in the same rounds, peers asked for 2, the threaded targets', { timeout: 300_000 }, () => {
  const md = runBench(['--quick', '--only', 'W0', '--budget-scale', '0.2', '--no-rss', '--threads', '2']);
  for (const nw of ['true', 'false']) {
    assert.match(md, new RegExp(`\\| W0 T=5 d=24 h=2 \\| ${nw} \\| \\*\\*ours\\*\\*, 2 threads \\|`));
    // the 1-thread row's "speed-up of ours" column is the scaling; its output equals ours exactly
    assert.match(md, new RegExp(`\\| W0 T=5 d=24 h=2 \\| ${nw} \\| ours, 1 thread \\|[^\\n]*\\| [0-9.]+× \\|[^\\n]*\\| 0\\.0e\\+0`));
  }
  assert.match(md, /ours = mha-wasm \(tier (relaxed-simd|simd), 2 threads, (4x8|6x8|3x12) tile\), ours on 1 thread = mha-wasm \(tier (relaxed-simd|simd), 1 thread, (4x8|6x8|3x12) tile\)/);
  assert.match(md, /ORT = onnxruntime-web [^;]*\(wasm EP, numThreads = 2\)/);
  assert.match(md, /W0 needWeights=false calls\/s with the threaded build within 5 % of the single-thread build: [0-9.]+×/);
});

// The three builds: the loader picks the best tier the engine compiles, {tier} forces one, every
// tier computes the golden cases, the relaxed tier holds f32x4.relaxed_madd and the others do not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createMHA, TIERS } from '../web/lib/src/index.js';
import { relaxedSimdSupported } from '../web/lib/src/loader.js';
import { loadGolden, input, tolerance } from './helpers/golden.mjs';

const wasm = (f) => fs.readFileSync(new URL(`../web/lib/wasm/${f}`, import.meta.url));
const FILES = { 'relaxed-simd': 'mha_core_relaxed.wasm', simd: 'mha_core.wasm', scalar: 'mha_core_scalar.wasm' };

/** Opcodes of a function body are not parsed here: the 3-byte sequence of f32x4.relaxed_madd
 * (0xfd 0x85 0x02) is counted in the code section (id 10) only. */
function countRelaxedMadd(bytes) {
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at++];
    let size = 0;
    for (let shift = 0; ; shift += 7) { const b = bytes[at++]; size |= (b & 0x7f) << shift; if (!(b & 0x80)) break; }
    if (id === 10) {
      let n = 0;
      for (let i = at; i < at + size - 2; i++) if (bytes[i] === 0xfd && bytes[i + 1] === 0x85 && bytes[i + 2] === 0x02) n++;
      return n;
    }
    at += size;
  }
  return 0;
}

test('the relaxed tier holds f32x4.relaxed_madd in its code; the simd and scalar tiers do not', () => {
  assert.ok(countRelaxedMadd(wasm(FILES['relaxed-simd'])) > 20, 'relaxed_madd in the relaxed build');
  assert.equal(countRelaxedMadd(wasm(FILES.simd)), 0);
  assert.equal(countRelaxedMadd(wasm(FILES.scalar)), 0);
});

test('automatic choice: relaxed-simd where the engine compiles it (this run), simd in a Node without the flag', () => {
  const flagged = (process.env.MHA_NODE_FLAGS || '').includes('relaxed') || process.execArgv.some((a) => a.includes('relaxed-simd'));
  if (flagged || relaxedSimdSupported()) {
    return createMHA().then((m) => assert.equal(m.info.tier, 'relaxed-simd'));
  }
  return createMHA().then((m) => assert.equal(m.info.tier, 'simd'));
});

test('a Node 20 without --experimental-wasm-relaxed-simd silently gets the simd tier; forcing relaxed-simd there fails clearly', () => {
  const script = `import { createMHA } from ${JSON.stringify(new URL('../web/lib/src/index.js', import.meta.url).href)};
    const m = await createMHA(); const out = [m.info.tier];
    try { await createMHA({ tier: 'relaxed-simd' }); out.push('loaded'); } catch (e) { out.push(e.name + ': ' + e.message); }
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.stderr, '', 'no console noise');
  const [tier, forced] = JSON.parse(r.stdout);
  if (relaxedSimdSupportedWithoutFlag()) {
    assert.equal(tier, 'relaxed-simd');
  } else {
    assert.equal(tier, 'simd');
    assert.match(forced, /MHALoadError: mha-wasm: tier: 'relaxed-simd', but this engine does not support relaxed SIMD \(f32x4\.relaxed_madd\)/);
  }
});

/** Node ≥ 22 ships relaxed SIMD without a flag. */
function relaxedSimdSupportedWithoutFlag() {
  return Number(process.versions.node.split('.')[0]) >= 22;
}

test('the three tiers agree on the golden cases\' outputs (each is checked against PyTorch by the tier runs); the largest difference is reported', async () => {
  const golden = loadGolden();
  const mods = {};
  for (const tier of TIERS) mods[tier] = await createMHA({ tier });
  for (const tier of TIERS) assert.equal(mods[tier].info.tier, tier);
  let worst = { d: 0 };
  let cases = 0;
  for (const { file, c } of golden) {
    if (!c.config || !c.weights?.Wq || c.config.num_kv_heads || /^(gqa|kv|lesson|seed)/.test(file)) continue;
    const outs = {};
    for (const tier of TIERS) {
      const l = mods[tier].createLayer({ numHeads: c.config.num_heads, weights: { wQ: input(c.weights.Wq), wK: input(c.weights.Wk), wV: input(c.weights.Wv), wO: input(c.weights.Wo), ...(c.weights.bq ? { bQ: input(c.weights.bq), bK: input(c.weights.bk), bV: input(c.weights.bv), bO: input(c.weights.bo) } : {}) } });
      const q = input(c.inputs.query);
      outs[tier] = l.forward(q, c.inputs.key ? { key: input(c.inputs.key), value: input(c.inputs.value) } : {}).output.data;
      l.dispose();
    }
    const { atol, rtol } = tolerance(c, 'output');
    for (let i = 0; i < outs.simd.length; i++) {
      for (const [a, b] of [['relaxed-simd', 'simd'], ['simd', 'scalar'], ['relaxed-simd', 'scalar']]) {
        const d = Math.abs(outs[a][i] - outs[b][i]);
        assert.ok(d <= atol + rtol * Math.abs(outs.scalar[i]), `${file}[${i}]: ${a} ${outs[a][i]} vs ${b} ${outs[b][i]}, beyond the golden tolerance`);
        if (d > worst.d) worst = { d, a, b, name: file, v: outs.scalar[i] };
      }
    }
    cases++;
  }
  assert.ok(cases >= 10, `compared ${cases} cases`);
  console.log(`# largest difference between tiers over ${cases} golden cases: ${worst.d.toExponential(2)} on a value of ${worst.v.toFixed(3)} (${worst.a} vs ${worst.b}, ${worst.name})`);
  assert.ok(worst.d > 0, 'the relaxed tier rounds differently (FMA): a zero difference means it did not run');
});

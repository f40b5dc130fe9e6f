// The GEMM register tile (web/lib/src/engine/tile.js, cpp/include/mha/tile.hpp): which engines get the
// 6 × 8 and the 3 × 12 tile, the `tile` option and `info.tile`, and results that are bit-identical
// for every tile on every tier that has them, on one and two threads, and through the model runner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createMHA } from '../web/lib/src/index.js';
import { engineTile, TILES } from '../web/lib/src/engine/tile.js';
import { bitsEqual, runCases, sameResults } from './helpers/same-bits.mjs';

test('engineTile: 6x8 from V8 13.6 / Chromium 136 (version, brands or user-agent string), 3x12 on older V8, 4x8 on other engines', () => {
  const cases = [
    [{ v8: '11.3.244.8-node.38' }, '3x12'],     // Node 20
    [{ v8: '12.4.254.21-node.57' }, '3x12'],    // Node 22
    [{ v8: '13.5.212.10' }, '3x12'],
    [{ v8: '13.6.233.17-node.53' }, '6x8'],     // Node 24
    [{ v8: '14.1.146.11' }, '6x8'],
    [{ brands: [{ brand: 'Not)A;Brand', version: '8' }, { brand: 'Chromium', version: '156' }] }, '6x8'],
    [{ brands: [{ brand: 'Chromium', version: '135' }, { brand: 'Google Chrome', version: '135' }] }, '3x12'],
    [{ brands: [], userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36' }, '6x8'],
    [{ userAgent: 'Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0' }, '3x12'],
    [{ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:146.0) Gecko/20100101 Firefox/146.0' }, '4x8'],
    [{ userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15' }, '4x8'],
    [{}, '4x8'],
  ];
  for (const [env, want] of cases) assert.equal(engineTile(env), want, JSON.stringify(env));
});

test("tile: 'auto' picks the engine's tile, '4x8', '6x8' and '3x12' force one, info.tile says which; the scalar tier has none", async () => {
  assert.deepEqual(TILES, ['4x8', '6x8', '3x12']);
  const auto = await createMHA({ threads: 1 });
  assert.equal(auto.info.tier, 'relaxed-simd');
  assert.equal(auto.info.tile, engineTile());
  assert.equal(auto.info.tile, Number(process.versions.node.split('.')[0]) >= 24 ? '6x8' : '3x12', 'Node 20 and 22 run 3 × 12, Node 24 6 × 8');
  auto.dispose();
  const tileOf = async (opts) => {
    const m = await createMHA(opts);
    m.dispose();  // info stays readable
    return m.info.tile;
  };
  assert.equal(await tileOf({ threads: 1, tier: 'simd' }), '4x8', "'auto' keeps 4 × 8 for the simd tier (mul + add)");
  for (const tier of ['relaxed-simd', 'simd']) {
    for (const tile of TILES) assert.equal(await tileOf({ threads: 1, tier, tile }), tile);
  }
  assert.equal(await tileOf({ tier: 'scalar', tile: '6x8' }), null);
});

test("tile: anything but 'auto', '4x8', '6x8' or '3x12' is an MHALoadError naming it", async () => {
  for (const [bad, shown] of [['8x8', '"8x8"'], [6, '6'], [3, '3'], [null, 'null'], ['6X8', '"6X8"'], ['12x3', '"12x3"']]) {
    await assert.rejects(createMHA({ tile: bad }), (e) => {
      assert.equal(e.name, 'MHALoadError');
      assert.equal(e.message, `mha-wasm: tile must be 'auto', '4x8', '6x8' or '3x12', got ${shown}`);
      return true;
    });
  }
});

test('the 6 × 8 and 3 × 12 tiles give the bits of the 4 × 8 tile: forward, weights, trace, KV-cache steps, both SIMD tiers, 1 and 2 threads', async () => {
  for (const tier of ['relaxed-simd', 'simd']) {
    const base = await createMHA({ threads: 1, tier, tile: '4x8' });
    const want = runCases(base);
    for (const tile of ['6x8', '3x12']) {
      for (const threads of [1, 2]) {
        const m = await createMHA({ threads, tier, tile });
        assert.deepEqual([m.info.tile, m.info.threads], [tile, threads]);
        sameResults(runCases(m), want, `${tier}, ${tile} on ${threads} thread(s) against 4x8`);
        m.dispose();
      }
    }
    base.dispose();
  }
});

test('the model runner gives the same log-probs and greedy text with either tile (stories260K)', async () => {
  const bytes = readFileSync(new URL('../web/lib/models/stories260K.safetensors', import.meta.url));
  const out = [];
  for (const tile of TILES) {
    const m = await createMHA({ threads: 1, tile });
    const model = await m.loadModel(bytes);
    const run = model.run('Once upon a time, there was a little girl who liked to play in the park with her dog.');
    out.push({ logProbs: run.logProbs.data, text: model.generate('Once upon a time', 30, { temperature: 0 }).text });
    model.dispose();
  }
  for (let i = 1; i < out.length; i++) {
    bitsEqual(out[i].logProbs, out[0].logProbs, `log-probs, ${TILES[i]} against 4x8`);
    assert.equal(out[i].text, out[0].text);
  }
});

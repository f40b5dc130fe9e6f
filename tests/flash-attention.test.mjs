// The tiled online softmax of <mha-flash-attention> (web/lib/components/logic/flash-attention.js)
// against a full softmax computed here, independently: on the restaurant example (Q, K, V from the
// engine's trace), every tile size, the engine's own head outputs; and the running values of a small
// case worked out by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import { onlineSoftmax, scoreMemory } from '../web/lib/components/logic/flash-attention.js';
import { X0, restaurantLayerOptions } from '../web/lib/components/logic/restaurant.js';
import { mulberry32 } from '../web/lib/src/index.js';

const mha = await createMHA();

const matrix = (t) => {
  const [r, c] = t.shape;
  return Array.from({ length: r }, (_, i) => Array.from(t.data.subarray(i * c, (i + 1) * c)));
};

/** softmax(Q·Kᵀ/√d_k)·V in float64, the textbook way: the whole grid, then each row normalised. */
function fullSoftmax(q, k, v) {
  const s = 1 / Math.sqrt(q[0].length);
  return q.map((qi) => {
    const sc = k.map((kj) => s * qi.reduce((a, x, c) => a + x * kj[c], 0));
    const mx = Math.max(...sc);
    const e = sc.map((x) => Math.exp(x - mx));
    const z = e.reduce((a, b) => a + b, 0);
    return v[0].map((_, c) => e.reduce((a, w, j) => a + (w / z) * v[j][c], 0));
  });
}

const close = (a, b, tol, msg) => a.forEach((row, i) => row.forEach((x, c) => assert.ok(Math.abs(x - b[i][c]) <= tol, `${msg} [${i}][${c}]: ${x} vs ${b[i][c]}`)));

test('restaurant example: every tile size ends on the full softmax (float64) and on the engine\'s head outputs (float32)', () => {
  const layer = mha.createLayer(restaurantLayerOptions());
  try {
    const tr = layer.trace(X0);
    assert.equal(tr.heads.length, 2);
    for (const hd of tr.heads) {
      const [q, k, v, out] = [hd.q, hd.k, hd.v, hd.output].map(matrix);
      const ref = fullSoftmax(q, k, v);
      for (const tile of [1, 2, 3, 5]) {
        const r = onlineSoftmax(q, k, v, tile);
        assert.equal(r.tiles.length, Math.ceil(3 / tile));
        close(r.output, ref, 1e-12, `tile ${tile} vs float64`);
        close(r.output, out, 1e-5, `tile ${tile} vs the engine`);
        // after the last tile, m is the row maximum and ℓ the softmax's denominator
        const last = r.tiles.at(-1).rows;
        q.forEach((qi, i) => {
          const sc = k.map((kj) => r.scale * qi.reduce((a, x, c) => a + x * kj[c], 0));
          assert.equal(last[i].m, Math.max(...sc));
          assert.ok(Math.abs(last[i].l - sc.reduce((a, x) => a + Math.exp(x - last[i].m), 0)) < 1e-12);
        });
      }
    }
  } finally { layer.dispose(); }
});

test('running values of a hand-worked case: m, the rescale factor, ℓ and the accumulator after each tile', () => {
  // d_k = 1 (scale 1), one query q = 1, keys 0, 2, 1, values 10, 20, 30; tiles of one key
  const r = onlineSoftmax([[1]], [[0], [2], [1]], [[10], [20], [30]], 1);
  const [a, b, c] = r.tiles.map((t) => t.rows[0]);
  assert.deepEqual([a.mPrev, a.m, a.rescale, a.l, a.acc], [-Infinity, 0, 0, 1, [10]]);
  // the second key raises the maximum to 2: what was kept is scaled by e^(0 − 2)
  assert.equal(b.m, 2);
  assert.ok(Math.abs(b.rescale - Math.exp(-2)) < 1e-15);
  assert.ok(Math.abs(b.l - (Math.exp(-2) + 1)) < 1e-15);
  assert.ok(Math.abs(b.acc[0] - (10 * Math.exp(-2) + 20)) < 1e-12);
  // the third does not: rescale 1
  assert.deepEqual([c.m, c.rescale], [2, 1]);
  const want = (10 + 20 * Math.E ** 2 + 30 * Math.E) / (1 + Math.E ** 2 + Math.E);
  assert.ok(Math.abs(r.output[0][0] - want) < 1e-12);
});

test('random heads: tiles of every size agree with the full softmax, large scores included (no overflow)', () => {
  const rnd = mulberry32(7);
  for (let n = 0; n < 20; n++) {
    const T = 1 + Math.floor(rnd() * 9), dK = 1 + Math.floor(rnd() * 6), dV = 1 + Math.floor(rnd() * 4);
    const big = n % 4 === 0 ? 300 : 3;   // scores near 300·300: exp would overflow without the running max
    const m = (r, c) => Array.from({ length: r }, () => Array.from({ length: c }, () => (rnd() * 2 - 1) * big));
    const q = m(T, dK), k = m(T, dK), v = m(T, dV);
    const ref = fullSoftmax(q, k, v);
    for (let tile = 1; tile <= T; tile++) {
      const out = onlineSoftmax(q, k, v, tile).output;
      out.forEach((row) => row.forEach((x) => assert.ok(Number.isFinite(x))));
      close(out, ref, 1e-9 * big, `T ${T} tile ${tile}`);
    }
  }
});

test('bad input is refused naming the argument; the memory held', () => {
  const ok = [[1, 2]];
  const refused = (f, arg) => assert.throws(f, (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.argument === arg && e.message.startsWith(`${arg}: `));
  refused(() => onlineSoftmax([], ok, ok, 1), 'q');
  refused(() => onlineSoftmax(ok, [[1]], ok, 1), 'k');
  refused(() => onlineSoftmax(ok, ok, [[1], [2]], 1), 'v');
  refused(() => onlineSoftmax(ok, ok, ok, 0), 'tile');
  refused(() => onlineSoftmax(ok, ok, ok, 1.5), 'tile');
  assert.deepEqual(scoreMemory({ tq: 3, tk: 3, heads: 2, tile: 1 }), { full: 18, tiled: 12, onChip: 3 });
  assert.deepEqual(scoreMemory({ tq: 3, tk: 3, heads: 2, tile: 5 }), { full: 18, tiled: 12, onChip: 9 });
  assert.deepEqual(scoreMemory({ tq: 4096, tk: 4096, heads: 64, tile: 128 }), { full: 64 * 4096 * 4096, tiled: 2 * 64 * 4096, onChip: 4096 * 128 });
});

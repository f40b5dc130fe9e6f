// logic/stepper-steps.js, the data of <mha-stepper>'s eight steps, in Node: for every step and head,
// the operands and the result are the right matrices of the restaurant example (checked against a
// plain-JS forward pass written here, and the engine's trace against the same), their shapes chain,
// and each result cell's formula lists the terms that make it and ends in its value
// (Alex's final "cheap" is 4.050, the number the lesson quotes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { PEOPLE, FEATURES, X0, HEADS, WO, CONCAT_COLS, restaurantLayerOptions } from '../web/lib/components/logic/restaurant.js';
import { STEPS, stepView, n2, n3, is2dp, transpose } from '../web/lib/components/logic/stepper-steps.js';

const matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));
const softmax = (row) => { const m = Math.max(...row); const e = row.map((x) => Math.exp(x - m)); const z = e.reduce((a, b) => a + b); return e.map((x) => x / z); };

/** The example's forward pass in plain JS (float64): per-head q, k, v, scores, weights, output; concat; output. */
function reference(X) {
  const heads = HEADS.map((H) => {
    const q = matmul(X, H.wQ), k = matmul(X, H.wK), v = matmul(X, H.wV);
    const scores = matmul(q, transpose(k)).map((r) => r.map((x) => x / Math.sqrt(H.wQ[0].length)));
    const weights = scores.map(softmax);
    return { q, k, v, scores, weights, output: matmul(weights, v) };
  });
  const concat = X.map((_, r) => [...heads[0].output[r], ...heads[1].output[r]]);
  return { heads, concat, output: matmul(concat, WO) };
}

const mha = await createMHA();
const layer = mha.createLayer(restaurantLayerOptions());
const t = layer.trace(X0);
const rows = (x) => x.toArray();
const TR = {
  heads: t.heads.map((h) => ({ q: rows(h.q), k: rows(h.k), v: rows(h.v), scores: rows(h.scores), weights: rows(h.weights), output: rows(h.output) })),
  concat: rows(t.concat), output: rows(t.output),
};
layer.dispose();
const REF = reference(X0);

const close = (a, b, tol, what) => {
  assert.equal(a.length, b.length, `${what}: rows`);
  a.forEach((row, r) => {
    assert.equal(row.length, b[r].length, `${what}: columns of row ${r}`);
    row.forEach((v, c) => assert.ok(Math.abs(v - b[r][c]) < tol, `${what}[${r}][${c}] = ${v}, expected ${b[r][c]}`));
  });
};
/** The number a TeX formula ends with ("… = 4.050"). */
const lastNumber = (s) => Number(s.slice(s.lastIndexOf('=') + 1).trim());

test("the engine's trace of the example is the plain-JS forward pass (the data the steps show)", () => {
  for (let i = 0; i < 2; i++) for (const key of ['q', 'k', 'v', 'scores', 'weights', 'output']) close(TR.heads[i][key], REF.heads[i][key], 1e-5, `head ${i} ${key}`);
  close(TR.concat, REF.concat, 1e-5, 'concat');
  close(TR.output, REF.output, 1e-5, 'output');
  assert.equal(TR.output[0][1].toFixed(3), '4.050');
});

test('eight steps; steps 0-2 are X times W_Q, W_K, W_V of the head, with their own labels', () => {
  assert.equal(STEPS.length, 8);
  assert.deepEqual(STEPS.map((s) => s.short), ['Q', 'K', 'V', 'scores', 'softmax', 'A·V', 'concat', 'W_O']);
  for (let hi = 0; hi < 2; hi++) {
    const H = HEADS[hi];
    [['q', H.wQ, H.qCols, 'Q'], ['k', H.wK, H.kCols, 'K'], ['v', H.wV, H.vCols, 'V']].forEach(([key, W, cols, L], s) => {
      const v = stepView(s, hi, X0, TR);
      assert.equal(v.left.values, X0);
      assert.deepEqual([v.left.rows, v.left.cols, v.left.digits], [PEOPLE, FEATURES, 2]);
      assert.equal(v.right.values, W);
      assert.equal(v.right.caption, `W_${L}^(${hi + 1})`);
      assert.deepEqual([v.right.rows, v.right.cols], [FEATURES, cols]);
      assert.equal(v.result.caption, `${L}^(${hi + 1})`);
      close(v.result.values, REF.heads[hi][key], 1e-5, `step ${s} head ${hi}`);
      assert.match(v.tex, new RegExp(`^${L}\\^\\{\\(${hi + 1}\\)\\} = X.*\\[3 \\\\times 6\\] \\\\cdot \\[6 \\\\times ${W[0].length}\\] \\\\to \\[3 \\\\times ${W[0].length}\\]$`));
      assert.deepEqual(v.link(2, 1), { left: { row: 2 }, right: { col: 1 } });
      // every cell: six products x·w, their sum is the value shown
      for (let r = 0; r < 3; r++) for (let c = 0; c < cols.length; c++) {
        const e = v.explain(r, c);
        const terms = e.slice(e.indexOf('} = ') + 4, e.lastIndexOf(' = ')).split(' + ');
        assert.equal(terms.length, 6);
        assert.deepEqual(terms, X0[r].map((x, j) => `${n2(x)}\\cdot${n2(W[j][c])}`));
        assert.ok(Math.abs(lastNumber(e) - REF.heads[hi][key][r][c]) < 5.1e-4, e);
        assert.ok(e.startsWith(`${L}_{\\text{${PEOPLE[r]}},\\,\\text{${cols[c]}}}`), e);
      }
    });
  }
  assert.match(stepView(0, 0, X0, TR).text, /head 1 asks about \(street-stall, upscale\)/);
  assert.match(stepView(1, 1, X0, TR).text, /answer to head 2's question/);
  assert.match(stepView(2, 0, X0, TR).text, /3 value features for head 1/);
  assert.match(stepView(2, 1, X0, TR).text, /2 value features for head 2/);
});

test('steps 3-5: scores Q·Kᵀ/√d_k, softmax rows, weights · V', () => {
  for (let hi = 0; hi < 2; hi++) {
    const R = REF.heads[hi];
    const s3 = stepView(3, hi, X0, TR);
    close(s3.left.values, R.q, 1e-5, 'Q');
    close(s3.right.values, transpose(R.k), 1e-5, 'Kᵀ');
    close(s3.result.values, R.scores, 1e-5, 'S');
    assert.equal(s3.right.caption, `K^(${hi + 1})ᵀ`);
    assert.deepEqual([s3.right.rows, s3.right.cols], [HEADS[hi].kCols, PEOPLE]);
    assert.match(s3.tex, /\\sqrt\{2\}/);
    const e3 = s3.explain(1, 2);
    assert.equal(e3, `S_{\\text{Emma},\\,\\text{Daniel}} = \\frac{${TR.heads[hi].q[1].map((q, j) => `${n3(q)}\\cdot${n3(TR.heads[hi].k[2][j])}`).join(' + ')}}{\\sqrt{2}} = ${n3(TR.heads[hi].scores[1][2])}`);
    assert.ok(Math.abs(lastNumber(e3) - R.scores[1][2]) < 5e-4);

    const s4 = stepView(4, hi, X0, TR);
    assert.equal(s4.right, null);
    close(s4.left.values, R.scores, 1e-5, 'S');
    close(s4.result.values, R.weights, 1e-5, 'A');
    for (const row of s4.result.values) assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-6);
    assert.deepEqual(s4.link(2, 0), { left: { row: 2 } });
    const e4 = s4.explain(0, 2);
    assert.equal(e4.split('e^{').length - 1, 4, 'numerator and three terms of the denominator');
    assert.ok(Math.abs(lastNumber(e4) - R.weights[0][2]) < 5e-4);

    const s5 = stepView(5, hi, X0, TR);
    close(s5.left.values, R.weights, 1e-5, 'A');
    close(s5.right.values, R.v, 1e-5, 'V');
    close(s5.result.values, R.output, 1e-5, 'head output');
    assert.equal(s5.result.caption, `head ${hi + 1} output`);
    assert.ok(s5.tex.includes(`[3 \\times 3] \\cdot [3 \\times ${HEADS[hi].wV[0].length}]`));
    assert.ok(Math.abs(lastNumber(s5.explain(2, 1)) - R.output[2][1]) < 5e-4);
  }
});

test('steps 6-7: concat of the two heads (3 + 2 columns) and concat · W_O; Alex\'s cheap = 4.050', () => {
  const s6 = stepView(6, 1, X0, TR);
  close(s6.left.values, REF.heads[0].output, 1e-5, 'head 1');
  close(s6.right.values, REF.heads[1].output, 1e-5, 'head 2');
  close(s6.result.values, REF.concat, 1e-5, 'concat');
  assert.deepEqual([s6.result.cols, s6.result.split], [CONCAT_COLS, 3]);
  assert.deepEqual(s6.link(0, 2), { left: { row: 0, col: 2 } });
  assert.deepEqual(s6.link(1, 3), { right: { row: 1, col: 0 } });
  assert.match(s6.explain(1, 4), /^\\text\{concat\}\[\\text\{Emma\},\\,5\] = \\text\{head\}_2\[\\text\{Emma\},\\text\{experience\}\] = /);
  assert.match(s6.explain(0, 0), /\\text\{head\}_1\[\\text\{Alex\},\\text\{sichuan\}\]/);

  const s7 = stepView(7, 0, X0, TR);
  assert.equal(s7.right.values, WO);
  assert.equal(s7.right.caption, 'W_O');
  close(s7.result.values, REF.output, 1e-5, 'output');
  const e = s7.explain(0, 1);
  assert.ok(e.startsWith('\\text{out}_{\\text{Alex},\\,\\text{cheap}}'));
  assert.equal(e.split('\\underbrace').length - 1, 2);
  assert.match(e, /_\{\\text\{head 1\}\} \+ \\underbrace/);
  assert.equal(e.slice(e.lastIndexOf('=') + 1).trim(), '4.050');
  assert.equal(stepView(6, 0, X0, TR).tex, s6.tex, 'steps 6 and 7 do not depend on the head');
});

test('X with more than two decimals is shown with three; negatives go in parentheses with an ASCII minus', () => {
  assert.equal(is2dp(X0), true);
  const X = X0.map((r) => r.slice());
  X[1][2] = 0.125;
  assert.equal(is2dp(X), false);
  assert.equal(stepView(0, 0, X, reference(X)).left.digits, 3);
  assert.equal(n3(-1.5), '(-1.500)');
  assert.equal(n2(0.456), '0.46');
  assert.equal(n2(-0.5), '(-0.50)');
  assert.equal(n3(-0.0001), '0.000', 'a value that rounds to zero has no sign');
});

// The words of every step (title, formula, sentence, captions, the operator) and the formula of
// result cell (1, 1), for both heads, as reviewed on the lesson page and kept in
// tests/fixtures/lesson/stepper-steps.json. After a deliberate change, rewrite the file with
// MHA_UPDATE_FIXTURES=1 node --experimental-wasm-relaxed-simd --test tests/stepper-steps.test.mjs
test('every text of the steps is the reviewed one', async () => {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const file = new URL('./fixtures/lesson/stepper-steps.json', import.meta.url);
  const got = STEPS.flatMap((st, s) => [0, 1].map((hi) => {
    const v = stepView(s, hi, X0, REF);
    const cap = (o) => o && { caption: o.caption, rows: o.rows, cols: o.cols, digits: o.digits, split: o.split };
    return { step: s, head: hi, title: st.title, tex: v.tex, text: v.text, op: v.op,
      left: cap(v.left), right: cap(v.right), result: cap(v.result), explain11: v.explain(1, 1), link11: v.link(1, 1) };
  }));
  if (process.env.MHA_UPDATE_FIXTURES) writeFileSync(file, JSON.stringify(got, null, 1) + '\n');
  assert.deepEqual(JSON.parse(JSON.stringify(got)), JSON.parse(readFileSync(file, 'utf8')));
});

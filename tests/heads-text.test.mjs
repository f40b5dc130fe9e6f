// Head scores on one text (scoreText, inductionTargets in web/lib/src/lm/heads.js), the numbers the
// trained-heads explorer shows beside the probe scores: against hand-built attention whose scores
// are known exactly, and on the shipped model against a direct computation of the definitions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA, scoreText, inductionTargets, INDUCTION_MIN_SPAN } from '../web/lib/src/index.js';

const ids = (s) => Int32Array.from(Array.from(s), (c) => c.codePointAt(0));

test('inductionTargets: the position after each earlier copy of the last 4 characters, nothing elsewhere', () => {
  assert.equal(INDUCTION_MIN_SPAN, 4);
  // "abcdXabcdY": at t = 8 ("abcd" again) the earlier copy ends at 3, so the target is 4 ("X")
  assert.deepEqual([...inductionTargets(ids('abcdXabcdY'))], [[8, [4]]]);
  // a span written twice: from the 4th character of the second copy on, t − n + 1
  const span = 'qwertyuiop';
  const n = span.length;
  const got = inductionTargets(ids(span + span));
  assert.deepEqual([...got.keys()], Array.from({ length: n - 3 }, (_, i) => n + 3 + i));
  for (const [t, ks] of got) assert.deepEqual(ks, [t - n + 1]);
  // three copies: the third copy's queries have two targets
  assert.deepEqual(inductionTargets(ids('abcd'.repeat(3))).get(11), [4, 8]);
  assert.equal(inductionTargets(ids('no repeat here')).size, 0);
  assert.equal(inductionTargets(ids('aaaaaa')).get(5).length, 1, 'a target must lie before the query');
  assert.equal(inductionTargets(ids('abab'), 2).get(3)[0], 2);
});

/** Attention [h, T, T] from a function (head, query) → row of T weights. */
function attention(h, T, rowOf) {
  const data = new Float32Array(h * T * T);
  for (let j = 0; j < h; j++) for (let t = 0; t < T; t++) data.set(rowOf(j, t), (j * T + t) * T);
  return { data, shape: [h, T, T] };
}

test('scoreText: exact scores of hand-built heads (previous-token, uniform, induction, first-token)', () => {
  const text = 'abcdXabcdY';
  const T = text.length;
  const oneHot = (k) => { const r = new Float32Array(T); r[k] = 1; return r; };
  const targets = inductionTargets(ids(text));
  const att = attention(4, T, (j, t) => {
    if (j === 0) return oneHot(Math.max(0, t - 1));
    if (j === 1) { const r = new Float32Array(T); r.fill(1 / (t + 1), 0, t + 1); return r; }
    if (j === 2) return oneHot(targets.get(t)?.[0] ?? t);
    return oneHot(0);
  });
  const [prev, uniform, induction, first] = scoreText([att], ids(text)).map((x) => x.scores);
  assert.equal(prev.previous, 1);
  assert.equal(prev.current, 0);
  assert.equal(prev.first, 1 / (T - 1), 'only query 1 looks at position 0');
  assert.equal(prev.entropy, 0);
  assert.ok(Math.abs(uniform.entropy - 1) < 1e-6, `uniform entropy ${uniform.entropy}`);
  assert.ok(Math.abs(uniform.previous - [...Array(T - 1)].reduce((s, _, i) => s + 1 / (i + 2), 0) / (T - 1)) < 1e-6);
  assert.equal(induction.induction, 1);
  assert.equal(prev.induction, 0, 'queries with targets: one (t = 8); the previous-token head puts 0 on position 4');
  assert.equal(first.first, 1);
  assert.equal(first.twoBack, 1 / (T - 2), 'only query 2 has two-back = position 0');
  // no repeated span: no induction score; one character: nothing defined
  const short = scoreText([attention(1, 3, (_, t) => oneHot(t).subarray(0, 3))], ids('abc'))[0];
  assert.equal(short.scores.induction, null);
  assert.equal(short.inductionQueries, 0);
  const one = scoreText([attention(1, 1, () => Float32Array.of(1))], ids('a'))[0].scores;
  assert.deepEqual(Object.values(one), [null, null, null, null, null, null]);
});

test('scoreText on the shipped h = 4 model: the position scores of one probe text equal a direct computation; an induction head finds a doubled random span', async () => {
  const mha = await createMHA();
  const lm = await mha.loadModel(new URL('../web/lib/models/charlm-h4-s0.safetensors', import.meta.url));
  try {
    const probes = JSON.parse(lm.metadata.probes);
    const text = probes.text[0];
    const r = lm.run(text);
    const mine = scoreText(r.attention, r.ids);
    // an independent float64 computation of every head's position scores on this text
    const T = r.ids.length;
    for (let l = 0; l < r.attention.length; l++) {
      const { data, shape } = r.attention[l];
      for (let j = 0; j < shape[0]; j++) {
        const A = (q, k) => data[(j * T + q) * T + k];
        const rows = [...Array(T - 1)].map((_, i) => i + 1);
        const mean = (f, from = 1) => rows.filter((t) => t >= from).reduce((acc, t) => acc + f(t), 0) / (T - from);
        const want = {
          previous: mean((t) => A(t, t - 1)), twoBack: mean((t) => A(t, t - 2), 2), current: mean((t) => A(t, t)), first: mean((t) => A(t, 0)),
          entropy: mean((t) => -[...Array(t + 1)].reduce((e, _, k) => e + (A(t, k) > 0 ? A(t, k) * Math.log2(A(t, k)) : 0), 0) / Math.log2(t + 1)),
        };
        const got = mine[l * shape[0] + j].scores;
        for (const k of Object.keys(want)) assert.ok(Math.abs(got[k] - want[k]) < 1e-9, `L${l + 1}H${j + 1} ${k}: ${got[k]} vs ${want[k]}`);
      }
    }
    // the random-letter repeats stored in the file: the best induction head of the probes scores well on one
    const rep = probes.repeat[0];
    const best = lm.heads.slice().sort((a, b) => b.scores.induction - a.scores.induction)[0];
    const rr = lm.run(rep);
    const s = scoreText(rr.attention, rr.ids).find((x) => x.layer === best.layer && x.head === best.head).scores;
    assert.ok(s.induction > 0.5, `induction score of L${best.layer + 1}H${best.head + 1} on a probe repeat: ${s.induction}`);
    // the strongest previous-token head of the probes puts most of its weight one back on this text too
    const prev = lm.heads.filter((h) => h.type === 'previous-token').sort((a, b) => b.scores.previous - a.scores.previous)[0];
    const onText = scoreText(r.attention, r.ids)[prev.layer * lm.config.numHeads + prev.head].scores.previous;
    assert.ok(onText > 0.5, `L${prev.layer + 1}H${prev.head + 1} previous on probe text 0: ${onText}`);
  } finally {
    lm.dispose();
  }
});

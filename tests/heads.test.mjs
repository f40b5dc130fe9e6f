// Head analysis (web/lib/src/lm/heads.js) value by value, without an engine: the type rule at its
// thresholds and ties, analyzeHeads and scoreText against a direct computation of their definitions
// (docs/trained-models.md, "Head analysis") on random attention with several layers, heads, texts
// and lengths (each head's type checked against the documented label of the scores computed here),
// and inductionTargets on texts whose targets are known. Mutation testing (StrykerJS)
// measures heads.js with this suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  headType, analyzeHeads, scoreText, inductionTargets, HEAD_TYPES, TYPE_THRESHOLD, BROAD_THRESHOLD, INDUCTION_MIN_SPAN,
} from '../web/lib/src/lm/heads.js';
import { mulberry32 as rng } from '../web/lib/src/engine/weights.js';

const KEYS = ['previous', 'twoBack', 'current', 'first', 'induction', 'entropy'];
const scores = (o) => ({ previous: 0, twoBack: 0, current: 0, first: 0, induction: 0, entropy: 0, ...o });
const ids = (s) => Int32Array.from(Array.from(s), (c) => c.codePointAt(0));

/**
 * Random attention [h, T, T]: row t holds positive weights on keys 0..t summing to 1, some of them
 * exactly 0 (0·log 0 must count as 0), and, beyond the diagonal, values that a causal row does not
 * have (the definitions read keys ≤ t only, so a reader of other entries gets other numbers).
 * `target(j, t)`, when given, names a key that head j's row t puts 0.7 of its weight on (the
 * random weights share the other 0.3); a key outside 0..t leaves the row random; 'uniform' makes
 * it 1/(t + 1) on every visible key.
 */
function randomAttention(rand, h, T, target = () => -1) {
  const data = new Float32Array(h * T * T);
  for (let j = 0; j < h; j++) {
    for (let t = 0; t < T; t++) {
      const r = (j * T + t) * T;
      let s = 0;
      for (let k = 0; k <= t; k++) { data[r + k] = rand() < 0.2 ? 0 : rand() + 0.01; s += data[r + k]; }
      if (s === 0) { data[r + t] = 1; s = 1; }
      const k0 = target(j, t);
      if (k0 === 'uniform') for (let k = 0; k <= t; k++) data[r + k] = s / (t + 1);
      const share = k0 >= 0 && k0 <= t ? 0.3 : 1;
      for (let k = 0; k <= t; k++) data[r + k] *= share / s;
      if (share < 1) data[r + k0] += 0.7;
      for (let k = t + 1; k < T; k++) data[r + k] = 5 + rand();
    }
  }
  return { data, shape: [h, T, T] };
}

/**
 * The label of docs/trained-models.md ("Head analysis"), written from its wording: the largest of
 * the five position/induction scores when it is at least 0.4 (a tie goes to the first in the
 * table's order), else broad when the entropy is at least 0.7, else mixed.
 */
function label(s) {
  const named = [['previous', 'previous-token'], ['twoBack', 'two-back'], ['current', 'current-token'], ['first', 'first-token'], ['induction', 'induction']];
  const top = Math.max(...named.map(([k]) => s[k]));
  if (top >= 0.4) return named.find(([k]) => s[k] === top)[1];
  return s.entropy >= 0.7 ? 'broad' : 'mixed';
}

/** The definitions, written out: per key, the values a head contributes on one text. */
function direct(A, j, T) {
  const at = (t, k) => A.data[(j * T + t) * T + k];
  const v = { previous: [], twoBack: [], current: [], first: [], entropy: [] };
  for (let t = 1; t < T; t++) {
    v.previous.push(at(t, t - 1));
    v.current.push(at(t, t));
    v.first.push(at(t, 0));
    if (t >= 2) v.twoBack.push(at(t, t - 2));
    let e = 0;
    for (let k = 0; k <= t; k++) if (at(t, k) > 0) e -= at(t, k) * Math.log2(at(t, k));
    v.entropy.push(e / Math.log2(t + 1));
  }
  return v;
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const near = (a, b, msg, tol = 1e-12) => assert.ok(Math.abs(a - b) <= tol * (1 + Math.abs(b)), `${msg}: ${a} vs ${b}`);

test('constants and the type rule: the strongest score from 0.4 on, ties to the first of HEAD_TYPES; else broad from entropy 0.7, else mixed', () => {
  assert.equal(TYPE_THRESHOLD, 0.4);
  assert.equal(BROAD_THRESHOLD, 0.7);
  assert.equal(INDUCTION_MIN_SPAN, 4);
  assert.ok(Object.isFrozen(HEAD_TYPES));
  assert.deepEqual(HEAD_TYPES, [['previous', 'previous-token'], ['twoBack', 'two-back'], ['current', 'current-token'],
    ['first', 'first-token'], ['induction', 'induction']]);
  for (const [key, name] of HEAD_TYPES) {
    assert.equal(headType(scores({ [key]: 0.4 })), name, `${key} exactly at the threshold`);
    assert.equal(headType(scores({ [key]: 0.9, entropy: 0.99 })), name, `${key} beats a broad entropy`);
    assert.equal(headType(scores({ [key]: 0.39999 })), 'mixed', `${key} just under the threshold`);
  }
  // the strongest wins wherever it stands in the list
  assert.equal(headType(scores({ previous: 0.5, induction: 0.6 })), 'induction');
  assert.equal(headType(scores({ previous: 0.6, induction: 0.5 })), 'previous-token');
  assert.equal(headType(scores({ twoBack: 0.45, current: 0.8, first: 0.7 })), 'current-token');
  // ties: the first in HEAD_TYPES order
  assert.equal(headType(scores({ previous: 0.5, twoBack: 0.5 })), 'previous-token');
  assert.equal(headType(scores({ current: 0.5, induction: 0.5 })), 'current-token');
  assert.equal(headType(scores({ first: 0.7, induction: 0.7, twoBack: 0.7 })), 'two-back');
  // untyped: entropy
  assert.equal(headType(scores({ previous: 0.3, entropy: 0.7 })), 'broad');
  assert.equal(headType(scores({ previous: 0.3, entropy: 0.69999 })), 'mixed');
  assert.equal(headType(scores({ entropy: 1 })), 'broad');
  assert.equal(headType(scores({})), 'mixed');
});

test('analyzeHeads equals the definitions on random attention (2 layers × 4 heads, texts of several lengths, repeats), and each head gets the documented label of its scores', () => {
  const rand = rng(7);
  const L = 2;
  const h = 4;
  const n = 5;  // repeat_span
  const probes = {
    text: ['abcdefg', 'hi', 'jklmnopqrstu', 'vw x'],
    // 2n characters (t = n … 2n − 2; t = 2n − 1 is not read), a truncated one (T < 2n − 1: t < T
    // bounds it) and one longer than 2n
    repeat: ['ABCDEABCDE', 'FGHIJFG', 'KLMNOKLMNOxyz'],
    repeat_span: n,
  };
  // heads leaning on one key each (layer 0: previous, current, first, three back; layer 1: two
  // back, the induction target on the repeats, uniform, first), so the labels differ from head to head
  // (three back is no score of its own: that head is mixed)
  const leans = [
    [(t) => t - 1, (t) => t, () => 0, (t) => t - 3],
    [(t) => t - 2, (t, repeat) => (repeat && t >= n ? t - n + 1 : -1), () => 'uniform', () => 0],
  ];
  const att = new Map();
  for (const s of probes.text) att.set(s, leans.map((f) => randomAttention(rand, h, s.length, (j, t) => f[j](t, false))));
  for (const s of probes.repeat) att.set(s, leans.map((f) => randomAttention(rand, h, s.length, (j, t) => f[j](t, true))));
  const labels = [];
  const calls = [];
  const out = analyzeHeads(probes, (s) => { calls.push(s); return att.get(s); }, { numLayers: L, numHeads: h });
  assert.deepEqual(calls, [...probes.text, ...probes.repeat], 'each probe text attended once, in order');
  assert.equal(out.length, L * h);
  for (let l = 0; l < L; l++) {
    for (let j = 0; j < h; j++) {
      const got = out[l * h + j];
      assert.equal(got.layer, l);
      assert.equal(got.head, j);
      assert.deepEqual(Object.keys(got.scores).sort(), [...KEYS].sort());
      const v = { previous: [], twoBack: [], current: [], first: [], entropy: [], induction: [] };
      for (const s of probes.text) {
        const d = direct(att.get(s)[l], j, s.length);
        for (const k of Object.keys(d)) v[k].push(...d[k]);
      }
      for (const s of probes.repeat) {
        const A = att.get(s)[l];
        const T = s.length;
        for (let t = n; t <= 2 * n - 2 && t < T; t++) v.induction.push(A.data[(j * T + t) * T + t - n + 1]);
      }
      assert.equal(v.induction.length, 4 + 2 + 4);
      const want = Object.fromEntries(KEYS.map((k) => [k, mean(v[k])]));
      for (const k of KEYS) near(got.scores[k], want[k], `layer ${l} head ${j} ${k}`);
      // the type from the hand-computed scores and the documented rule, not from headType
      assert.equal(got.type, label(want), `layer ${l} head ${j} type`);
      labels.push(got.type);
    }
  }
  assert.deepEqual(labels, ['previous-token', 'current-token', 'first-token', 'mixed', 'two-back', 'induction', 'broad', 'first-token']);
});

test('analyzeHeads: exact scores of hand-built heads, their types, and 0 for a score with nothing to average', () => {
  const n = 4;
  const heads = [
    (r, t) => { r[Math.max(0, t - 1)] = 1; },                  // previous-token
    (r, t) => { r[Math.max(0, t - 2)] = 1; },                  // two-back
    (r, t) => { r[t] = 1; },                                   // current-token
    (r) => { r[0] = 1; },                                      // first-token
    (r, t) => { r[t >= n ? t - n + 1 : t] = 1; },              // induction (current before the span repeats)
    (r, t) => { r.fill(1 / (t + 1), 0, t + 1); },              // uniform: broad
  ];
  const build = (s) => {
    const T = s.length;
    const data = new Float32Array(heads.length * T * T);
    heads.forEach((f, j) => { for (let t = 0; t < T; t++) f(data.subarray((j * T + t) * T, (j * T + t + 1) * T), t); });
    return [{ data, shape: [heads.length, T, T] }];
  };
  const out = analyzeHeads({ text: ['abcdef'], repeat: ['wxyzwxyz'], repeat_span: n }, build, { numLayers: 1, numHeads: heads.length });
  assert.deepEqual(out.map((x) => x.type), ['previous-token', 'two-back', 'current-token', 'first-token', 'induction', 'broad']);
  const s = out.map((x) => x.scores);
  assert.deepEqual(s[0], { previous: 1, twoBack: 0, current: 0, first: 1 / 5, induction: 0, entropy: 0 });
  // two-back: query 1 looks at position 0 (its previous and first character)
  assert.deepEqual(s[1], { previous: 1 / 5, twoBack: 1, current: 0, first: 2 / 5, induction: 0, entropy: 0 });
  assert.deepEqual(s[2], { previous: 0, twoBack: 0, current: 1, first: 0, induction: 0, entropy: 0 });
  assert.deepEqual(s[3], { previous: 1 / 5, twoBack: 1 / 4, current: 0, first: 1, induction: 0, entropy: 0 });
  assert.deepEqual(s[4], { previous: 0, twoBack: 0, current: 3 / 5, first: 0, induction: 1, entropy: 0 });
  near(s[5].entropy, 1, 'uniform rows have entropy 1', 1e-7);  // float32 weights 1/(t + 1)
  near(s[5].induction, (1 / 5 + 1 / 6 + 1 / 7) / 3, 'uniform induction: queries 4, 5, 6 of the repeat', 1e-7);
  // nothing to average: no texts, no repeats → every score 0, not NaN
  const none = analyzeHeads({ text: [], repeat: [], repeat_span: 3 }, () => { throw new Error('not called'); }, { numLayers: 2, numHeads: 1 });
  assert.deepEqual(none, [0, 1].map((l) => ({ layer: l, head: 0, type: 'mixed', scores: Object.fromEntries(KEYS.map((k) => [k, 0])) })));
});

test('inductionTargets: every earlier copy of the last minSpan characters, at its boundaries', () => {
  // minSpan characters match at the earliest possible place: j = minSpan − 1, t = j + 2
  assert.deepEqual([...inductionTargets(ids('abcdXabcd'))], [[8, [4]]]);
  assert.deepEqual([...inductionTargets(ids('abcdabcd'))], [[7, [4]]]);
  // the target must lie before the query (j + 1 < t): "aaaa a" has none at t = 4 with j = 3
  assert.deepEqual([...inductionTargets(ids('aaaaa'))], []);
  assert.deepEqual([...inductionTargets(ids('aaaaaa'))], [[5, [4]]]);
  assert.deepEqual([...inductionTargets(ids('aaaaaaa'))], [[5, [4]], [6, [4, 5]]]);
  // three of four characters are not enough; a longer match still counts (exactly minSpan compared)
  assert.equal(inductionTargets(ids('abcXYbcdZ')).size, 0);
  assert.deepEqual([...inductionTargets(ids('xabcdeQxabcdeR'))], [[10, [4]], [11, [5]], [12, [6]]]);
  // the default is INDUCTION_MIN_SPAN; another minSpan
  assert.deepEqual([...inductionTargets(ids('abXab?'), 2)], [[4, [2]]]);
  assert.deepEqual([...inductionTargets(ids('abXab?'))], []);
  assert.deepEqual([...inductionTargets(ids('aXaY'), 1)], [[2, [1]]]);
  assert.deepEqual([...inductionTargets(ids('abcabc'), 3)], [[5, [3]]]);
  assert.deepEqual([...inductionTargets([], 4)], []);
});

test('scoreText equals the definitions on random attention (2 layers × 2 heads); induction over queries, not targets', () => {
  const rand = rng(11);
  const text = 'abcdQabcdRabcdS';  // "abcd" three times: queries 8 (target 4), 13 (targets 4 and 9)
  const T = text.length;
  const targets = inductionTargets(ids(text));
  assert.deepEqual([...targets], [[8, [4]], [13, [4, 9]]]);
  const att = [randomAttention(rand, 2, T), randomAttention(rand, 2, T)];
  const out = scoreText(att, ids(text));
  assert.equal(out.length, 4);
  out.forEach((got, i) => {
    const l = Math.floor(i / 2);
    const j = i % 2;
    assert.equal(got.layer, l);
    assert.equal(got.head, j);
    assert.equal(got.inductionQueries, 2);
    const d = direct(att[l], j, T);
    for (const k of Object.keys(d)) near(got.scores[k], mean(d[k]), `layer ${l} head ${j} ${k}`);
    const at = (t, k) => att[l].data[(j * T + t) * T + k];
    near(got.scores.induction, ((at(8, 4)) + (at(13, 4) + at(13, 9))) / 2, `layer ${l} head ${j} induction`);
  });
  // T = 2: twoBack is undefined (null), the rest are defined
  const two = scoreText([randomAttention(rand, 1, 2)], ids('ab'))[0];
  assert.equal(two.scores.twoBack, null);
  assert.equal(two.scores.induction, null);
  for (const k of ['previous', 'current', 'first', 'entropy']) assert.equal(typeof two.scores[k], 'number', k);
  assert.deepEqual(scoreText([], ids('abc')), []);
});

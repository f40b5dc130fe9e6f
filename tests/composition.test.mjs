// The composition experiment's logic (web/lib/components/logic/composition.js): the heads it picks on
// the shipped models (layer 1's previous-token heads by their probe labels, layer 2's heads that pass
// both induction tests), its numbers against an independent reading of run({ablate}) (attention on
// the character after the earlier copy, bits from the log-probabilities), the measured collapse on
// every shipped h = 4 model, the verdict's rule on made-up numbers, and a too-short phrase.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { compositionHeads, compositionExperiment, secondCopyBits, supportedPrediction } from '../web/lib/components/logic/composition.js';
import { copyBits } from '../web/lib/components/trained/mha-induction.js';

const mha = await createMHA();
const load = (name) => mha.loadModel(new URL(`../web/lib/models/${name}.safetensors`, import.meta.url));
const h4s0 = await load('charlm-h4-s0');
const h4s1 = await load('charlm-h4-s1');
const h1s0 = await load('charlm-h1-s0');

/** The readers' mean attention from t = n + 4 … 2n to t − n, and the second copy's bits, read directly. */
function independent(lm, p, readers, ablate) {
  const n = p.length, V = lm.config.vocabSize;
  const r = lm.run(`${p} ${p}`, { ablate });
  const T = r.ids.length;
  let a = 0, k = 0;
  for (const [l, j] of readers) for (let t = n + 4; t < T; t++) { a += r.attention[l].data[j * T * T + t * T + t - n]; k++; }
  let s = 0;
  for (let t = n + 1; t < 2 * n; t++) s -= Math.log2(Math.exp(r.logProbs.data[t * V + r.ids[t + 1]]));
  return { induction: a / k, bits: s / (n - 1) };
}

test('the heads: writers are layer 1\'s previous-token heads, readers the later heads that pass both tests', () => {
  assert.deepEqual(compositionHeads(h4s0), { writers: [[0, 1], [0, 3]], control: [[0, 0], [0, 2]], readers: [[1, 0], [1, 1]], labelled: true });
  assert.deepEqual(compositionHeads(h4s1), { writers: [[0, 2]], control: [[0, 0], [0, 1], [0, 3]], readers: [[1, 1], [1, 2]], labelled: true });
  // h = 1: layer 1's only head is labelled "mixed"; it is taken as the writer, and said so
  assert.deepEqual(compositionHeads(h1s0), { writers: [[0, 0]], control: [], readers: [[1, 0]], labelled: false });
});

test('the arms equal an independent reading of run({ablate}); switching the writers off collapses induction on every h = 4 model', () => {
  for (const lm of [h4s0, h4s1]) {
    for (const p of ['purple kites drift north', 'zebra quilts vex jumpy']) {
      const m = compositionExperiment(lm, p);
      for (const [name, ablate] of [['whole', []], ['writersOff', m.heads.writers], ['controlOff', m.heads.control]]) {
        const want = independent(lm, p, m.heads.readers, ablate);
        assert.ok(Math.abs(m[name].induction - want.induction) < 1e-6, `${p} ${name}: ${m[name].induction} vs ${want.induction}`);
        assert.ok(Math.abs(m[name].bits - want.bits) < 1e-5, `${p} ${name}: ${m[name].bits} vs ${want.bits}`);
      }
      assert.ok(m.writersOff.induction < m.whole.induction / 4, `${p}: ${m.whole.induction} → ${m.writersOff.induction}`);
      assert.ok(m.writersOff.bits > m.whole.bits + 2, `${p}: ${m.whole.bits} → ${m.writersOff.bits}`);
      assert.ok(m.controlOff.induction > m.writersOff.induction, 'the control keeps more of the induction attention');
      assert.equal(supportedPrediction(m), 'collapse');
    }
  }
});

test('secondCopyBits is <mha-induction>\'s second copy', () => {
  const p = 'zebra quilts vex jumpy';
  const r = h4s0.run(`${p} ${p}`);
  assert.ok(Math.abs(secondCopyBits(r, p.length, 97) - copyBits(r, p.length, 97).second) < 1e-12);
});

test('the verdict\'s rule; a phrase under 5 characters gives nothing', () => {
  const m = (a, b, x, y) => ({ whole: { induction: a, bits: x }, writersOff: { induction: b, bits: y } });
  assert.equal(supportedPrediction(m(0.7, 0.35, 0.3, 1)), 'collapse', 'halved and dearer');
  assert.equal(supportedPrediction(m(0.7, 0.36, 0.3, 1)), 'same', 'less than halved');
  assert.equal(supportedPrediction(m(0.7, 0.1, 0.3, 0.2)), 'same', 'halved but not dearer');
  assert.equal(supportedPrediction(m(0.5, 0.6, 0.3, 0.3)), 'stronger');
  assert.equal(supportedPrediction(m(null, 0.6, 0.3, 0.3)), null);
  assert.equal(compositionExperiment(h4s0, 'abcd'), null);
  assert.equal(compositionExperiment(h4s0, 'x'.repeat(200)).phrase.length, 47, 'cut to ⌊(context − 1) / 2⌋');
});

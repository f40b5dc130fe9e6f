// Comparing a loaded model (mha.loadModel) with golden cases made by a PyTorch or numpy forward:
// shared by the suites of the trained models (model, golden-twins) and of the decoder references.
import assert from 'node:assert/strict';

/** Tolerances of the float32 engine against a float64 reference (measured ≥ 7× inside them). */
export const MODEL_TOL = Object.freeze({ logProbs: 2e-4, attention: 2e-5, loss: 1e-4, scores: 1e-5 });

/** Largest |got[i] − want[i]|; Infinity for a NaN; the lengths must agree. */
export function maxDiff(got, want) {
  assert.equal(got.length, want.length, `length ${got.length} vs ${want.length}`);
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]));
  return Number.isNaN(m) ? Infinity : m;
}

/**
 * Asserts that lm.run gives each golden case's ids, log-probabilities, attention of every head
 * and loss (with the case's ablation), and that lm.heads gives the golden head scores and types.
 * @param {object} lm a CharModel
 * @param {{cases: Array<{text, ablate, ids, logProbs, attention, loss}>, heads: Array<{scores, type}>}} g
 */
export function assertMatchesGolden(lm, g, tol = MODEL_TOL) {
  for (const c of g.cases) {
    const r = lm.run(c.text, { ablate: c.ablate });
    const what = `${JSON.stringify(c.text)} (ablate ${JSON.stringify(c.ablate)})`;
    assert.deepEqual(Array.from(r.ids), c.ids, `ids of ${what}`);
    const dl = maxDiff(r.logProbs.data, c.logProbs.flat());
    assert.ok(dl <= tol.logProbs, `logProbs of ${what}: max |Δ| ${dl}`);
    assert.equal(r.attention.length, c.attention.length);
    for (let l = 0; l < c.attention.length; l++) {
      const da = maxDiff(r.attention[l].data, c.attention[l].flat(2));
      assert.ok(da <= tol.attention, `attention of layer ${l} on ${what}: max |Δ| ${da}`);
    }
    if (c.loss === null) assert.equal(r.loss, null);
    else assert.ok(Math.abs(r.loss - c.loss) <= tol.loss, `loss of ${what}: ${r.loss} vs ${c.loss}`);
  }
  const heads = lm.heads;
  assert.equal(heads.length, g.heads.length);
  for (let i = 0; i < heads.length; i++) {
    for (const [k, v] of Object.entries(g.heads[i].scores)) {
      assert.ok(Math.abs(heads[i].scores[k] - v) <= tol.scores, `layer ${heads[i].layer} head ${heads[i].head} ${k}: ${heads[i].scores[k]} vs ${v}`);
    }
    assert.equal(heads[i].type, g.heads[i].type, `type of layer ${heads[i].layer} head ${heads[i].head}`);
  }
  return heads;
}

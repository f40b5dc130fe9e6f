// The "how" formulas of <mha-passport>'s count rows (logic/passport-counts.js), evaluated with each
// configuration's numbers, give the counts the engine's passport prints beside them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { countFormulas } from '../web/lib/components/logic/passport-counts.js';

const mha = await createMHA();

/** A formula such as "B·h·T·(6·T + 1)" evaluated with the given values (a small, independent reading). */
function evaluate(formula, vars) {
  const js = formula.replace(/T_q/g, String(vars.Tq)).replace(/T_k/g, String(vars.Tk))
    .replace(/\bB\b/g, String(vars.B)).replace(/\bh\b/g, String(vars.h)).replace(/\bT\b/g, String(vars.T))
    .replace(/²/g, '**2').replace(/·/g, '*');
  assert.match(js, /^[\d*+() ]+$/, `${formula} → ${js}`);
  return Function(`return ${js}`)();
}

test('passport count formulas: evaluated, they give the engine\'s softmax FLOPs and scores (the section 8 passport, batched, cross)', () => {
  const cases = [
    { seqLen: 10, dModel: 512, numHeads: 8, batch: 2 },                 // the lesson's section 8 passport: 9,760 and 1,600
    { seqLen: 5, dModel: 24, numHeads: 4 },                              // the widget: unbatched
    { seqLen: 3, keyLen: 7, dModel: 32, numHeads: 8, kvHeads: 2, batch: 3 },
    { seqLen: 6, keyLen: 2, dModel: 16, numHeads: 2 },
  ];
  for (const cfg of cases) {
    const p = mha.passport(cfg);
    const f = countFormulas(cfg);
    const vars = { B: cfg.batch ?? 1, h: cfg.numHeads, T: cfg.seqLen, Tq: cfg.seqLen, Tk: cfg.keyLen ?? cfg.seqLen };
    assert.equal(evaluate(f.softmax, vars), p.flops.softmax, `${JSON.stringify(cfg)}: ${f.softmax}`);
    assert.equal(evaluate(f.scores, vars), p.memory.scores, `${JSON.stringify(cfg)}: ${f.scores}`);
  }
  const p = mha.passport(cases[0]);
  assert.deepEqual([p.flops.softmax, p.memory.scores], [9760, 1600]);
  assert.deepEqual(countFormulas(cases[0]), { softmax: 'B·h·T·(6·T + 1)', scores: 'B·h·T²' });
});

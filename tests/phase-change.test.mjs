// The training checkpoints of <mha-phase-change> (web/lib/models/phase-change.safetensors, written by
// scripts/train/train.py --checkpoints): each checkpoint, read by readCheckpoints and loaded by the
// engine, gives the head scores and the copy losses PyTorch measured on the same weights at training
// time (stored in the file's `checkpoints` list, rounded to 4 decimals); the file is float16, at
// most 2 MB, with at least 40 checkpoints, and the phase change the lesson describes is in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createMHA } from '../web/lib/src/index.js';
import { readCheckpoints, phaseChange, phaseSentence } from '../web/lib/components/logic/phase-change.js';

const URL_ = new URL('../web/lib/models/phase-change.safetensors', import.meta.url);
const BYTES = new Uint8Array(readFileSync(URL_));
const MANIFEST = JSON.parse(readFileSync(new URL('../web/lib/models/index.json', import.meta.url), 'utf8'));
const ck = readCheckpoints(BYTES);
const mha = await createMHA();

/** Bits per character on copy 1 (characters 1..n-1) and copy 2 (n+1..2n-1) of a span of n written twice. */
function copyBpc(lm, text, n) {
  const r = lm.run(text);
  const V = lm.config.vocabSize;
  const bits = (from, to) => {
    let s = 0;
    for (let t = from; t < to; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
    return s / Math.LN2;
  };
  return { first: bits(0, n - 1), second: bits(n, 2 * n - 1) };
}

test('the file: at least 40 float16 checkpoints in at most 2 MB, the manifest\'s size, denser around the phase change', () => {
  assert.ok(ck.steps.length >= 40, `${ck.steps.length} checkpoints`);
  assert.ok(BYTES.length <= 2_000_000, `${BYTES.length} bytes`);
  assert.equal(MANIFEST.other.find((m) => m.file === 'phase-change.safetensors').bytes, BYTES.length);
  const n = Number(new DataView(BYTES.buffer, BYTES.byteOffset, 8).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(BYTES.subarray(8, 8 + n)));
  const dtypes = new Set(Object.entries(header).filter(([k]) => k !== '__metadata__').map(([, e]) => e.dtype));
  assert.deepEqual([...dtypes], ['F16']);
  const training = JSON.parse(ck.metadata.training);
  assert.equal(ck.steps[0], 0, 'the initialization is the first checkpoint');
  assert.equal(ck.steps[ck.steps.length - 1], training.steps, 'the trained model is the last');
  // denser where the scores move: the phase change's checkpoints are closer together than the average
  const { from, to } = phaseChange(ck.table);
  const inside = ck.steps.filter((s) => s >= from.step && s <= to.step).length - 1;
  assert.ok((to.step - from.step) / inside < training.steps / (ck.steps.length - 1),
    `${inside} intervals over steps ${from.step}-${to.step}`);
});

test('every checkpoint loaded by the engine scores its heads and copies as PyTorch measured them', async () => {
  const probes = JSON.parse(ck.metadata.probes);
  let worstScore = 0, worstLoss = 0;
  for (const c of ck.table) {
    const lm = await mha.loadModel(ck.file(c.step));
    try {
      const heads = lm.heads;
      assert.equal(heads.length, c.heads.length);
      for (const h of heads) {
        const want = c.heads.find((x) => x.layer === h.layer && x.head === h.head);
        for (const k of ['previous', 'twoBack', 'current', 'first', 'induction', 'inductionProse', 'entropy']) {
          worstScore = Math.max(worstScore, Math.abs(h.scores[k] - want.scores[k]));
        }
        assert.equal(h.type, want.type, `step ${c.step}, layer ${h.layer + 1} head ${h.head + 1}`);
      }
      for (const k of ['previous', 'induction', 'inductionProse']) {
        assert.equal(c[k], Math.max(...c.heads.map((h) => h.scores[k])), `step ${c.step}: best ${k}`);
      }
      const n = probes.repeat_span;
      let first = 0, second = 0;
      for (const text of probes.repeat) {
        const b = copyBpc(lm, text, n);
        first += b.first;
        second += b.second;
      }
      const count = probes.repeat.length * (n - 1);
      worstLoss = Math.max(worstLoss, Math.abs(first / count - c.firstCopyBpc), Math.abs(second / count - c.secondCopyBpc));
    } finally {
      lm.dispose();
    }
  }
  console.log(`largest differences from PyTorch over ${ck.table.length} checkpoints: head score ${worstScore.toExponential(2)}, copy loss ${worstLoss.toExponential(2)} bits/char`);
  assert.ok(worstScore < 2e-4, `head scores within the file's rounding: ${worstScore}`);
  assert.ok(worstLoss < 2e-3, `copy losses: ${worstLoss}`);
});

test('the phase change: the best induction score jumps while the second copy\'s loss falls, the first copy\'s does not', () => {
  const { from, to, low, high } = phaseChange(ck.table);
  assert.ok(high - low > 0.3, `induction from ${low} to ${high}`);
  assert.ok(to.induction - from.induction > 0.3, `${from.induction} -> ${to.induction}`);
  assert.ok(from.secondCopyBpc - to.secondCopyBpc > 1, `second copy ${from.secondCopyBpc} -> ${to.secondCopyBpc}`);
  assert.ok(to.firstCopyBpc > from.firstCopyBpc - 0.5, `the first copy, which nothing earlier predicts, does not fall with it: ${from.firstCopyBpc} -> ${to.firstCopyBpc}`);
  const s = phaseSentence(ck.table);
  assert.match(s.steps, /^steps [\d,]+ and [\d,]+$/);
});

test('readCheckpoints refuses what is not a checkpoints file, naming what is wrong', async () => {
  assert.throws(() => readCheckpoints(new Uint8Array(4)), /readCheckpoints: bytes must be a safetensors file, got 4 bytes/);
  const plain = new Uint8Array(readFileSync(new URL('../web/lib/models/charlm-h1-s0.safetensors', import.meta.url)));
  assert.throws(() => readCheckpoints(plain), /__metadata__\.checkpoints must be a non-empty list/);
  assert.throws(() => ck.file(7), /step must be one of 0, .*, got 7/);
  const lm = await mha.loadModel(ck.file(ck.steps[1]));
  assert.equal(lm.config.numLayers, 2);
  lm.dispose();
});

// The engine worker's pieces that run without a browser: LatestRun (components/base/worker-engine.js),
// the newest-input-wins queue of an element's computations, and mainThreadEngine (src/worker.js), the
// worker's asynchronous surface over an engine on this thread (the fallback), checked against the
// synchronous API on the shipped h = 4 model. The worker itself runs in tests/browser/engine-worker.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, scoreText, copyingScores, eigenPositivity, ovLogits } from '../web/lib/src/index.js';
import { measureSurprisal, measureSurprisalAsync } from '../web/lib/components/logic/surprisal.js';
import { compositionExperiment, compositionExperimentAsync } from '../web/lib/components/logic/composition.js';
import { heldoutLoss, heldoutLossAsync } from '../web/lib/components/logic/trained-text.js';
import { createWorkerMHA, mainThreadEngine } from '../web/lib/src/worker.js';
import { LatestRun } from '../web/lib/components/base/worker-engine.js';

const MODEL = fs.readFileSync(new URL('../web/lib/models/charlm-h4-s0.safetensors', import.meta.url));

/** A work function whose calls finish when the test says so. */
function controlled() {
  const calls = [];
  const work = (args) => new Promise((resolve, reject) => calls.push({ args, resolve, reject }));
  return { calls, work };
}
const tick = () => new Promise((r) => setImmediate(r));

test('LatestRun: one run at a time, only the newest input waits, a run overtaken is not delivered', async () => {
  const { calls, work } = controlled();
  const done = [];
  const q = new LatestRun(work, (e, r, a) => done.push({ e, r, a }));
  q.push('a');
  q.push('b');
  q.push('c');   // replaces b: at most one waits
  await tick();
  assert.deepEqual(calls.map((c) => c.args), ['a']);
  calls[0].resolve('A');
  await tick();
  assert.deepEqual(done, [], 'a was overtaken by c: its result is dropped');
  assert.deepEqual(calls.map((c) => c.args), ['a', 'c']);
  calls[1].resolve('C');
  await q.settled;
  assert.deepEqual(done, [{ e: null, r: 'C', a: 'c' }]);
  // an error of the newest run is delivered
  q.push('d');
  await tick();
  calls[2].reject(new Error('bad d'));
  await q.settled;
  assert.equal(done.at(-1).e.message, 'bad d');
  assert.equal(done.at(-1).a, 'd');
  // cancel drops the running run's result and the waiting one
  q.push('e');
  q.push('f');
  q.cancel();
  await tick();
  calls[3].resolve('E');
  await q.settled;
  assert.equal(calls.length, 4, 'f never ran');
  assert.equal(done.length, 2);
});

test('createWorkerMHA where no Worker exists: the same surface on this thread, info.worker false and why', async () => {
  assert.equal(typeof globalThis.Worker, 'undefined');
  const w = await createWorkerMHA();
  assert.equal(w.info.worker, false);
  assert.match(w.info.fallback, /no Worker/);
  await assert.rejects(createWorkerMHA({ fallback: false }), (e) => e.name === 'MHALoadError' && /could not start: this environment has no Worker/.test(e.message));
  w.dispose();
});

test('mainThreadEngine: run, text scores, cut to `most`, generator steps, the OV circuit, and the elements\' measurements over it equal the synchronous API', async () => {
  const mha = await createMHA();
  const ref = await mha.loadModel(MODEL);
  const e = mainThreadEngine(mha, 'test');
  assert.deepEqual([e.info.worker, e.info.fallback, e.info.tier], [false, 'test', mha.info.tier]);
  const lm = await e.loadModel(MODEL);
  assert.equal(lm.remote, false);
  assert.deepEqual(lm.config, ref.config);
  const text = 'The cat sat on the mat. The cat sat on the mat.';
  const r = await lm.run(text, { ablate: [[1, 0]], scores: true, most: 20 });
  const want = ref.run(text.slice(0, 20), { ablate: [[1, 0]] });
  assert.equal(r.input, text.slice(0, 20));
  assert.equal(r.text, text.slice(0, 20));
  assert.equal(r.loss, want.loss);
  assert.deepEqual(Array.from(r.attention[1].data), Array.from(want.attention[1].data));
  assert.deepEqual(r.textScores, scoreText(want.attention, want.ids));
  assert.deepEqual(lm.heads, ref.heads);
  const g = await lm.generator('A friend ', { temperature: 0 });
  const s = await g.step(5);
  assert.equal(s.steps.length, 5);
  assert.equal(s.text, ref.generate('A friend ', 5, { temperature: 0 }).text);
  assert.equal(g.text, s.text);
  assert.equal(s.steps[4].attention[0].shape[1], s.steps[4].cacheLength);
  // the OV circuit's numbers, as <mha-ov-circuit> asks them
  const ov = await lm.ovCircuit();
  assert.deepEqual(ov.copying, copyingScores(ref));
  assert.deepEqual(ov.positivity, eigenPositivity(ref));
  assert.deepEqual((await lm.ovLogits(1))[2], ovLogits(ref, 1)[2]);
  // the measurements the elements make over the asynchronous surface equal the synchronous ones
  const ablate = [[1, 0], [1, 1]];
  assert.deepEqual(await measureSurprisalAsync(lm, text, { ablate }), measureSurprisal(ref, text, { ablate }));
  assert.deepEqual(await measureSurprisalAsync(lm, 'purple kites', { repeat: true }), measureSurprisal(ref, 'purple kites', { repeat: true }));
  await assert.rejects(measureSurprisalAsync(lm, 'x'), (e) => e.code === 'INVALID_ARGUMENT' && e.argument === 'text');
  const strip = (m) => ({ ...m, whole: { ...m.whole, attention: null }, writersOff: { ...m.writersOff, attention: null }, controlOff: { ...m.controlOff, attention: null } });
  const comp = await compositionExperimentAsync(lm, 'purple kites drift north');
  assert.deepEqual(strip(comp), strip(compositionExperiment(ref, 'purple kites drift north')));
  assert.deepEqual(Array.from(comp.whole.attention[1].data), Array.from(compositionExperiment(ref, 'purple kites drift north').whole.attention[1].data));
  assert.equal(await heldoutLossAsync(lm, ['The cat sat.', 'A friend asked.']), heldoutLoss(ref, ['The cat sat.', 'A friend asked.']));
  g.dispose();
  lm.dispose();
  ref.dispose();
  mha.dispose();
});

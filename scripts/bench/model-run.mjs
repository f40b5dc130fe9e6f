#!/usr/bin/env node
// Time of one CharModel.run() on 64 characters in Node: median of 101 runs after 10 warm-up runs,
// for each shipped model. Prints; asserts nothing (tests/browser/trained.test.mjs prints the same
// figure in Chromium).
//   node scripts/bench/model-run.mjs
import fs from 'node:fs';
import { createMHA } from '../../web/lib/src/index.js';

const dir = new URL('../../web/lib/models/', import.meta.url);
const { models } = JSON.parse(fs.readFileSync(new URL('index.json', dir)));
const mha = await createMHA();
const text = 'The cat sat on the mat. The cat sat on the mat. The cat sat on t';
for (const m of models) {
  const lm = await mha.loadModel(fs.readFileSync(new URL(m.file, dir)));
  for (let i = 0; i < 10; i++) lm.run(text);
  const times = [];
  for (let i = 0; i < 101; i++) {
    const t = performance.now();
    lm.run(text);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`${m.file}: run() of ${text.length} characters, median ${times[50].toFixed(2)} ms (min ${times[0].toFixed(2)}), tier ${mha.info.tier ?? (mha.info.simd ? 'simd' : 'scalar')}`);
  lm.dispose();
}

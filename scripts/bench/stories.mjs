#!/usr/bin/env node
/**
 * stories260K (web/lib/models/stories260K.safetensors) as a user runs it:
 *
 *   node --experimental-wasm-relaxed-simd scripts/bench/stories.mjs [--tokens 128] [--browser]
 *
 * 1. Per-token latency of generation with the KV cache (temperature 0 from "Once upon a time"): the
 *    prompt step, then the median and p90 of the single-token steps up to --tokens, in Node and, with
 *    --browser, in Debian's Chromium (playwright-core; a page served from the repository root
 *    imports web/lib/src/index.js). Each runtime runs its best tier; the tier is printed.
 * 2. What float16 storage would cost: every weight rounded to float16 (round to nearest even) and
 *    run again: the largest log-probability change on four prompts, and whether the greedy text
 *    of 128 tokens from "Once upon a time" changes (and where).
 * Not a test: prints, asserts nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMHA, parseSafetensors } from '../../web/lib/src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const TOKENS = Number(argv[argv.indexOf('--tokens') + 1]) || 128;
const file = path.join(root, 'web/lib/models/stories260K.safetensors');
const PROMPT = 'Once upon a time';

/** Generation timings inside any runtime: `mha` an engine, `bytes` the model file. */
async function latency(mha, bytes, tokens) {
  const lm = await mha.loadModel(bytes);
  const g = lm.generator(PROMPT, { temperature: 0 });
  const times = [];
  let t = performance.now();
  g.step();
  const prompt = performance.now() - t;
  for (let i = 1; i < tokens; i++) {
    t = performance.now();
    g.step();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const out = { tier: mha.info.tier, prompt, median: times[times.length >> 1], p90: times[Math.floor(times.length * 0.9)], tokens, text: g.text.slice(0, 80) };
  g.dispose();
  lm.dispose();
  return out;
}

const mha = await createMHA();
const bytes = fs.readFileSync(file);
const fmt = (r) => `${r.tier}: prompt (5 tokens) ${r.prompt.toFixed(2)} ms, then per token median ${r.median.toFixed(3)} ms, p90 ${r.p90.toFixed(3)} ms over ${r.tokens - 1} steps`;
await latency(mha, bytes, 16);  // warm-up
console.log(`Node ${process.versions.node}  ${fmt(await latency(mha, bytes, TOKENS))}`);

if (argv.includes('--browser')) {
  const { chromium } = await import('playwright-core');
  const { startServer } = await import('../serve.mjs');
  const srv = await startServer({ port: 0, root });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${srv.url}/web/lib/models/index.json`);
    const r = await page.evaluate(async ({ tokens, src }) => {
      const { createMHA } = await import('/web/lib/src/index.js');
      const mha = await createMHA();
      const bytes = new Uint8Array(await (await fetch('/web/lib/models/stories260K.safetensors')).arrayBuffer());
      const run = new Function('return ' + src)();  // the same function as in Node
      await run(mha, bytes, 16);
      return run(mha, bytes, tokens);
    }, { tokens: TOKENS, src: latency.toString().replace(/^async function latency/, 'async function') .replace('PROMPT', JSON.stringify(PROMPT)) });
    console.log(`Chromium ${browser.version()}  ${fmt(r)}`);
  } finally {
    await browser.close();
    await srv.close();
  }
}

// float16: round every weight, write the same file with the rounded values, compare
const f16 = (x) => {  // nearest float16 value of x (round half to even), as a number
  const buf = new DataView(new ArrayBuffer(4));
  buf.setFloat32(0, x);
  const b = buf.getUint32(0), sign = b >>> 31 ? -1 : 1, e = ((b >>> 23) & 255) - 127;
  if (e < -24) return sign * 0;
  const step = 2 ** (Math.max(e, -14) - 10);  // spacing of float16 numbers at this magnitude
  let q = Math.abs(x) / step;
  const fl = Math.floor(q);
  q = q - fl > 0.5 || (q - fl === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
  return sign * q * step;
};
const { metadata, tensors } = parseSafetensors(bytes);
const half = {};
let maxRel = 0;
for (const [k, t] of Object.entries(tensors)) {
  const d = Float32Array.from(t.data, f16);
  for (let i = 0; i < d.length; i++) if (t.data[i] !== 0) maxRel = Math.max(maxRel, Math.abs(d[i] - t.data[i]) / Math.abs(t.data[i]));
  half[k] = { data: d, shape: t.shape };
}
const { encodeSafetensors } = await import('../safetensors-write.mjs');
const a = await mha.loadModel(bytes);
const b = await mha.loadModel(encodeSafetensors(metadata, half));
let maxLp = 0;
for (const text of [PROMPT, 'Lily and Ben were playing with a ball.', 'The dog was sad because he lost his toy. His mom said', '']) {
  const x = a.run(text).logProbs.data, y = b.run(text).logProbs.data;
  for (let i = 0; i < x.length; i++) maxLp = Math.max(maxLp, Math.abs(x[i] - y[i]));
}
const ga = a.generate(PROMPT, TOKENS, { temperature: 0 }).text, gb = b.generate(PROMPT, TOKENS, { temperature: 0 }).text;
let at = 0;
while (at < ga.length && ga[at] === gb[at]) at++;
console.log(`float16 weights (largest relative rounding ${maxRel.toExponential(2)}; the file would be ${(bytes.length / 2 / 1024).toFixed(0)} KB instead of ${(bytes.length / 1024).toFixed(0)} KB): log-probabilities change by up to ${maxLp.toExponential(2)} nats; greedy text of ${TOKENS} tokens ${ga === gb ? 'identical' : `differs from character ${at}: …${JSON.stringify(ga.slice(at - 20, at + 40))} vs …${JSON.stringify(gb.slice(at - 20, at + 40))}`}`);

// The lesson site (web/site/) composes the library's elements and makes no engine call of its own:
// no file it serves, other than the build output copied into it, creates an engine, loads a model,
// builds a layer or runs one. Every number on the page is computed inside web/lib/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SITE = path.join(ROOT, 'web', 'site');
const BUILT = new Set(['dist', 'wasm', 'models']);   // copies of the library, made by build-web.mjs

/** Calls into the engine or the model runner, as they would be written in a page's script. */
const ENGINE_CALL = /\b(createMHA|getEngine|setEngine|loadModel|createLayer|createKVCache|fromTorch|fromSafetensors)\s*\(|\.(forward|trace|passport|generator|generate|run|step)\s*\(/;

function sources(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) { if (!(dir === SITE && BUILT.has(e.name))) out.push(...sources(p)); }
    else if (/\.(m?js|html)$/.test(e.name)) out.push(p);
  }
  return out;
}

test('the pattern finds engine calls (canary)', () => {
  for (const s of ['const mha = await createMHA();', 'layer.forward(x)', 'mha.passport({ seqLen: 1 })', 'await mha.loadModel(url)',
    'lm.run(text)', 'getEngine()', 'layer.trace(X)', 'cache.step(x)']) assert.match(s, ENGINE_CALL, s);
  for (const s of ['<mha-trained-heads></mha-trained-heads>', "explorer.addEventListener('change', sync)", 'composeTrained();']) {
    assert.doesNotMatch(s, ENGINE_CALL, s);
  }
});

test('no file under web/site/ calls the engine, a model or a layer directly', () => {
  const files = sources(SITE);
  assert.ok(files.some((f) => f.endsWith(path.join('lesson', 'lesson.js'))) && files.some((f) => f.endsWith('index.html')), files.join(' '));
  const calls = [];
  for (const f of files) {
    readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
      if (ENGINE_CALL.test(line)) calls.push(`${path.relative(ROOT, f)}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(calls, []);
  assert.ok(statSync(path.join(SITE, 'lesson', 'trained.js')).size < 2000, 'the trained section only composes elements');
});

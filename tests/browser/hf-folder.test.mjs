// Hugging Face model folders in Chromium through the bundled JS API: a base URL ending in "/" (one
// file and a sharded folder), and a File list (as <input type=file webkitdirectory> gives), under
// the site's strict CSP; the log-probabilities equal the float64 reference of tests/golden-hf/ within
// the tolerances of tests/golden-hf.test.mjs. The folders are served from tests/golden-hf/ at /hf/,
// Range requests answered 206: the weights files of a URL folder are fetched by ranges only (the
// header, then the parts of the model; tests/model-ranges.test.mjs counts the bytes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, ROOT, serveModelFolders } from './helpers.mjs';

const GOLDEN = path.join(ROOT, 'tests', 'golden-hf');
const TOL = { logProbs: 2e-4, attention: 2e-5 };
let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const served = [];   // [rel, status, bytes] of every answer

async function page() {
  const p = await env.newPage();
  await serveModelFolders(p.page, (rel) => path.join(GOLDEN, rel), served);
  await p.page.goto(`${env.url}examples/causal-mask.html`);   // a page of the site with its strict CSP
  return p;
}

test('a GPT-2 folder and a sharded float16 Llama folder load from their base URLs; a File list loads too; log-probabilities match the reference', async () => {
  const { page: pg, errors } = await page();
  for (const name of ['gpt2-tied-gelu-new', 'llama-mqa-f16-sharded']) {
    const g = JSON.parse(fs.readFileSync(path.join(GOLDEN, `${name}.json`)));
    const c = g.cases[2];
    const from = served.length;
    const got = await pg.evaluate(async ({ name, ids, files }) => {
      const { getEngine } = await import('/dist/mha-components.js');
      const mha = await getEngine();
      const out = {};
      const lm = await mha.loadModel(new URL(`/hf/${name}/`, location.href).href);
      out.url = { family: lm.config.family, logProbs: Array.from(lm.run(ids).logProbs.data), att: Array.from(lm.run(ids).attention[0].data) };
      lm.dispose();
      const list = await Promise.all(files.map(async (f) => new File([await (await fetch(`/hf/${name}/${f}`)).arrayBuffer()], f)));
      const lm2 = await mha.loadModel(list);
      out.files = Array.from(lm2.run(ids).logProbs.data);
      lm2.dispose();
      return out;
    }, { name, ids: c.ids, files: fs.readdirSync(path.join(GOLDEN, name)) });
    assert.equal(got.url.family, g.family);
    const want = c.logProbs.flat();
    const d = Math.max(...want.map((v, i) => Math.abs(v - got.url.logProbs[i])));
    assert.ok(d <= TOL.logProbs, `${name}: logProbs max |Δ| ${d}`);
    const wa = c.attention[0].flat(2);
    const da = Math.max(...wa.map((v, i) => Math.abs(v - got.url.att[i])));
    assert.ok(da <= TOL.attention, `${name}: attention max |Δ| ${da}`);
    assert.deepEqual(got.files, got.url.logProbs, `${name}: the File list gives the URL's numbers`);
    // the URL load's weights by ranges (the File list's fetches above answer 200: they have no Range)
    for (const file of fs.readdirSync(path.join(GOLDEN, name)).filter((f) => f.endsWith('.safetensors'))) {
      const answers = served.slice(from).filter(([rel]) => rel === `${name}/${file}`);
      const ranged = answers.filter(([, status]) => status === 206);
      assert.equal(answers.length - ranged.length, 1, `${name}/${file}: one whole fetch (the File list's), the rest ranges`);
      assert.ok(ranged.length >= 3, `${name}/${file}: ${ranged.length} ranged requests`);
    }
  }
  const csp = await pg.evaluate(() => window.__csp);
  assert.deepEqual(csp, [], 'no CSP violation');
  // the optional files a folder may lack (tokenizer.json, vocab.json, model.safetensors of a sharded folder) are 404s by design
  const real = errors.filter((e) => !/http 404: .*\/hf\/|Failed to load resource/.test(e));
  assert.deepEqual(real, []);
});

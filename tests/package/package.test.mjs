// Consumer tests of the npm package without a browser: `npm pack` once, install the tarball into a
// fresh temporary project (`npm install <tarball>`, dependencies from the registry with
// --prefer-offline), and check what users get: the tarball's files (what users need, nothing
// else) and sizes, package.json's exports resolving to installed files, Node ESM and CommonJS on
// the worked example's values (4.050), TypeScript --strict on a consumer file, and the generated
// custom-elements.json. Writes tests/artifacts/package-report.json (tarball files and sizes, gzip
// sizes). The bundlers and pages in Chromium: browser-consumers.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ROOT, ARTIFACTS, ELEMENTS, sh, assertWorked, preparePackage, cleanup } from '../helpers/package.mjs';

let tmp, tarball, pack, nodeApp;

before(async () => {
  ({ tmp, tarball, pack, nodeApp } = await preparePackage());
});

after(() => cleanup(tmp));

test('tarball: what users need, nothing else; sizes reported', async (t) => {
  const files = pack.files.map((f) => f.path).sort();
  for (const f of ['package.json', 'README.md', 'web/lib/src/index.js', 'web/lib/src/index.d.ts', 'web/lib/src/loader.js',
    'web/lib/src/single.js', 'web/lib/src/single.d.ts', 'web/lib/components/index.js', 'web/lib/types/components/index.d.ts',
    'web/lib/anywidget.js', 'web/lib/dist/anywidget.js', 'web/lib/dist/mha-components.js', 'web/lib/dist/mha-lesson-elements.js',
    'web/lib/dist/mha-trained.js', 'custom-elements.json',
    'web/lib/wasm/mha_core.mjs', 'web/lib/wasm/mha_core.wasm', 'web/lib/wasm/mha_core_scalar.mjs', 'web/lib/wasm/mha_core_scalar.wasm',
    'web/lib/wasm/mha_core.wasm.mjs', 'web/lib/wasm/mha_core_scalar.wasm.mjs', 'web/lib/models/index.json',
    'web/lib/models/charlm-h4-s0.safetensors', 'web/lib/models/charlm-h1-s0.safetensors',
    'web/lib/models/stories260K.safetensors', 'web/lib/models/stories260K.LICENSE', 'NOTICE', 'web/lib/dist/mha-gqa-story.js',
    'web/lib/embed.html', 'web/lib/dist/mha-embed.js', 'web/lib/dist/embed-resize.js']) {
    assert.ok(files.includes(f), `tarball lacks ${f}`);
  }
  const unwanted = files.filter((f) => /^(tests|cpp|scripts|build[^/]*|node_modules|web\/site)\//.test(f) ||
    /\.(map|tgz|o|a|cpp|hpp)$/.test(f) || /^(CMakeLists\.txt|CMakePresets\.json|custom-elements-manifest\.config\.mjs)$/.test(f));
  assert.deepEqual(unwanted, [], 'tests, the lesson site, build intermediates');
  assert.deepEqual(files.filter((f) => !f.startsWith('web/lib/')).sort(), ['LICENSE', 'NOTICE', 'README.md', 'custom-elements.json', 'docs/trained-models.md', 'package.json'],
    'the library is web/lib/; nothing else but the manifest, README, the licence and third-party notice, and package.json');

  // gzip sizes: the .wasm, and the JS the default entry loads (its static import graph)
  const pkgDir = path.join(ROOT);
  const graph = new Set();
  const walk = async (rel) => {
    if (graph.has(rel)) return;
    graph.add(rel);
    const src = await readFile(path.join(pkgDir, rel), 'utf8');
    for (const m of src.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|^\s*import\s*['"](\.[^'"]+)['"]/gm)) {
      await walk(path.posix.join(path.posix.dirname(rel), m[1] ?? m[2]));
    }
  };
  await walk('web/lib/src/index.js');
  const gz = async (rels) => rels.reduce(async (acc, r) => (await acc) + gzipSync(await readFile(path.join(pkgDir, r)), { level: 9 }).length, Promise.resolve(0));
  const raw = async (rels) => rels.reduce(async (acc, r) => (await acc) + (await stat(path.join(pkgDir, r))).size, Promise.resolve(0));
  const entryJS = [...graph].sort();
  assert.ok(entryJS.includes('web/lib/wasm/mha_core.mjs') && !entryJS.includes('web/lib/wasm/mha_core_scalar.mjs'), 'default entry: SIMD glue only');
  const report = {
    tarball: pack.filename, size: pack.size, unpackedSize: pack.unpackedSize, entryCount: pack.entryCount,
    files: pack.files.map((f) => ({ path: f.path, size: f.size })).sort((a, b) => a.path.localeCompare(b.path)),
    gzip: {
      wasm: await gz(['web/lib/wasm/mha_core.wasm']),
      wasmScalar: await gz(['web/lib/wasm/mha_core_scalar.wasm']),
      wasmRelaxed: await gz(['web/lib/wasm/mha_core_relaxed.wasm', 'web/lib/wasm/mha_core_relaxed.mjs']),
      defaultEntryJS: await gz(entryJS),
      defaultEntryJSRaw: await raw(entryJS),
      defaultEntryFiles: entryJS,
      single: await gz(['web/lib/wasm/mha_core.wasm.mjs']),
      componentsBundle: await gz(['web/lib/dist/mha-components.js']),
      anywidgetBundle: await gz(['web/lib/dist/anywidget.js']),
    },
  };
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(path.join(ARTIFACTS, 'package-report.json'), JSON.stringify(report, null, 2));
  t.diagnostic(`${pack.filename}: ${pack.entryCount} files, ${pack.size} B packed, ${pack.unpackedSize} B unpacked; ` +
    `gzip: wasm ${report.gzip.wasm} B, default-entry JS ${report.gzip.defaultEntryJS} B (${entryJS.length} files)`);
  assert.ok(pack.size < 8_400_000, `tarball ${pack.size} B (the four character models are ~1.3 MB of it, the six grouped-query twins ~2 MB, stories260K in float32 ~1 MB, the 42 float16 phase-change checkpoints 1.70 MB gzipped; the bundles of 25 elements and of the engine worker, the embed page, Tokenizers.js's chunk and docs/trained-models.md the rest: 8.22 MB measured)`);
});

test('package.json: exports resolve to files in the installed package', async () => {
  const installed = path.join(nodeApp, 'node_modules', 'mha-wasm');
  const pj = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(pj.type, 'module');
  assert.ok(pj.engines.node);
  const targets = [];
  const collect = (v) => { if (typeof v === 'string') targets.push(v); else for (const x of Object.values(v)) collect(x); };
  for (const [key, v] of Object.entries(pj.exports)) if (!key.includes('*')) collect(v);
  for (const tgt of targets) assert.ok(existsSync(path.join(installed, tgt)), `exports target ${tgt} is in the package`);
  for (const key of ['.', './components', './single', './anywidget', './wasm', './custom-elements.json']) assert.ok(pj.exports[key], key);
  for (const key of ['.', './components', './single']) assert.ok(pj.exports[key].types, `${key} has types`);
  assert.ok(Array.isArray(pj.sideEffects) && pj.sideEffects.some((p) => p.includes('components')), 'components register elements: not side-effect free');
  const { stdout } = await sh(process.execPath, ['--input-type=module', '-e',
    "for (const s of ['mha-wasm', 'mha-wasm/components', 'mha-wasm/single', 'mha-wasm/anywidget', 'mha-wasm/wasm', 'mha-wasm/wasm-scalar', 'mha-wasm/dist/mha-components.js', 'mha-wasm/models/charlm-h4-s0.safetensors']) console.log(import.meta.resolve(s));"], nodeApp);
  for (const line of stdout.trim().split('\n')) assert.ok(existsSync(fileURLToPath(line)), line);
});

test('Node ESM: import with no options, worked example; non-SIMD, single, wasmBinary; no fetch', async () => {
  const { stdout } = await sh(process.execPath, ['node-esm.mjs'], nodeApp);
  const r = JSON.parse(stdout);
  assertWorked(r.simd, { simd: true });
  assertWorked(r.scalar, { simd: false });
  assertWorked(r.single, { simd: true });
  assertWorked(r.wasmBinary);
  assert.deepEqual(r.scalar.output, r.simd.output, 'both builds agree');
  assert.equal(r.version, JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version);
  assert.equal(r.isMHAError, true, 'mha-wasm/single re-exports the same MHAError');
  assert.equal(r.loadError?.name, 'MHALoadError');
  assert.match(r.loadError.message, /nonexistent\/mha_core\.wasm/);
});

test('Node CommonJS: await import(), and require() where Node has require(esm)', async () => {
  const { stdout } = await sh(process.execPath, ['node-cjs.cjs'], nodeApp);
  const r = JSON.parse(stdout);
  assertWorked(r.dynamicImport, { simd: true });
  if (process.features?.require_module) assertWorked(r.require, { simd: true });
});

test('TypeScript: tsc --noEmit --strict on a consumer file (types are checked, not any)', async () => {
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  const base = { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext',
    lib: ['es2022', 'dom'], skipLibCheck: false, types: [] };
  await writeFile(path.join(nodeApp, 'tsconfig.json'), JSON.stringify({ compilerOptions: base, files: ['consumer.ts'] }));
  await sh(tsc, ['-p', 'tsconfig.json'], nodeApp);
  // control: a wrong use is reported, so the check above can fail
  await writeFile(path.join(nodeApp, 'wrong.ts'),
    "import { createMHA } from 'mha-wasm';\nconst mha = await createMHA({ simd: 'yes' });\nmha.createLayer({ dModel: 24, numHeads: 2 }).forward([[1]]).output.nope;\nexport {};\n");
  await writeFile(path.join(nodeApp, 'tsconfig.wrong.json'), JSON.stringify({ compilerOptions: base, files: ['wrong.ts'] }));
  const err = await sh(tsc, ['-p', 'tsconfig.wrong.json'], nodeApp).then(() => null, (e) => e.message);
  assert.ok(err, 'tsc must reject wrong.ts');
  assert.match(err, /wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'boolean \| undefined'/);
  assert.match(err, /wrong\.ts\(3,\d+\): error TS2339: Property 'nope' does not exist on type 'Tensor'/);
});

test('custom-elements.json: generated, lists every element with attributes, events, parts, CSS properties', async () => {
  const installed = path.join(nodeApp, 'node_modules', 'mha-wasm');
  const pj = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(pj.customElements, 'custom-elements.json');
  const m = JSON.parse(await readFile(path.join(installed, pj.customElements), 'utf8'));
  const els = Object.fromEntries(m.modules.flatMap((mod) => (mod.declarations ?? []).filter((d) => d.customElement && d.tagName).map((d) => [d.tagName, { ...d, path: mod.path }])));
  assert.deepEqual(Object.keys(els).sort(), Object.keys(ELEMENTS).concat('mha-heatmap', 'mha-heads').sort());
  for (const tag of ['mha-trained-heads', 'mha-generate', 'mha-induction', 'mha-gqa-story']) {
    assert.ok(els[tag].attributes.some((a) => a.name === 'model'), `${tag} has a model attribute`);
  }
  assert.ok(els['mha-trained-heads'].cssParts.some((p) => p.name === 'switch'));
  assert.ok(els['mha-trained-heads'].events.some((e) => e.name === 'change'));
  const w = els['mha-widget'];
  const attrs = w.attributes.map((a) => a.name);
  for (const a of ['seq-len', 'd-model', 'heads', 'seed']) assert.ok(attrs.includes(a), `mha-widget attribute ${a}`);
  assert.ok(!attrs.some((a) => a.startsWith('_') || a === 'result'), `no internal state as attributes: ${attrs}`);
  assert.ok(w.events.some((e) => e.name === 'change'));
  assert.ok(w.cssParts.some((p) => p.name === 'head-button'));
  assert.ok(w.cssProperties.some((p) => p.name === '--mha-accent'));
  assert.ok(w.members.some((p) => p.name === 'weights' && p.kind === 'field'), 'data property weights');
  assert.ok(els['mha-passport'].attributes.some((a) => a.name === 'seq-len'));
  for (const e of Object.values(els)) assert.ok(existsSync(path.join(installed, e.path)), e.path);
});


// The packed tarball under the lowest Node the package claims (package.json `engines.node`, e.g.
// ">=18" → Node 18.0.0, the binary of the npm package `node@18.0.0`): every installed dependency's own
// `engines` admits that version (what npm's EBADENGINE warns about), and that Node imports
// `mha-wasm` and `mha-wasm/single` and runs the worked example (Alex's "cheap" 4.050) on the SIMD and
// scalar builds, with the same numbers as the Node running this suite. Also: `npm pack`'s prepack
// step (scripts/prepack.mjs) refuses, with what is missing and what to run, when the wasm is absent
// and no toolchain can build it. About 30 s with a warm npm cache (the Node binary is ~30 MB).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIX = path.join(ROOT, 'tests', 'package', 'fixtures');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--no-package-lock'];
const semver = createRequire(path.join(ROOT, 'package.json'))('semver');   // npm's own range rules
const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
const LOWEST = semver.minVersion(pkg.engines.node).version;   // ">=18" → "18.0.0"

let tmp, app, oldNode, installLog;

/** Runs a command; rejects with its output on failure. */
async function sh(cmd, args, cwd, env = {}) {
  try {
    return await run(cmd, args, { cwd, maxBuffer: 64 << 20, timeout: 240_000, env: { ...process.env, ...env } });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

const RUN = `// imports the package as a user does and runs the worked example on both builds
const { createMHA, VERSION } = await import('mha-wasm');
const single = await import('mha-wasm/single');
const { worked } = await import('./worked.mjs');
const mha = await createMHA();
const out = { node: process.version, version: VERSION, tier: mha.info.tier, simd: worked(mha) };
out.scalar = worked(await createMHA({ simd: false }));
out.single = worked(await single.createMHA());
console.log(JSON.stringify(out));
`;

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-lowest-node-'));
  app = path.join(tmp, 'app');
  const nodeDir = path.join(tmp, 'node');
  await mkdir(app);
  await mkdir(nodeDir);
  // the build is already there (npm test builds first); prepack only checks, so that the bundles other
  // suites are reading at this moment are not rebuilt under them
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], ROOT, { MHA_PREPACK_SKIP_BUILD: '1' });
  const tarball = path.join(tmp, JSON.parse(stdout)[0].filename);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'lowest-node-app', private: true, type: 'module' }));
  await writeFile(path.join(nodeDir, 'package.json'), JSON.stringify({ name: 'node-binary', private: true }));
  await cp(path.join(FIX, 'worked.mjs'), path.join(app, 'worked.mjs'));
  await cp(path.join(ROOT, 'web', 'lib', 'components', 'logic', 'restaurant.js'), path.join(app, 'lesson-data.js'));
  await writeFile(path.join(app, 'run.mjs'), RUN);
  const [inst] = await Promise.all([
    sh('npm', ['install', tarball, ...NPM_FLAGS], app),
    sh('npm', ['install', '--no-save', `node@${LOWEST}`, ...NPM_FLAGS], nodeDir),
  ]);
  installLog = `${inst.stdout}\n${inst.stderr}`;
  oldNode = path.join(nodeDir, 'node_modules', '.bin', 'node');
});

after(async () => {
  if (tmp && !process.env.MHA_KEEP_TMP) await rm(tmp, { recursive: true, force: true });
});

test(`engines: every package the tarball installs admits Node ${LOWEST}, the lowest the package claims`, async () => {
  assert.doesNotMatch(installLog, /EBADENGINE/, 'npm install of the tarball warns about engines');
  const found = [];
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (!e.isDirectory()) continue;
      const d = path.join(dir, e.name);
      if (e.name.startsWith('@')) { await walk(d); continue; }
      const pj = path.join(d, 'package.json');
      if (existsSync(pj)) {
        const j = JSON.parse(await readFile(pj, 'utf8'));
        found.push(j);
        await walk(path.join(d, 'node_modules'));
      }
    }
  };
  await walk(path.join(app, 'node_modules'));
  assert.ok(found.some((j) => j.name === 'mha-wasm') && found.some((j) => j.name === 'katex') && found.some((j) => j.name === 'lit'),
    `installed: ${found.map((j) => j.name)}`);
  const refuse = found.filter((j) => j.engines?.node && !semver.satisfies(LOWEST, j.engines.node))
    .map((j) => `${j.name}@${j.version} needs node ${j.engines.node}`);
  assert.deepEqual(refuse, [], `dependencies that need a newer Node than ${pkg.engines.node}`);
});

test(`Node ${LOWEST} imports the installed package and runs the worked example, as the current Node does`, async () => {
  const { stdout } = await sh(oldNode, ['run.mjs'], app);
  const low = JSON.parse(stdout);
  assert.equal(low.node, `v${LOWEST}`);
  assert.equal(low.version, pkg.version);
  for (const [name, r] of Object.entries({ simd: low.simd, scalar: low.scalar, single: low.single })) {
    assert.equal(r.cheap, '4.050', `${name}: Alex's final cheap`);
    assert.deepEqual(r.shape, [3, 6], name);
    assert.deepEqual(r.weightsShape, [2, 3, 3], name);
    assert.equal(r.error?.code, 'SHAPE_MISMATCH', `${name}: a bad query is refused with MHAError`);
  }
  assert.equal(low.simd.simd, true);
  assert.equal(low.scalar.simd, false);
  const now = JSON.parse((await sh(process.execPath, ['run.mjs'], app)).stdout);
  assert.deepEqual(low.simd.output, now.simd.output, 'the SIMD build gives the same numbers on both Nodes');
  assert.deepEqual(low.scalar.output, now.scalar.output, 'the scalar build too');
});

test('prepack: with no wasm and no toolchain, `npm pack` stops with what is missing and what to run', async () => {
  // a folder with no web/lib/wasm/, and a PATH with node alone (no em++, no cmake)
  const bare = path.join(tmp, 'bare');
  await mkdir(path.join(bare, 'bin'), { recursive: true });
  await symlink(process.execPath, path.join(bare, 'bin', 'node'));
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'prepack.mjs')], {
    env: { ...process.env, PATH: path.join(bare, 'bin'), MHA_PREPACK_ROOT: bare, MHA_PREPACK_SKIP_BUILD: '' }, encoding: 'utf8',
  });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /web\/lib\/wasm\/mha_core\.wasm/);
  assert.match(r.stderr, /Emscripten \(em\+\+\)/);
  assert.match(r.stderr, /scripts\/setup\.sh/);
  // the same script passes on this checkout (built by npm test): the check is not always failing
  const ok = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'prepack.mjs')], { env: { ...process.env, MHA_PREPACK_SKIP_BUILD: '1' }, encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
});

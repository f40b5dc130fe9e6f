#!/usr/bin/env node
// `npm pack` / `npm publish` run this first (package.json "prepack"): it builds what the tarball ships
// and is not in git (web/lib/wasm/, web/lib/dist/, web/lib/types/, custom-elements.json), then checks
// that every one of those files is there, so a tarball can never go out without its wasm or bundles.
//   - the wasm toolchain is here (em++, cmake, Eigen: what scripts/setup.sh installs):
//     `bash scripts/build.sh` (incremental: CMake rebuilds only the C++ that changed, then the bundles);
//   - no toolchain, but the wasm was built before: the bundles, types and manifest only
//     (scripts/build-web.mjs, scripts/build-package.mjs), the wasm shipped as it is;
//   - no toolchain and no wasm: fails with what is missing and what to run.
// MHA_PREPACK_SKIP_BUILD=1 only checks (the package tests pack right after `npm run build`, while other
// suites read web/lib/dist/, which a rebuild deletes and rewrites). MHA_PREPACK_ROOT (tests only) checks
// another folder. Exit status 1 with a message on stderr when something is missing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(process.env.MHA_PREPACK_ROOT || path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));

/** Built files the package needs (its exports, the loader's imports, the bundles the README uses). */
export const WASM_FILES = ['mha_core', 'mha_core_scalar', 'mha_core_relaxed', 'mha_core_mt', 'mha_core_relaxed_mt']
  .flatMap((n) => [`web/lib/wasm/${n}.mjs`, `web/lib/wasm/${n}.wasm`])
  .concat(['web/lib/wasm/mha_core.wasm.mjs', 'web/lib/wasm/mha_core_scalar.wasm.mjs']);
export const JS_FILES = ['web/lib/dist/mha-components.js', 'web/lib/dist/mha-lesson-elements.js', 'web/lib/dist/mha-trained.js',
  'web/lib/dist/anywidget.js', 'web/lib/dist/engine-worker.js', 'custom-elements.json', 'web/lib/types/components/index.d.ts'];

const missing = (files) => files.filter((f) => !existsSync(path.join(root, f)));
const onPath = (cmd) => (process.env.PATH ?? '').split(path.delimiter).some((d) => {
  try { accessSync(path.join(d || '.', cmd), constants.X_OK); return true; } catch { return false; }
});
const fail = (msg) => { console.error(`prepack: ${msg}`); process.exit(1); };
const run = (cmd, args) => {
  console.error(`prepack: ${cmd} ${args.join(' ')}`);
  // stdout to stderr: `npm pack --json` prints its JSON on stdout
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) fail(`\`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal}); the tarball was not made.`);
};

if (!process.env.MHA_PREPACK_SKIP_BUILD) {
  const toolchain = onPath('em++') && onPath('cmake') && existsSync('/usr/include/eigen3/Eigen/Core');
  const noWasm = missing(WASM_FILES);
  const tools = () => {
    if (!existsSync(path.join(root, 'node_modules', '.bin', 'esbuild'))) {
      fail('node_modules/ lacks the build tools (esbuild, tsc, the custom-elements analyzer): run `npm ci` first, then `npm pack` again.');
    }
  };
  if (toolchain) { tools(); run('bash', ['scripts/build.sh']); }
  else if (noWasm.length) {
    fail(`the tarball needs the WebAssembly build, and ${noWasm.join(', ')} ${noWasm.length > 1 ? 'are' : 'is'} missing; ` +
      'building it needs Emscripten (em++), CMake and Eigen, which are not here. On Debian, `bash scripts/setup.sh` ' +
      'installs them (apt), then `npm pack` again builds everything (or `npm run build` first). ' +
      'Or copy web/lib/wasm/ from a machine that built it and `npm pack` again.');
  } else {
    tools();
    console.error('prepack: no wasm toolchain (em++, cmake, Eigen): web/lib/wasm/ ships as it was built; rebuilding the bundles');
    run(process.execPath, ['scripts/build-web.mjs']);
    run(process.execPath, ['scripts/build-package.mjs']);
  }
}
const gone = missing([...WASM_FILES, ...JS_FILES]);
if (gone.length) {
  fail(`the tarball would lack ${gone.join(', ')}: run \`npm run build\` (scripts/build.sh; \`bash scripts/setup.sh\` ` +
    'installs its toolchain on Debian), then `npm pack` again.');
}

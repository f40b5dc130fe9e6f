// Runs the wasm kernel harness (cpp/tests/kernels_test.cpp compiled by
// scripts/build-kernel-tests.sh, once with the SIMD kernels and once with their relaxed-SIMD FMA
// variant) and checks that each passes: exit code 0 and a summary line that
// reports more than zero checks and zero failures. Builds the harness first when the binary is
// missing or older than its sources (so `node --test tests/` works from a clean checkout with
// em++ installed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { relaxedSimdFlags } from '../scripts/node-flags.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const HARNESSES = {
  'wasm SIMD': join(root, 'build', 'kernel-tests', 'kernels_test.js'),
  'wasm relaxed-SIMD': join(root, 'build', 'kernel-tests', 'kernels_test_relaxed.js'),
};
const sources = [
  'cpp/tests/kernels_test.cpp',
  'cpp/src/kernels_simd.cpp',
  'cpp/src/kernels_eigen.cpp',
  'cpp/src/kernels.hpp',
  'cpp/src/softmax.hpp',
  'cpp/tests/bench_host.js',
  'scripts/build-kernel-tests.sh',
].map((p) => join(root, p));

function stale(harness) {
  if (!existsSync(harness)) return true;
  const built = statSync(harness).mtimeMs;
  return sources.some((s) => existsSync(s) && statSync(s).mtimeMs > built);
}

const RELAXED_FLAGS = relaxedSimdFlags();

for (const [kind, harness] of Object.entries(HARNESSES)) {
  test(`${kind} kernels match float64 references (cpp/tests/kernels_test.cpp)`, { timeout: 600_000 }, () => {
    if (stale(harness)) {
      const build = spawnSync('bash', [join(root, 'scripts', 'build-kernel-tests.sh'), '--no-bench', '--no-native'], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' },
      });
      assert.equal(build.status, 0, `scripts/build-kernel-tests.sh failed:\n${build.stdout}\n${build.stderr}`);
    }
    assert.ok(existsSync(harness), `${harness} was not built`);

    const flags = kind.includes('relaxed') ? RELAXED_FLAGS : [];
    const run = spawnSync(process.execPath, [...flags, harness], { cwd: root, encoding: 'utf8', maxBuffer: 16 << 20 });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, `kernels_test exited with ${run.status}:\n${output}`);
    const m = /kernels_test \(([^)]*)\): (\d+) checks .*?, (\d+) failures, (\d+) elements compared/.exec(run.stdout);
    assert.ok(m, `no summary line in the harness output:\n${output}`);
    assert.equal(m[1], `${kind} kernels`, `the harness was not built with the ${kind} kernels`);
    assert.ok(Number(m[2]) > 0, `expected > 0 checks, got ${m[2]}`);
    assert.equal(Number(m[3]), 0, `failures reported:\n${output}`);
    assert.ok(Number(m[4]) > 0, 'no elements compared');
  });
}

// Runs the wasm kernel harness (cpp/tests/kernels_test.cpp, the CMake target kernel_tests: once
// with the SIMD kernels, once with their relaxed-SIMD FMA variant and once with the portable Eigen
// kernels of the scalar tier) and checks that each passes:
// exit code 0 and a summary line that reports more than zero checks and zero failures. Builds the
// target first (CMake rebuilds only what changed), so `node --test tests/` works from a clean
// checkout with em++ installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { relaxedSimdFlags } from '../scripts/node-flags.mjs';
import { BUILD_DIR, buildTarget, root } from '../scripts/cmake-target.mjs';

const HARNESSES = {
  'wasm SIMD': join(BUILD_DIR, 'kernel-tests', 'kernels_test.js'),
  'wasm relaxed-SIMD': join(BUILD_DIR, 'kernel-tests', 'kernels_test_relaxed.js'),
  'portable Eigen': join(BUILD_DIR, 'kernel-tests', 'kernels_test_eigen.js'),
};
let built; // one build for every test

const RELAXED_FLAGS = relaxedSimdFlags();

for (const [kind, harness] of Object.entries(HARNESSES)) {
  test(`${kind} kernels match float64 references (cpp/tests/kernels_test.cpp)`, { timeout: 600_000 }, () => {
    built ??= buildTarget('kernel_tests');
    assert.ok(built.ok, `building the kernel_tests target failed:\n${built.log}`);
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

// Runs scripts/bench.mjs for the bench smoke tests (tests/bench.test.mjs, tests/browser/bench.test.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs the bench with these arguments, asserts exit code 0, and returns its markdown report (stdout). */
export function runBench(args) {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'bench.mjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `bench failed (${r.status}):\n${r.stdout}\n${r.stderr.slice(-3000)}`);
  return r.stdout;
}

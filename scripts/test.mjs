// Runs every node --test suite under tests/ (tests/**/*.test.mjs) in one node --test run, then the
// suites of tests/helpers/tier-runs.mjs once more on each other build (one node --test run per
// build, with the environment that selects it). Extra arguments are passed to every node --test run
// (e.g. --test-name-pattern=golden); MHA_SKIP_TIERS=1 runs the main run only.
// Node 20 ships relaxed SIMD behind --experimental-wasm-relaxed-simd: it is passed when this Node
// knows the flag, so that the main run is on the relaxed-simd tier.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { relaxedSimdFlags } from './node-flags.mjs';
import { TIER_RUNS } from '../tests/helpers/tier-runs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = [];
const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== 'artifacts' && e.name !== 'node_modules') walk(p);
    else if (e.isFile() && e.name.endsWith('.test.mjs')) files.push(path.relative(root, p));
  }
};
walk(path.join(root, 'tests'));
files.sort();
if (files.length === 0) {
  console.error('no test files found under tests/');
  process.exit(1);
}
const flags = relaxedSimdFlags();
const run = (label, suites, env = {}) => {
  console.log(`\n# ${label}: ${suites.length} suite(s)`);
  const r = spawnSync(process.execPath, [...flags, '--expose-gc', '--test', ...process.argv.slice(2), ...suites], {
    cwd: root, stdio: 'inherit', env: { ...process.env, MHA_NODE_FLAGS: flags.join(' '), ...env },
  });
  return r.status ?? 1;
};

const failed = [];
if (run('every suite, automatic tier', files) !== 0) failed.push('main');
if (!process.env.MHA_SKIP_TIERS) {
  for (const t of TIER_RUNS) {
    const suites = t.suites.map((s) => `tests/${s}.test.mjs`);
    if (run(`again on the ${t.name} build (${Object.entries(t.env).map(([k, v]) => `${k}=${v}`).join(' ')})`, suites, t.env) !== 0) failed.push(t.name);
  }
}
if (failed.length) console.error(`\nfailed runs: ${failed.join(', ')}`);
process.exit(failed.length ? 1 : 0);

// Runs every node --test suite under tests/ (tests/**/*.test.mjs) in one node --test run.
// Extra arguments are passed to node --test (e.g. --test-name-pattern=golden).
// Node 20 ships relaxed SIMD behind --experimental-wasm-relaxed-simd: it is passed when this Node
// knows the flag, so that the suites run on the relaxed-simd tier (tests/tiers/ runs the main
// suites on the other two).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { relaxedSimdFlags } from './node-flags.mjs';

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
const r = spawnSync(process.execPath, [...flags, '--expose-gc', '--test', ...process.argv.slice(2), ...files], {
  cwd: root, stdio: 'inherit', env: { ...process.env, MHA_NODE_FLAGS: flags.join(' ') },
});
process.exit(r.status ?? 1);

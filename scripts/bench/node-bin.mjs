// The Node binary a benchmark's children run on: this one, or another major version from the npm
// package node@<version>, installed on demand into .cache/node-<version>/ of the checkout.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

/**
 * @param {string|null} version e.g. '24'; null or '' for the Node running this script
 * @param {string} root the checkout (where .cache/ lives)
 * @returns {string} the path of the binary (npm may block the package's install script: its
 *   bin/node is then still the runtime, which is all a benchmark needs)
 * @throws {Error} when npm cannot install the package
 */
export function nodeBinary(version, root) {
  if (!version) return process.execPath;
  const prefix = path.join(root, '.cache', `node-${version}`);
  const bin = path.join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!fs.existsSync(bin) || spawnSync(bin, ['--version']).status !== 0) {
    process.stderr.write(`bench: installing node@${version} from the npm registry into ${path.relative(root, prefix)}/\n`);
    const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', prefix, `node@${version}`], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0 || !fs.existsSync(bin)) throw new Error(`could not install node@${version} (npm exit ${r.status})`);
  }
  return bin;
}

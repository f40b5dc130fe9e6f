// Builds one target of the Emscripten CMake build (build-wasm/), configuring it first when needed,
// for the tests and scripts that need a program outside the default build (the kernel harness and
// the kernel benchmark: see CMakeLists.txt). CMake decides what is stale.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUILD_DIR = join(root, 'build-wasm');

/**
 * Builds a target of build-wasm/ (`cmake --build --preset wasm --target <target>`), configuring
 * it first (`cmake --preset wasm`, CMakePresets.json) when build-wasm/ is not configured.
 * @param {string} target a CMake target name, e.g. 'kernel_tests'
 * @returns {{ok: boolean, log: string}} ok false with the tools' output when a step failed
 */
export function buildTarget(target) {
  const steps = [];
  if (!existsSync(join(BUILD_DIR, 'CMakeCache.txt'))) {
    steps.push(['cmake', ['--preset', 'wasm']]);
  }
  steps.push(['cmake', ['--build', '--preset', 'wasm', '--target', target, `-j${cpus().length || 2}`]]);
  let log = '';
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
    log += `$ ${cmd} ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}\n`;
    if (r.status !== 0) return { ok: false, log };
  }
  return { ok: true, log };
}

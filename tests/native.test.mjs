// The native C++ unit tests of the core (GoogleTest via CTest): built with the host compiler and run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

test('native core tests (GoogleTest) pass', () => {
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  run('cmake', ['-S', '.', '-B', 'build-native', '-DCMAKE_BUILD_TYPE=Release']);
  run('cmake', ['--build', 'build-native', '-j2']);
  const out = run('ctest', ['--test-dir', 'build-native', '--output-on-failure']);
  assert.match(out, /100% tests passed, 0 tests failed out of [1-9]/);
});

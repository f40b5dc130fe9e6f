// The native C++ tests (CTest, preset native of CMakePresets.json): the core's GoogleTest suite and
// the decoder's (decoder_test) and the kernel harness with the Eigen kernels, built with the host compiler and run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

test('native tests (core_test, decoder_test, pool_test, kernels_test_native) pass', () => {
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  run('cmake', ['--preset', 'native']);
  run('cmake', ['--build', '--preset', 'native', '-j2']);
  const out = run('ctest', ['--preset', 'native']);
  assert.match(out, /100% tests passed, 0 tests failed out of 4\b/);
  assert.match(out, /core_test \.+ +Passed/);
  assert.match(out, /decoder_test \.+ +Passed/);
  assert.match(out, /pool_test \.+ +Passed/);
  assert.match(out, /kernels_test_native \.+ +Passed/);
});

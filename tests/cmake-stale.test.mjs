// `npm pack` in a moved or copied clone: scripts/build.sh first runs scripts/cmake-stale.sh, which
// clears a build folder configured for another source folder so that CMake configures it afresh.
// Checked with a real CMake project moved after its first configure: without the script CMake
// refuses the folder; after it, the same configure succeeds; a folder configured in place is kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = path.join(ROOT, 'scripts', 'cmake-stale.sh');
const run = (cmd, args, cwd) => spawnSync(cmd, args, { cwd, encoding: 'utf8' });

test('a build folder configured elsewhere is configured afresh; one configured here is kept', () => {
  const tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'mha-cmake-')));
  try {
    const first = path.join(tmp, 'first');
    mkdirSync(first);
    writeFileSync(path.join(first, 'CMakeLists.txt'), 'cmake_minimum_required(VERSION 3.16)\nproject(moved NONE)\n');
    assert.equal(run('cmake', ['-S', '.', '-B', 'build-wasm'], first).status, 0);
    writeFileSync(path.join(first, 'build-wasm', 'kept.o'), 'an object file');

    // configured in place: nothing to do
    const same = run('bash', [SCRIPT, first, path.join(first, 'build-wasm')], first);
    assert.equal(same.status, 0, same.stderr);
    assert.equal(same.stderr, '');
    assert.ok(existsSync(path.join(first, 'build-wasm', 'CMakeCache.txt')));

    // the clone moved: CMake refuses the folder as it is
    const moved = path.join(tmp, 'moved');
    renameSync(first, moved);
    const refused = run('cmake', ['-S', '.', '-B', 'build-wasm'], moved);
    assert.notEqual(refused.status, 0, 'CMake accepts a cache made for another folder: the check below proves nothing');
    assert.match(refused.stderr, /is different|does not match/);

    const r = run('bash', [SCRIPT, moved, 'build-wasm'], moved);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), `build: build-wasm was configured for ${first}; configuring it afresh for ${moved}`);
    assert.ok(!existsSync(path.join(moved, 'build-wasm', 'CMakeCache.txt')));
    assert.ok(!existsSync(path.join(moved, 'build-wasm', 'CMakeFiles')));
    assert.equal(readFileSync(path.join(moved, 'build-wasm', 'kept.o'), 'utf8'), 'an object file', 'the rest stays');
    const again = run('cmake', ['-S', '.', '-B', 'build-wasm'], moved);
    assert.equal(again.status, 0, again.stderr);
    assert.match(readFileSync(path.join(moved, 'build-wasm', 'CMakeCache.txt'), 'utf8'), new RegExp(`CMAKE_HOME_DIRECTORY:INTERNAL=${moved}\n`));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('scripts/build.sh clears stale caches before each configure', () => {
  const sh = readFileSync(path.join(ROOT, 'scripts', 'build.sh'), 'utf8');
  assert.match(sh, /bash scripts\/cmake-stale\.sh \. build-wasm[^\n]*\ncmake --preset wasm/);
  assert.match(sh, /bash scripts\/cmake-stale\.sh \. build-native\n\s*cmake --preset native/);
});

// Replays the checked-in fuzz corpus (cpp/fuzz/corpus/) through the C++ core under AddressSanitizer
// and UBSan: `scripts/fuzz.sh --replay` builds build-fuzz/replay_mha with clang and runs
// every corpus file once — deterministic, no mutation. Needs clang++ and the sanitizer runtimes
// (Debian: clang-14, libclang-rt-14-dev) and Eigen (libeigen3-dev).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('the fuzz corpus replays under ASan + UBSan without a report or contract violation', () => {
  const corpus = fs.readdirSync(path.join(root, 'cpp/fuzz/corpus')).filter((f) => !f.startsWith('.'));
  assert.ok(corpus.length > 0, 'cpp/fuzz/corpus/ is empty');
  const r = spawnSync('bash', ['scripts/fuzz.sh', '--replay'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const log = `${r.stdout}\n${r.stderr}`;
  assert.notEqual(r.status, 3, `clang++ or Eigen missing (Debian: apt-get install clang-14 libclang-rt-14-dev libeigen3-dev):\n${log}`);
  assert.equal(r.status, 0, `scripts/fuzz.sh --replay failed (exit ${r.status}, signal ${r.signal}):\n${log.slice(-8000)}`);
  assert.doesNotMatch(log, /ERROR: AddressSanitizer|runtime error:|contract violation/);
  const m = /replayed (\d+) inputs/.exec(r.stdout);
  assert.ok(m, `no "replayed N inputs" line:\n${log.slice(-4000)}`);
  assert.equal(Number(m[1]), corpus.length, 'every corpus file ran');
  assert.ok(Number(m[1]) > 0);
});

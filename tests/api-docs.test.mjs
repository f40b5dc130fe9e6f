// The API reference is generated from web/lib/src/index.d.ts (`npm run docs`, scripts/api-docs.mjs):
// its docstrings must hold no broken {@link}, no undocumented export, no export-less type in the API,
// no unknown or malformed tag. The check writes nothing; a broken copy of the types shows it can fail.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { extract } from '../scripts/api-docs.mjs';

const TYPES = new URL('../web/lib/src/index.d.ts', import.meta.url);

test('index.d.ts: every docstring of the API reference parses and every link resolves', { timeout: 60_000 }, () => {
  const { problems, messages } = extract();
  assert.deepEqual(problems, []);
  assert.ok(messages > 0, 'API Extractor reported nothing: did it run?');
});

test('the check fails (beside whatever the real file has) on a broken link, an undocumented export and an unknown tag', { timeout: 60_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-api-check-'));
  const file = path.join(dir, 'index.d.ts');
  fs.cpSync(new URL('../web/lib/src/types/', import.meta.url), path.join(dir, 'types'), { recursive: true });   // index.d.ts re-exports them
  fs.writeFileSync(file, `${fs.readFileSync(TYPES, 'utf8')}
/** Returns a {@link NoSuchExport}. @returnz nothing */
export declare function brokenDoc(): void;
export declare function noDoc(): void;
`);
  try {
    const before = new Set(extract().problems.map((p) => p.replace(/^\S*index\.d\.ts:/, '')));
    const problems = extract({ entry: file }).problems.filter((p) => !before.has(p.replace(/^\S*index\.d\.ts:/, '')));
    const ids = problems.map((p) => /\((\S+)\)/.exec(p)[1]).sort();
    assert.deepEqual(ids, ['ae-unresolved-link', 'tsdoc-undefined-tag', 'undocumented'], problems.join('\n'));
    assert.ok(problems.includes('(undocumented) noDoc'), problems.join('\n'));
    assert.ok(problems.filter((p) => !p.startsWith('(undocumented)')).every((p) => p.includes('index.d.ts:')), 'each problem names its line');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

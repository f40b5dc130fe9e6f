// The elements' numeric attributes as scripts see them: a number written as JavaScript writes it is
// a number at runtime (`el.heads + 1` is 5), anything else stays the string written (for the
// attribute contract's message), and the public types say `number | string`; the package's
// component types (web/lib/types/components/, written by scripts/build-package.mjs) show no internal
// member (a name starting with `_`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawAttr } from '../web/lib/components/base/attr-check.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TYPES = path.join(ROOT, 'web', 'lib', 'types', 'components');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');

test('numeric attributes: numbers written as JavaScript writes them are numbers, anything else is kept as written', () => {
  for (const [s, v] of [['4', 4], ['0.7', 0.7], ['-2', -2], ['0', 0], ['1000000', 1e6]]) assert.equal(rawAttr.fromAttribute(s), v, s);
  for (const s of ['abc', '04', '1e3', ' 4', '4 ', '', 'NaN', 'Infinity', '0x10', '+4', '2.50']) assert.equal(rawAttr.fromAttribute(s), s, JSON.stringify(s));
  assert.equal(rawAttr.fromAttribute(null), null);
  assert.equal(rawAttr.toAttribute(4), '4');
  assert.equal(rawAttr.toAttribute('abc'), 'abc');
  assert.equal(rawAttr.toAttribute(null), null);
});

test('component types: no internal member in any class of the public declarations', () => {
  assert.ok(existsSync(path.join(TYPES, 'index.d.ts')), 'run npm run build (scripts/build-package.mjs) first');
  const files = readdirSync(TYPES, { recursive: true }).filter((f) => f.endsWith('.d.ts'));
  assert.ok(files.length >= 20, `${files.length} declaration files`);
  const found = [];
  for (const f of files) {
    readFileSync(path.join(TYPES, f), 'utf8').split('\n').forEach((line, i) => {
      if (/^\s+(?:(?:static|readonly|protected|private|get|set) )*_[\w$]*\s*[(:?<;!]/.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});

test('component types: numeric attribute properties are number | string; internals and a plain number are refused (tsc --strict)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mha-ctypes-'));
  try {
    const types = TYPES.split(path.sep).join('/');
    const check = (body) => {
      writeFileSync(path.join(dir, 'check.ts'), `import type { MhaWidget, MhaPassport } from '${types}/index.js';\n` +
        `import type { MhaStepper } from '${types}/lesson-elements.js';\n` +
        'declare const w: MhaWidget; declare const s: MhaStepper; declare const p: MhaPassport;\n' + body + '\nexport {};\n');
      const r = spawnSync(TSC, ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext',
        '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', path.join(dir, 'check.ts')], { encoding: 'utf8' });
      return `${r.stdout}${r.stderr}`.trim();
    };
    assert.equal(check('const h: number | string = w.heads; const t: number | string = s.step; const k: number | string | undefined = p.kvHeads;\n' +
      'w.heads = 4; w.heads = "4"; void h; void t; void k;'), '');
    assert.match(check('const h: number = w.heads; void h;'), /error TS2322: Type 'string \| number' is not assignable to type 'number'/);
    for (const member of ['_c', '_gen', '_attrs', '_layerTask']) {
      assert.match(check(`void w.${member};`), new RegExp(`error TS2339: Property '${member}' does not exist on type 'MhaWidget'`), member);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// web/lib/src/index.d.ts is written by hand (its types are more precise than JSDoc can say); this test
// keeps it true to the code: tsc emits declarations from the JSDoc of web/lib/src/*.js, and a type-level
// comparison requires the same exports, the same public members of every class (MHA, Layer, KVCache,
// Tensor, CharModel, MHAError), and for each the same kind (function, class, number, string, …) and
// the same number of parameters (required and optional). A member the JSDoc types as `any` is compared
// by name only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.join(ROOT, 'node_modules', '.bin', 'tsc');
const TS_FLAGS = ['--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext'];

const HEADER = (hand, gen) => `
import * as Hand from '${hand}';
import * as Gen from '${gen}';
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Kind<T> = 0 extends 1 & T ? 'any'
  : T extends (...a: infer P) => unknown ? ['function', P['length']]
  : T extends { prototype: unknown } ? 'class'
  : T extends number ? 'number' : T extends string ? 'string' : T extends boolean ? 'boolean' : 'object';
type Public<K> = K extends \`_\${string}\` ? never : K;
type Missing<A, B> = Exclude<Public<keyof A>, Public<keyof B>>;
type Differ<A, B> = { [K in Public<keyof A> & Public<keyof B>]:
  'any' extends Kind<A[K]> | Kind<B[K]> ? never : Same<Kind<A[K]>, Kind<B[K]>> extends true ? never : K }[Public<keyof A> & Public<keyof B>];
`;

/** Three checks per pair: members only in the .d.ts, only in the JSDoc, and members that differ. */
const compare = (label, hand, gen) => `
const ${label}_onlyInIndexDts: never = null as unknown as Missing<${hand}, ${gen}>;
const ${label}_onlyInJsdoc: never = null as unknown as Missing<${gen}, ${hand}>;
const ${label}_kindOrArityDiffers: never = null as unknown as Differ<${hand}, ${gen}>;
`;

const PAIRS = [
  ['exports', 'typeof Hand', 'typeof Gen'],
  ['MHA', 'Hand.MHA', 'Awaited<ReturnType<typeof Gen.createMHA>>'],
  ['Layer', 'Hand.Layer', 'InstanceType<typeof Gen.Layer>'],
  ['KVCache', 'Hand.KVCache', 'InstanceType<typeof Gen.KVCache>'],
  ['Tensor', 'Hand.Tensor', 'InstanceType<typeof Gen.Tensor>'],
  ['CharModel', 'Hand.CharModel', 'InstanceType<typeof Gen.CharModel>'],
  ['MHAError', 'Hand.MHAError', 'InstanceType<typeof Gen.MHAError>'],
];

let tmp;
function setup() {
  if (tmp) return tmp;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'mha-types-'));
  const gen = spawnSync(TSC, ['--allowJs', '--declaration', '--emitDeclarationOnly', ...TS_FLAGS,
    '--outDir', path.join(tmp, 'gen'), path.join(ROOT, 'web/lib/src/index.js')], { encoding: 'utf8' });
  assert.equal(gen.status, 0, `tsc could not emit declarations from the JSDoc:\n${gen.stdout}${gen.stderr}`);
  return tmp;
}

/** Runs tsc --noEmit --strict on a check file; returns its diagnostics ('' when it type-checks). */
function check(name, body) {
  const dir = setup();
  const file = path.join(dir, name);
  writeFileSync(file, HEADER(path.join(ROOT, 'web/lib/src/index.js'), path.join(dir, 'gen', 'src', 'index.js')) + body);
  const r = spawnSync(TSC, ['--noEmit', '--strict', ...TS_FLAGS, file], { encoding: 'utf8' });
  return r.status === 0 ? '' : `${r.stdout}${r.stderr}`;
}

test.after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

test('index.d.ts and the JSDoc of web/lib/src agree: exports, public members, kinds, parameter counts', () => {
  const out = check('check.ts', PAIRS.map(([label, hand, gen]) => compare(label, hand, gen)).join(''));
  // e.g. "check.ts(40,7): error TS2322: Type '"fromTorch"' is not assignable to type 'never'." names the
  // member; the variable on that line names the class and the direction
  assert.equal(out, '', `index.d.ts and the JSDoc disagree:\n${out}`);
});

test('the comparison catches a missing export and a changed parameter count (the check can fail)', () => {
  const missing = check('canary-missing.ts', compare('canary', 'typeof Hand', "Omit<typeof Gen, 'createMHA'>"));
  assert.match(missing, /"createMHA"/);
  const arity = check('canary-arity.ts', compare('canary', 'typeof Hand',
    "Omit<typeof Gen, 'headType'> & { headType: (a: unknown, b: unknown) => string }"));
  assert.match(arity, /"headType"/);
});

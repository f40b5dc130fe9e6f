// scripts/mutation-table.mjs, the rows of docs/testing.md's mutation table, run as the docs say
// (`node scripts/mutation-table.mjs report.json`) on a small report in Stryker's JSON format written
// here: every status counted, the scores worked out by hand below, the survivors' order and quoting,
// the run's date from the file's time, and a clear message (exit code 1) on a malformed report.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mutationRows } from '../scripts/mutation-table.mjs';

const SCRIPT = fileURLToPath(new URL('../scripts/mutation-table.mjs', import.meta.url));

const at = (line, column) => ({ start: { line, column }, end: { line, column: column + 1 } });
const mutant = (status, line, column, mutatorName = 'ConditionalExpression', replacement = 'true') =>
  ({ id: `${line}:${column}`, status, mutatorName, replacement, location: at(line, column) });

// formats/a.js: 3 killed + 1 timeout detected; 2 survived + 1 unreached undetected; one of each
// status outside the score. Valid = 4 + 3 = 7, score = 4 / 7 = 57.14 % → "57.1 %".
// logic/b.js: 7 killed, 1 survived → 7 / 8 = 87.5 %. engine/c.js: 2 killed → 100 % (".0" dropped).
// d.js: only a mutant that does not compile → no valid mutant, score "—".
const REPORT = {
  schemaVersion: '2',
  thresholds: { high: 80, low: 60 },
  config: { tap: { testFiles: ['tests/hf-untrusted.test.mjs', 'tests/golden-hf.test.mjs'] } },
  files: {
    'web/lib/src/formats/a.js': {
      language: 'javascript', source: '',
      mutants: [
        mutant('Killed', 1, 1), mutant('Killed', 2, 1), mutant('Timeout', 3, 1),
        // survivors listed out of order: the row sorts them by line, then column
        mutant('NoCoverage', 40, 7, 'StringLiteral', `"${'abcdefghij'.repeat(5)}"`),
        mutant('Survived', 12, 30, 'EqualityOperator', 'a <= b'),
        mutant('Survived', 12, 4, 'BlockStatement', '{\n    return  `x` | y;\n  }'),
        mutant('Killed', 5, 1),
        mutant('CompileError', 6, 1), mutant('RuntimeError', 7, 1), mutant('Ignored', 8, 1), mutant('Pending', 9, 1),
      ],
    },
    'web/lib/components/logic/b.js': {
      language: 'javascript', source: '',
      mutants: [...Array.from({ length: 7 }, (_, i) => mutant('Killed', i + 1, 3)),
        { id: 'x', status: 'Survived', mutatorName: 'BooleanLiteral', location: at(99, 12) }],
    },
    'web/lib/src/engine/c.js': { language: 'javascript', source: '', mutants: [mutant('Killed', 1, 1), mutant('Timeout', 2, 1)] },
    'web/lib/src/d.js': { language: 'javascript', source: '', mutants: [mutant('CompileError', 1, 1)] },
  },
};

const HEAD = [
  '| file | mutants | score | suites | run | surviving mutants (line:column, mutator, replacement) |',
  '| --- | --- | --- | --- | --- | --- |',
];
const SUITES = '`hf-untrusted`, `golden-hf`';
// sorted by the repository's path: web/lib/components/ before web/lib/src/
const ROWS = [
  `| \`logic/b.js\` | 8 | 87.5 % | ${SUITES} | 2026-11-29 | 99:12 BooleanLiteral |`,
  `| \`d.js\` | 0 | — | ${SUITES} | 2026-11-29 | none |`,
  `| \`engine/c.js\` | 2 | 100 % | ${SUITES} | 2026-11-29 | none |`,
  // the replacement's whitespace runs become one space, a backtick a quote, a pipe is escaped, and
  // it is cut at 40 characters
  `| \`formats/a.js\` | 7 | 57.1 % | ${SUITES} | 2026-11-29 | 12:4 BlockStatement \`{ return 'x' \\| y; }\`; 12:30 EqualityOperator \`a <= b\`; 40:7 StringLiteral \`"abcdefghijabcdefghijabcdefghijabcdefghi\` (no suite reaches it) |`,
];

/** Writes `content` to a temporary report dated `date` and runs the script on it. */
function runScript(content, date = '2026-11-29T12:00:00Z') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-mutation-table-'));
  const file = path.join(dir, 'mutation.json');
  try {
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    fs.utimesSync(file, new Date(date), new Date(date));
    const r = spawnSync(process.execPath, [SCRIPT, file], { encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, file };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the script prints the table head and one row per file, sorted, with the scores worked out by hand', () => {
  const { status, stdout, stderr } = runScript(REPORT);
  assert.equal(stderr, '');
  assert.equal(status, 0);
  assert.deepEqual(stdout.trimEnd().split('\n'), [...HEAD, ...ROWS]);
});

test('the run\'s date is the report file\'s modification day (UTC)', () => {
  const { stdout } = runScript(REPORT, '2025-03-07T23:59:00Z');
  assert.match(stdout.split('\n')[3], /^\| `d\.js` \| 0 \| — \| .* \| 2025-03-07 \| none \|$/);
});

test('suites: the default list named when over 12, nothing when the report has no config', () => {
  const many = { ...REPORT, config: { tap: { testFiles: Array.from({ length: 13 }, (_, i) => `tests/s${i}.test.mjs`) } } };
  assert.equal(mutationRows(many, '2026-01-02')[2], '| `engine/c.js` | 2 | 100 % | the default list (stryker.config.mjs) | 2026-01-02 | none |');
  const twelve = { ...REPORT, config: { tap: { testFiles: Array.from({ length: 12 }, (_, i) => `tests/s${i}.test.mjs`) } } };
  assert.ok(mutationRows(twelve, '2026-01-02')[2].includes('| `s0`, `s1`, `s2`, `s3`, `s4`, `s5`, `s6`, `s7`, `s8`, `s9`, `s10`, `s11` |'));
  const { config, ...bare } = REPORT;
  assert.equal(mutationRows(bare, '2026-01-02')[2], '| `engine/c.js` | 2 | 100 % |  | 2026-01-02 | none |');
});

test('a malformed report: exit code 1 and a message naming what was expected and what was found', () => {
  const notJson = runScript('{"files": ');
  assert.equal(notJson.status, 1);
  assert.equal(notJson.stdout, '');
  assert.match(notJson.stderr, /^mutation report \S+mutation\.json: not readable as JSON \(/);

  const noFiles = runScript({ schemaVersion: '2', mutants: [] });
  assert.equal(noFiles.status, 1);
  assert.equal(noFiles.stdout, '');
  assert.match(noFiles.stderr, /mutation\.json: mutation report: expected a "files" object, got undefined\n$/);

  const badStatus = structuredClone(REPORT);
  badStatus.files['web/lib/src/engine/c.js'].mutants[1].status = 'Kiled';
  const r = runScript(badStatus);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /: mutation report: web\/lib\/src\/engine\/c\.js: mutant 1: expected a status among Killed, Timeout, Survived, NoCoverage, CompileError, RuntimeError, Ignored, Pending, got "Kiled"\n$/);

  const noLine = structuredClone(REPORT);
  delete noLine.files['web/lib/src/formats/a.js'].mutants[4].location.start.line;
  assert.throws(() => mutationRows(noLine, '2026-01-02'),
    { message: 'mutation report: web/lib/src/formats/a.js: mutant 4: expected "location.start" with integer line and column, got {"column":30}' });
  assert.throws(() => mutationRows({ files: { 'x.js': {} } }, '2026-01-02'),
    { message: 'mutation report: x.js: expected a "mutants" array, got undefined' });
  assert.throws(() => mutationRows([], '2026-01-02'), { message: 'mutation report: expected an object (Stryker\'s JSON report), got []' });
  const noMutator = structuredClone(REPORT);
  delete noMutator.files['web/lib/src/d.js'].mutants[0].mutatorName;
  assert.throws(() => mutationRows(noMutator, '2026-01-02'),
    { message: 'mutation report: web/lib/src/d.js: mutant 0: expected a string "mutatorName", got undefined' });
});

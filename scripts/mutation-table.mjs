// The rows of docs/testing.md's mutation table, from the report of the last `npm run mutation`
// (reports/mutation/mutation.json, Stryker's JSON report): per mutated file its valid mutants, its
// score, the suites the run used, the date of the run, and each surviving mutant as line, mutator and
// replacement (for the reader to judge: equivalent, or a missing test).
//
//   node scripts/mutation-table.mjs [report.json]
//
// A file that is not JSON, or a report not shaped as Stryker writes it (no `files`, a mutant without
// a known status, a mutator name or a start line and column), prints what is wrong and where, and
// exits with code 1. tests/mutation-table.test.mjs runs it on a hand-written report.
//
// Score = detected (killed or timed out) over valid mutants (detected, survived, or reached by no
// suite); mutants that do not compile or that break the suites' start are not counted, as Stryker
// counts them. Paths are written as the table writes them: relative to web/lib/src/, or to
// web/lib/components/ for the elements' folders.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
// the statuses Stryker's JSON report (schema 2) gives a mutant; the others are outside the score
const STATUSES = new Set([...DETECTED, ...UNDETECTED, 'CompileError', 'RuntimeError', 'Ignored', 'Pending']);

/** A repository path as the table names it. */
export function tablePath(file) {
  return file.replace(/^web\/lib\/src\//, '').replace(/^web\/lib\/components\//, '');
}

/** A suite's short name: tests/heads-text.test.mjs → heads-text. */
const suiteName = (f) => f.replace(/^tests\//, '').replace(/\.test\.mjs$/, '');

/**
 * Checks that `report` has the shape the rows read: a `files` object whose every entry has a
 * `mutants` array, each mutant a known status, a mutator name and a start line and column.
 * @param {unknown} report a parsed Stryker JSON report
 * @throws {Error} naming the file, the mutant's index, what was expected and what was found
 */
export function checkReport(report) {
  const shown = (v) => (v === undefined ? 'undefined' : JSON.stringify(v)?.slice(0, 60));
  if (typeof report !== 'object' || report === null || Array.isArray(report)) {
    throw new Error(`mutation report: expected an object (Stryker's JSON report), got ${shown(report)}`);
  }
  if (typeof report.files !== 'object' || report.files === null || Array.isArray(report.files)) {
    throw new Error(`mutation report: expected a "files" object, got ${shown(report.files)}`);
  }
  for (const [file, entry] of Object.entries(report.files)) {
    if (!Array.isArray(entry?.mutants)) throw new Error(`mutation report: ${file}: expected a "mutants" array, got ${shown(entry?.mutants)}`);
    entry.mutants.forEach((m, i) => {
      const where = `mutation report: ${file}: mutant ${i}`;
      if (!STATUSES.has(m?.status)) throw new Error(`${where}: expected a status among ${[...STATUSES].join(', ')}, got ${shown(m?.status)}`);
      if (typeof m.mutatorName !== 'string') throw new Error(`${where}: expected a string "mutatorName", got ${shown(m.mutatorName)}`);
      const start = m.location?.start;
      if (!Number.isInteger(start?.line) || !Number.isInteger(start?.column)) {
        throw new Error(`${where}: expected "location.start" with integer line and column, got ${shown(start)}`);
      }
    });
  }
}

/**
 * The table's rows for one report.
 * @param {{files: Record<string, {mutants: {status: string, mutatorName: string, replacement?: string,
 *   location: {start: {line: number, column: number}}}[]}>, config?: {tap?: {testFiles?: string[]}}}} report
 * @param {string} date the run's date, YYYY-MM-DD
 * @returns {string[]} Markdown table rows
 * @throws {Error} from {@link checkReport} when the report is not shaped as Stryker writes it
 */
export function mutationRows(report, date) {
  checkReport(report);
  const suites = (report.config?.tap?.testFiles ?? []).map(suiteName);
  const suiteText = suites.length > 12 ? 'the default list (stryker.config.mjs)' : suites.map((s) => `\`${s}\``).join(', ');
  return Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b)).map(([file, { mutants }]) => {
    const detected = mutants.filter((m) => DETECTED.has(m.status)).length;
    const valid = detected + mutants.filter((m) => UNDETECTED.has(m.status)).length;
    const score = valid ? `${(100 * detected / valid).toFixed(1).replace(/\.0$/, '')} %` : '—';
    const left = mutants.filter((m) => UNDETECTED.has(m.status))
      .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)
      .map((m) => `${m.location.start.line}:${m.location.start.column} ${m.mutatorName}${m.replacement ? ` \`${m.replacement.replace(/\s+/g, ' ').replace(/`/g, "'").replace(/\|/g, '\\|').slice(0, 40)}\`` : ''}${m.status === 'NoCoverage' ? ' (no suite reaches it)' : ''}`);
    return `| \`${tablePath(file)}\` | ${valid} | ${score} | ${suiteText} | ${date} | ${left.join('; ') || 'none'} |`;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const file = process.argv[2] ?? path.join(ROOT, 'reports/mutation/mutation.json');
  let report, rows;
  try {
    report = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    console.error(`mutation report ${file}: not readable as JSON (${err.message})`);
    process.exit(1);
  }
  const date = fs.statSync(file).mtime.toISOString().slice(0, 10);
  try {
    rows = mutationRows(report, date);
  } catch (err) {
    console.error(`${file}: ${err.message}`);
    process.exit(1);
  }
  console.log('| file | mutants | score | suites | run | surviving mutants (line:column, mutator, replacement) |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
}

// The rows of docs/testing.md's mutation table, from the report of the last `npm run mutation`
// (reports/mutation/mutation.json, Stryker's JSON report): per mutated file its valid mutants, its
// score, the suites the run used, the date of the run, and each surviving mutant as line, mutator and
// replacement (for the reader to judge: equivalent, or a missing test).
//
//   node scripts/mutation-table.mjs [report.json]
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

/** A repository path as the table names it. */
export function tablePath(file) {
  return file.replace(/^web\/lib\/src\//, '').replace(/^web\/lib\/components\//, '');
}

/** A suite's short name: tests/heads-text.test.mjs → heads-text. */
const suiteName = (f) => f.replace(/^tests\//, '').replace(/\.test\.mjs$/, '');

/**
 * The table's rows for one report.
 * @param {{files: Record<string, {mutants: {status: string, mutatorName: string, replacement?: string,
 *   location: {start: {line: number, column: number}}}[]}>, config?: {tap?: {testFiles?: string[]}}}} report
 * @param {string} date the run's date, YYYY-MM-DD
 * @returns {string[]} Markdown table rows
 */
export function mutationRows(report, date) {
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
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  const date = fs.statSync(file).mtime.toISOString().slice(0, 10);
  console.log('| file | mutants | score | suites | run | surviving mutants (line:column, mutator, replacement) |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const row of mutationRows(report, date)) console.log(row);
}

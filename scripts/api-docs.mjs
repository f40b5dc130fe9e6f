// The API reference, generated from the package's types (web/lib/src/index.d.ts) by API Extractor
// and API Documenter (Microsoft's TSDoc tools):
//
//   node scripts/api-docs.mjs           writes docs/api/ (Markdown, one page per declaration; gitignored):
//                                       mha-wasm, and mha-wasm/components (as "mha-wasm-components") once built
//   node scripts/api-docs.mjs --check   reads the types and their docstrings, writes nothing, and exits 1
//                                       on any problem (tests/api-docs.test.mjs runs the same check)
//
// `npm run docs` is the first form. Every export and every method needs a docstring (`undocumented`);
// TSDoc's complaints about the JSDoc style the file is written in are not problems (`isProblem`).
//
// Why API Extractor and not TypeDoc: TypeDoc 0.28 needs the compiler API of TypeScript 5.0–6.0 as a
// peer dependency, and this repository builds its types with TypeScript 7 (the native compiler,
// which has no JS API), so npm refuses to install both; API Extractor brings its own TypeScript.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

/**
 * TSDoc messages that come from the JSDoc style index.d.ts is written in, not from a broken docstring:
 * `@param name text` (TSDoc wants `name - text`), braces and angle brackets in prose (`{data, shape}`,
 * `@throws {MHAError}`, `[B?, T, d] → …`, `<mha-heatmap>`).
 */
const JSDOC_STYLE = new Set(['tsdoc-param-tag-missing-hyphen', 'tsdoc-escape-right-brace',
  'tsdoc-escape-greater-than', 'tsdoc-malformed-html-name']);

/**
 * Whether an API Extractor message is a problem of the reference: a type error, a declaration used
 * by the API but not exported (`ae-forgotten-export`) or without a docstring (`ae-undocumented`), a
 * `{@link}` to nothing (one to an overloaded member is ambiguous to TSDoc and resolves to the first
 * overload: accepted), an unknown or malformed tag. `{` not followed by `@` (prose such as
 * `{data, shape}` or `@throws {MHAError}`) is JSDoc style, `{@` that does not parse is a problem.
 * @param {{messageId: string, text: string, sourceFilePath?: string, sourceFileLine?: number,
 *   sourceFileColumn?: number, category: string}} m
 * @returns {boolean}
 */
export function isProblem(m) {
  if (m.category === 'console') return false;   // progress lines ("Writing: …")
  if (m.messageId === 'ae-missing-release-tag') return false;
  if (JSDOC_STYLE.has(m.messageId)) return false;
  if (m.messageId === 'ae-unresolved-link') return !/ambiguous/.test(m.text);
  if (m.messageId === 'tsdoc-malformed-inline-tag' && m.sourceFilePath && m.sourceFileLine) {
    const line = fs.readFileSync(m.sourceFilePath, 'utf8').split('\n')[m.sourceFileLine - 1] ?? '';
    return line.slice(m.sourceFileColumn - 1, m.sourceFileColumn + 1) === '{@';
  }
  return true;
}

/**
 * Declarations of a doc model (API Extractor's .api.json) that have no docstring: every export, and
 * every method, function, constructor and call signature inside one (properties may go without:
 * their name and type say what they hold). Of an overloaded member only the first overload needs one.
 * @param {object} model the parsed .api.json
 * @returns {string[]} their names, `Class.method`
 */
export function undocumented(model) {
  const found = [];
  const walk = (node, prefix, depth) => {
    const name = node.kind === 'Package' || node.kind === 'EntryPoint' ? '' : `${prefix}${prefix ? '.' : ''}${node.name ?? ''}`;
    const callable = /Method|Function|Constructor|CallSignature/.test(node.kind);
    if (depth >= 2 && (depth === 2 || callable) && !(node.docComment ?? '').trim() && (node.overloadIndex ?? 1) === 1) {
      found.push(name);
    }
    for (const m of node.members ?? []) walk(m, name, depth + 1);
  };
  walk(model, '', 0);
  return found;
}

/**
 * Runs API Extractor on an entry .d.ts. Returns the problems (see {@link isProblem} and
 * {@link undocumented}) as lines `file:line:col (id) text` or `(undocumented) name`; with
 * `apiJsonFile`, the doc model is kept there (else written to a temporary file and removed).
 * @param {{entry?: string, apiJsonFile?: string, packageName?: string}} [options] entry: path of the
 *   .d.ts, relative to the repository or absolute (default web/lib/src/index.d.ts); packageName: the
 *   name the reference gives it (default package.json's)
 * @returns {{problems: string[], messages: number}}
 */
export function extract({ entry = 'web/lib/src/index.d.ts', apiJsonFile, packageName } = {}) {
  const { Extractor, ExtractorConfig } = require('@microsoft/api-extractor');
  const tmp = apiJsonFile ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'mha-api-model-'));
  const modelFile = apiJsonFile ?? path.join(tmp, 'model.api.json');
  const configObject = {
    projectFolder: ROOT,
    mainEntryPointFilePath: path.resolve(ROOT, entry),
    compiler: {
      overrideTsconfig: {
        compilerOptions: { target: 'es2022', module: 'es2022', moduleResolution: 'bundler', lib: ['es2022', 'dom'],
          strict: true, skipLibCheck: true, types: [] },
        files: [path.resolve(ROOT, entry)],
      },
    },
    apiReport: { enabled: false },
    docModel: { enabled: true, apiJsonFilePath: modelFile },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: 'warning' } },
      extractorMessageReporting: { default: { logLevel: 'warning' } },
      tsdocMessageReporting: { default: { logLevel: 'warning' } },
    },
  };
  const packageJsonFullPath = path.join(ROOT, 'package.json');
  const packageJson = packageName ? { ...JSON.parse(fs.readFileSync(packageJsonFullPath, 'utf8')), name: packageName } : undefined;
  const config = ExtractorConfig.prepare({ configObject, configObjectFullPath: undefined, packageJson, packageJsonFullPath });
  const problems = [];
  let messages = 0;
  try {
    Extractor.invoke(config, {
      localBuild: true,
      messageCallback(m) {
        messages++;
        if (isProblem(m)) {
          problems.push(`${path.relative(ROOT, m.sourceFilePath ?? '')}:${m.sourceFileLine}:${m.sourceFileColumn} (${m.messageId}) ${m.text}`);
        }
        m.handled = true;   // reported here, not printed by API Extractor
      },
    });
    for (const name of undocumented(JSON.parse(fs.readFileSync(modelFile, 'utf8')))) problems.push(`(undocumented) ${name}`);
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
  return { problems, messages };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const work = check ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'mha-api-'));
  const { problems } = extract({ apiJsonFile: work ? path.join(work, 'mha-wasm.api.json') : undefined });
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`${problems.length} problem(s) in the API's docstrings`);
    process.exit(1);
  }
  if (!check) {
    // The elements' types (mha-wasm/components), emitted by the build from their JSDoc, as a second
    // package of the reference; their docstrings are not checked here (custom-elements.json is
    // their contract, tests/package checks it).
    const components = path.join(ROOT, 'web', 'lib', 'types', 'components', 'index.d.ts');
    if (fs.existsSync(components)) {
      extract({ entry: components, apiJsonFile: path.join(work, 'mha-wasm-components.api.json'), packageName: 'mha-wasm-components' });
    } else {
      console.log('no web/lib/types/components/ (npm run build makes it): the reference covers mha-wasm only');
    }
    const out = path.join(ROOT, 'docs', 'api');
    fs.rmSync(out, { recursive: true, force: true });
    execFileSync(path.join(ROOT, 'node_modules', '.bin', 'api-documenter'), ['markdown', '-i', work, '-o', out], { stdio: 'ignore' });
    fs.rmSync(work, { recursive: true, force: true });
    console.log(`API reference: ${path.relative(ROOT, out)}/index.md (${fs.readdirSync(out).length} pages)`);
  } else {
    console.log('API docstrings: no problems');
  }
}

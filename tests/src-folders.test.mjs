// The folders of web/lib/src/ import one way (web/lib/src/README.md): engine/ imports only engine/;
// formats/ imports formats/ and, from engine/, errors.js and tensor.js; lm/ imports lm/, engine/ and
// formats/; no folder imports an entry (index.js, single.js, loader.js, version.js). And the one map
// of the repository's folders (docs/architecture.md, "What each folder holds") names only paths that
// exist (or that a build writes, as .gitignore lists them), and every folder that has a README.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { relativeImports } from './helpers/imports.mjs';

const SRC = fileURLToPath(new URL('../web/lib/src/', import.meta.url));

/** Whether `from` (a path under web/lib/src/) may import `to`; the rule's reason when it may not. */
export function importRule(from, to) {
  const [folder] = from.split('/');
  const target = to.includes('/') ? to.split('/')[0] : 'entry';
  if (to.startsWith('..')) return `${from} imports ${to}, outside web/lib/src/`;
  if (target === 'entry') return `${from} imports the entry ${to}`;
  if (folder === target) return null;
  if (folder === 'engine') return `${from} imports ${to}: engine/ imports only engine/`;
  if (folder === 'formats' && !['engine/errors.js', 'engine/tensor.js'].includes(to)) {
    return `${from} imports ${to}: formats/ imports from engine/ only errors.js and tensor.js`;
  }
  if (folder === 'formats') return null;
  if (folder === 'lm' && (target === 'engine' || target === 'formats')) return null;
  return `${from} imports ${to}`;
}

test('web/lib/src/: engine, formats and lm import only what their READMEs allow', () => {
  const problems = [];
  let edges = 0;
  for (const folder of ['engine', 'formats', 'lm']) {
    for (const f of fs.readdirSync(path.join(SRC, folder)).filter((n) => n.endsWith('.js'))) {
      const from = `${folder}/${f}`;
      for (const spec of relativeImports(fs.readFileSync(path.join(SRC, folder, f), 'utf8'))) {
        const to = path.posix.normalize(path.posix.join(folder, spec));
        edges++;
        const why = importRule(from, to);
        if (why) problems.push(why);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(edges > 40, `only ${edges} imports found: is the parser still reading them?`);
});

test('the rule refuses what it should (the check can fail)', () => {
  assert.deepEqual(relativeImports("import { a } from './x.js';\nexport { b } from '../lm/y.js';\nconst z = await import('../formats/z.js');\nimport './side.js';"),
    ['./x.js', '../lm/y.js', '../formats/z.js', './side.js']);
  assert.match(importRule('engine/layer.js', 'lm/decoder.js'), /engine\/ imports only engine/);
  assert.match(importRule('formats/hf.js', 'engine/layer.js'), /only errors\.js and tensor\.js/);
  assert.match(importRule('formats/hf.js', 'lm/model.js'), /formats\/hf\.js imports lm\/model\.js/);
  assert.match(importRule('lm/model.js', 'index.js'), /the entry/);
  assert.equal(importRule('lm/model.js', 'formats/hf.js'), null);
  assert.equal(importRule('formats/hf.js', 'engine/errors.js'), null);
});

/** Modules of web/lib/src/ an entry loads before any dynamic import(): the static closure. */
function staticClosure(entry) {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = fs.readFileSync(path.join(SRC, file), 'utf8');
    for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]/g)) {
      walk(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] ?? m[2])));
    }
  };
  walk(entry);
  return seen;
}

test('the model readers load lazily: no entry imports them statically; lm/model.js reaches them through one import() of formats/index.js', () => {
  const readers = ['formats/index.js', 'formats/sources.js', 'formats/hf.js', 'formats/hf-config.js', 'formats/hf-tokenizer.js', 'formats/llama2c.js'];
  for (const entry of ['index.js', 'single.js', 'worker.js', 'engine-worker.js']) {
    const closure = staticClosure(entry);
    assert.ok(closure.has('lm/model.js') || entry === 'worker.js', `${entry} reaches lm/model.js`);
    assert.deepEqual(readers.filter((r) => closure.has(r)), [], `${entry} imports a reader statically`);
  }
  const dynamic = [];
  for (const folder of ['engine', 'formats', 'lm']) {
    for (const f of fs.readdirSync(path.join(SRC, folder)).filter((n) => n.endsWith('.js'))) {
      const code = fs.readFileSync(path.join(SRC, folder, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');   // not JSDoc's import('…') types
      for (const m of code.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
        const to = path.posix.normalize(path.posix.join(folder, m[1]));
        if (to.startsWith('formats/')) dynamic.push(`${folder}/${f} → ${to}`);
      }
    }
  }
  assert.deepEqual(dynamic, ['lm/model.js → formats/index.js']);
  // the check can fail: index.js's closure holds lm/model.js and formats/charlm.js (MODEL_FORMAT)
  assert.ok(staticClosure('index.js').has('formats/charlm.js'));
});

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The paths docs/architecture.md's folder map names that are neither in the tree nor generated, and
 * the folders with a README.md it does not name.
 * @param {string} doc the page's Markdown
 * @param {(p: string) => boolean} exists whether a repository path (folders end with '/') exists
 * @param {string[]} readmeFolders folders holding a README.md, e.g. 'cpp/src/'
 */
export function folderMapProblems(doc, exists, readmeFolders) {
  const start = doc.indexOf('## What each folder holds');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const named = new Set();
  const missing = [];
  for (const row of rows) {
    const folder = /^\| `([^`]+\/)`/.exec(row)?.[1] ?? '';
    for (const [, p] of row.matchAll(/`([\w.\-/]+)`/g)) {
      if (p.startsWith('.') && !p.startsWith('../')) continue;   // an extension, not a path
      if (!p.endsWith('/') && !/\.[a-z]+$/.test(p)) continue;      // a name, not a path
      const candidates = [path.posix.normalize(folder + p), p];
      const found = candidates.find(exists);
      if (found) named.add(found); else missing.push(`${folder || '(root)'}: ${p}`);
    }
  }
  return { missing, unnamed: readmeFolders.filter((f) => !named.has(f)) };
}

const GITIGNORE = fs.readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n')
  .map((l) => l.trim().replace(/^\//, '')).filter((l) => l && !l.includes('*'));
/** Whether a repository path is a build's output that .gitignore lists (folders end with '/'). */
const generated = (p) => GITIGNORE.some((g) => p === g || p.startsWith(g.endsWith('/') ? g : `${g}/`));
/** Whether a repository path exists, or is a build's output. */
const inTreeOrGenerated = (p) => fs.existsSync(path.join(ROOT, p)) || generated(p);

/** Folders (relative, ending in '/') that hold a README.md, outside dependencies, builds and outputs. */
function readmeFolders(dir = '') {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((d) => {
    const sub = `${dir}${d.name}/`;
    if (!d.isDirectory() || /^(\.|node_modules$|build)/.test(d.name) || generated(sub)) return [];
    return [...(fs.existsSync(path.join(ROOT, sub, 'README.md')) ? [sub] : []), ...readmeFolders(sub)];
  });
}

test('docs/architecture.md: the folder map names only paths that exist, and every folder with a README', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const { missing, unnamed } = folderMapProblems(doc, inTreeOrGenerated, readmeFolders());
  assert.deepEqual(missing, [], 'paths in the map that are not in the tree');
  assert.deepEqual(unnamed, [], 'folders with a README that the map does not name');
});

test('the folder map check fails on a missing path and an unnamed folder', () => {
  const doc = '## What each folder holds\n\n| folder | holds |\n| --- | --- |\n| `a/` | `x.js`, `b/`, `LatestRun`, `npm run docs`, `.safetensors`, `../c.mjs` |\n\n## Next\n';
  const tree = new Set(['a/', 'a/x.js', 'a/b/', 'c.mjs']);
  assert.deepEqual(folderMapProblems(doc, (p) => tree.has(p), ['a/', 'a/b/']), { missing: [], unnamed: [] });
  assert.deepEqual(folderMapProblems(doc, (p) => tree.has(p) && p !== 'a/x.js', ['a/', 'a/b/', 'd/']),
    { missing: ['a/: x.js'], unnamed: ['d/'] });
});

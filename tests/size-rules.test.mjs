// Size rules of the code base: no source file over MAX_FILE_LINES lines and no function over
// MAX_FUNCTION_LINES lines, outside generated code and the SIMD kernels (cpp/src/kernels_simd_*.cpp,
// kept whole so that each kernel family reads in one place).
//
// - Files: every tracked or new (not ignored) source file: JS/MJS/CJS/TS, C++, Python, shell, CSS and
//   HTML, tests included (the rule says "no source file"). Generated files are ignored by git
//   (web/lib/dist, web/site/dist, web/lib/wasm, web/lib/types, the shipped manifest) and so never
//   listed; tests/fixtures and the fuzz corpus hold data, not source.
// - Functions: JS under web/lib/src, web/lib/components, web/site/lesson and scripts, parsed with
//   acorn: declarations, expressions, arrow functions and methods, each from its first to its last
//   line (a nested function counts in its parent too, as ESLint's max-lines-per-function counts).
//   C++ under cpp/include, cpp/src and cpp/bindings: a brace-matching counter over function bodies at
//   namespace and class scope (comments, strings and preprocessor lines removed first), from the
//   first line of the signature to the closing brace; lambdas inside a function count in it. Tests
//   are not held to the function rule: a test is a list of assertions read top to bottom.
//
// Offenders print with their sizes. ALLOWED lists the ones that remain while other work brings them
// under the limits: a listed entry passes while it stays at or under its recorded size, grows → fails,
// and an offender not listed fails at once. When a listed one is fixed, the test asks to remove the
// entry (so the list only shrinks). Run alone: node --test tests/size-rules.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MAX_FILE_LINES = 500;
export const MAX_FUNCTION_LINES = 80;

const SOURCE = /\.(m?js|cjs|ts|cpp|hpp|h|cc|py|sh|css|html)$/;
const EXEMPT = [/^cpp\/src\/kernels_simd_[^/]+\.cpp$/, /^tests\/fixtures\//, /^cpp\/fuzz\/corpus\//, /(^|\/)node_modules\//];
const JS_FUNCTION_DIRS = ['web/lib/src/', 'web/lib/components/', 'web/site/lesson/', 'scripts/'];
const CPP_FUNCTION_DIRS = ['cpp/include/', 'cpp/src/', 'cpp/bindings/'];

/**
 * Offenders still allowed, with the size they had when listed: `path` for a file (lines), `path#name`
 * for a function (lines). Shrink-only: fix one, delete its line.
 */
const ALLOWED = {
  // files over 500 lines
};

/** Source files of the repository: tracked, plus new files not ignored by .gitignore. */
function sourceFiles() {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, maxBuffer: 64 << 20 });
  return [...new Set(out.toString('utf8').split('\0'))]
    .filter((f) => f && SOURCE.test(f) && !EXEMPT.some((re) => re.test(f)) && existsSync(path.join(ROOT, f)));
}

const lineCount = (text) => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

/** A readable name for a function node from where it stands. */
function functionName(node, parent, grand) {
  if (node.id?.name) return node.id.name;
  const key = (k) => (k?.type === 'Identifier' ? k.name : k?.type === 'PrivateIdentifier' ? `#${k.name}` : k?.type === 'Literal' ? String(k.value) : '[computed]');
  if (parent?.type === 'MethodDefinition' || parent?.type === 'Property' || parent?.type === 'PropertyDefinition') return key(parent.key);
  if (parent?.type === 'VariableDeclarator') return key(parent.id);
  if (parent?.type === 'AssignmentExpression') {
    const l = parent.left;
    return l.type === 'MemberExpression' ? `${l.object.type === 'ThisExpression' ? 'this' : l.object.name ?? '…'}.${key(l.property)}` : key(l);
  }
  if (parent?.type === 'CallExpression' || parent?.type === 'NewExpression') {
    const callee = parent.callee.type === 'MemberExpression' ? key(parent.callee.property) : parent.callee.name ?? '…';
    const label = parent.arguments.find((a) => a.type === 'Literal' && typeof a.value === 'string');
    return `${callee}(${label ? JSON.stringify(label.value.slice(0, 40)) : '…'}) callback`;
  }
  if (parent?.type === 'ExportDefaultDeclaration') return 'default';
  return grand ? `<anonymous in ${grand.type}>` : '<anonymous>';
}

/**
 * Every function of a JS module or script, with its line span.
 * @param {string} text source
 * @returns {{name: string, line: number, lines: number}[]}
 */
export function jsFunctions(text) {
  let ast;
  const opts = { ecmaVersion: 'latest', locations: true, allowHashBang: true, allowReturnOutsideFunction: true };
  try { ast = acorn.parse(text, { ...opts, sourceType: 'module' }); } catch { ast = acorn.parse(text, { ...opts, sourceType: 'script' }); }
  const found = [];
  const visit = (node, parent, grand) => {
    if (!node || typeof node.type !== 'string') return;
    if (/^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/.test(node.type)) {
      // a method's span starts at its key (the function expression starts at the parameters)
      const start = parent?.type === 'MethodDefinition' || (parent?.type === 'Property' && parent.value === node) ? parent.loc.start.line : node.loc.start.line;
      found.push({ name: functionName(node, parent, grand), line: start, lines: node.loc.end.line - start + 1 });
    }
    for (const k of Object.keys(node)) {
      if (k === 'loc') continue;
      const v = node[k];
      if (Array.isArray(v)) v.forEach((c) => visit(c, node, parent));
      else if (v && typeof v.type === 'string') visit(v, node, parent);
    }
  };
  visit(ast, null, null);
  return found;
}

/** C++ text with comments, string and character literals and preprocessor lines blanked (newlines kept). */
export function stripCpp(text) {
  let out = '';
  let i = 0;
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  while (i < text.length) {
    const c = text[i];
    const rest2 = text.slice(i, i + 2);
    let m;
    if (rest2 === '//') { const e = text.indexOf('\n', i); const j = e < 0 ? text.length : e; out += blank(text.slice(i, j)); i = j; }
    else if (rest2 === '/*') { const e = text.indexOf('*/', i + 2); const j = e < 0 ? text.length : e + 2; out += blank(text.slice(i, j)); i = j; }
    else if ((m = /^R"([^(\s]*)\(/.exec(text.slice(i, i + 20)))) {
      const end = text.indexOf(`)${m[1]}"`, i + m[0].length);
      const j = end < 0 ? text.length : end + m[1].length + 2;
      out += blank(text.slice(i, j)); i = j;
    } else if (c === '"' || (c === "'" && !/[0-9a-fA-F]/.test(text[i - 1] ?? ''))) {
      // a quote after a hex digit is a digit separator (1'000), not a character literal
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      out += blank(text.slice(i, j + 1)); i = j + 1;
    } else if (c === '#' && /(^|\n)[ \t]*$/.test(out.slice(-200))) {
      // a preprocessor line, with its continuations
      let j = i;
      for (;;) { const e = text.indexOf('\n', j); if (e < 0) { j = text.length; break; } if (text[e - 1] === '\\') { j = e + 1; continue; } j = e; break; }
      out += blank(text.slice(i, j)); i = j;
    } else { out += c; i++; }
  }
  return out;
}

/**
 * Function bodies at namespace or class scope of a C++ file, with their line spans (signature to
 * closing brace). Braces whose header names a namespace, class, struct, union or enum (or extern "C")
 * open a scope; a brace after `)` (possibly followed by qualifiers or a trailing return type) at
 * scope level opens a function body; any other brace at scope level (an initializer) is skipped.
 * @param {string} text source
 * @returns {{name: string, line: number, lines: number}[]}
 */
export function cppFunctions(text) {
  const s = stripCpp(text);
  const lineAt = (pos) => { let n = 1; for (let k = 0; k < pos; k++) if (s.charCodeAt(k) === 10) n++; return n; };
  const found = [];
  const stack = [];  // 'scope' | 'other'
  let headerStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === ';') { headerStart = i + 1; continue; }
    if (c === ':' && /\b(public|private|protected)\s*$/.test(s.slice(headerStart, i))) { headerStart = i + 1; continue; }
    if (c === '}') { stack.pop(); headerStart = i + 1; continue; }
    if (c !== '{') continue;
    const header = s.slice(headerStart, i);
    if (/\b(namespace|class|struct|union|enum|extern)\b/.test(header) && !header.includes('(')) {
      stack.push('scope'); headerStart = i + 1; continue;
    }
    const isFunction = /\)\s*(const|noexcept(\s*\([^)]*\))?|override|final|mutable|volatile|&|&&|\s|->\s*[\w:<>,*&\s]+)*$/.test(header) && !/=\s*$/.test(header);
    if (!isFunction) {
      // an initializer at scope level: skip to its matching brace
      let depth = 1;
      let j = i + 1;
      for (; j < s.length && depth > 0; j++) { if (s[j] === '{') depth++; else if (s[j] === '}') depth--; }
      i = j - 1;
      continue;
    }
    let depth = 1;
    let j = i + 1;
    for (; j < s.length && depth > 0; j++) { if (s[j] === '{') depth++; else if (s[j] === '}') depth--; }
    const first = headerStart + (header.length - header.trimStart().length);
    const name = /((?:\w+::)*~?\w+|operator\s*[^\s(]+)\s*\(/.exec(header.trim())?.[1] ?? '<function>';
    found.push({ name, line: lineAt(first), lines: lineAt(j - 1) - lineAt(first) + 1 });
    i = j - 1;
    headerStart = j;
  }
  return found;
}

/** Offenders of the file and function rules: `{key, lines, limit}`. */
export function offenders() {
  const out = [];
  for (const f of sourceFiles()) {
    const text = readFileSync(path.join(ROOT, f), 'utf8');
    const n = lineCount(text);
    if (n > MAX_FILE_LINES) out.push({ key: f, lines: n, limit: MAX_FILE_LINES });
    let fns = [];
    if (/\.(m?js|cjs)$/.test(f) && JS_FUNCTION_DIRS.some((d) => f.startsWith(d))) fns = jsFunctions(text);
    else if (/\.(cpp|hpp|h|cc)$/.test(f) && CPP_FUNCTION_DIRS.some((d) => f.startsWith(d))) fns = cppFunctions(text);
    for (const fn of fns) if (fn.lines > MAX_FUNCTION_LINES) out.push({ key: `${f}#${fn.name}`, lines: fn.lines, limit: MAX_FUNCTION_LINES, line: fn.line });
  }
  return out;
}

test('the function measures: JS functions, arrows, methods and C++ bodies at namespace and class scope', () => {
  const js = jsFunctions([
    'export function a() {', '  const b = () => {', '    return 1;', '  };', '  return b;', '}',
    'class C {', '  m(x) {', '    return x;', '  }', '  static s = function () {', '  };', '}',
    "test('label', async () => {", '});',
  ].join('\n'));
  assert.deepEqual(js, [
    { name: 'a', line: 1, lines: 6 }, { name: 'b', line: 2, lines: 3 }, { name: 'm', line: 8, lines: 3 },
    { name: 's', line: 11, lines: 2 }, { name: 'test("label") callback', line: 14, lines: 2 },
  ]);
  const cpp = cppFunctions([
    '#include <x>', 'namespace mha {', '// a { comment', 'struct S {', '  int f() const {', '    return 1;', '  }',
    '  int g = 0;', '};', 'static const int kT[] = {', '  1, 2,', '};', 'int Layer::run(int a,', '               int b) {',
    '  auto l = [](int x) { return x; };', '  const char* s = "}";', '  return l(a) + b;', '}', '}  // namespace mha',
  ].join('\n'));
  assert.deepEqual(cpp, [{ name: 'f', line: 5, lines: 3 }, { name: 'Layer::run', line: 13, lines: 6 }]);
  assert.equal(lineCount('a\nb\n'), 2);
  assert.equal(lineCount('a\nb'), 2);
});

test(`no source file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES} (outside generated code and the SIMD kernels)`, () => {
  const found = offenders();
  for (const o of found) {
    console.log(`${o.key}${o.line ? ` (line ${o.line})` : ''}: ${o.lines} lines (limit ${o.limit})${o.key in ALLOWED ? `, allowed up to ${ALLOWED[o.key]}` : ''}`);
  }
  const problems = [
    ...found.filter((o) => !(o.key in ALLOWED)).map((o) => `new offender ${o.key}: ${o.lines} lines (limit ${o.limit})`),
    ...found.filter((o) => o.key in ALLOWED && o.lines > ALLOWED[o.key]).map((o) => `${o.key} grew: ${o.lines} lines > ${ALLOWED[o.key]} allowed`),
    ...Object.keys(ALLOWED).filter((k) => !found.some((o) => o.key === k)).map((k) => `${k} is within the limits now: remove it from ALLOWED`),
  ];
  assert.deepEqual(problems, []);
});

// The import specifiers of an ES module's source, for the folder-rule suites (src-folders,
// components-folders). A regular-expression reader: static imports, re-exports, side-effect imports
// and literal dynamic imports, at the start of a line (so that prose in comments is not read).

/** Every import specifier of `code`, relative and bare, in source order. */
export function importSpecifiers(code) {
  const found = [];
  for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push(m[1] ?? m[2] ?? m[3]);
  }
  return found;
}

/** The relative import specifiers of `code` (those starting with "."). */
export function relativeImports(code) {
  return importSpecifiers(code).filter((s) => s.startsWith('.'));
}

#!/usr/bin/env node
// Generates what the npm package ships besides the sources and the wasm (run after the wasm build
// and scripts/build-web.mjs; needs the devDependencies):
//   custom-elements.json          the <mha-*> elements' attributes, properties, events, CSS parts
//                                 and custom properties, by @custom-elements-manifest/analyzer
//                                 (config: custom-elements-manifest.config.mjs)
//   web/lib/types/components/*.d.ts   types of mha-wasm/components, emitted by tsc from the JSDoc of
//                                 web/lib/components/ (+ HTMLElementTagNameMap for the tags), without
//                                 the classes' internal members (names starting with `_`)
//   web/lib/dist/anywidget.js         web/lib/anywidget.js bundled with lit, the components and the wasm
//                                 embedded (mha-wasm/single): one ES module a notebook can load
// Usage: node scripts/build-package.mjs
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
};

/**
 * A declaration file without the members of its classes whose names start with `_` (the elements'
 * internal state and helpers: JavaScript has them public, the package's types do not).
 * @param {string} text a .d.ts
 * @returns {string}
 */
function withoutInternals(text) {
  // tsc writes one member per line (a multi-line type continues deeper and closes at the member's
  // indentation), its doc comment on the lines just above; the keys of `static properties` name the
  // internal reactive state too
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^( {4,})(?:(?:static|readonly|protected|private|get|set|async) )*_[\w$]*\??[(:<;!]/.exec(lines[i]);
    if (!m) {
      out.push(lines[i]);
      continue;
    }
    const indent = m[1];
    if ((out.at(-1) ?? '').startsWith(`${indent}`) && /\*\/\s*$/.test(out.at(-1))) {
      while (out.length && !out.at(-1).startsWith(`${indent}/**`)) out.pop();
      out.pop();
    }
    let depth = 0;
    for (;; i++) {
      for (const ch of lines[i]) depth += '({['.includes(ch) ? 1 : ')}]'.includes(ch) ? -1 : 0;
      if (depth <= 0 && /;\s*$/.test(lines[i])) break;
    }
  }
  return out.join('\n');
}

// 1. custom-elements.json
run(bin('cem'), ['analyze', '--quiet']);
const manifest = JSON.parse(await readFile(path.join(root, 'custom-elements.json'), 'utf8'));
const tags = manifest.modules.flatMap((m) => (m.declarations ?? []).filter((d) => d.customElement && d.tagName)
  .map((d) => [d.tagName, d.name, `./${path.posix.relative('web/lib/components', m.path)}`]));
if (tags.length === 0) throw new Error('custom-elements.json lists no custom element');

// 2. types of the components
const typesDir = path.join(root, 'web', 'lib', 'types', 'components');
await rm(typesDir, { recursive: true, force: true });
run(bin('tsc'), ['--allowJs', '--declaration', '--emitDeclarationOnly', '--skipLibCheck', '--target', 'es2022',
  '--module', 'nodenext', '--moduleResolution', 'nodenext', '--outDir', typesDir, 'web/lib/components/index.js',
  'web/lib/components/lesson-elements.js', 'web/lib/components/trained-elements.js']);
for (const f of await readdir(typesDir, { recursive: true })) {
  if (!f.endsWith('.d.ts')) continue;
  const p = path.join(typesDir, f);
  // web/lib/types/components/**/x.d.ts sits one folder deeper than web/lib/components/**/x.js
  await writeFile(p, withoutInternals((await readFile(p, 'utf8')).replace(/(['"])((?:\.\.\/)+)src\//g, '$1../$2src/')));
}
const index = path.join(typesDir, 'index.d.ts');
await writeFile(index, (await readFile(index, 'utf8')) + `
${tags.map(([, cls, file]) => `import type { ${cls} } from '${file}';`).join('\n')}
declare global {
  interface HTMLElementTagNameMap {
${tags.map(([tag, cls]) => `    '${tag}': ${cls};`).join('\n')}
  }
}
`);

// 3. the anywidget bundle
await mkdir(path.join(root, 'web', 'lib', 'dist'), { recursive: true });
await build({
  entryPoints: { anywidget: path.join(root, 'web', 'lib', 'anywidget.js') },
  outdir: path.join(root, 'web', 'lib', 'dist'),
  bundle: true, format: 'esm', platform: 'browser', target: ['es2022'], minify: true,
  legalComments: 'linked', logLevel: 'warning',
  external: ['node:*'],
});
console.log(`build-package: wrote custom-elements.json (${tags.map(([t]) => t).join(', ')}), web/lib/types/components/, web/lib/dist/anywidget.js`);

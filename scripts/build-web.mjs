#!/usr/bin/env node
// Bundles (all gitignored build output):
//   web/lib/dist/mha-components.js   the library's component bundle: the four custom elements + lit +
//                                    d3-scale-chromatic + the JS API, one ES module for any HTML page
//   web/site/                        the lesson site, a folder to serve or deploy as it is:
//     dist/lesson.js                 the lesson page's script (its own copy of the same pieces + KaTeX)
//     dist/katex/                    KaTeX css and fonts
//     dist/mha-components.js         a copy of the library's bundle (for examples/embed.html)
//     wasm/*.wasm, models/           copies of the library's wasm and trained models
// The JS API finds its wasm with new URL('../wasm/mha_core.wasm', import.meta.url): each bundle
// lives in a dist/ beside a wasm/, so that URL resolves as it does from web/lib/src/.
import { build } from 'esbuild';
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lib = path.join(root, 'web', 'lib');
const site = path.join(root, 'web', 'site');
const libDist = path.join(lib, 'dist');
const dist = path.join(site, 'dist');
const require = createRequire(import.meta.url);
const minify = !process.argv.includes('--dev');

const common = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify,
  sourcemap: true,
  legalComments: 'linked',
  logLevel: 'warning',
  // package.json says "sideEffects": false (true of the API), but the component modules register
  // custom elements when imported: keep every imported module.
  ignoreAnnotations: true,
  // Node-only branches of the loader are never taken in a browser.
  external: ['node:*', 'fs', 'path', 'url', 'module', 'crypto', 'worker_threads', 'fs/promises'],
};

await mkdir(libDist, { recursive: true });
await mkdir(dist, { recursive: true });
await build({
  ...common,
  entryPoints: { 'mha-components': path.join(lib, 'components', 'index.js') },
  outdir: libDist,
  sourcemap: false,   // the package ships the bundle, not a map of node_modules paths
});
for (const f of await readdir(libDist)) {
  if (f.startsWith('mha-components.')) await cp(path.join(libDist, f), path.join(dist, f));
}
await build({
  ...common,
  entryPoints: { lesson: path.join(site, 'lesson', 'lesson.js') },
  outdir: dist,
});

const katexDir = path.dirname(require.resolve('katex/package.json'));
await rm(path.join(dist, 'katex'), { recursive: true, force: true });
await mkdir(path.join(dist, 'katex'), { recursive: true });
await cp(path.join(katexDir, 'dist', 'katex.min.css'), path.join(dist, 'katex', 'katex.min.css'));
await cp(path.join(katexDir, 'dist', 'fonts'), path.join(dist, 'katex', 'fonts'), { recursive: true });

// the site's copies of the library's runtime files
await rm(path.join(site, 'wasm'), { recursive: true, force: true });
await mkdir(path.join(site, 'wasm'), { recursive: true });
for (const f of await readdir(path.join(lib, 'wasm'))) {
  if (f.endsWith('.wasm')) await cp(path.join(lib, 'wasm', f), path.join(site, 'wasm', f));
}
await rm(path.join(site, 'models'), { recursive: true, force: true });
await cp(path.join(lib, 'models'), path.join(site, 'models'), { recursive: true });
console.log('build-web: wrote web/lib/dist/mha-components.js; web/site/ dist/ (lesson.js, katex/, mha-components.js), wasm/, models/');

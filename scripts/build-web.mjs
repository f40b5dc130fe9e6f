#!/usr/bin/env node
// Bundles (all gitignored build output):
//   web/lib/dist/                    the library's element bundles, ES modules for any HTML page, built
//                                    together with code splitting so that what they share (lit, the JS
//                                    API, each tier's glue) is one chunk, loaded once per page:
//     mha-components.js              the four basic elements (passport, heatmap, heads, widget) + the API
//     mha-lesson-elements.js         the lesson's elements: restaurant stepper, W_O mix, model table,
//                                    KV-cache calculator
//     mha-trained.js                 the trained-model elements: trained-heads explorer, induction
//                                    probe, KV-cache generation, twins
//     mha-<element>.js               one entry per element (only what that element needs)
//     *-[hash].js                    the shared chunks
//   web/site/                        the lesson site, a folder to serve or deploy as it is:
//     dist/lesson.js (+ chunks)      the lesson page's script (its own copy of the same pieces + KaTeX)
//     dist/katex/                    KaTeX css and fonts
//     dist/mha-*.js                  copies of the library's bundles (for examples/)
//     wasm/*.wasm, models/           copies of the library's wasm and trained models
// The JS API finds its wasm with new URL('../wasm/mha_core.wasm', import.meta.url) and the elements
// their models with new URL('../models/…', import.meta.url): each bundle and chunk lives in a dist/
// beside a wasm/ and a models/, so those URLs resolve as they do from web/lib/src/.
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

// stale chunks of earlier builds go (their names carry a hash); the anywidget bundle is build-package's
await mkdir(libDist, { recursive: true });
for (const f of await readdir(libDist)) if (!f.startsWith('anywidget.')) await rm(path.join(libDist, f));
await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
const split = { splitting: true, chunkNames: '[name]-[hash]' };
await build({
  ...common,
  ...split,
  entryPoints: {
    'mha-components': path.join(lib, 'components', 'index.js'),
    'mha-lesson-elements': path.join(lib, 'components', 'lesson-elements.js'),
    'mha-trained': path.join(lib, 'components', 'trained-elements.js'),
    // one entry per element (dist/mha-stepper.js, …): a page loads only what its element needs
    ...Object.fromEntries((await readdir(path.join(lib, 'components')))
      .filter((f) => /^mha-.*\.js$/.test(f)).map((f) => [f.slice(0, -3), path.join(lib, 'components', f)])),
  },
  outdir: libDist,
  sourcemap: false,   // the package ships the bundles, not a map of node_modules paths
});
for (const f of await readdir(libDist)) {
  if (f.endsWith('.js') || f.endsWith('.LEGAL.txt')) await cp(path.join(libDist, f), path.join(dist, f));
}
await build({
  ...common,
  ...split,
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
  // every .wasm; for the threaded builds also the pthread worker script and the glue it imports by URL
  if (f.endsWith('.wasm') || /_mt\.(mjs|worker\.js)$/.test(f)) await cp(path.join(lib, 'wasm', f), path.join(site, 'wasm', f));
}
await rm(path.join(site, 'models'), { recursive: true, force: true });
await cp(path.join(lib, 'models'), path.join(site, 'models'), { recursive: true });
console.log('build-web: wrote web/lib/dist/ (mha-components.js, mha-lesson-elements.js, mha-trained.js, chunks); web/site/ dist/ (lesson.js, katex/, the library bundles), wasm/, models/');

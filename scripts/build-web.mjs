#!/usr/bin/env node
// Bundle what the pages need into web/dist/ (gitignored):
//   web/dist/mha-components.js  the four custom elements + lit + d3-scale-chromatic + the JS API,
//                               one standalone ES module for any plain HTML page
//   web/dist/lesson.js          the lesson page's script (its own copy of the same pieces + KaTeX)
//   web/dist/katex/             KaTeX css and fonts
// The JS API finds its wasm with new URL('../wasm/mha_core.wasm', import.meta.url); the bundles
// live in web/dist/, so that URL points at web/wasm/ as it does from web/src/.
import { build } from 'esbuild';
import { cp, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'web', 'dist');
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

await mkdir(dist, { recursive: true });
await build({
  ...common,
  entryPoints: { 'mha-components': path.join(root, 'web/components/index.js') },
  outdir: dist,
});
await build({
  ...common,
  entryPoints: { lesson: path.join(root, 'web/lesson/lesson.js') },
  outdir: dist,
});

const katexDir = path.dirname(require.resolve('katex/package.json'));
await rm(path.join(dist, 'katex'), { recursive: true, force: true });
await mkdir(path.join(dist, 'katex'), { recursive: true });
await cp(path.join(katexDir, 'dist', 'katex.min.css'), path.join(dist, 'katex', 'katex.min.css'));
await cp(path.join(katexDir, 'dist', 'fonts'), path.join(dist, 'katex', 'fonts'), { recursive: true });
console.log(`build-web: wrote ${path.relative(root, dist)}/ (mha-components.js, lesson.js, katex/)`);

// The folders of web/lib/components/ import one way, as their READMEs say: logic/ (pure teaching
// logic) imports only logic/ and the JS API; base/ builds on logic/; views/ on base/ and logic/;
// lesson/ and trained/ on those (trained/ only the heatmap of views/, and the model cache
// models.js); no folder imports a group entry (index.js, lesson-elements.js, trained-elements.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { importSpecifiers } from './helpers/imports.mjs';

const COMPONENTS = fileURLToPath(new URL('../web/lib/components/', import.meta.url));

const LIT = /^(lit|lit\/.+|@lit\/task)$/;
const D3 = /^d3-[a-z-]+$/;
/** Per folder: the folders it may import, single files it may import, and the npm packages. */
const MAY = {
  logic: { folders: ['logic'], files: [], api: ['src/index.js'], bare: [] },
  base: { folders: ['base', 'logic'], files: ['models.js'], api: ['src/index.js', 'src/worker.js'], bare: [LIT, D3, /^katex$/] },
  views: { folders: ['views', 'base', 'logic'], files: [], api: ['src/index.js'], bare: [LIT, D3] },
  lesson: { folders: ['lesson', 'base', 'logic', 'views'], files: [], api: ['src/index.js'], bare: [LIT, D3] },
  trained: { folders: ['trained', 'base', 'logic'], files: ['views/mha-heatmap.js', 'models.js'], api: ['src/index.js'], bare: [LIT] },
};

/**
 * Why `from` (a path under web/lib/components/) may not import `spec`, or null when it may.
 * @param {string} from e.g. 'trained/mha-induction.js'
 * @param {string} spec the specifier as written
 */
export function componentImportRule(from, spec) {
  const folder = from.split('/')[0];
  const may = MAY[folder];
  if (!may) return `${from}: ${folder}/ is not a known folder of components/`;
  if (!spec.startsWith('.')) {
    return may.bare.some((re) => re.test(spec)) ? null : `${from} imports the package ${spec}: ${folder}/ may not`;
  }
  const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  if (to.startsWith('../')) {
    const api = to.slice(3);
    return may.api.includes(api) ? null : `${from} imports ${api}: ${folder}/ reaches the JS API only through ${may.api.join(', ')}`;
  }
  if (!to.includes('/')) {
    return may.files.includes(to) ? null : `${from} imports ${to}${['index.js', 'lesson-elements.js', 'trained-elements.js'].includes(to) ? ', a group entry' : ''}`;
  }
  if (may.files.includes(to) || may.folders.includes(to.split('/')[0])) return null;
  return `${from} imports ${to}: ${folder}/ may import ${[...may.folders.map((f) => `${f}/`), ...may.files].join(', ')}`;
}

/** Every .js file under `dir`, as paths relative to it. */
function jsFiles(dir, prefix = '') {
  return fs.readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((d) => {
    const rel = prefix ? `${prefix}/${d.name}` : d.name;
    if (d.isDirectory()) return jsFiles(dir, rel);
    return d.name.endsWith('.js') ? [rel] : [];
  });
}

test('web/lib/components/: each folder imports only what its README allows', () => {
  const problems = [];
  let edges = 0;
  for (const from of jsFiles(COMPONENTS).filter((f) => f.includes('/'))) {
    for (const spec of importSpecifiers(fs.readFileSync(path.join(COMPONENTS, from), 'utf8'))) {
      edges++;
      const why = componentImportRule(from, spec);
      if (why) problems.push(why);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(edges > 200, `only ${edges} imports found: is the reader still reading them?`);
});

test('the components rule refuses what it should (the check can fail)', () => {
  assert.match(componentImportRule('logic/restaurant.js', 'lit'), /the package lit: logic\/ may not/);
  assert.match(componentImportRule('logic/restaurant.js', '../base/shared.js'), /logic\/ may import logic\//);
  assert.match(componentImportRule('base/shared.js', '../views/mha-heatmap.js'), /base\/ may import/);
  assert.match(componentImportRule('lesson/mha-stepper.js', '../trained/mha-twins.js'), /lesson\/ may import/);
  assert.match(componentImportRule('trained/mha-twins.js', '../views/mha-passport.js'), /trained\/ may import/);
  assert.match(componentImportRule('trained/mha-twins.js', '../index.js'), /a group entry/);
  assert.match(componentImportRule('trained/mha-twins.js', '../../src/lm/model.js'), /JS API only through/);
  assert.match(componentImportRule('trained/mha-twins.js', 'katex'), /the package katex/);
  assert.equal(componentImportRule('views/heatmap/canvas.js', '../../base/color.js'), null);
  assert.equal(componentImportRule('lesson/layer-map/glyphs.js', '../../logic/layer-map.js'), null);
  assert.equal(componentImportRule('trained/mha-twins.js', '../views/mha-heatmap.js'), null);
  assert.equal(componentImportRule('base/worker-engine.js', '../../src/worker.js'), null);
});

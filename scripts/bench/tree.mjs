// Where a source tree keeps the library, for the scripts that bench another tree's build against
// this one (bench.mjs --engine, ab.mjs): web/lib/ since the library and the site were split,
// web/ in trees from before.
import fs from 'node:fs';
import path from 'node:path';

/**
 * @param {string} tree a checkout of this repository
 * @returns {string} its library folder (holding src/ and wasm/)
 */
export function libDir(tree) {
  const lib = path.join(tree, 'web', 'lib');
  return fs.existsSync(path.join(lib, 'src')) ? lib : path.join(tree, 'web');
}

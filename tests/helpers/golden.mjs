// Shared helpers of the node suites: loading the golden cases of tests/golden/ and comparing tensors.
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Folder of the PyTorch-made reference cases: tests/golden/ (its README gives the format), or $MHA_GOLDEN_DIR. */
export const GOLDEN_DIR = process.env.MHA_GOLDEN_DIR || path.resolve(here, '../golden');

/** Every golden case: [{file, case}] (throws if the folder is missing: the suite must not pass empty). */
export function loadGolden() {
  const files = fs.readdirSync(GOLDEN_DIR).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length > 0, `no golden cases in ${GOLDEN_DIR}`);
  return files.map((f) => ({ file: f, c: JSON.parse(fs.readFileSync(path.join(GOLDEN_DIR, f), 'utf8')) }));
}

/** A golden tensor {shape, data} as our {data: Float32Array, shape} input (float32 rounding as torch used). */
export const input = (t) => ({ data: Float32Array.from(t.data), shape: t.shape.slice() });

/** Tolerance of the golden README: |got − ref| ≤ atol + rtol·|ref|, atol = max(1e-5, 20·hint). */
export function tolerance(c, key, { floor = 1e-5 } = {}) {
  const hints = (c.tolerance_hint && c.tolerance_hint.torch_float32_max_abs_err) || {};
  const hint = hints[key] ?? hints.output ?? 0;
  return { atol: Math.max(floor, 20 * hint), rtol: 1e-4 };
}

/**
 * Asserts got ≈ ref elementwise. `ref` may hold null (NaN in torch) where `skip(i)` says so.
 * Reports the worst element.
 */
export function assertClose(got, ref, { atol, rtol }, name, skip = () => false) {
  const g = got.data ?? got;
  const r = ref.data ?? ref;
  assert.equal(g.length, r.length, `${name}: length ${g.length} vs reference ${r.length}`);
  let worst = -1, worstErr = 0, compared = 0;
  for (let i = 0; i < r.length; i++) {
    if (skip(i)) continue;
    if (r[i] === null) assert.fail(`${name}[${i}]: reference is NaN but not skipped`);  // (not assert.ok: no message built per element)
    const err = Math.abs(g[i] - r[i]);
    if (!(err <= atol + rtol * Math.abs(r[i]))) {
      if (!(err <= worstErr) || worst < 0) { worst = i; worstErr = err; }
    }
    compared++;
  }
  assert.ok(worst < 0, `${name}: element ${worst} is ${g[worst]}, reference ${r[worst]} (|err| ${worstErr} > ${atol} + ${rtol}·|ref|)`);
  assert.ok(compared > 0, `${name}: nothing compared`);
  return compared;
}

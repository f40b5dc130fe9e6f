// Shared setup of the model runner's suites (tests/model-runner*.test.mjs): the tiny models of
// tests/golden-decoder/ (their cases, bytes and parsed tensors), stories260K's bytes, a golden file
// re-encoded with its config changed, and the exact-rejection assertion.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { MHAError, parseSafetensors } from '../../web/lib/src/index.js';
import { encodeSafetensors } from './safetensors.mjs';

export const dir = new URL('../golden-decoder/', import.meta.url);
export const goldenFiles = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
/** The golden case `name` (its .json). */
export const read = (name) => JSON.parse(fs.readFileSync(new URL(`${name}.json`, dir)));
/** The model file of the golden case `name` (its .safetensors bytes). */
export const bytesOf = (name) => fs.readFileSync(new URL(`${name}.safetensors`, dir));
/** The golden case's model file parsed: {metadata, tensors}. */
export const parsed = (name) => parseSafetensors(bytesOf(name));
export const storiesBytes = fs.readFileSync(new URL('../../web/lib/models/stories260K.safetensors', import.meta.url));

/** Asserts that a promise rejects with an MHAError of `code` whose message is exactly `message`. */
export async function rejectsExactly(promise, code, message) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, code, `code of "${e.message}"`);
    assert.equal(e.message, message);
    return true;
  });
}

/** A golden file's bytes with its config changed (undefined deletes a key) and other metadata. */
export function configBytes(name, change, meta = {}) {
  const { metadata, tensors } = parsed(name);
  const cfg = { ...JSON.parse(metadata.config), ...change };
  for (const k of Object.keys(change)) if (change[k] === undefined) delete cfg[k];
  return encodeSafetensors({ ...metadata, config: JSON.stringify(cfg), ...meta }, tensors);
}

/**
 * Loaders bound to one module instance: `withConfig(name, change, meta)` loads configBytes(...);
 * `withModel(source, fn)` loads a model, runs fn(model) and disposes the model whatever happens.
 */
export function loaders(mha) {
  const withConfig = (name, change, meta) => mha.loadModel(configBytes(name, change, meta));
  async function withModel(source, fn) {
    const lm = await mha.loadModel(source);
    try {
      return await fn(lm);
    } finally {
      lm.dispose();
    }
  }
  return { withConfig, withModel };
}

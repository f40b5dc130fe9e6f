// The trained models of the lesson elements: where the shipped ones are, and one loaded copy of
// each model per engine, shared by every element on a page.
//
// URLs are resolved against this module (new URL(…, import.meta.url)), so the same code finds the
// models from web/lib/components/, from a bundle in web/lib/dist/, from a copy of dist/ beside a
// models/ folder, or from a CDN. A file's bytes are fetched once per page; the loaded model (its
// engine layers) lives while at least one element holds it and is rebuilt from the kept bytes
// when an element comes back.
import { MHAError } from '../src/index.js';

// A module imported from a blob: URL (a notebook's anywidget) has no folder to resolve against:
// there the defaults are null and an element needs its `model` attribute.
const here = (f) => { try { return f().href; } catch { return null; } };
/** URL of the model the trained-model elements load when they have no `model` attribute. */
export const DEFAULT_MODEL_URL = here(() => new URL('../models/charlm-h4-s0.safetensors', import.meta.url));
/** URL of stories260K (Karpathy's tinyllamas model, MIT; its licence is stories260K.LICENSE beside it), the
 * default model of `<mha-gqa-story>`. */
export const DEFAULT_STORIES_URL = here(() => new URL('../models/stories260K.safetensors', import.meta.url));
/** URL of the shipped models' manifest (`index.json`: file, numHeads, seed, heldoutBpc, bytes). */
export const MODEL_INDEX_URL = here(() => new URL('../models/index.json', import.meta.url));

const bytesByURL = new Map();        // href → Promise<Uint8Array>
const modelsByEngine = new WeakMap(); // engine → Map(href → {promise, refs, model})

/**
 * An absolute URL for a `model` attribute (relative to the page) or the default.
 * @param {string|null|undefined} src the attribute
 * @param {string|null} [dflt] the element's default model (DEFAULT_MODEL_URL unless given)
 */
export function modelURL(src, dflt = DEFAULT_MODEL_URL) {
  if (src) return new URL(src, document.baseURI).href;
  if (!dflt) throw new MHAError('INVALID_ARGUMENT', 'model: this module was loaded from a URL with no models/ folder beside it: set the model attribute');
  return dflt;
}

/**
 * The bytes of a file, fetched once per page (a failed fetch is forgotten, so a later call tries
 * again).
 * @param {string} href absolute URL
 * @returns {Promise<Uint8Array>}
 * @throws {MHAError} INVALID_ARGUMENT naming the URL and the HTTP status or network error
 */
export function fetchBytes(href) {
  let p = bytesByURL.get(href);
  if (!p) {
    // not model.js's readSource: importing a module of src/ that has no .d.ts would make tsc emit
    // the API's declarations into the components' types
    p = (async () => {
      let res;
      try {
        res = await fetch(href);
      } catch (e) {
        throw new MHAError('INVALID_ARGUMENT', `model: cannot fetch ${href}: ${e.message}`);
      }
      if (!res.ok) throw new MHAError('INVALID_ARGUMENT', `model: fetching ${href} gave HTTP ${res.status}`);
      return new Uint8Array(await res.arrayBuffer());
    })();
    bytesByURL.set(href, p);
    p.catch(() => bytesByURL.delete(href));
  }
  return p;
}

/** The shipped models' manifest, fetched once. */
export async function modelIndex(href = MODEL_INDEX_URL) {
  const bytes = await fetchBytes(href);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new MHAError('INVALID_ARGUMENT', `model index ${href} is not JSON (${e.message})`);
  }
}

/**
 * The loaded model of a URL on an engine, shared: the first call loads it (fetching the bytes if
 * no element did before), later calls get the same CharModel. Pair every call with releaseModel.
 * @param {object} mha an engine from createMHA()
 * @param {string} href absolute URL of a model file (docs/trained-models.md)
 * @returns {Promise<object>} the CharModel
 * @throws {MHAError} as fetchBytes and mha.loadModel (a bad file names what is wrong with it)
 */
export async function acquireModel(mha, href) {
  let byURL = modelsByEngine.get(mha);
  if (!byURL) modelsByEngine.set(mha, (byURL = new Map()));
  let entry = byURL.get(href);
  if (!entry) {
    entry = { refs: 0, model: null };
    entry.promise = fetchBytes(href).then((bytes) => mha.loadModel(bytes)).then((m) => (entry.model = m));
    byURL.set(href, entry);
    entry.promise.catch(() => { if (byURL.get(href) === entry) byURL.delete(href); });
  }
  entry.refs++;
  try {
    return await entry.promise;
  } catch (e) {
    entry.refs--;
    throw e;
  }
}

/**
 * Gives back a model from acquireModel; the last release disposes it (its engine layers and KV
 * caches), keeping the file's bytes for the next acquireModel.
 * @param {object} mha the engine it was acquired on
 * @param {string} href its URL
 */
export function releaseModel(mha, href) {
  const byURL = modelsByEngine.get(mha);
  const entry = byURL?.get(href);
  if (!entry) return;
  entry.refs--;
  if (entry.refs <= 0) {
    byURL.delete(href);
    entry.promise.then((m) => m.dispose(), () => {});
  }
}

/** How many models are loaded on an engine now (for tests and the soak test). */
export function loadedModelCount(mha) {
  return modelsByEngine.get(mha)?.size ?? 0;
}

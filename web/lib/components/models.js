// The trained models of the lesson elements: where the shipped ones are, and one loaded copy of
// each model per engine, shared by every element on a page.
//
// URLs are resolved against this module (new URL(…, import.meta.url)), so the same code finds the
// models from web/lib/components/, from a bundle in web/lib/dist/, from a copy of dist/ beside a
// models/ folder, or from a CDN. A file's bytes are fetched once per page; the loaded model (its
// engine layers) lives while at least one element holds it and is rebuilt from the kept bytes
// when an element comes back.
import { MHAError } from '../src/index.js';
// the shipped manifest, index.json as a module (scripts/build-web.mjs writes it): imported, so that no
// bundler has to keep the JSON file (Vite inlines it as a data: URL, Parcel compiles it to JavaScript)
import SHIPPED_MANIFEST from './shipped-manifest.js';

// A module imported from a blob: URL (a notebook's anywidget) has no folder to resolve against:
// there the defaults are null and an element needs its `model` attribute.
const here = (f) => { try { return f().href; } catch { return null; } };
/** A URL beside this module from a name known at run time (bundlers follow only literal ones). */
const besideThisModule = (file) => new URL(/* @vite-ignore */ /* webpackIgnore: true */ file, import.meta.url);

// Every file of models/ the code can name, each through its own literal new URL(…, import.meta.url):
// a bundler (Vite, webpack 5, Parcel) sees each one and emits the file (or, under its inline limit,
// a data: URL), and the manifest's file names are looked up here, never resolved against the
// manifest's own URL (which a bundler may have turned into a data: URL or a hashed name).
const SHIPPED = {
  'charlm-h1-s0.safetensors': () => new URL('../models/charlm-h1-s0.safetensors', import.meta.url),
  'charlm-h1-s1.safetensors': () => new URL('../models/charlm-h1-s1.safetensors', import.meta.url),
  'charlm-h4-s0.safetensors': () => new URL('../models/charlm-h4-s0.safetensors', import.meta.url),
  'charlm-h4-s1.safetensors': () => new URL('../models/charlm-h4-s1.safetensors', import.meta.url),
  'gqa-kv1-s0.safetensors': () => new URL('../models/gqa-kv1-s0.safetensors', import.meta.url),
  'gqa-kv1-s1.safetensors': () => new URL('../models/gqa-kv1-s1.safetensors', import.meta.url),
  'gqa-kv2-s0.safetensors': () => new URL('../models/gqa-kv2-s0.safetensors', import.meta.url),
  'gqa-kv2-s1.safetensors': () => new URL('../models/gqa-kv2-s1.safetensors', import.meta.url),
  'gqa-kv8-s0.safetensors': () => new URL('../models/gqa-kv8-s0.safetensors', import.meta.url),
  'gqa-kv8-s1.safetensors': () => new URL('../models/gqa-kv8-s1.safetensors', import.meta.url),
  'stories260K.safetensors': () => new URL('../models/stories260K.safetensors', import.meta.url),
  'phase-change.safetensors': () => new URL('../models/phase-change.safetensors', import.meta.url),
};
/** URL of the model the trained-model elements load when they have no `model` attribute. */
export const DEFAULT_MODEL_URL = here(SHIPPED['charlm-h4-s0.safetensors']);
/** URL of stories260K (Karpathy's tinyllamas model, MIT; its licence is stories260K.LICENSE beside it), the
 * default model of `<mha-gqa-story>`. */
export const DEFAULT_STORIES_URL = here(SHIPPED['stories260K.safetensors']);
/** URL of the training checkpoints `<mha-phase-change>` loads without a `model` attribute. */
export const DEFAULT_PHASE_URL = here(SHIPPED['phase-change.safetensors']);
/** URL of the shipped models' manifest (`index.json`: file, numHeads, seed, heldoutBpc, bytes) beside the
 * module: an identifier of the shipped manifest for modelIndex and modelFileURL (its content is
 * imported, never fetched; a bundled app need not keep the file, and the URL is made at run time so
 * that no bundler tries to). */
export const MODEL_INDEX_URL = here(() => besideThisModule('../models/index.json'));

/**
 * The URL of a file a manifest lists: for the shipped manifest (MODEL_INDEX_URL), the shipped file's
 * own URL (see SHIPPED above); for another manifest, the name resolved against the manifest's URL.
 * @param {string} file a file name from a manifest's `models` or `gqa` list
 * @param {string} base the manifest's URL
 * @returns {string} absolute URL
 * @throws {MHAError} INVALID_ARGUMENT when the name cannot be resolved against `base` (a data: or
 *   blob: manifest listing a file that is not shipped)
 */
export function modelFileURL(file, base = MODEL_INDEX_URL) {
  if (base === MODEL_INDEX_URL && Object.hasOwn(SHIPPED, file)) {
    const href = here(SHIPPED[file]);
    if (href) return href;
  }
  try {
    return new URL(file, base).href;
  } catch {
    throw new MHAError('INVALID_ARGUMENT', `model: the manifest ${String(base).slice(0, 60)} lists ${JSON.stringify(file)}, which cannot be resolved against it; give the manifest as an http(s) URL`);
  }
}

/** The bytes of a data: URL, decoded here (a fetch of one is a connect-src request a strict CSP refuses). */
function dataURLBytes(href) {
  const m = /^data:([^,]*?)(;base64)?,(.*)$/s.exec(href);
  if (!m) throw new MHAError('INVALID_ARGUMENT', `model: malformed data: URL ${href.slice(0, 40)}…`);
  if (m[2]) return Uint8Array.from(atob(m[3]), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(decodeURIComponent(m[3]));
}

const bytesByURL = new Map();        // href → {promise: Promise<Uint8Array>, listeners: Set, last}
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

/** The file name of a URL, as a progress event names it ("…/charlm-h4-s0.safetensors" → "charlm-h4-s0.safetensors"). */
const fileOf = (href) => String(href).split(/[?#]/)[0].split('/').filter(Boolean).pop() ?? String(href);

/**
 * The body of a response as bytes, `progress` called as chunks arrive with the bytes so far and the
 * Content-Length (null when absent or when the body is compressed).
 */
async function bodyBytes(res, file, progress) {
  const enc = res.headers.get('content-encoding');
  const lenHeader = res.headers.get('content-length');
  const total = lenHeader !== null && /^\d+$/.test(lenHeader.trim()) && (!enc || enc === 'identity') ? Number(lenHeader) : null;
  const emit = (loaded, t = total) => progress({ file, loaded, total: t, fraction: t ? Math.min(1, loaded / t) : t === 0 ? 1 : null });
  emit(0);
  if (!res.body || typeof res.body.getReader !== 'function') {
    const bytes = new Uint8Array(await res.arrayBuffer());
    emit(bytes.length, bytes.length);
    return bytes;
  }
  const reader = res.body.getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
    emit(n);
  }
  const bytes = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { bytes.set(p, o); o += p.length; }
  emit(n, n);
  return bytes;
}

/**
 * A progress fan-out: listeners added late get the last event at once.
 * @returns {{listeners: Set<Function>, last: object|null, emit: (p: object) => void, listen: (f?: Function) => () => void}}
 */
function progressHub() {
  const hub = {
    listeners: new Set(),
    last: null,
    emit(p) { hub.last = p; for (const f of hub.listeners) { try { f(p); } catch { /* a listener's own error is not the download's */ } } },
    listen(f) {
      if (typeof f !== 'function') return () => {};
      hub.listeners.add(f);
      if (hub.last) f(hub.last);
      return () => hub.listeners.delete(f);
    },
  };
  return hub;
}

/**
 * The bytes of a file, fetched once per page (a failed fetch is forgotten, so a later call tries
 * again).
 * @param {string} href absolute URL
 * @param {(p: {file: string, loaded: number, total: number|null, fraction: number|null}) => void} [progress]
 *   called as the bytes arrive (as mha.loadModel's `progress`: `loaded` bytes so far, `total` the
 *   Content-Length or null, `fraction` loaded / total); a call joining a download under way gets its
 *   last event at once; a file already fetched gives no event
 * @returns {Promise<Uint8Array>}
 * @throws {MHAError} INVALID_ARGUMENT naming the URL and the HTTP status or network error
 */
export function fetchBytes(href, progress) {
  let rec = bytesByURL.get(href);
  if (!rec) {
    rec = progressHub();
    // not model.js's readSource: importing a module of src/ that has no .d.ts would make tsc emit
    // the API's declarations into the components' types
    rec.promise = (async () => {
      if (href.startsWith('data:')) return dataURLBytes(href);
      let res;
      try {
        res = await fetch(href);
      } catch (e) {
        throw new MHAError('INVALID_ARGUMENT', `model: cannot fetch ${href}: ${e.message}`);
      }
      if (!res.ok) throw new MHAError('INVALID_ARGUMENT', `model: fetching ${href} gave HTTP ${res.status}`);
      return bodyBytes(res, fileOf(href), rec.emit);
    })();
    bytesByURL.set(href, rec);
    rec.promise.catch(() => bytesByURL.delete(href));
    rec.promise.then(() => rec.listeners.clear(), () => rec.listeners.clear());
  }
  const stop = rec.listen(progress);
  rec.promise.then(stop, stop);
  return rec.promise;
}

/**
 * A models manifest: the shipped one (MODEL_INDEX_URL, the default) from the imported module, any
 * other fetched once.
 * @param {string} [href] absolute URL of a manifest
 * @returns {Promise<object>} `{format, models: [{file, numHeads, seed, heldoutBpc, bytes, …}], gqa?: […]}`
 * @throws {MHAError} INVALID_ARGUMENT: the fetch failed or the file is not JSON
 */
export async function modelIndex(href = MODEL_INDEX_URL) {
  if (href === MODEL_INDEX_URL) return SHIPPED_MANIFEST;
  const bytes = await fetchBytes(href);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new MHAError('INVALID_ARGUMENT', `model index ${href} is not JSON (${e.message})`);
  }
}

/**
 * The shipped models a reader can pick, from a models manifest (`index.json`): its `models` (the
 * h = 1 / h = 4 twins) and `gqa` (the grouped-query twins) lists, each with an absolute URL and a
 * label made from the manifest's fields.
 * @param {{models?: object[], gqa?: object[]}} manifest
 * @param {string} base the manifest's URL (files are relative to it)
 * @returns {Array<{href: string, file: string, label: string}>}
 */
export function modelChoices(manifest, base) {
  const out = [];
  for (const m of manifest.models ?? []) {
    if (!m?.file) continue;
    out.push({ href: modelFileURL(m.file, base), file: m.file, label: `h = ${m.numHeads}, seed ${m.seed} (${m.file.replace(/\.safetensors$/, '')})` });
  }
  for (const m of manifest.gqa ?? []) {
    if (!m?.file) continue;
    const kv = m.kvHeads === m.numHeads ? 'multi-head' : m.kvHeads === 1 ? 'multi-query' : 'grouped';
    out.push({ href: modelFileURL(m.file, base), file: m.file,
      label: `${m.numHeads} query heads, ${m.kvHeads} K/V (${kv}), seed ${m.seed} (${m.file.replace(/\.safetensors$/, '')})` });
  }
  return out;
}

/**
 * The loaded model of a URL on an engine, shared: the first call loads it (fetching the bytes if
 * no element did before), later calls get the same CharModel. Pair every call with releaseModel.
 * @param {object} mha an engine from createMHA()
 * @param {string} href absolute URL of a model file (docs/trained-models.md, a llama2.c .bin), or
 *   of a Hugging Face model folder (ending in "/": config.json, safetensors, tokenizer; mha.loadModel
 *   reads it); with `opts.source`, the key the source is shared under
 * @param {{progress?: (p: {file: string, loaded: number, total: number|null, fraction: number|null}) => void,
 *   source?: string|File|File[], tokenizer?: string|File}} [opts]
 *   progress: called as the download's bytes arrive (mha.loadModel's `progress` events: bytes of
 *   every file so far, `total` null while unknown); a call that joins a load under way gets its last
 *   event at once; a model loaded already, or whose bytes were kept, gives no event. source: what
 *   mha.loadModel reads in place of fetching `href` (files from disk, model-source.js; or the URL
 *   of a llama2.c .bin given with its tokenizer); tokenizer: the llama2.c tokenizer.bin (absolute
 *   URL or File) that goes with `source`
 * @returns {Promise<object>} the CharModel
 * @throws {MHAError} as fetchBytes and mha.loadModel (a bad file names what is wrong with it)
 */
export async function acquireModel(mha, href, opts = {}) {
  let byURL = modelsByEngine.get(mha);
  if (!byURL) modelsByEngine.set(mha, (byURL = new Map()));
  let entry = byURL.get(href);
  if (!entry) {
    entry = Object.assign(progressHub(), { refs: 0, model: null });
    // files from disk (or a URL with its tokenizer), and a Hugging Face model folder (a URL ending
    // in "/"), are read by loadModel itself, file by file (in the engine worker when the element
    // computes there: the page's thread never holds its weights)
    const load = opts?.source ? mha.loadModel(opts.source, { tokenizer: opts.tokenizer, progress: entry.emit })
      : /\/([?#].*)?$/.test(href) && !href.startsWith('data:') ? mha.loadModel(href, { progress: entry.emit })
        : fetchBytes(href, entry.emit).then((bytes) => mha.loadModel(bytes));
    entry.promise = load.then((m) => (entry.model = m));
    byURL.set(href, entry);
    entry.promise.catch(() => { if (byURL.get(href) === entry) byURL.delete(href); });
    entry.promise.then(() => entry.listeners.clear(), () => entry.listeners.clear());
  }
  entry.refs++;
  const stop = entry.listen(opts?.progress);
  try {
    return await entry.promise;
  } catch (e) {
    entry.refs--;
    throw e;
  } finally {
    stop();
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

// Fetched when seen: the lazy loading of the trained-model elements (an IntersectionObserver one
// viewport around the visible page, counted once the page above has stopped growing) and the placeholder that names what will be fetched and its size
// (from the models manifest's `bytes`).
import { html, nothing } from 'lit';
import { modelIndex, MODEL_INDEX_URL } from '../models.js';
import { bytesText } from '../logic/cost-ledger.js';
import { baseName } from '../logic/trained-text.js';
import { getEngine } from '../base/shared.js';

/**
 * How far outside the visible part of the page a lazy element starts fetching: one viewport above
 * and below (an IntersectionObserver `rootMargin`), so that a reader scrolling at reading speed finds
 * it computed.
 */
export const NEAR_VIEWPORT = '100% 0px';

/**
 * How long the element's place in the page must stay still, while it is near, before it counts as
 * near (milliseconds): elements above it grow when the engine has computed them, and an element
 * that is near only while those are one line tall is not near the reader.
 */
export const SETTLE_MS = 300;

/**
 * Calls `onNear` once, when `el` is truly within one viewport of the visible part of the page
 * (IntersectionObserver with NEAR_VIEWPORT): near once its engine has loaded (or failed)
 * and the element's place in the page has not moved for SETTLE_MS, so that the first layout of
 * a page whose elements above have not computed yet does not count. The observer stays connected
 * until then: an element pushed away by the page growing waits for the reader to scroll to it.
 * At once where there is no IntersectionObserver. An element that is never rendered
 * (display: none) never comes near.
 * @param {Element} el
 * @param {() => void} onNear
 * @param {() => Promise<unknown>} [engine] the engine the element computes with (default: the
 *   page's shared one, getEngine); an element that computes in the engine worker passes that one,
 *   so that waiting for it starts no engine on the page's thread
 * @returns {() => void} stops watching (onNear is then not called)
 */
export function whenNear(el, onNear, engine = getEngine) {
  if (typeof IntersectionObserver === 'undefined') {
    onNear();
    return () => {};
  }
  let near = false, engineSettled = false, stopped = false, frame = 0, top = NaN, since = 0;
  const stop = () => {
    stopped = true;
    io.disconnect();
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
  };
  // one frame at a time while near: where the element sits in the page, and since when
  const watch = () => {
    frame = 0;
    if (stopped || !near) return;
    const now = performance.now();
    const t = el.getBoundingClientRect().top + window.scrollY;
    if (t !== top) { top = t; since = now; }
    if (engineSettled && now - since >= SETTLE_MS) {
      stop();
      onNear();
      return;
    }
    frame = requestAnimationFrame(watch);
  };
  const io = new IntersectionObserver((entries) => {
    near = entries[entries.length - 1].isIntersecting;
    if (!near || stopped) return;
    if (!engineSettled) engine().catch(() => {}).then(() => { engineSettled = true; });
    if (!frame) frame = requestAnimationFrame(watch);
  }, { rootMargin: NEAR_VIEWPORT });
  io.observe(el);
  return stop;
}

/** The values of a trained-model element's `loading` attribute, as `<img loading>`'s. */
export const LOADING_VALUES = Object.freeze(['lazy', 'eager']);

/**
 * The download size of files as a models manifest (`index.json`) records them: the `bytes` of the
 * entry of its lists (`models`, `gqa`, `other`) with the same file name. Matched by name, so that
 * a manifest a bundler has inlined or renamed still gives the sizes. A file the manifest does not
 * list (a model of the page's own) has `bytes: null`.
 * @param {Array<string|null>} files URLs or file names of what an element will fetch (duplicate
 *   names and nulls dropped)
 * @param {string|null} [indexHref] the manifest's URL (MODEL_INDEX_URL unless given)
 * @returns {Promise<Array<{file: string, bytes: number|null}>>} never rejects (a manifest that
 *   cannot be read gives null sizes)
 */
export async function downloadSizes(files, indexHref = MODEL_INDEX_URL) {
  const names = [...new Set(files.filter(Boolean).map(baseName))];
  const sizes = new Map();
  if (indexHref) {
    try {
      const manifest = await modelIndex(indexHref);
      for (const entries of Object.values(manifest ?? {})) {
        if (!Array.isArray(entries)) continue;
        for (const m of entries) if (m && typeof m.file === 'string' && Number.isFinite(m.bytes)) sizes.set(m.file, m.bytes);
      }
    } catch { /* no manifest: sizes unknown */ }
  }
  return names.map((file) => ({ file, bytes: sizes.get(file) ?? null }));
}

/**
 * The placeholder of a trained-model element that has not fetched its models yet: what it will
 * fetch and how much (decimal units), and a button that fetches now.
 * @param {Array<{file: string, bytes: number|null}>|null} files from downloadSizes (null: not known yet)
 * @param {() => void} onLoad what the button does
 */
export function lazyPlaceholder(files, onLoad) {
  const known = files?.length && files.every((f) => f.bytes !== null);
  const total = known ? files.reduce((a, f) => a + f.bytes, 0) : null;
  const names = files?.length ? files.map((f) => f.file).join(', ') : '';
  const what = !files?.length ? 'The trained model is'
    : files.length === 1 ? html`The trained model <code>${names}</code>${known ? html` (<span class="size" part="size" data-bytes=${String(total)}>${bytesText(total)}</span>)` : nothing} is`
      : html`${files.length} trained models${known ? html` (<span class="size" part="size" data-bytes=${String(total)}>${bytesText(total)}</span> in all: <code>${names}</code>)` : html` (<code>${names}</code>)`} are`;
  return html`<div class="lazy" part="placeholder">
    <p>${what} fetched when this part of the page comes into view.</p>
    <button type="button" part="load" class="load" @click=${onLoad}>Fetch now${known ? ` (${bytesText(total)})` : ''}</button>
  </div>`;
}


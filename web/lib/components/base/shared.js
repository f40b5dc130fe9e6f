// Small helpers shared by the <mha-*> custom elements.
//
// The components talk to the engine only through the public JS API (`createMHA`), never to wasm
// memory. One engine instance is shared by every component on a page; a page can supply its own
// with `setEngine()` or by setting the `engine` property of a component.
import { css, html } from 'lit';
import { scrollCueStyles } from './scroll-cue.js';
import { createMHA, mulberry32 } from '../../src/index.js';

let enginePromise = null;
let givenEngine = null;

/** How long the shared engine may take to load before getEngine rejects (the elements then show why). */
export const ENGINE_TIMEOUT_MS = 30_000;

/**
 * The shared engine (an `await createMHA()` result), created on first use. Rejects with the load
 * error (an MHALoadError naming the file and what to change), or, when the engine has not loaded
 * within ENGINE_TIMEOUT_MS, with one saying so; every element shows the message in place.
 * @returns {Promise<object>}
 */
export function getEngine() {
  if (!enginePromise) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => {
        const e = new Error(`the wasm engine did not load within ${ENGINE_TIMEOUT_MS / 1000} s: check the browser console and the network panel ` +
          'for a .wasm, glue (.mjs) or worker file that is refused (404, or a Content-Security-Policy without ' +
          "script-src 'wasm-unsafe-eval') or never answers");
        e.name = 'MHALoadError';
        reject(e);
      }, ENGINE_TIMEOUT_MS);
    });
    const mine = Promise.race([createMHA(), late]).finally(() => clearTimeout(timer));
    enginePromise = mine;
    // a failed or late load is not kept: the next element to ask starts again
    mine.catch(() => { if (enginePromise === mine) enginePromise = null; });
  }
  return enginePromise;
}

/**
 * Use an engine created elsewhere (or a promise of one) for every component on the page.
 * @param {object|Promise<object>} mha
 */
export function setEngine(mha) {
  enginePromise = Promise.resolve(mha);
  givenEngine = enginePromise;
}

/** The engine a page gave to setEngine() (a promise), or null: then the trained-model elements run
 * their models in the engine worker (worker-engine.js). */
export function pageEngine() {
  return givenEngine;
}

/**
 * The engine for one run of a component's `@lit/task` Task: its own `engine` (an engine or a
 * promise of one) if set, else the shared one. When a newer run overtook this one while the engine
 * was loading, throws the task's abort reason instead, so that only the newest run computes.
 * @param {object|Promise<object>|undefined} engine the component's `engine` property
 * @param {AbortSignal} signal the task run's signal
 * @returns {Promise<object>}
 */
export async function taskEngine(engine, signal) {
  const mha = await (engine ? Promise.resolve(engine) : getEngine());
  signal.throwIfAborted();
  return mha;
}

/** A readable message for an engine error (MHAError has `.code` and `.message`). */
export function errorText(err) {
  if (!err) return '';
  const msg = err.message || String(err);
  return err.code ? `${err.code}: ${msg}` : msg;
}

/**
 * The view of a @lit/task (Task.render) that keeps the last result while a new one is computed:
 * `view(value)` once the task has a value, a loading line before that, the error in place of the
 * view when the computation fails.
 * @param {import('@lit/task').Task} task
 * @param {(value: any) => unknown} view draws a value
 * @param {string} [loadingText] the line shown before the first value
 * @returns {unknown} what Lit renders
 */
export function renderLatest(task, view, loadingText = 'Computing with the engine…') {
  const loading = () => html`<p class="loading">${loadingText}</p>`;
  const show = (v) => (v ? view(v) : loading());
  return task.render({
    initial: loading,
    pending: () => show(task.value),
    complete: show,
    error: (e) => html`<p class="error" part="error" role="alert">${errorText(e)}</p>`,
  });
}

/**
 * Turn nested arrays, a Tensor, or `{data, shape}` (2-D) into nested arrays `number[][]`.
 * A 3-D input is not accepted here; use `toHeads` for `[h, Tq, Tk]`.
 */
export function toMatrix(m) {
  if (!m) return [];
  if (Array.isArray(m)) return m.map((row) => Array.from(row, Number));
  if (m.data && m.shape) {
    const [r, c] = m.shape.length === 2 ? m.shape : [1, m.shape[m.shape.length - 1]];
    const out = [];
    for (let i = 0; i < r; i++) out.push(Array.from(m.data.subarray(i * c, (i + 1) * c)));
    return out;
  }
  throw new TypeError('expected nested arrays or {data, shape}');
}

/**
 * Per-head matrices from a weights tensor `[h, Tq, Tk]` (or `[1, h, Tq, Tk]`), nested arrays
 * `[h][Tq][Tk]`, or an array of 2-D matrices.
 * @returns {number[][][]}
 */
export function toHeads(w) {
  if (!w) return [];
  if (Array.isArray(w)) return w.map((m) => toMatrix(m));
  if (w.data && w.shape) {
    let shape = w.shape;
    if (shape.length === 4 && shape[0] === 1) shape = shape.slice(1);
    if (shape.length === 2) return [toMatrix(w)];
    if (shape.length !== 3) throw new TypeError(`expected weights [h, Tq, Tk], got [${w.shape}]`);
    const [h, tq, tk] = shape;
    const heads = [];
    for (let i = 0; i < h; i++) {
      const rows = [];
      for (let r = 0; r < tq; r++) {
        const off = (i * tq + r) * tk;
        rows.push(Array.from(w.data.subarray(off, off + tk)));
      }
      heads.push(rows);
    }
    return heads;
  }
  throw new TypeError('expected nested arrays or {data, shape}');
}

export { interpolatorFor, colorFor, luminance, textOn } from './color.js';

/**
 * A seeded `[rows, cols]` Float32 matrix: standard normal (`'normal'`) or uniform in ±limit, drawn
 * from mulberry32 (the generator of the engine's seeded init).
 */
export function seededMatrix(seed, rows, cols, { kind = 'normal', limit = 1 } = {}) {
  const rand = mulberry32(seed);
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) {
    if (kind === 'normal') {
      const u = 1 - rand(), v = rand();
      data[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    } else {
      data[i] = (2 * rand() - 1) * limit;
    }
  }
  return { data, shape: [rows, cols] };
}

export { fmt, int } from '../logic/format.js';

/** Parse a number attribute, falling back to `dflt` when missing or not a number. */
export function num(v, dflt) {
  const n = Number(v);
  return v === null || v === undefined || v === '' || !Number.isFinite(n) ? dflt : n;
}

/** Default token labels for a sequence of length T. */
export const DEFAULT_SENTENCE = ['the', 'river', 'bank', 'flooded', 'after', 'heavy', 'rain',
  'so', 'Maya', 'moved', 'her', 'boat', 'up', 'the', 'hill', 'again'];
export function defaultTokens(T) {
  return Array.from({ length: T }, (_, i) => DEFAULT_SENTENCE[i] ?? `t${i + 1}`);
}

/** The labelled controls of a calculator element (KV calculator, cost ledger): one flowing row of
 * labels, each a caption above its select or number field. */
export const formStyles = css`
  form { display: flex; flex-wrap: wrap; gap: 0.6rem 1rem; margin: 0.7rem 0; font-size: 0.92rem; }
  label { display: flex; flex-direction: column; gap: 0.2em; color: var(--_muted); }
  select, input {
    font: inherit; color: var(--_fg); background: var(--_bg); border: 1px solid var(--_field-border);
    border-radius: var(--_radius); padding: 0.25em 0.4em; max-width: 100%;
  }
  input { width: 6.5em; }
  input[aria-invalid='true'] { outline: 2px solid var(--_error); }
`;

/**
 * Theme tokens and utilities every component shares. Public hooks are the `--mha-*` properties.
 * The defaults follow the page's theme with no script: each is a `light-dark()` pair, resolved by
 * the `color-scheme` the element inherits from the page (a page that declares none is light; one
 * that declares `light dark` follows the reader's system; a host's dark theme sets
 * `color-scheme: dark`). Engines without `light-dark()` follow `prefers-color-scheme` instead.
 */
export const baseStyles = css`
  :host {
    --_fg: var(--mha-fg, light-dark(#1b1f24, #e6edf3));
    --_bg: var(--mha-bg, light-dark(#ffffff, #0d1117));
    --_surface: var(--mha-surface, light-dark(#f4f6f8, #161b22));
    --_muted: var(--mha-muted, light-dark(#57606a, #9da7b3));
    --_border: var(--mha-border, light-dark(#d0d7de, #3d444d));
    /* the edge of a text field or select: 3:1 or more against the background (WCAG 1.4.11) */
    --_field-border: var(--mha-field-border, light-dark(#6e7781, #7d8590));
    --_accent: var(--mha-accent, light-dark(#0b5cad, #58a6ff));
    --_accent-fg: var(--mha-accent-fg, light-dark(#ffffff, #0d1117));
    --_focus: var(--mha-focus, light-dark(#d4380d, #ffa657));
    --_error: var(--mha-error, light-dark(#b42318, #ff7b72));
    --_radius: var(--mha-radius, 6px);
    font-family: var(--mha-font, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
    color: var(--_fg);
  }
  @supports not (color: light-dark(#000, #fff)) {
    :host {
      --_fg: var(--mha-fg, #1b1f24); --_bg: var(--mha-bg, #ffffff); --_surface: var(--mha-surface, #f4f6f8);
      --_muted: var(--mha-muted, #57606a); --_border: var(--mha-border, #d0d7de);
      --_field-border: var(--mha-field-border, #6e7781); --_accent: var(--mha-accent, #0b5cad);
      --_accent-fg: var(--mha-accent-fg, #ffffff); --_focus: var(--mha-focus, #d4380d); --_error: var(--mha-error, #b42318);
    }
    @media (prefers-color-scheme: dark) {
      :host {
        --_fg: var(--mha-fg, #e6edf3); --_bg: var(--mha-bg, #0d1117); --_surface: var(--mha-surface, #161b22);
        --_muted: var(--mha-muted, #9da7b3); --_border: var(--mha-border, #3d444d);
        --_field-border: var(--mha-field-border, #7d8590); --_accent: var(--mha-accent, #58a6ff);
        --_accent-fg: var(--mha-accent-fg, #0d1117); --_focus: var(--mha-focus, #ffa657); --_error: var(--mha-error, #ff7b72);
      }
    }
  }
  [hidden] { display: none !important; }
  .sr-only {
    position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
    clip: rect(0 0 0 0); white-space: nowrap; border: 0;
  }
  .error {
    color: var(--_error); border: 1px solid currentColor; border-radius: var(--_radius);
    padding: 0.5em 0.75em; margin: 0.5em 0; font-size: 0.9em;
  }
  button {
    font: inherit; color: var(--_fg); background: var(--_surface);
    border: 1px solid var(--_border); border-radius: var(--_radius); padding: 0.3em 0.7em;
    cursor: pointer;
  }
  button[aria-pressed='true'], [role='radio'][aria-checked='true'] {
    background: var(--_accent); color: var(--_accent-fg); border-color: var(--_accent);
  }
  span[role='radiogroup'] { display: inline-flex; flex-wrap: wrap; gap: 0.3rem; }
  :focus-visible { outline: 3px solid var(--_focus); outline-offset: 2px; }
  ${scrollCueStyles}
`;

// Checked attribute parsing, shared by every element: one parser per kind of attribute (whole
// number, number, one of a list, a list of layer:head pairs, a reference to another element by id).
// Each parser reads one attribute's raw string and returns either `{value}` or `{error, dflt}`,
// where `error` is an MHAError (code INVALID_ARGUMENT, `argument` = the attribute's name) whose
// message names the attribute, what is allowed and what was written.
//
// The contract every element keeps (README, "Conventions"):
//  - an invalid value keeps the attribute's last valid value (or its default);
//  - it shows one inline message, `<p class="error" part="error" role="alert" data-attr=NAME>`;
//  - it fires one `mha-error` event whose `detail` is `{ error }` (the MHAError above);
//  - the author's attribute is never rewritten (no `reflect` of a parsed value: "abc" stays "abc").
// `AttrGuard` does the bookkeeping of the first three.
import { html, nothing } from 'lit';
import { MHAError } from '../../src/index.js';

/**
 * The error of one bad attribute.
 * @param {string} name the attribute as written in HTML, e.g. "d-model"
 * @param {string} expected what it must be, in words
 * @param {unknown} actual the raw value
 * @returns {MHAError} INVALID_ARGUMENT with `argument` = name
 */
export function attrError(name, expected, actual) {
  return new MHAError('INVALID_ARGUMENT', `${name}: expected ${expected}, got ${JSON.stringify(String(actual))}`, { argument: name });
}

const absent = (raw) => raw === null || raw === undefined;
const bad = (name, expected, raw, dflt) => ({ error: attrError(name, expected, raw), dflt });

/**
 * An integer attribute.
 * @param {string} name attribute name
 * @param {string|number|null|undefined} raw the attribute's string or the property's number
 *   (null/undefined: absent → `dflt`)
 * @param {{dflt: number|undefined, min: number, max?: number, what?: string}} range inclusive bounds (no `max`:
 *   any safe integer from `min`); `what` names the quantity in the message, e.g. "tokens T"
 * @returns {{value: number}|{error: MHAError, dflt: number}}
 */
export function intAttr(name, raw, { dflt, min, max = Infinity, what }) {
  if (absent(raw)) return { value: dflt };
  const s = String(raw).trim();
  const v = Number(s);
  if (s === '' || !/^[+-]?\d+$/.test(s) || !Number.isSafeInteger(v) || v < min || v > max) {
    const range = max === Infinity ? `a whole number ≥ ${min}` : `a whole number from ${min} to ${max}`;
    return bad(name, what ? `${range} (${what})` : range, raw, dflt);
  }
  return { value: v };
}

/**
 * A real-number attribute (decimal or exponent notation; not NaN or ±Infinity).
 * @param {string} name attribute name
 * @param {string|number|null|undefined} raw (absent → `dflt`)
 * @param {{dflt: number|undefined, min: number, max: number, minExclusive?: boolean, what?: string}} range
 *   bounds, inclusive unless `minExclusive`; `what` names the quantity in the message
 * @returns {{value: number}|{error: MHAError, dflt: number}}
 */
export function numberAttr(name, raw, { dflt, min, max, minExclusive = false, what }) {
  if (absent(raw)) return { value: dflt };
  const s = String(raw).trim();
  const v = Number(s);
  const lo = minExclusive ? v > min : v >= min;
  if (s === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s) || !Number.isFinite(v) || !lo || v > max) {
    const range = minExclusive ? `a number above ${min}, at most ${max}` : `a number from ${min} to ${max}`;
    return bad(name, what ? `${range} (${what})` : range, raw, dflt);
  }
  return { value: v };
}

/**
 * One of a fixed list of words (compared exactly, after trimming).
 * @param {string} name attribute name
 * @param {string|null|undefined} raw (absent → `dflt`)
 * @param {{dflt: string, values: readonly string[]}} o the allowed values
 * @returns {{value: string}|{error: MHAError, dflt: string}}
 */
export function enumAttr(name, raw, { dflt, values }) {
  if (absent(raw)) return { value: dflt };
  const s = String(raw).trim();
  if (!values.includes(s)) return bad(name, `one of ${values.map((v) => `"${v}"`).join(', ')}`, raw, dflt);
  return { value: s };
}

/** The heatmaps' colour scales: the values of a `scheme` attribute (the first is the default). */
export const SCHEMES = ['viridis', 'cividis'];

/**
 * The `scheme` attribute of an element that draws heatmaps: one of SCHEMES.
 * @param {string|null|undefined} raw (absent → "viridis")
 * @returns {{value: string}|{error: MHAError, dflt: string}}
 */
export function schemeAttr(raw) {
  return enumAttr('scheme', raw, { dflt: SCHEMES[0], values: SCHEMES });
}

/**
 * A list of attention heads as `layer:head` pairs, 1-based as pages show them, separated by spaces
 * or commas ("2:1 2:3" = layer 2's heads 1 and 3). Every entry must be a pair within the model:
 * one bad entry makes the whole attribute invalid (nothing is silently dropped). Empty = no heads.
 * @param {string} name attribute name
 * @param {string|null|undefined} raw (absent → `dflt`)
 * @param {{layers: number, heads: number, dflt?: Array<[number, number]>}} o the model's layer and
 *   head counts
 * @returns {{value: Array<[number, number]>}|{error: MHAError, dflt: Array<[number, number]>}} 0-based
 *   `[layer, head]` pairs (duplicates removed), the form CharModel.run takes
 */
export function headListAttr(name, raw, { layers, heads, dflt = [] }) {
  if (absent(raw)) return { value: dflt };
  const expected = `space-separated layer:head pairs with layer 1–${layers} and head 1–${heads}`;
  const out = [];
  for (const part of String(raw).split(/[\s,]+/).filter(Boolean)) {
    const m = /^(\d+):(\d+)$/.exec(part);
    const l = m ? Number(m[1]) : 0, j = m ? Number(m[2]) : 0;
    if (!m) return bad(name, `${expected} ("${part}" is not a layer:head pair)`, raw, dflt);
    if (l < 1 || l > layers) return bad(name, `${expected} ("${part}" names layer ${l})`, raw, dflt);
    if (j < 1 || j > heads) return bad(name, `${expected} ("${part}" names head ${j})`, raw, dflt);
    if (!out.some(([a, b]) => a === l - 1 && b === j - 1)) out.push([l - 1, j - 1]);
  }
  return { value: out };
}

/**
 * A space-separated list of tokens (words).
 * @param {string} name attribute name
 * @param {string|null|undefined} raw the attribute's string (absent → `dflt`)
 * @param {{dflt: string[], max: number}} o at most `max` tokens, at least one
 * @returns {{value: string[]}|{error: MHAError, dflt: string[]}}
 */
export function tokensAttr(name, raw, { dflt, max }) {
  if (absent(raw)) return { value: dflt };
  const toks = String(raw).trim().split(/\s+/).filter(Boolean);
  if (toks.length < 1 || toks.length > max) {
    return bad(name, `1 to ${max} space-separated words (found ${toks.length})`, raw, dflt);
  }
  return { value: toks };
}

/**
 * A token-list property (an array of strings), checked like `tokensAttr`.
 * @param {string} name property name
 * @param {unknown} v the property's value (undefined/null → `fallback`)
 * @param {{fallback: {value: string[]}|{error: MHAError}, max: number}} o
 */
export function tokensProp(name, v, { fallback, max }) {
  if (v === undefined || v === null) return fallback;
  if (!Array.isArray(v) || v.length < 1 || v.length > max || v.some((t) => typeof t !== 'string' || t.trim() === '')) {
    return { error: attrError(name, `an array of 1 to ${max} non-empty strings`, Array.isArray(v) ? `[${v.join(', ')}]` : v), dflt: fallback.value };
  }
  return { value: v.map((t) => t.trim()) };
}

/**
 * A reference to another element by id (`for="stepper-1"`), looked up in the host's document or
 * shadow root. Only elements whose tag is in `tags` are accepted; any other element, or no element
 * with that id once the document has been parsed, is an error. While the document is still loading
 * an id not found yet is `{value: null, pending: true}`: call again on DOMContentLoaded.
 * @param {Element} host the element that has the attribute
 * @param {string} name attribute name ("for")
 * @param {string|null|undefined} raw the id (absent or empty → `{value: null}`)
 * @param {{tags: readonly string[]}} o accepted tag names, lower case, e.g. ['mha-stepper']
 * @returns {{value: Element|null, pending?: boolean}|{error: MHAError, dflt: null}}
 */
export function refAttr(host, name, raw, { tags }) {
  if (absent(raw) || String(raw).trim() === '') return { value: null };
  const id = String(raw).trim();
  const root = host.getRootNode();
  const el = typeof root.getElementById === 'function' ? root.getElementById(id) : host.ownerDocument?.getElementById(id);
  const kinds = tags.map((t) => `<${t}>`).join(' or ');
  if (!el) {
    if (host.ownerDocument?.readyState === 'loading') return { value: null, pending: true };
    return bad(name, `the id of ${kinds} on this page (no element has id "${id}")`, raw, null);
  }
  if (!tags.includes(el.localName)) return bad(name, `the id of ${kinds} (id "${id}" is a <${el.localName}>)`, raw, null);
  return { value: el };
}

/**
 * The bookkeeping of the error contract for one element. In `willUpdate`, call `begin()`, then
 * `take(name, result)` for each attribute (it returns the value to use: the parsed value, or on an
 * error the last valid value of that attribute, or its default), then `end()`, which fires one
 * `mha-error` (`detail: {error}`) per error that was not already reported for the same value.
 * `errors` lists the current errors; `view()` renders them (one `<p role="alert">` each).
 */
export class AttrGuard {
  /** @param {HTMLElement} host */
  constructor(host) {
    this.host = host;
    /** @type {MHAError[]} the attributes in error after the last `end()` */
    this.errors = [];
    this._pending = [];
    this._last = new Map();
    this._fired = new Set();
  }

  begin() { this._pending = []; }

  /**
   * @template T
   * @param {string} name attribute name (the key of the last valid value)
   * @param {{value: T}|{error: MHAError, dflt: T}} r a parser's result
   * @returns {T}
   */
  take(name, r) {
    if (r.error) {
      this._pending.push(r.error);
      return this._last.has(name) ? this._last.get(name) : r.dflt;
    }
    this._last.set(name, r.value);
    return r.value;
  }

  /** Add an error found outside a parser (e.g. heads that do not divide d-model). */
  add(error) { this._pending.push(error); }

  /** @returns {MHAError[]} the errors of this pass; fires `mha-error` for the new ones. */
  end() {
    this.errors = this._pending;
    const keys = new Set(this.errors.map((e) => `${e.argument}\u0000${e.message}`));
    this.errors.forEach((e) => {
      const k = `${e.argument}\u0000${e.message}`;
      if (!this._fired.has(k)) fireError(this.host, e);
    });
    this._fired = keys;
    return this.errors;
  }

  /**
   * Whether the attribute `name` is in error: in this pass when called between `begin()` and
   * `end()` (so that a check of the pass does not see the last pass's error and skip its own),
   * else after the last `end()`.
   */
  has(name) { return this._pending.some((e) => e.argument === name); }

  /** The inline messages: one `<p class="error" part="error" role="alert" data-attr>` per error. */
  view() {
    return this.errors.length
      ? this.errors.map((e) => html`<p class="error" part="error" role="alert" data-attr=${e.argument}>${e.message}</p>`)
      : nothing;
  }
}

/**
 * Fire the one `mha-error` shape: `detail: {error}`, bubbling and composed.
 * @param {HTMLElement} host
 * @param {Error} error an MHAError (or the engine's/model's error)
 */
export function fireError(host, error) {
  host.dispatchEvent(new CustomEvent('mha-error', { detail: { error }, bubbles: true, composed: true }));
}

/**
 * The Lit property converter of the numeric attributes: a number written as JavaScript writes it
 * ("4", "0.7", "-2") becomes that number, so that `el.heads + 1` is 5; anything else ("abc",
 * "04", "1e3", " 4") is kept as the string written, so that a parser sees it and its message
 * quotes it. Reflecting never rewrites the author's attribute ("abc" stays "abc", not "NaN"); a
 * number set as a property is kept as a number. The properties are typed `number|string`.
 */
export const rawAttr = {
  fromAttribute: (s) => (typeof s === 'string' && Number.isFinite(Number(s)) && String(Number(s)) === s ? Number(s) : s),
  toAttribute: (v) => (v === null || v === undefined ? null : String(v)),
};

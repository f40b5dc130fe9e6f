// Checked attribute parsing for <mha-causal-mask> and <mha-cross-attention>: each helper reads one
// attribute's raw string and returns either its value or an MHAError (code INVALID_ARGUMENT) whose
// message names the attribute, what was expected and what was written. The element keeps its last
// good state, shows the message in place and leaves the attribute as the author wrote it.
import { MHAError } from '../src/index.js';

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

/**
 * An integer attribute.
 * @param {string} name attribute name
 * @param {string|null|undefined} raw the attribute's string (null/undefined: absent → `dflt`)
 * @param {{dflt: number, min: number, max: number}} range inclusive bounds
 * @returns {{value: number}|{error: MHAError}}
 */
export function intAttr(name, raw, { dflt, min, max }) {
  if (raw === null || raw === undefined) return { value: dflt };
  const s = String(raw).trim();
  const v = Number(s);
  if (s === '' || !/^[+-]?\d+$/.test(s) || !Number.isSafeInteger(v) || v < min || v > max) {
    return { error: attrError(name, `a whole number from ${min} to ${max}`, raw) };
  }
  return { value: v };
}

/**
 * A space-separated list of tokens (words).
 * @param {string} name attribute name
 * @param {string|null|undefined} raw the attribute's string (absent → `dflt`)
 * @param {{dflt: string[], max: number}} o at most `max` tokens, at least one
 * @returns {{value: string[]}|{error: MHAError}}
 */
export function tokensAttr(name, raw, { dflt, max }) {
  if (raw === null || raw === undefined) return { value: dflt };
  const toks = String(raw).trim().split(/\s+/).filter(Boolean);
  if (toks.length < 1 || toks.length > max) {
    return { error: attrError(name, `1 to ${max} space-separated words (found ${toks.length})`, raw) };
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
    return { error: attrError(name, `an array of 1 to ${max} non-empty strings`, Array.isArray(v) ? `[${v.join(', ')}]` : v) };
  }
  return { value: v.map((t) => t.trim()) };
}

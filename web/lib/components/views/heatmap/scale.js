// The colour range of <mha-heatmap> and <mha-heads> (`scale` attribute) and the size above which a
// map is drawn on a canvas.
import { attrError } from '../../base/attr-check.js';

/**
 * The values of the `scale` attribute of `<mha-heatmap>` and `<mha-heads>`: `shared` colours every
 * map on one fixed range, 0 to 1 (every attention weight lies in it: a softmax row sums to 1), so
 * that maps (heads, layers, settings of h) can be compared by colour; `per-map` stretches each map
 * from 0 to its own largest weight, which shows the pattern of a flat map but not how sharp it is.
 */
export const SCALES = Object.freeze(['shared', 'per-map']);

/** The colour range of `scale="shared"`. */
export const SHARED_DOMAIN = Object.freeze([0, 1]);

/** Grids of more cells than this are drawn on a canvas; smaller ones keep a DOM node per cell. */
export const CANVAS_ABOVE = 256;

/**
 * Checks a `scale` attribute.
 * @param {string|null|undefined} raw the attribute as written (null/undefined: absent)
 * @param {string} dflt the element's default
 * @returns {{value: string}|{error: import('../../../src/index.js').MHAError}} an INVALID_ARGUMENT error naming the
 *   attribute, the expected and the actual value
 */
export function parseScale(raw, dflt) {
  if (raw === null || raw === undefined) return { value: dflt };
  const v = String(raw).trim();
  if (SCALES.includes(v)) return { value: v };
  return { error: attrError('scale', SCALES.map((x) => `"${x}"`).join(' or '), raw) };
}

/**
 * The colour range of a map: `[0, its largest value]` (`[0, 1]` when all are ≤ 0).
 * @param {number[][]} m the `[Tq][Tk]` weights
 * @returns {[number, number]}
 */
export function perMapDomain(m) {
  let hi = 0;
  for (const row of m) for (const v of row) if (v > hi) hi = v;
  return [0, hi || 1];
}

/**
 * The labels of a map's rows and columns: the tokens given, else "q1", "q2", … and "k1", "k2", ….
 * @param {number} tq queries
 * @param {number} tk keys
 * @param {string[]|null} tokens the queries' labels (and the keys' without keyTokens)
 * @param {string[]|null} keyTokens the keys' labels
 * @returns {{q: string[], k: string[]}}
 */
export function tokenLabels(tq, tk, tokens, keyTokens) {
  const qt = tokens ?? [];
  const kt = keyTokens ?? tokens ?? [];
  return {
    q: Array.from({ length: tq }, (_, i) => String(qt[i] ?? `q${i + 1}`)),
    k: Array.from({ length: tk }, (_, i) => String(kt[i] ?? `k${i + 1}`)),
  };
}

// Number formatting of the elements (pure; base/shared.js re-exports it).

/**
 * Fixed-point formatting with a real minus sign (U+2212); a value that rounds to zero has none.
 * @param {number} v
 * @param {number} [digits] decimals (default 3)
 * @returns {string} e.g. fmt(-0.5, 2) = "−0.50"; NaN and ±Infinity as String(v)
 */
export function fmt(v, digits = 3) {
  if (!Number.isFinite(v)) return String(v);
  const s = v.toFixed(digits);
  return s.startsWith('-') && Number(s) !== 0 ? '\u2212' + s.slice(1) : s.replace(/^-/, '');
}

/** Integer with thousands separators (en-US), e.g. 1234567 → "1,234,567". */
export function int(v) {
  return Number(v).toLocaleString('en-US');
}

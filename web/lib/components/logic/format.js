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

/**
 * A signed difference: "+" or a real minus sign (U+2212) before the fixed-point magnitude; a value
 * that rounds to zero at `digits` decimals has no sign ("0.000", never "−0.000" or "+0.000").
 * @param {number} v
 * @param {number} [digits] decimals (default 3)
 * @returns {string} e.g. signed(0.0883) = "+0.088", signed(-0.0104) = "−0.010", signed(-0.0002) = "0.000"
 */
export function signed(v, digits = 3) {
  const s = fmt(v, digits);
  return v > 0 && Number(s) !== 0 ? `+${s}` : s;
}

/**
 * A value in whole thousandths as it prints to three decimals (toFixed(3)), so that sums, means and
 * gaps of shown numbers are the arithmetic a reader does on them: thousandths(2.5186) = 2519 (as toFixed(3) prints it: thousandths(2.5185) = 2518, the double being just below).
 * @param {number} v
 * @returns {number} an integer
 */
export function thousandths(v) {
  return Math.round(Number(v.toFixed(3)) * 1000);
}

/** Integer with thousands separators (en-US), e.g. 1234567 → "1,234,567". */
export function int(v) {
  return Number(v).toLocaleString('en-US');
}

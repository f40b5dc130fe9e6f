// TeX source helpers that need no renderer (pure strings; base/tex.js renders them).

/** `\text{…}` of a label, with TeX's special characters escaped. */
export const texText = (s) => `\\text{${String(s).replace(/([_&%$#{}])/g, '\\$1')}}`;

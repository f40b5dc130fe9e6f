// Colours of the elements: the colour scales of the attention maps (viridis, cividis), and the one
// CSS-colour parser (d3-color) behind the text colour on a cell and the packed pixels of a canvas.
import { interpolateViridis, interpolateCividis } from 'd3-scale-chromatic';
import { rgb } from 'd3-color';

/** The color interpolator of a scheme name: 'viridis' (default) or 'cividis'. Both are
 * perceptually uniform and readable with the common forms of color blindness. */
export function interpolatorFor(scheme) {
  return scheme === 'cividis' ? interpolateCividis : interpolateViridis;
}

/** Map a value in [lo, hi] to a CSS color of the scheme. */
export function colorFor(scheme, lo, hi) {
  const f = interpolatorFor(scheme);
  const span = hi - lo || 1;
  return (v) => f(Math.min(1, Math.max(0, (v - lo) / span)));
}

/** sRGB channel (0–255) to linear light, as WCAG 2 defines it. */
function channel(c) {
  c /= 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/**
 * Relative luminance (WCAG 2) of a CSS colour.
 * @param {string} color any colour d3-color reads (`#rgb`, `#rrggbb`, `rgb(r, g, b)`, a name)
 * @returns {number} 0 (black) to 1 (white); an unreadable colour counts as black
 */
export function luminance(color) {
  const { r, g, b } = rgb(color);
  return 0.2126 * channel(r || 0) + 0.7152 * channel(g || 0) + 0.0722 * channel(b || 0);
}

/** Black or white, whichever has more contrast (WCAG contrast ratio) on `bg`. */
export function textOn(bg) {
  const L = luminance(bg);
  const onBlack = (L + 0.05) / 0.05;
  const onWhite = 1.05 / (L + 0.05);
  return onBlack >= onWhite ? '#000' : '#fff';
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const packed = new Map();   // CSS colour -> opaque RGBA packed for a Uint32Array over ImageData

/**
 * A CSS colour as one opaque pixel of `ImageData` read through a `Uint32Array` (bytes R, G, B, A in
 * memory order, whatever the platform's endianness). Cached per colour string.
 * @param {string} color any colour d3-color reads; an unreadable colour gives opaque black
 * @returns {number} an unsigned 32-bit integer
 */
export function packRGBA(color) {
  let v = packed.get(color);
  if (v === undefined) {
    const c = rgb(color);
    const r = Math.round(c.r) || 0, g = Math.round(c.g) || 0, b = Math.round(c.b) || 0;
    v = LITTLE_ENDIAN ? ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
    if (packed.size > 8192) packed.clear();
    packed.set(color, v);
  }
  return v;
}

/**
 * The color scheme an element is drawn in: its computed `color-scheme` (inherited from the page)
 * resolved as `light-dark()` resolves it: `dark` alone is dark, `light dark` follows the reader's
 * system, anything else (`normal`, `light`) is light.
 * @param {Element} el
 * @returns {'light'|'dark'}
 */
export function usedScheme(el) {
  const words = getComputedStyle(el).colorScheme.split(/\s+/);
  if (!words.includes('dark')) return 'light';
  if (!words.includes('light')) return 'dark';
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/**
 * A CSS color value as a canvas takes it: every `light-dark(a, b)` in it replaced by the side of
 * `scheme` (custom properties keep `light-dark()` unresolved in their computed value).
 * @param {string} value e.g. the computed value of `--_fg`
 * @param {'light'|'dark'} scheme
 * @returns {string}
 */
export function resolveLightDark(value, scheme) {
  for (let at = value.indexOf('light-dark('); at >= 0; at = value.indexOf('light-dark(')) {
    let depth = 0, comma = -1, end = -1;
    for (let i = at + 'light-dark('.length; i < value.length && end < 0; i++) {
      const ch = value[i];
      if (ch === '(') depth++;
      else if (ch === ')') { if (depth === 0) end = i; else depth--; } else if (ch === ',' && depth === 0 && comma < 0) comma = i;
    }
    if (end < 0 || comma < 0) return value;
    const side = scheme === 'dark' ? value.slice(comma + 1, end) : value.slice(at + 'light-dark('.length, comma);
    value = value.slice(0, at) + side.trim() + value.slice(end + 1);
  }
  return value.trim();
}

/**
 * A theme token of an element (`--_fg`, `--_bg`, …) as a color a canvas takes.
 * @param {Element} el
 * @param {string} name the custom property
 * @returns {string} '' when unset
 */
export function themeColor(el, name) {
  return resolveLightDark(getComputedStyle(el).getPropertyValue(name), usedScheme(el));
}

// The SVG glyphs of <mha-layer-map> (aria-hidden; each tensor's button label carries the meaning): a
// matrix as a block (optionally in one coloured band per head), a per-head tensor as a deck of cards,
// and one head's T × T score map with the causal mask. Heads differ by hatching as well as colour.
import { html, svg, nothing } from 'lit';
import { schemeTableau10, interpolateSinebow } from 'd3-scale-chromatic';

/**
 * One color per head: Tableau 10 up to 10 heads, else evenly spaced hues of the sinebow.
 * @param {number} i the head, 0-based
 * @param {number} h the number of heads
 * @returns {string} a CSS colour
 */
export function headColor(i, h) {
  return h <= 10 ? schemeTableau10[i % 10] : interpolateSinebow(i / h);
}

/** The outline colour of every glyph (the theme's foreground). */
export const STROKE = 'var(--_fg)';

/** Line spacing of a head's hatching, px. */
const HATCH = 4;

/**
 * The second cue beside colour that tells heads apart: head i's band or card is hatched in one of
 * four ways (i mod 4: plain, vertical, horizontal, diagonal lines), so two neighbouring heads differ
 * in pattern as well as hue.
 * @param {number} x left, px
 * @param {number} y top, px
 * @param {number} w width, px
 * @param {number} h height, px
 * @param {number} i the head, 0-based
 * @returns {import('lit').SVGTemplateResult|typeof nothing}
 */
export function hatch(x, y, w, h, i) {
  const kind = i % 4;
  if (kind === 0 || w < 2 || h < 2) return nothing;
  const ls = [];
  if (kind === 1) for (let a = HATCH / 2; a < w; a += HATCH) ls.push([x + a, y, x + a, y + h]);
  else if (kind === 2) for (let a = HATCH / 2; a < h; a += HATCH) ls.push([x, y + a, x + w, y + a]);
  else {
    for (let k = HATCH; k < w + h; k += HATCH) {   // the points of x' + y' = k inside the box
      const x0 = Math.max(0, k - h), x1 = Math.min(w, k);
      if (x1 > x0) ls.push([x + x0, y + k - x0, x + x1, y + k - x1]);
    }
  }
  return svg`<g class="hatch" data-hatch=${kind}>${ls.map(([a, b, c, d]) => svg`<line x1=${a} y1=${b} x2=${c} y2=${d}></line>`)}</g>`;
}

/**
 * A [rows, cols] block: `n` colored bands along `dir` ('cols' | 'rows'), or plain; `lines` faint row lines.
 * @param {number} w width, px
 * @param {number} hgt height, px
 * @param {{n?: number, dir?: 'cols'|'rows', colors?: (i: number) => string, head?: (i: number) => number, lines?: number, fill?: string}} [o]
 *   bands (`colors(i)`, default one colour per head; `head(i)` the head whose hatching band i takes,
 *   default i), row lines (2–16 drawn), class of a plain block's fill
 * @returns {import('lit').TemplateResult}
 */
export function block(w, hgt, { n = 0, dir = 'cols', colors, head = (i) => i, lines = 0, fill } = {}) {
  const bands = [];
  for (let i = 0; i < n; i++) {
    const c = colors ? colors(i) : headColor(i, n);
    bands.push(dir === 'cols'
      ? svg`<rect x=${(w * i) / n} y="0" width=${w / n} height=${hgt} fill=${c}></rect>${hatch((w * i) / n, 0, w / n, hgt, head(i))}`
      : svg`<rect x="0" y=${(hgt * i) / n} width=${w} height=${hgt / n} fill=${c}></rect>${hatch(0, (hgt * i) / n, w, hgt / n, head(i))}`);
  }
  const ls = [];
  if (lines > 1 && lines <= 16) for (let r = 1; r < lines; r++) ls.push(svg`<line class="faint" x1="0" x2=${w} y1=${(hgt * r) / lines} y2=${(hgt * r) / lines}></line>`);
  return html`<svg class="glyph" width=${w + 2} height=${hgt + 2} viewBox=${`-1 -1 ${w + 2} ${hgt + 2}`} aria-hidden="true" focusable="false">
    ${n ? nothing : svg`<rect width=${w} height=${hgt} class=${fill ?? 'plain'}></rect>`}${bands}${ls}
    <rect width=${w} height=${hgt} fill="none" stroke=${STROKE} stroke-width="1"></rect></svg>`;
}

/**
 * n cards stacked diagonally, one per head: a [n, T, d_k] tensor.
 * @param {number} n cards
 * @param {number} w width of a card, px
 * @param {number} hgt height of a card, px
 * @param {(i: number) => string} [colors] colour of card i (default one colour per head)
 * @param {(i: number) => number} [head] the head whose hatching card i takes (default i)
 * @returns {import('lit').TemplateResult}
 */
export function deck(n, w, hgt, colors = (i) => headColor(i, n), head = (i) => i) {
  const off = Math.min(5, 40 / Math.max(1, n - 1));
  const W = w + off * (n - 1), H = hgt + off * (n - 1);
  const cards = [];
  for (let i = n - 1; i >= 0; i--) {
    cards.push(svg`<rect x=${off * i} y=${off * (n - 1 - i)} width=${w} height=${hgt} fill=${colors(i)} stroke=${STROKE} stroke-width="0.75"></rect>${
      hatch(off * i, off * (n - 1 - i), w, hgt, head(i))}`);
  }
  return html`<svg class="glyph" width=${W + 2} height=${H + 2} viewBox=${`-1 -1 ${W + 2} ${H + 2}`} aria-hidden="true" focusable="false">${cards}</svg>`;
}

/**
 * One head's T × T map, with the causal mask as a grey staircase above the diagonal.
 * @param {number} T tokens
 * @param {number} s side, px
 * @param {string} color the head's colour
 * @param {boolean} causal draw the mask
 * @param {number} head the head, 0-based (`data-head` of the mask)
 * @returns {import('lit').TemplateResult}
 */
export function scoreMap(T, s, color, causal, head) {
  const cells = T <= 16;
  const c = s / T;
  const grid = [];
  if (cells) for (let r = 1; r < T; r++) grid.push(svg`<line class="faint" x1="0" x2=${s} y1=${r * c} y2=${r * c}></line><line class="faint" y1="0" y2=${s} x1=${r * c} x2=${r * c}></line>`);
  let mask = nothing;
  if (causal && T > 1) {
    let pts;
    if (cells) {
      pts = [];
      for (let r = 0; r < T - 1; r++) pts.push(`${(r + 1) * c},${r * c}`, `${(r + 1) * c},${(r + 1) * c}`);
      pts.push(`${s},${(T - 1) * c}`, `${s},0`);
    } else {
      pts = [`0,0`, `${s},${s}`, `${s},0`];
    }
    mask = svg`<polygon class="mask" part="mask" data-head=${head} points=${pts.join(' ')}></polygon>`;
  }
  return html`<svg class="glyph map" width=${s + 2} height=${s + 2} viewBox=${`-1 -1 ${s + 2} ${s + 2}`} aria-hidden="true" focusable="false">
    <rect width=${s} height=${s} fill=${color} fill-opacity="0.55"></rect>${hatch(0, 0, s, s, head)}${grid}${mask}
    <rect width=${s} height=${s} fill="none" stroke=${STROKE} stroke-width="1"></rect></svg>`;
}

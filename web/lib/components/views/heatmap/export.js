// The exporters of <mha-heatmap>: the same picture (title, labels, cells with their values, legend)
// as a PNG (canvas) or as a standalone SVG document, and the download of either.
import { fmt } from '../../base/shared.js';
import { colorFor, interpolatorFor, textOn } from '../../base/color.js';

/**
 * What the exporters draw, handed in by the element (its `_picture()`).
 * @typedef {{label: string, m: number[][], q: string[], k: string[], lo: number, hi: number,
 *   scheme: 'viridis'|'cividis', fg: string, dark: boolean}} Picture
 */

/** The picture's geometry and colours, shared by toPNG() and toSVG(). */
function picture({ label, m, q, k, lo, hi, scheme, fg, dark }) {
  const color = colorFor(scheme, lo, hi);
  const cell = 40, font = '13px system-ui, sans-serif';
  const probe = document.createElement('canvas').getContext('2d');
  probe.font = font;
  const left = 12 + Math.max(...q.map((t) => probe.measureText(t).width));
  const top = 34 + Math.max(...k.map((t) => probe.measureText(t).width));
  const w = left + k.length * cell + 16, h = top + q.length * cell + 48;
  return { label, m, q, k, lo, hi, color, fg, cell, font, left, top, w, h, bg: dark ? '#0d1117' : '#ffffff',
    interp: interpolatorFor(scheme), legendY: top + q.length * cell + 14, legendW: k.length * cell };
}

/**
 * Draw the heatmap (labels, cells, legend) on a canvas and return it as a PNG Blob.
 * @param {Picture} p what to draw
 * @param {{scale?: number}} [opts] device pixels per CSS pixel (default 2)
 * @returns {Promise<Blob>}
 */
export function toPNG(p, { scale = 2 } = {}) {
  const { label, m, q, k, lo, hi, color, fg, cell, font, left, top, w, h, bg, interp, legendY: ly, legendW: lw } = picture(p);
  const canvas = document.createElement('canvas');
  canvas.width = w * scale; canvas.height = h * scale;
  const g = canvas.getContext('2d');
  g.scale(scale, scale);
  g.fillStyle = bg;
  g.fillRect(0, 0, w, h);
  g.font = `600 ${font}`; g.fillStyle = fg; g.textBaseline = 'top';
  g.fillText(label, 6, 6);
  g.font = font;
  k.forEach((t, c) => {
    g.save(); g.translate(left + c * cell + cell / 2 + 4, top - 4); g.rotate(-Math.PI / 2);
    g.textBaseline = 'middle'; g.fillText(t, 0, 0); g.restore();
  });
  g.textBaseline = 'middle'; g.textAlign = 'right';
  q.forEach((t, r) => g.fillText(t, left - 6, top + r * cell + cell / 2));
  g.textAlign = 'center';
  m.forEach((row, r) => row.forEach((v, c) => {
    const cbg = color(v);
    g.fillStyle = cbg; g.fillRect(left + c * cell, top + r * cell, cell - 1, cell - 1);
    g.fillStyle = textOn(cbg);
    g.fillText(fmt(v, 2), left + c * cell + cell / 2, top + r * cell + cell / 2);
  }));
  const grad = g.createLinearGradient(left, 0, left + lw, 0);
  for (let i = 0; i <= 10; i++) grad.addColorStop(i / 10, interp(i / 10));
  g.fillStyle = grad; g.fillRect(left, ly, lw, 10);
  g.fillStyle = fg; g.textAlign = 'right'; g.fillText(fmt(lo, 2), left - 4, ly + 5);
  g.textAlign = 'left'; g.fillText(fmt(hi, 2), left + lw + 4 > w - 30 ? left + lw - 28 : left + lw + 4, ly + 24);
  return new Promise((res) => canvas.toBlob(res, 'image/png'));
}

const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/**
 * The same picture as toPNG() as a standalone SVG document (vector: text stays text, scales
 * without blur), one <rect> per cell carrying its value in a <title>.
 * @param {Picture} p what to draw
 * @returns {string} the SVG markup
 */
export function toSVG(p) {
  const { label, m, q, k, lo, hi, color, fg, cell, left, top, w, h, bg, interp, legendY: ly, legendW: lw } = picture(p);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="system-ui, sans-serif" font-size="13">`,
    `<title>${esc(label)}</title>`,
    `<rect width="${w}" height="${h}" fill="${bg}"/>`,
    `<text x="6" y="18" font-weight="600" fill="${fg}">${esc(label)}</text>`,
    '<defs><linearGradient id="legend">',
    ...Array.from({ length: 11 }, (_, i) => `<stop offset="${i * 10}%" stop-color="${interp(i / 10)}"/>`),
    '</linearGradient></defs>',
  ];
  k.forEach((t, c) => parts.push(`<text transform="translate(${left + c * cell + cell / 2 + 4} ${top - 4}) rotate(-90)" dominant-baseline="middle" fill="${fg}">${esc(t)}</text>`));
  q.forEach((t, r) => parts.push(`<text x="${left - 6}" y="${top + r * cell + cell / 2}" text-anchor="end" dominant-baseline="middle" fill="${fg}">${esc(t)}</text>`));
  m.forEach((row, r) => row.forEach((v, c) => {
    const cbg = color(v);
    const x = left + c * cell, y = top + r * cell;
    parts.push(`<g class="cell"><title>${esc(q[r])} to ${esc(k[c])}: ${fmt(v, 4)}</title><rect x="${x}" y="${y}" width="${cell - 1}" height="${cell - 1}" fill="${cbg}"/>` +
      `<text x="${x + cell / 2}" y="${y + cell / 2}" text-anchor="middle" dominant-baseline="middle" fill="${textOn(cbg)}">${fmt(v, 2)}</text></g>`);
  }));
  parts.push(`<rect x="${left}" y="${ly}" width="${lw}" height="10" fill="url(#legend)"/>`,
    `<text x="${left - 4}" y="${ly + 5}" text-anchor="end" dominant-baseline="middle" fill="${fg}">${fmt(lo, 2)}</text>`,
    `<text x="${left + lw}" y="${ly + 24}" text-anchor="end" dominant-baseline="middle" fill="${fg}">${fmt(hi, 2)}</text>`, '</svg>');
  return parts.join('\n');
}

/**
 * Save the picture as a file (an `<a download>` clicked once).
 * @param {Picture} p what to draw
 * @param {string} [filename] default: the label with every run of other characters than `\w.-` as `_`
 * @param {'png'|'svg'} [format] default 'png'
 */
export async function download(p, filename, format = 'png') {
  const blob = format === 'svg' ? new Blob([toSVG(p)], { type: 'image/svg+xml' }) : await toPNG(p);
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = filename || `${p.label.replace(/[^\w.-]+/g, '_')}.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

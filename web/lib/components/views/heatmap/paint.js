// Painting the canvas rendering of <mha-heatmap>: the cells (base canvas) and the highlighted row and
// focused cell (overlay canvas). Called from the element's `updated()`.
import { fmt } from '../../base/shared.js';
import { colorFor, textOn, packRGBA } from '../../base/color.js';

/**
 * Device pixels (width × height) up to which a map without printed values is drawn at device
 * resolution, gaps included: no CSS mask, which costs the compositor on every frame of a page of maps.
 */
export const DEVICE_PIXELS_MAX = 1 << 19;

/**
 * Paint every cell. A map of up to DEVICE_PIXELS_MAX device pixels, and every map with printed
 * values (show-values, text included), is drawn at device resolution with transparent 1px gaps. A
 * larger one has one pixel per cell, scaled up by CSS with `image-rendering: pixelated` (crisp at any
 * devicePixelRatio) and a CSS mask that cuts the gaps: a 512 × 512 map is a 1 MB bitmap, not 37 MB.
 * `solid`: each cell also covers the gap after it (the canvas's class `solid`), for cells so small
 * that gaps would be half the map.
 * @param {{img?: ImageData, imgKey?: string}} cache the element's last bitmap, reused while its size holds (updated here)
 * @param {HTMLCanvasElement} canvas the base canvas
 * @param {number[][]} m the `[Tq][Tk]` weights
 * @param {{cell: number, dpr: number, key: string, lo: number, hi: number, scheme: 'viridis'|'cividis',
 *   showValues: boolean, digits: number, solid?: boolean}} o side of one cell (CSS px), device pixels
 *   per CSS pixel, the geometry's key (`TqxTk@cell@dpr`), the colour range and scale, the printed
 *   values' decimals, and whether each cell covers the gap after it
 * @returns {{key: string, canvas: HTMLCanvasElement, plot: Element, m: number[][], cell: number, pitch: number,
 *   cssW: number, cssH: number, dpr: number}} what was drawn (drawOverlay's `d`)
 */
export function drawBase(cache, canvas, m, { cell, dpr, key, lo, hi, scheme, showValues, digits, solid = false }) {
  const tq = m.length, tk = m[0].length;
  const pitch = cell + 1;
  const cssW = tk * pitch - 1, cssH = tq * pitch - 1;
  const lores = !showValues && cssW * dpr * cssH * dpr > DEVICE_PIXELS_MAX;
  canvas.className = `${lores ? 'lores' : 'hires'}${solid ? ' solid' : ''}`;
  const W = lores ? tk : Math.max(1, Math.round(cssW * dpr)), H = lores ? tq : Math.max(1, Math.round(cssH * dpr));
  if (canvas.width !== W) canvas.width = W;
  if (canvas.height !== H) canvas.height = H;
  const g = canvas.getContext('2d');
  let img = cache.img;
  const fresh = !img || img.width !== W || img.height !== H || cache.imgKey !== `${key}/${lores}/${solid}`;
  if (!img || img.width !== W || img.height !== H) img = cache.img = g.createImageData(W, H);
  cache.imgKey = `${key}/${lores}/${solid}`;
  const px = new Uint32Array(img.data.buffer);
  const color = colorFor(scheme, lo, hi);
  if (lores) {
    for (let r = 0, i = 0; r < tq; r++) {
      const row = m[r];
      for (let c = 0; c < tk; c++, i++) px[i] = packRGBA(color(row[c]));
    }
  } else {
    paintCells(px, m, { W, H, cell: solid ? pitch : cell, pitch, dpr, fresh, color });
  }
  g.putImageData(img, 0, 0);
  if (showValues) printValues(g, m, { cell, pitch, dpr, color, digits });
  return { key, canvas, plot: canvas.parentElement, m, cell, pitch, cssW, cssH, dpr };
}

/** Cells at device resolution; the 1px gaps stay transparent (cleared once per geometry). */
function paintCells(px, m, { W, H, cell, pitch, dpr, fresh, color }) {
  const tq = m.length, tk = m[0].length;
  if (fresh) px.fill(0);
  const x0 = new Int32Array(tk), x1 = new Int32Array(tk);
  for (let c = 0; c < tk; c++) { x0[c] = Math.round(c * pitch * dpr); x1[c] = Math.min(W, Math.round((c * pitch + cell) * dpr)); }
  for (let r = 0; r < tq; r++) {
    const y0 = Math.round(r * pitch * dpr), y1 = Math.min(H, Math.round((r * pitch + cell) * dpr));
    if (y1 <= y0) continue;
    const row = m[r], base = y0 * W;
    for (let c = 0; c < tk; c++) px.fill(packRGBA(color(row[c])), base + x0[c], base + x1[c]);
    for (let y = y0 + 1; y < y1; y++) px.copyWithin(y * W, base, base + W);
  }
}

/** The value of every cell, in black or white (whichever reads better on its colour). */
function printValues(g, m, { cell, pitch, dpr, color, digits: d }) {
  const style = getComputedStyle(g.canvas);
  const size = parseFloat(style.fontSize) * 0.9 || 10;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.font = `${size}px ${style.fontFamily}`;
  g.textAlign = 'center'; g.textBaseline = 'middle';
  for (let r = 0; r < m.length; r++) {
    for (let c = 0; c < m[r].length; c++) {
      g.fillStyle = textOn(color(m[r][c]));
      g.fillText(fmt(m[r][c], d), c * pitch + cell / 2, r * pitch + cell / 2, cell);
    }
  }
  g.setTransform(1, 0, 0, 1, 0, 0);
}

/**
 * The highlighted row (`highlightRow`) and, while the plot has focus, the active cell's outline,
 * on the overlay canvas (hidden when there is neither).
 * @param {ReturnType<typeof drawBase>|null} d what drawBase drew (nothing to do without it)
 * @param {{highlightRow: number, focused: boolean, active: [number, number], color: (name: string) => string}} o
 *   the highlighted row, whether the plot has focus, the active cell and the element's theme colours
 */
export function drawOverlay(d, { highlightRow: hl, focused, active, color }) {
  if (!d) return;
  const over = d.plot.querySelector('canvas.overlay');
  if (!over) return;
  const pad = 4;
  const W = Math.round((d.cssW + 2 * pad) * d.dpr), H = Math.round((d.cssH + 2 * pad) * d.dpr);
  const showRow = Number.isInteger(hl) && hl >= 0 && hl < d.m.length;
  const g = over.getContext('2d');
  if (!showRow && !focused) {
    // nothing to draw: hide it (no layer to composite), read no style (a style recalc)
    if (!over.hidden) {
      over.hidden = true;
      over.width = 1; over.height = 1;
    }
    return;
  }
  over.hidden = false;
  if (over.width !== W) over.width = W;
  if (over.height !== H) over.height = H;
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.clearRect(0, 0, W, H);
  g.setTransform(d.dpr, 0, 0, d.dpr, d.dpr * pad, d.dpr * pad);
  if (showRow) {
    g.strokeStyle = color('--_fg') || getComputedStyle(over).color;
    g.lineWidth = Math.min(2, d.cell / 3);
    const w = g.lineWidth;
    g.strokeRect(w / 2, hl * d.pitch + w / 2, d.cssW - w, d.cell - w);
  }
  if (focused) {
    const [r, c] = active;
    const x = c * d.pitch, y = r * d.pitch;
    g.lineWidth = 3;
    g.strokeStyle = color('--_focus') || 'orangered';
    g.strokeRect(x - 1.5, y - 1.5, d.cell + 3, d.cell + 3);
    g.lineWidth = 1;
    g.strokeStyle = color('--_bg') || '#fff';
    g.strokeRect(x - 3.5, y - 3.5, d.cell + 7, d.cell + 7);
  }
}

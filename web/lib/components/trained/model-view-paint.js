// The thumbnails of <mha-model-view>: each head's map pooled to a bitmap of at most THUMB_PIXELS a
// side (logic/model-view.js) and painted through one colour table per scheme, on the shared range
// 0 to 1 of every attention weight, so that all thumbnails (and the head opened full size, drawn
// with scale="shared") compare by colour; and the element's styles.
import { css } from 'lit';
import { interpolatorFor, packRGBA } from '../base/color.js';
import { poolMax, thumbSide } from '../logic/model-view.js';

/** Steps of the colour table: a weight w is drawn with the colour of round(w · (LEVELS − 1)) / (LEVELS − 1). */
export const LEVELS = 256;

const tables = new Map();

/**
 * The packed RGBA pixels (base/color.js packRGBA) of a scheme at LEVELS evenly spaced values of 0 … 1.
 * @param {'viridis'|'cividis'} scheme
 * @returns {Uint32Array}
 */
export function colourTable(scheme) {
  let t = tables.get(scheme);
  if (!t) {
    const f = interpolatorFor(scheme);
    t = new Uint32Array(LEVELS);
    for (let i = 0; i < LEVELS; i++) t[i] = packRGBA(f(i / (LEVELS - 1)));
    tables.set(scheme, t);
  }
  return t;
}

/**
 * Paints head j of one layer's attention on a canvas: the map pooled to S × S (S = thumbSide(T)),
 * one bitmap pixel per bin, scaled to the thumbnail's size by CSS.
 * @param {HTMLCanvasElement} canvas
 * @param {{data: Float32Array, shape: number[]}} layer the layer's attention [h, T, T]
 * @param {number} j head
 * @param {Uint32Array} table colourTable(scheme)
 * @param {Float32Array} [scratch] reused pooling buffer of at least S·S values
 */
export function paintThumb(canvas, layer, j, table, scratch) {
  const T = layer.shape[1];
  const S = thumbSide(T);
  if (canvas.width !== S) canvas.width = S;
  if (canvas.height !== S) canvas.height = S;
  const pooled = poolMax(layer.data, j * T * T, T, S, scratch && scratch.length >= S * S ? scratch.subarray(0, S * S) : undefined);
  const g = canvas.getContext('2d');
  const img = g.createImageData(S, S);
  const px = new Uint32Array(img.data.buffer);
  const top = LEVELS - 1;
  for (let i = 0; i < S * S; i++) {
    const v = pooled[i];
    px[i] = table[v > 0 ? (v >= 1 ? top : Math.round(v * top)) : 0];
  }
  g.putImageData(img, 0, 0);
}

/** The styles of <mha-model-view> (on top of trainedStyles). */
export const modelViewStyles = css`
  :host { --_thumb: var(--mha-thumb-size, 64px); container-type: inline-size; }
  .controls { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: end; margin: 0.5rem 0; }
  .controls .text { flex: 1 1 100%; display: grid; gap: 0.2rem; }
  .controls textarea { resize: vertical; }
  .legend { display: flex; align-items: center; gap: 0.4rem; font-size: 0.85rem; }
  .legend .bar { width: 6rem; height: 0.8rem; border: 1px solid var(--_border); border-radius: 3px; }
  .key { font-size: 0.85rem; margin: 0.2rem 0 0.5rem; }
  [role='grid'] { display: grid; gap: 4px; width: max-content; max-width: 100%; }
  [role='row'] { display: grid; grid-template-columns: 2.6rem repeat(var(--_cols), minmax(0, var(--_thumb))); gap: 4px; }
  [role='columnheader'], [role='rowheader'] { font-size: 0.8rem; font-weight: 600; display: flex; align-items: center; justify-content: center; }
  [role='rowheader'] { justify-content: flex-start; }
  .cell { display: flex; flex-direction: column; gap: 1px; min-width: 0; padding: 2px; border: 1px solid var(--_border);
    border-radius: 4px; background: var(--_bg); cursor: pointer; font-size: 0.7rem; line-height: 1.15; }
  .cell:hover { border-color: var(--_fg); }
  .cell:focus-visible, .cell.active:focus { outline: 3px solid var(--_focus, orangered); outline-offset: 1px; }
  .cell.off { border-style: dashed; }
  .cell canvas { display: block; width: 100%; aspect-ratio: 1; image-rendering: pixelated; }
  .lab { white-space: nowrap; overflow: hidden; }
  .sc .type { font-weight: 700; }
  .sc { display: flex; flex-wrap: wrap; column-gap: 0.35em; font-variant-numeric: tabular-nums; white-space: nowrap; }
  .sc .strong { font-weight: 700; text-decoration: underline; }
  @container (max-width: 560px) { .sc { display: none; } [role='row'] { grid-template-columns: 1.8rem repeat(var(--_cols), minmax(0, var(--_thumb))); } }
  dialog { max-width: min(94vw, 60rem); max-height: 92vh; border: 1px solid var(--_border); border-radius: var(--_radius);
    background: var(--_bg); color: var(--_fg); padding: 0.8rem 1rem; box-sizing: border-box; }
  dialog::backdrop { background: rgb(0 0 0 / 0.45); }
  dialog .bar { display: flex; justify-content: space-between; gap: 0.6rem; align-items: center; }
  dialog h3 { margin: 0; font-size: 1.05rem; }
`;

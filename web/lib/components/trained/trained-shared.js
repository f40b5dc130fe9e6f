// What the trained-model elements (<mha-trained-heads>, <mha-induction>, <mha-generate>,
// <mha-twins>, <mha-gqa-story>, <mha-gqa-twins>, <mha-surprisal>) share, in one import: the base
// classes (model-element.js), lazy loading (lazy.js), the pure helpers (../logic/trained-text.js),
// and here the pieces of the grouped-query views: the KV cache's bytes of a model, its formula,
// query heads framed by the K/V head they share.
import { html, mathml, css, nothing } from 'lit';
import { int } from '../base/shared.js';
import { interpolatorFor } from '../base/color.js';
import { kvCacheSize } from '../logic/kv-cache.js';

export * from '../logic/trained-text.js';
export * from './lazy.js';
export { TrainedModelElement, AblatableModelElement, trainedStyles } from './model-element.js';

/** Bytes of one cached value: the engine's KV cache stores float32. */
export const KV_BYTES_PER_VALUE = 4;

/**
 * The KV cache's bytes for a model's config: per token, 2 (K and V) · layers · K/V heads · d_k ·
 * 4 bytes (float32); the same with one K/V head per query head (full multi-head attention); for
 * `tokens` cached tokens; and for the model's whole context.
 * @param {{numLayers: number, numHeads: number, kvHeads?: number, dK: number, context: number}} c
 * @param {number} [tokens] tokens in the cache
 * @returns {{layers: number, kvHeads: number, heads: number, dK: number, bytesPerValue: number, perToken: number,
 *   fullPerToken: number, tokens: number, total: number, fullTotal: number, reserved: number}}
 */
export function kvCacheBytes(c, tokens = 0) {
  const g = c.kvHeads ?? c.numHeads;
  const perToken = kvCacheSize({ layers: c.numLayers, kvHeads: g, dK: c.dK, bytesPerValue: KV_BYTES_PER_VALUE });
  const fullPerToken = kvCacheSize({ layers: c.numLayers, kvHeads: c.numHeads, dK: c.dK, bytesPerValue: KV_BYTES_PER_VALUE });
  return {
    layers: c.numLayers, kvHeads: g, heads: c.numHeads, dK: c.dK, bytesPerValue: KV_BYTES_PER_VALUE,
    perToken, fullPerToken, tokens, total: tokens * perToken, fullTotal: tokens * fullPerToken, reserved: c.context * perToken,
  };
}

/** A product of integers and its result in bytes, as MathML ("2 × 2 × 8 × 12 × 4 = 1,536 bytes"). */
export function bytesFormula(factors, result) {
  return html`<math><mrow>${factors.map((f, i) => mathml`${i ? mathml`<mo>×</mo>` : nothing}<mn>${int(f)}</mn>`)}<mo>=</mo><mn>${int(result)}</mn><mtext>\u00a0bytes</mtext></mrow></math>`;
}

/** The 1-based query heads of K/V head k as a legend names them: "3 & 4", or "1–4" for longer groups. */
export function groupHeads(k, per) {
  return per <= 2 ? Array.from({ length: per }, (_, i) => k * per + i + 1).join(' & ') : `${k * per + 1}–${k * per + per}`;
}

/**
 * Query heads framed by the K/V head they share (query head j reads K/V head ⌊j / (h/g)⌋): one
 * `<fieldset class="group" part="group">` per K/V head, its legend naming the query heads, and inside
 * a `.pair` of what `head(j, k)` renders for each of its query heads. Style with `kvGroupStyles`.
 * @param {number} h query heads
 * @param {number} g K/V heads
 * @param {(j: number, k: number) => unknown} head renders query head j (0-based) of K/V head k
 */
export function kvGroups(h, g, head) {
  const per = h / g;
  return Array.from({ length: g }, (_, k) => html`
    <fieldset class="group" part="group" data-kv-head=${k}>
      <legend>K/V head ${k + 1} <span class="kv">· query heads ${groupHeads(k, per)}</span></legend>
      <div class="pair">${Array.from({ length: per }, (_, i) => head(k * per + i, k))}</div>
    </fieldset>`);
}

/**
 * The side of a cell (CSS px, in half-pixel steps, 1 to 8) of a T × T map about `px` a side: the
 * heatmap draws T cells and T − 1 gaps of 1 px.
 */
export function mapCell(px, T) {
  return Math.max(0.5, Math.min(8, Math.floor(2 * ((px + 1) / Math.max(T, 1) - 1)) / 2));
}

/**
 * One colour legend for a layer's causal attention maps, shown where their own legends are hidden
 * (a narrow element): each map spans 0 to 1, since its first query attends to itself alone.
 * @param {'viridis'|'cividis'} scheme
 */
export function mapsLegend(scheme) {
  const interp = interpolatorFor(scheme);
  const stops = Array.from({ length: 11 }, (_, i) => `${interp(i / 10)} ${i * 10}%`).join(', ');
  return html`<p class="maps-legend"><span>0</span><span class="bar" role="img"
    aria-label=${`color scale ${scheme} from 0 to 1, every map`} style=${`background: linear-gradient(to right, ${stops})`}></span><span>1</span>
    <span class="hint">attention weight, every map (its first query sees only itself: 1)</span></p>`;
}

/** Styles of mapsLegend: shown only in a narrow container (under 520 px), where it stands for the maps' own legends. */
export const mapsLegendStyles = css`
  .maps-legend { display: none; align-items: center; gap: 0.3em; font-size: 0.75rem; margin: 0.3rem 0; flex-wrap: wrap; }
  .maps-legend .bar { width: 6rem; height: 10px; border: 1px solid var(--_border); border-radius: 2px; }
  @container (max-width: 520px) { .maps-legend { display: flex; } }
`;

/** Styles of kvGroups' frames inside a `.groups` box (cell size from --_wide). */
export const kvGroupStyles = [mapsLegendStyles, css`
  .groups { display: flex; flex-wrap: wrap; gap: 0.7rem; align-items: stretch; --mha-cell-size: var(--_wide); }
  .groups:not(.labels) mha-heatmap::part(label) { display: none; }
  .group { border: 2px solid var(--_accent); border-radius: 10px; padding: 0.3rem 0.5rem 0.5rem; margin: 0; min-width: 0;
    max-width: 100%; box-sizing: border-box; }
  .group legend { font-size: 0.85rem; font-weight: 700; padding: 0 0.3em; }
  .group .kv { color: var(--_muted); font-weight: 400; }
  .pair { display: flex; flex-wrap: wrap; gap: 0.5rem; }
  .head { border: 1px solid var(--_border); border-radius: 8px; padding: 0.3rem; overflow-x: auto; max-width: 100%; box-sizing: border-box; }
  .head.off { border-style: dashed; }
  /* the maps of a row line up whatever the lines of text above them (frames and heads stretched to the row) */
  .group { display: flex; flex-direction: column; }
  .group > .pair { flex: 1 1 auto; }
  .pair .head { display: flex; flex-direction: column; align-items: flex-start; }
  .pair .head mha-heatmap { margin-top: auto; }
  /* a switched-off head: its map in grey (the text keeps its full contrast), its switch struck through */
  .head.off mha-heatmap { filter: grayscale(1); }
  /* narrow: four maps of about 60 px to a row, one legend for them all, cells not cut apart */
  @container (max-width: 520px) {
    .groups mha-heatmap::part(legend) { display: none; }
    /* maps without token labels: no "q / k" corner either, so that a map of about 60 px fits its frame */
    .groups:not(.labels) mha-heatmap::part(corner) { font-size: 0; padding: 0; }
    .groups mha-heatmap { --mha-cell-gaps: none; }
    .groups .head { padding: 0.1rem; }
    .groups mha-heatmap { font-size: 10px; }
    .groups mha-heatmap::part(table), .groups mha-heatmap::part(readout) { font-size: 0.65rem; }
  }
`];


// The logic of <mha-model-view>, pure (no DOM, no Lit; tested in Node by tests/model-view-logic.test.mjs):
// a head's map pooled to a thumbnail of fixed size, what each thumbnail says (label, scores, type),
// the accessible name of its cell, and the keyboard moves of the layers × heads grid.
import { headType } from '../../src/index.js';
import { SCORE_OF, f2 } from './trained-text.js';

/** Side of a thumbnail's bitmap in pixels: a map of more tokens is pooled down to it. */
export const THUMB_PIXELS = 64;

/** Rows moved by PageUp / PageDown in the grid. */
export const PAGE_ROWS = 4;

/**
 * The side of a thumbnail's bitmap for a text of T tokens: T itself up to `most`, else `most`.
 * @param {number} T tokens (≥ 1)
 * @param {number} [most] THUMB_PIXELS by default
 * @returns {number}
 */
export const thumbSide = (T, most = THUMB_PIXELS) => Math.max(1, Math.min(T, most));

/**
 * One head's `[T, T]` attention weights pooled to `[S, S]` by the largest weight of each block:
 * bin r covers the rows ⌊r·T/S⌋ … ⌊(r+1)·T/S⌋ − 1 (the columns alike), so every weight lands in
 * exactly one bin, and a sharp pattern (a weight near 1 on the diagonal below the main one, a
 * previous-token head) stays as bright in the thumbnail as in the map; a mean would dim it by the
 * block's size. With S = T it is the map itself.
 * @param {ArrayLike<number>} data the layer's weights [h, T, T] (or one head's [T, T])
 * @param {number} base offset of the head's block (j·T·T)
 * @param {number} T tokens
 * @param {number} S side of the thumbnail, 1 ≤ S ≤ T
 * @param {Float32Array} [out] S·S values to fill
 * @returns {Float32Array} [S, S] row-major
 */
export function poolMax(data, base, T, S, out = new Float32Array(S * S)) {
  out.fill(-Infinity);
  const bin = new Int32Array(T);
  for (let t = 0; t < T; t++) bin[t] = Math.floor((t * S) / T);
  for (let r = 0; r < T; r++) {
    const row = base + r * T, o = bin[r] * S;
    for (let c = 0; c < T; c++) {
      const v = data[row + c], i = o + bin[c];
      if (v > out[i]) out[i] = v;
    }
  }
  return out;
}

/** The short names of the types with a pattern on a thumbnail (broad and mixed heads carry none; every type is in the cell's name). */
export const TYPE_ABBR = Object.freeze({
  'previous-token': 'prev', 'two-back': '2bk', 'current-token': 'self', 'first-token': '1st', induction: 'ind',
});

/**
 * What every head's thumbnail says, in (layer, head) order: its previous-token and induction
 * scores on the text (scoreText: null where the text does not define one, an induction score needs
 * a repeated span), its copying score (copyingScores) where the model has one, and its type: the
 * label measured on the model's probes (LanguageModel.heads) where the model has them, else its
 * strongest pattern on this text (headType with undefined scores as 0), as <mha-trained-heads> labels it.
 * @param {{numLayers: number, numHeads: number}} config
 * @param {Array<{layer: number, head: number, scores: object}>|null} onText scoreText's result
 * @param {Array<{layer: number, head: number, type: string}>|null} [reference] LanguageModel.heads
 * @param {Array<{layer: number, head: number, score: number, copies: boolean}>|null} [copying] copyingScores
 * @returns {Array<{layer: number, head: number, previous: number|null, induction: number|null,
 *   copying: number|null, copies: boolean|null, type: string|null, from: 'probes'|'text'|null}>}
 */
export function headSummaries(config, onText, reference = null, copying = null) {
  const { numLayers: L, numHeads: h } = config;
  const at = (list, l, j) => list?.find((x) => x.layer === l && x.head === j) ?? null;
  const out = [];
  for (let l = 0; l < L; l++) {
    for (let j = 0; j < h; j++) {
      const here = (onText?.[l * h + j]?.layer === l && onText[l * h + j].head === j ? onText[l * h + j] : at(onText, l, j))?.scores ?? null;
      const ref = at(reference, l, j);
      const copy = at(copying, l, j);
      const zeroed = here ? Object.fromEntries(Object.entries(here).map(([k, v]) => [k, v ?? 0])) : null;
      out.push({
        layer: l, head: j,
        previous: here?.previous ?? null, induction: here?.induction ?? null,
        copying: copy ? copy.score : null, copies: copy ? copy.copies : null,
        type: ref ? ref.type : zeroed ? headType(zeroed) : null,
        from: ref ? 'probes' : zeroed ? 'text' : null,
      });
    }
  }
  return out;
}

/** "L3·H5", the label of a thumbnail (1-based). */
export const headLabel = (l, j) => `L${l + 1}·H${j + 1}`;

/**
 * The scores of a thumbnail as short entries: `[{key, text, strong}]` with key 'previous',
 * 'induction' and (where the model has it) 'copying'; `strong` when the score reaches `threshold`
 * (the type threshold for the attention scores, the copying threshold for copying).
 * @param {{previous: number|null, induction: number|null, copying: number|null, copies: boolean|null}} s
 * @param {number} threshold TYPE_THRESHOLD
 * @returns {Array<{key: string, abbr: string, text: string, strong: boolean}>}
 */
export function scoreEntries(s, threshold) {
  const short = (v) => (v === null ? '—' : v >= 0.995 ? '1.0' : v.toFixed(2).replace(/^0/, ''));
  const out = [
    { key: 'previous', abbr: 'p', text: short(s.previous), strong: s.previous !== null && s.previous >= threshold },
    { key: 'induction', abbr: 'i', text: short(s.induction), strong: s.induction !== null && s.induction >= threshold },
  ];
  if (s.copying !== null) out.push({ key: 'copying', abbr: 'c', text: short(s.copying), strong: !!s.copies });
  return out;
}

/**
 * The accessible name of a head's cell: where it is, its type and where that label comes from, its
 * scores in words ("Layer 1, head 3: induction head (probes). On this text: previous-token 0.05,
 * induction 0.81. Copying 0.62.").
 * @param {ReturnType<typeof headSummaries>[number]} s
 * @param {boolean} [off] the head is switched off
 * @returns {string}
 */
export function cellName(s, off = false) {
  const type = s.type === null ? '' : `: ${s.type}${SCORE_OF[s.type] ? ' head' : ''} (${s.from === 'probes' ? 'probes' : 'on this text'})`;
  const ind = s.induction === null ? 'no repeated span' : f2(s.induction);
  const copy = s.copying === null ? '' : ` Copying ${f2(s.copying)}.`;
  return `Layer ${s.layer + 1}, head ${s.head + 1}${type}${off ? ', switched off' : ''}. On this text: previous-token ${f2(s.previous)}, induction ${ind}.${copy}`;
}

/**
 * Where a key moves the active cell of a grid of `rows` × `cols` cells (the WAI-ARIA grid pattern):
 * arrows by one cell (stopping at the edges), Home / End to the first / last cell of the row,
 * Ctrl+Home / Ctrl+End to the first / last cell of the grid, PageUp / PageDown by PAGE_ROWS rows.
 * @param {[number, number]} at the active cell [row, col]
 * @param {{key: string, ctrlKey?: boolean, metaKey?: boolean}} e the key event's fields
 * @param {number} rows
 * @param {number} cols
 * @returns {[number, number]|null} the new cell, or null for a key the grid does not handle
 */
export function gridMove([r, c], e, rows, cols) {
  const ctrl = e.ctrlKey || e.metaKey;
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
  switch (e.key) {
    case 'ArrowRight': return [r, clamp(c + 1, cols)];
    case 'ArrowLeft': return [r, clamp(c - 1, cols)];
    case 'ArrowDown': return [clamp(r + 1, rows), c];
    case 'ArrowUp': return [clamp(r - 1, rows), c];
    case 'Home': return ctrl ? [0, 0] : [r, 0];
    case 'End': return ctrl ? [rows - 1, cols - 1] : [r, cols - 1];
    case 'PageDown': return [clamp(r + PAGE_ROWS, rows), c];
    case 'PageUp': return [clamp(r - PAGE_ROWS, rows), c];
    default: return null;
  }
}

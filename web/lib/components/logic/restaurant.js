// The restaurant worked example of the lesson (library data of <mha-stepper> and <mha-wo-mix>):
// three friends described by six features, two hand-made heads of different widths (head 1 returns
// three value features, head 2 two), and W_O [5, 6] mapping the 5-wide concatenation back to the six
// features. Weights follow the project convention y = x·W, stored [in, out].

/** Row labels: the three people (the queries and keys). */
export const PEOPLE = ['Alex', 'Emma', 'Daniel'];
/** Column labels of X and of the output: the six features. */
export const FEATURES = ['spicy', 'cheap', 'cozy', 'fast', 'flavor', 'vibe'];

/** The input X [3, 6]: one row per person. */
export const X0 = [
  [.98, .95, .12, .97, .15, .08],
  [.11, .96, .94, .09, .13, .18],
  [.14, .17, .92, .11, .96, .95],
];

/** The two heads: names, column labels of Q, K, V, and their W_Q, W_K [6, 2] and W_V [6, d_v]. */
export const HEADS = [
  {
    name: 'taste',
    qCols: ['street-stall', 'upscale'],
    kCols: ['knows-street', 'knows-upscale'],
    vCols: ['sichuan', 'budget', 'upscale'],
    wQ: [[.97, .08], [.99, .11], [.12, .96], [.98, .09], [.13, .07], [.10, .98]],
    wK: [[.96, .09], [.98, .11], [.10, .97], [.97, .08], [.12, .96], [.09, .99]],
    wV: [[.97, .11, .09], [.10, .98, .08], [.09, .12, .96], [.98, .10, .11],
      [.11, .97, .09], [.08, .09, .99]],
  },
  {
    name: 'budget',
    qCols: ['low', 'high'],
    kCols: ['knows-low', 'knows-high'],
    vCols: ['price', 'experience'],
    wQ: [[.95, .08], [.98, .06], [.09, .94], [.91, .11], [.10, .96], [.07, .97]],
    wK: [[.94, .09], [.97, .07], [.08, .95], [.92, .10], [.09, .97], [.08, .96]],
    wV: [[.96, .09], [.97, .08], [.10, .95], [.93, .11], [.09, .96], [.08, .97]],
  },
];

/** W_O [5, 6]: rows 0..2 face head 1 (its 3 value features), rows 3..4 face head 2. */
export const WO = [
  [.96, .09, .08, .95, .10, .07],
  [.10, .94, .11, .09, .96, .08],
  [.08, .10, .95, .07, .11, .97],
  [.11, .96, .09, .10, .12, .08],
  [.09, .10, .12, .08, .95, .96],
];

/** Column labels of the concatenation [3, 5]. */
export const CONCAT_COLS = [
  ...HEADS[0].vCols.map((c) => `${c} (h1)`),
  ...HEADS[1].vCols.map((c) => `${c} (h2)`),
];

/**
 * The options of `mha.createLayer()` for the example: per-head weights, no biases. `wO` replaces
 * W_O (the W_O contributions zero one head's rows of it).
 * @param {number[][]} [wO]
 */
export function restaurantLayerOptions(wO = WO) {
  return {
    dModel: 6, numHeads: 2, bias: false,
    weights: { heads: HEADS.map((h) => ({ wQ: h.wQ, wK: h.wK, wV: h.wV })), wO },
  };
}

/** W_O with the rows facing every head but `head` set to zero (rows 0..2: head 0, rows 3..4: head 1). */
export function woOnly(head) {
  const [from, to] = head === 0 ? [0, 3] : [3, 5];
  return WO.map((row, j) => (j >= from && j < to ? row.slice() : row.map(() => 0)));
}

// Data of the lesson page: the two-head restaurant example and real model configurations.
// Weights follow the project convention y = x·W, stored [in, out].

export const PEOPLE = ['Alex', 'Emma', 'Daniel'];
export const FEATURES = ['spicy', 'cheap', 'cozy', 'fast', 'flavor', 'vibe'];

export const X0 = [
  [.98, .95, .12, .97, .15, .08],
  [.11, .96, .94, .09, .13, .18],
  [.14, .17, .92, .11, .96, .95],
];

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

// W_O [5, 6]: rows 0..2 face head 1 (its 3 value features), rows 3..4 face head 2.
export const WO = [
  [.96, .09, .08, .95, .10, .07],
  [.10, .94, .11, .09, .96, .08],
  [.08, .10, .95, .07, .11, .97],
  [.11, .96, .09, .10, .12, .08],
  [.09, .10, .12, .08, .95, .96],
];

export const CONCAT_COLS = [
  ...HEADS[0].vCols.map((c) => `${c} (h1)`),
  ...HEADS[1].vCols.map((c) => `${c} (h2)`),
];

// Published configurations. layers matter only for the KV cache calculator (decoders); bias: false
// for models whose attention projections have no biases (LLaMA's q/k/v/o projections have none).
export const MODELS = [
  { name: 'Transformer-base', dModel: 512, heads: 8, kvHeads: 8 },
  { name: 'Transformer-large', dModel: 1024, heads: 16, kvHeads: 16 },
  { name: 'BERT-base', dModel: 768, heads: 12, kvHeads: 12 },
  { name: 'BERT-large', dModel: 1024, heads: 16, kvHeads: 16 },
  { name: 'GPT-2 (small)', dModel: 768, heads: 12, kvHeads: 12, layers: 12 },
  { name: 'GPT-3 175B', dModel: 12288, heads: 96, kvHeads: 96, layers: 96 },
  { name: 'LLaMA-2 70B', dModel: 8192, heads: 64, kvHeads: 8, layers: 80, bias: false },
];

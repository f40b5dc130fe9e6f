// Data of the lesson page: the two-head restaurant example and real model configurations.
// Weights follow the project convention y = x·W, stored [in, out].

export const PEOPLE = ['Alex', 'Emma', 'Daniel'];
export const FEATURES = ['spicy', 'cheap', 'cozy', 'fast', 'flavor', 'vibe'];

export const X0 = [
  [0.98, 0.95, 0.12, 0.97, 0.15, 0.08],
  [0.11, 0.96, 0.94, 0.09, 0.13, 0.18],
  [0.14, 0.17, 0.92, 0.11, 0.96, 0.95],
];

export const HEADS = [
  {
    name: 'taste',
    qCols: ['street-stall', 'upscale'],
    kCols: ['knows-street', 'knows-upscale'],
    vCols: ['sichuan', 'budget', 'upscale'],
    wQ: [[0.97, 0.08], [0.99, 0.11], [0.12, 0.96], [0.98, 0.09], [0.13, 0.07], [0.10, 0.98]],
    wK: [[0.96, 0.09], [0.98, 0.11], [0.10, 0.97], [0.97, 0.08], [0.12, 0.96], [0.09, 0.99]],
    wV: [[0.97, 0.11, 0.09], [0.10, 0.98, 0.08], [0.09, 0.12, 0.96], [0.98, 0.10, 0.11],
      [0.11, 0.97, 0.09], [0.08, 0.09, 0.99]],
  },
  {
    name: 'budget',
    qCols: ['low', 'high'],
    kCols: ['knows-low', 'knows-high'],
    vCols: ['price', 'experience'],
    wQ: [[0.95, 0.08], [0.98, 0.06], [0.09, 0.94], [0.91, 0.11], [0.10, 0.96], [0.07, 0.97]],
    wK: [[0.94, 0.09], [0.97, 0.07], [0.08, 0.95], [0.92, 0.10], [0.09, 0.97], [0.08, 0.96]],
    wV: [[0.96, 0.09], [0.97, 0.08], [0.10, 0.95], [0.93, 0.11], [0.09, 0.96], [0.08, 0.97]],
  },
];

// W_O [5, 6]: rows 0..2 face head 1 (its 3 value features), rows 3..4 face head 2.
export const WO = [
  [0.96, 0.09, 0.08, 0.95, 0.10, 0.07],
  [0.10, 0.94, 0.11, 0.09, 0.96, 0.08],
  [0.08, 0.10, 0.95, 0.07, 0.11, 0.97],
  [0.11, 0.96, 0.09, 0.10, 0.12, 0.08],
  [0.09, 0.10, 0.12, 0.08, 0.95, 0.96],
];

export const CONCAT_COLS = [
  ...HEADS[0].vCols.map((c) => `${c} (h1)`),
  ...HEADS[1].vCols.map((c) => `${c} (h2)`),
];

// Published configurations. layers matter only for the KV cache calculator (decoders).
export const MODELS = [
  { name: 'Transformer-base', dModel: 512, heads: 8, kvHeads: 8 },
  { name: 'Transformer-large', dModel: 1024, heads: 16, kvHeads: 16 },
  { name: 'BERT-base', dModel: 768, heads: 12, kvHeads: 12 },
  { name: 'BERT-large', dModel: 1024, heads: 16, kvHeads: 16 },
  { name: 'GPT-2 (small)', dModel: 768, heads: 12, kvHeads: 12, layers: 12 },
  { name: 'GPT-3 175B', dModel: 12288, heads: 96, kvHeads: 96, layers: 96 },
  { name: 'LLaMA-2 70B', dModel: 8192, heads: 64, kvHeads: 8, layers: 80 },
];

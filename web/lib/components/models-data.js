// Published attention configurations of well-known models, shared by <mha-model-table> and
// <mha-kv-calculator>. `layers` matters only for the KV-cache calculator (decoders); `bias: false`
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

/** The decoder models of MODELS (those with `layers`): the KV-cache calculator's choices. */
export const DECODERS = MODELS.filter((m) => m.layers);

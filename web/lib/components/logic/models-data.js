// Published attention configurations of well-known models, shared by <mha-model-table>,
// <mha-kv-calculator> and <mha-cost-ledger>. `layers` matters only for the KV-cache calculator and
// the cost ledger (decoders); `bias: false` for models whose attention projections have no biases
// (LLaMA's q/k/v/o projections have none).
//
// The decoders also carry what the cost ledger needs to count the whole model's weights, published
// values only: dFF (MLP hidden width), mlp ('gelu': two matrices d_model×d_FF and d_FF×d_model with
// biases, GPT-2/3; 'swiglu': three matrices without biases, LLaMA), vocab (vocabulary size), tied
// (input embedding shared with the output projection), positions (learned position embeddings: the
// context length n_ctx; 0 with RoPE), norm ('layernorm': scale and shift, 2·d_model, two per layer
// and one final; 'rmsnorm': scale only, d_model), context (the trained context length), source.
//   GPT-2 small: Radford et al. 2019 and the released checkpoint (d_FF = 4·768, vocab 50257, n_ctx
//     1024, tied): 124,439,808 parameters.
//   GPT-3 175B: Brown et al. 2020, Table 2.1 (d_FF = 4·d_model, n_ctx 2048, GPT-2's vocabulary
//     and architecture): 174.6 billion.
//   LLaMA-2 70B: Touvron et al. 2023 and the released config (intermediate_size 28672, vocab 32000,
//     untied, RMSNorm, SwiGLU, RoPE, 4096 context): 68,976,648,192.
export const MODELS = [
  { name: 'Transformer-base', dModel: 512, heads: 8, kvHeads: 8 },
  { name: 'Transformer-large', dModel: 1024, heads: 16, kvHeads: 16 },
  { name: 'BERT-base', dModel: 768, heads: 12, kvHeads: 12 },
  { name: 'BERT-large', dModel: 1024, heads: 16, kvHeads: 16 },
  { name: 'GPT-2 (small)', dModel: 768, heads: 12, kvHeads: 12, layers: 12,
    dFF: 3072, mlp: 'gelu', vocab: 50257, tied: true, positions: 1024, norm: 'layernorm', context: 1024,
    source: 'Radford et al. 2019 (GPT-2), released checkpoint' },
  { name: 'GPT-3 175B', dModel: 12288, heads: 96, kvHeads: 96, layers: 96,
    dFF: 49152, mlp: 'gelu', vocab: 50257, tied: true, positions: 2048, norm: 'layernorm', context: 2048,
    source: 'Brown et al. 2020 (GPT-3), Table 2.1' },
  { name: 'LLaMA-2 70B', dModel: 8192, heads: 64, kvHeads: 8, layers: 80, bias: false,
    dFF: 28672, mlp: 'swiglu', vocab: 32000, tied: false, positions: 0, norm: 'rmsnorm', context: 4096,
    source: 'Touvron et al. 2023 (Llama 2), released config' },
];

/** The decoder models of MODELS (those with `layers`): the KV-cache calculator's choices. */
export const DECODERS = MODELS.filter((m) => m.layers);

// A tiny GPT-2 Hugging Face folder's tensors and config.json, for the suites that write one and load it
// (model-ranges, model-sources, hf-progress, browser/hf-elements): the tensor names, shapes and [in, out] Conv1D layout of
// transformers' GPT2LMHeadModel, LayerNorm gains of 1, every other tensor from the caller's generator.
// The values are the suites' own business (they compare loads of the same folder with each other).

/**
 * A GPT-2 model's safetensors tensors and its config.json object.
 * @param {{dModel: number, heads?: number, layers: number, context: number, vocab: number,
 *   values: (n: number) => Float32Array, biases?: (n: number) => Float32Array, maskBuffers?: boolean}} o
 *   values: the weights (and the biases, unless `biases` is given), n at a time; maskBuffers: also write each block's causal-mask
 *   buffer `h.N.attn.bias` ([1, 1, context, context] of ones), as older GPT-2 files do
 * @returns {{tensors: Record<string, {data: Float32Array, shape: number[]}>, config: object}}
 */
export function gpt2Folder({ dModel: d, heads = 4, layers, context, vocab, values, biases = values, maskBuffers = false }) {
  const f = 4 * d;
  const w = (...shape) => ({ data: values(shape.reduce((a, b) => a * b, 1)), shape });
  const b = (n) => ({ data: biases(n), shape: [n] });
  const ones = (n) => ({ data: new Float32Array(n).fill(1), shape: [n] });
  const tensors = { 'wte.weight': w(vocab, d), 'wpe.weight': w(context, d) };
  for (let l = 0; l < layers; l++) {
    const p = `h.${l}.`;
    if (maskBuffers) tensors[`${p}attn.bias`] = { data: new Float32Array(context * context).fill(1), shape: [1, 1, context, context] };
    Object.assign(tensors, {
      [`${p}ln_1.weight`]: ones(d), [`${p}ln_1.bias`]: b(d),
      [`${p}attn.c_attn.weight`]: w(d, 3 * d), [`${p}attn.c_attn.bias`]: b(3 * d),
      [`${p}attn.c_proj.weight`]: w(d, d), [`${p}attn.c_proj.bias`]: b(d),
      [`${p}ln_2.weight`]: ones(d), [`${p}ln_2.bias`]: b(d),
      [`${p}mlp.c_fc.weight`]: w(d, f), [`${p}mlp.c_fc.bias`]: b(f),
      [`${p}mlp.c_proj.weight`]: w(f, d), [`${p}mlp.c_proj.bias`]: b(d),
    });
  }
  Object.assign(tensors, { 'ln_f.weight': ones(d), 'ln_f.bias': b(d) });
  const config = { architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_embd: d, n_head: heads, n_layer: layers, n_positions: context, vocab_size: vocab };
  return { tensors, config };
}

/** A seeded linear congruential generator of values uniform in [−scale/2, scale/2). */
export function lcgValues(seed, scale) {
  let s = seed;
  return (n) => Float32Array.from({ length: n }, () => { s = (s * 1103515245 + 12345) >>> 0; return (s / 2 ** 32 - 0.5) * scale; });
}

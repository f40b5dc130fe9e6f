// The model behind <mha-layer-map>: every tensor of one multi-head attention layer in a pre-norm
// decoder block (Vaswani et al. 2017; the pre-norm block as in GPT-2), with its shape, symbolic shape,
// formula, where the shape comes from (a step of the engine's passport, or derived and how), what it
// is for, and a PyTorch line with the numbers filled in. Pure data from one `mha.passport()` result:
// the element draws it, tests/layer-map-logic.test.mjs checks it in Node.
import { MHAError } from '../../src/index.js';
import { int } from './format.js';

/** The tensors of the map, in the order of the forward pass: the values `selected` accepts. */
export const LAYER_MAP_TENSORS = Object.freeze(['x', 'ln1', 'wq', 'wk', 'wv', 'q', 'k', 'v', 'scores', 'weights',
  'heads', 'concat', 'wo', 'attn', 'resid', 'ln2', 'w1', 'hidden', 'w2', 'mlp', 'y']);

/** What each tensor is, in a few words (the end of its button's accessible name). */
export const TENSOR_WHAT = Object.freeze({
  x: 'the block’s input', ln1: 'LayerNorm of X', wq: 'packed query projection', wk: 'packed key projection',
  wv: 'packed value projection', q: 'per-head queries', k: 'per-head keys', v: 'per-head values', scores: 'per-head scores',
  weights: 'per-head attention weights', heads: 'per-head outputs', concat: 'the heads concatenated',
  wo: 'output projection', attn: 'attention output', resid: 'residual stream after attention',
  ln2: 'LayerNorm before the MLP', w1: 'MLP up-projection', hidden: 'MLP hidden activations',
  w2: 'MLP down-projection', mlp: 'MLP output', y: 'the block’s output',
});

/** d_ff of the drawn MLP, as a multiple of d_model (the Transformer's 2048 = 4 · 512, GPT-2's 3072 = 4 · 768). */
export const MLP_RATIO = 4;

/** A shape as written in the map: `[2, 8, 10, 64]`. */
export const bracket = (shape) => `[${shape.join(', ')}]`;

const args = (shape) => shape.join(', ');
const fromP = (s) => ({ shape: s.shape, formula: s.formula, source: { step: s.name } });
const derived = (shape, formula, how) => ({ shape, formula, source: { derived: how } });

/** The passport's steps by name, and the sizes the map needs, read from their shapes. */
function geometry(p, cfg) {
  const step = (name) => {
    const s = (p.steps ?? []).find((x) => x.name === name);
    if (!s) throw new MHAError('INVALID_ARGUMENT', `the engine's passport has no step "${name}" (steps: ${(p.steps ?? []).map((x) => x.name).join(', ')})`);
    return s;
  };
  const batched = cfg.batch !== undefined;
  const X = step('input X');
  const d = X.shape[X.shape.length - 1];
  const pre = X.shape.slice(0, -1);            // [B, T] or [T]
  const Q = step('per-head Q'), K = step('per-head K'), V = step('per-head V');
  const lead = batched ? ['B'] : [];
  return {
    X, Q, K, V, S: step('per-head scores'), A: step('per-head attention weights'), O: step('per-head outputs'),
    C: step('concat'), WO: step('W_O'), OUT: step('output'),
    d, pre, T: pre[pre.length - 1], h: Q.shape[Q.shape.length - 3], g: K.shape[K.shape.length - 3],
    dK: p.dK, dV: p.dV, dff: MLP_RATIO * d, lead, ax: batched ? 1 : 0,   // ax: the axis of T in [B, T, ...]
    act: [...pre, d], actSym: [...lead, 'T', 'd_model'],
  };
}

const QKV_PURPOSE = {
  Q: 'Each head’s queries, what every token is looking for: the packed product x̂·W_Q cut into h pieces of d_k and moved so that the head axis comes before the tokens.',
  K: 'Each head’s keys, what every token offers to be found by: x̂·W_K cut into pieces of d_k per head, head axis first.',
  V: 'Each head’s values, what a token hands over when it is attended to: x̂·W_V cut into pieces of d_v per head, head axis first.',
};

/** Q, K or V per head: the packed product viewed as n heads of width w and transposed, head axis first. */
function qkvTensor(G, which, s, n, w, W, what) {
  const { act, d, pre, h, ax, lead } = G;
  const name = which.toLowerCase();
  const view = [...pre, n, w];
  const code = [
    `# x_hat: ${bracket(act)}${lead.length ? '' : ' (one sequence, no batch axis)'}, W_${which}: ${bracket([d, n * w])}`,
    `${name} = (x_hat @ W_${which}).view(${args(view)}).transpose(${ax}, ${ax + 1})  # ${bracket(s.shape)}`,
  ];
  if (which !== 'Q' && n !== h) code.push(`${name} = ${name}.repeat_interleave(${h / n}, dim=${ax})  # each of the ${n} heads serves ${h / n} query heads`);
  return {
    // the engine's formula reads its input X; in the block that input is x̂ = LN₁(X)
    name, label: which, long: `${which} (per-head ${what})`, ...fromP(s), formula: s.formula.replace(/\bX·/g, 'x̂·'), sym: [...lead, n === h ? 'h' : 'g', 'T', which === 'V' ? 'd_v' : 'd_k'],
    purpose: QKV_PURPOSE[which] + (n !== h ? ` With ${n} key/value heads for ${h} query heads, each ${which} head is shared by ${h / n} query heads (grouped-query attention).` : ''),
    code, row: 'qkv', n, reshape: { packed: [...pre, n * w], view, final: s.shape, n, W },
  };
}

const W_PURPOSE = {
  Q: 'Turns each token into queries for all heads at once; its h column slices of width d_k are the heads’ own query projections W_Q^(i).',
  K: 'Turns each token into keys for all heads at once; column slice i is head i’s W_K^(i).',
  V: 'Turns each token into values for all heads at once; column slice i is head i’s W_V^(i).',
};

/** A packed projection W_Q, W_K or W_V: [d_model, count / d_model], n column slices of width w. */
function weightTensor(G, which, count, n, w) {
  const { d, h } = G;
  return {
    name: `w${which.toLowerCase()}`, label: `W_${which}`, long: `W_${which} (packed ${{ Q: 'query', K: 'key', V: 'value' }[which]} projection)`,
    ...derived([d, count / d], `W_${which} = [W_${which}^(1) | … | W_${which}^(${n})], ${n} column slices of width ${w}`,
      `[d_model, params.w${which} / d_model] from the passport's parameter count w${which} = ${int(count)}`),
    sym: ['d_model', `${n === h ? 'h' : 'g'}·${which === 'V' ? 'd_v' : 'd_k'}`],
    purpose: W_PURPOSE[which],
    code: [`W_${which} = torch.randn(${d}, ${count / d})  # [in, out]: y = x·W`, `W_${which}_0 = W_${which}[:, 0:${w}]  # head 0’s slice [${d}, ${w}]`],
    row: 'weights', n,
  };
}

/** Scores, weights, head outputs, concat, W_O and the attention output (the passport's own steps). */
function attentionCore(G, causal) {
  const { S, A, O, C, WO, OUT, lead, actSym, T, h, dK } = G;
  const hv = O.shape.length - 3;
  const mask = `mask = torch.ones(${T}, ${T}, dtype=torch.bool).triu(1)  # true = masked (a future key)`;
  return [
    { name: 'scores', label: 'scores S', long: 'S (per-head scores)', ...fromP(S), sym: [...lead, 'h', 'T', 'T'],
      purpose: 'How well each query matches each key, per head: T × T dot products scaled by 1/√d_k so that their spread does not grow with d_k.'
        + (causal ? ' The causal mask sets every entry above the diagonal (a key after the query) to −∞.' : ''),
      code: [`s = q @ k.transpose(-2, -1) / math.sqrt(${dK})  # ${bracket(S.shape)}`, ...(causal ? [mask, 's = s.masked_fill(mask, float("-inf"))'] : [])],
      row: 'scores', n: h },
    { name: 'weights', label: 'weights A', long: 'A (per-head attention weights)', ...fromP(A), sym: [...lead, 'h', 'T', 'T'],
      purpose: 'Each row is a probability distribution over the keys one token attends to: the softmax of its row of scores'
        + (causal ? '; the masked entries become exactly 0.' : '.'),
      code: [`a = s.softmax(dim=-1)  # ${bracket(A.shape)}, each row sums to 1`], row: 'weights', n: h },
    { name: 'heads', label: 'head outputs', long: 'head_i (per-head outputs)', ...fromP(O), sym: [...lead, 'h', 'T', 'd_v'],
      purpose: 'Each head’s output: per token, an average of that head’s value vectors weighted by its row of A.',
      code: [`o = a @ v  # ${bracket(O.shape)}`], row: 'heads', n: h },
    { name: 'concat', label: 'concat', long: 'concat(head_1, …, head_h)', ...fromP(C), sym: [...lead, 'T', 'h·d_v'],
      purpose: 'The h head outputs side by side again for each token (the transpose undone), so that one matrix can mix them.',
      code: [`c = o.transpose(${hv}, ${hv + 1}).reshape(${args(C.shape)})  # ${bracket(C.shape)}`], row: 'concat', n: h },
    { name: 'wo', label: 'W_O', long: 'W_O (output projection)', ...fromP(WO), sym: ['h·d_v', 'd_model'],
      purpose: 'Mixes the heads: its h row slices, d_v rows each, say how much each head’s output adds to every feature of the result.',
      code: [`W_O = torch.randn(${args(WO.shape)})  # [h·d_v, d_model]`], row: 'concat', n: h },
    { name: 'attn', label: 'MHA(x̂)', long: 'attention output concat·W_O', ...fromP(OUT), sym: actSym,
      purpose: 'What the attention sub-layer adds to the residual stream: for every token, information gathered from the tokens it attended to.',
      code: [`attn = c @ W_O  # ${bracket(OUT.shape)}`], row: 'attn' },
  ];
}

/** The residual sum after attention, the second LayerNorm, the MLP and the block's output (derived). */
function residualAndMlp(G) {
  const { act, actSym, d, dff, pre, lead } = G;
  const ff = `d_ff = ${MLP_RATIO}·d_model = ${dff}`;
  return [
    { name: 'resid', label: 'X + MHA', long: 'the residual stream after attention', ...derived(act, 'H = X + MHA(LN₁(X))', 'a sum of two tensors of the shape of X'), sym: actSym,
      purpose: 'The residual stream after attention: the block’s input plus the attention output (the skip connection lets the input pass unchanged).',
      code: [`h1 = x + attn  # ${bracket(act)}`], row: 'resid' },
    { name: 'ln2', label: 'LN₂(H)', long: 'LayerNorm of the residual stream', ...derived(act, 'LN₂(H) = γ₂ ⊙ (H − μ) / √(σ² + ε) + β₂', 'LayerNorm keeps the shape'), sym: actSym,
      purpose: 'The second pre-norm: the stream normalised again, this time for the MLP.',
      code: [`h1_hat = F.layer_norm(h1, (${d},))  # ${bracket(act)}`], row: 'ln2' },
    { name: 'w1', label: 'W₁', long: 'W₁ (MLP up-projection)', ...derived([d, dff], 'W₁', `${ff}, the usual choice (not in the attention passport)`), sym: ['d_model', 'd_ff'],
      purpose: `Widens each token’s vector to d_ff = ${MLP_RATIO}·d_model features; unlike attention it looks at one token at a time.`,
      code: [`W_1 = torch.randn(${d}, ${dff})  # [d_model, d_ff]`], row: 'mlp1' },
    { name: 'hidden', label: 'GELU(LN₂·W₁)', long: 'MLP hidden activations', ...derived([...pre, dff], 'U = GELU(LN₂(H)·W₁)', ff), sym: [...lead, 'T', 'd_ff'],
      purpose: 'The MLP’s hidden features per token, after the nonlinearity (GELU here; ReLU or SwiGLU in other models).',
      code: [`u = F.gelu(h1_hat @ W_1)  # ${bracket([...pre, dff])}`], row: 'mlp1' },
    { name: 'w2', label: 'W₂', long: 'W₂ (MLP down-projection)', ...derived([dff, d], 'W₂', ff), sym: ['d_ff', 'd_model'],
      purpose: 'Brings the hidden features back to d_model so that the result can be added to the stream.',
      code: [`W_2 = torch.randn(${dff}, ${d})  # [d_ff, d_model]`], row: 'mlp2' },
    { name: 'mlp', label: 'MLP(LN₂(H))', long: 'MLP output', ...derived(act, 'MLP(LN₂(H)) = U·W₂', 'W₂ maps d_ff back to d_model'), sym: actSym,
      purpose: 'What the MLP sub-layer adds to the residual stream.',
      code: [`m = u @ W_2  # ${bracket(act)}`], row: 'mlp2' },
    { name: 'y', label: 'Y = H + MLP', long: 'Y (the block’s output)', ...derived(act, 'Y = H + MLP(LN₂(H))', 'a sum of two tensors of the shape of X'), sym: actSym,
      purpose: 'The block’s output, the same shape as its input, so that blocks can be stacked: the next block reads it as its X.',
      code: [`y = h1 + m  # ${bracket(act)}`], row: 'y' },
  ];
}

/**
 * Every tensor the map draws, built from one `mha.passport()` result: the shapes the passport lists
 * are taken from its steps (`source.step`); the others are derived from them and say how.
 * @param {object} p the passport
 * @param {{seqLen: number, dModel: number, numHeads: number, batch?: number, kvHeads?: number}} cfg
 * @param {boolean} causal
 * @returns {Array<{name: string, label: string, long: string, shape: number[], sym: string[], formula: string,
 *   source: {step?: string, derived?: string}, purpose: string, code: string[], row: string}>}
 * @throws {MHAError} INVALID_ARGUMENT when the passport lacks a step the map needs
 */
export function layerMapTensors(p, cfg, causal) {
  const G = geometry(p, cfg);
  const { X, Q, K, V, act, actSym, d, h, g, dK, dV } = G;
  return [
    { name: 'x', label: 'X', long: 'X (the block’s input, the residual stream)', ...fromP(X), sym: actSym,
      purpose: 'The residual stream entering the block: one d_model-wide vector per token; each sub-layer reads a normalised copy of it and adds its result back.',
      code: [`x = torch.randn(${args(act)})  # ${bracket(act)}`], row: 'x' },
    { name: 'ln1', label: 'x̂ = LN₁(X)', long: 'x̂ (LayerNorm of X)', ...derived(act, 'x̂ = γ ⊙ (X − μ) / √(σ² + ε) + β, over the last axis', 'LayerNorm keeps the shape of X'), sym: actSym,
      purpose: 'Each token’s vector rescaled to mean 0 and variance 1 (then a learned scale γ and shift β) before attention reads it: the pre-norm placement that keeps deep stacks trainable.',
      code: [`x_hat = F.layer_norm(x, (${d},))  # ${bracket(act)}`], row: 'ln1' },
    weightTensor(G, 'Q', p.params.wQ, h, dK), weightTensor(G, 'K', p.params.wK, g, dK), weightTensor(G, 'V', p.params.wV, g, dV),
    qkvTensor(G, 'Q', Q, h, dK, 'wq', 'queries'), qkvTensor(G, 'K', K, g, dK, 'wk', 'keys'), qkvTensor(G, 'V', V, g, dV, 'wv', 'values'),
    ...attentionCore(G, causal),
    ...residualAndMlp(G),
  ];
}

/** The divisors of n, shortened to the first few and the last ("1, 2, 3, 4, 6, 8, 12, 24"). */
export function divisorsText(n) {
  const ds = [];
  for (let i = 1; i <= n && ds.length < 200; i++) if (n % i === 0) ds.push(i);
  return ds.length <= 9 ? ds.join(', ') : `${ds.slice(0, 7).join(', ')}, …, ${ds[ds.length - 1]}`;
}

import { LitElement, html, svg, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { schemeTableau10, interpolateSinebow } from 'd3-scale-chromatic';
import { MHAError } from '../../src/index.js';
import { baseStyles, taskEngine, errorText, int } from '../base/shared.js';

/** The tensors of the map, in the order of the forward pass: the values `selected` accepts. */
export const LAYER_MAP_TENSORS = Object.freeze(['x', 'ln1', 'wq', 'wk', 'wv', 'q', 'k', 'v', 'scores', 'weights',
  'heads', 'concat', 'wo', 'attn', 'resid', 'ln2', 'w1', 'hidden', 'w2', 'mlp', 'y']);

/** What each tensor is, in a few words (the end of its button's accessible name). */
const WHAT = {
  x: 'the block’s input', ln1: 'LayerNorm of X', wq: 'packed query projection', wk: 'packed key projection',
  wv: 'packed value projection', q: 'per-head queries', k: 'per-head keys', v: 'per-head values', scores: 'per-head scores',
  weights: 'per-head attention weights', heads: 'per-head outputs', concat: 'the heads concatenated',
  wo: 'output projection', attn: 'attention output', resid: 'residual stream after attention',
  ln2: 'LayerNorm before the MLP', w1: 'MLP up-projection', hidden: 'MLP hidden activations',
  w2: 'MLP down-projection', mlp: 'MLP output', y: 'the block’s output',
};

/** d_ff of the drawn MLP, as a multiple of d_model (the Transformer's 2048 = 4 · 512, GPT-2's 3072 = 4 · 768). */
export const MLP_RATIO = 4;

/** The width (px) from which the detail panel sits beside the map instead of under a row. */
const WIDE = 720;

/** Score maps drawn at most; above, the first and last ones with an ellipsis between. */
const MAX_MAPS = 32;

/** One color per head: Tableau 10 up to 10 heads, else evenly spaced hues of the sinebow. */
export function headColor(i, h) {
  return h <= 10 ? schemeTableau10[i % 10] : interpolateSinebow(i / h);
}

/** A label with `_X` subscripts drawn as such: 'W_Q' → W<sub>Q</sub>. */
function rich(label) {
  const parts = label.split(/_(\w)/);
  return parts.map((p, i) => (i % 2 ? html`<sub>${p}</sub>` : p));
}

/** `[2, 8, 10, 64]` */
const bracket = (shape) => `[${shape.join(', ')}]`;

/**
 * Reads a count attribute: a whole number ≥ 1 written in decimal digits (the raw attribute text is
 * kept so a message can quote it). Missing (null, undefined, '') gives `dflt`.
 * @returns {{value?: number, problem?: string}}
 */
function parseCount(raw, attr, what, dflt) {
  // empty counts as left out only for the optional sizes (batch, kv-heads), as their docs say
  if (raw === null || raw === undefined || (raw === '' && dflt === undefined)) return { value: dflt };
  const s = String(raw).trim();
  const n = Number(s);
  if (s === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s) || !Number.isFinite(n)) return { problem: `${attr}: expected a whole number ≥ 1 (${what}), got ${JSON.stringify(String(raw))} (not a number)` };
  if (!Number.isInteger(n) || n < 1) return { problem: `${attr}: expected a whole number ≥ 1 (${what}), got ${JSON.stringify(String(raw))}` };
  if (n > 2 ** 31 - 1) return { problem: `${attr}: expected a whole number ≥ 1 and below 2³¹ (${what}), got ${JSON.stringify(String(raw))}` };
  return { value: n };
}

/** The divisors of n, shortened to the first few and the last. */
function divisorsText(n) {
  const ds = [];
  for (let i = 1; i <= n && ds.length < 200; i++) if (n % i === 0) ds.push(i);
  return ds.length <= 9 ? ds.join(', ') : `${ds.slice(0, 7).join(', ')}, …, ${ds[ds.length - 1]}`;
}

/**
 * The map's configuration from the raw attribute values, or the list of problems (each naming the
 * attribute, what it expects and what it got).
 * @returns {{cfg?: {seqLen: number, dModel: number, numHeads: number, batch?: number, kvHeads?: number}, problems: string[]}}
 */
export function layerMapConfig({ seqLen, dModel, heads, batch, kvHeads }) {
  const T = parseCount(seqLen, 'seq-len', 'tokens T', 5);
  const d = parseCount(dModel, 'd-model', 'the model width d_model', 24);
  const h = parseCount(heads, 'heads', 'num_heads h', 2);
  const B = parseCount(batch, 'batch', 'batch size B, or leave it out for an unbatched input', undefined);
  const g = parseCount(kvHeads, 'kv-heads', 'key/value heads g, or leave it out for g = h', undefined);
  const problems = [T, d, h, B, g].filter((r) => r.problem).map((r) => r.problem);
  if (d.value && h.value && d.value % h.value !== 0) {
    problems.push(`heads: expected a divisor of d-model = ${d.value} (${divisorsText(d.value)}) so that d_k = d_model / h is whole, got ${JSON.stringify(String(heads))}`);
  }
  if (h.value && g.value && !(d.value && d.value % h.value) && h.value % g.value !== 0) {
    problems.push(`kv-heads: expected a divisor of heads = ${h.value} (${divisorsText(h.value)}), got ${JSON.stringify(String(kvHeads))}`);
  }
  if (problems.length) return { problems };
  const cfg = { seqLen: T.value, dModel: d.value, numHeads: h.value };
  if (B.value !== undefined) cfg.batch = B.value;
  if (g.value !== undefined) cfg.kvHeads = g.value;
  return { cfg, problems };
}

/**
 * Every tensor the map draws, built from one `mha.passport()` result: the shapes the passport lists
 * are taken from its steps (`source.step`); the others are derived from them and say how.
 * @param {object} p the passport
 * @param {{seqLen: number, dModel: number, numHeads: number, batch?: number, kvHeads?: number}} cfg
 * @param {boolean} causal
 * @returns {Array<{name: string, label: string, long: string, shape: number[], sym: string[], formula: string,
 *   source: {step?: string, derived?: string}, purpose: string, code: string[], row: string}>}
 */
export function layerMapTensors(p, cfg, causal) {
  const step = (name) => {
    const s = (p.steps ?? []).find((x) => x.name === name);
    if (!s) throw new MHAError('INVALID_ARGUMENT', `the engine's passport has no step "${name}" (steps: ${(p.steps ?? []).map((x) => x.name).join(', ')})`);
    return s;
  };
  const batched = cfg.batch !== undefined;
  const lead = batched ? ['B'] : [];
  const X = step('input X');
  const d = X.shape[X.shape.length - 1];
  const pre = X.shape.slice(0, -1);            // [B, T] or [T]
  const T = pre[pre.length - 1];
  const Q = step('per-head Q'), K = step('per-head K'), V = step('per-head V');
  const h = Q.shape[Q.shape.length - 3];
  const g = K.shape[K.shape.length - 3];
  const dK = p.dK, dV = p.dV;
  const dff = MLP_RATIO * d;
  const ax = batched ? 1 : 0;                   // the axis of T in [B, T, ...]
  const fromP = (s) => ({ shape: s.shape, formula: s.formula, source: { step: s.name } });
  const derived = (shape, formula, how) => ({ shape, formula, source: { derived: how } });
  const act = [...pre, d];
  const actSym = [...lead, 'T', 'd_model'];
  const args = (shape) => shape.join(', ');
  const view = (s, n, w) => [...pre, n, w];
  const qkv = (which, s, n, w, W, what) => {
    const name = which.toLowerCase();
    const code = [
      `# x_hat: ${bracket(act)}, W_${which}: ${bracket([d, n * w])}`,
      `${name} = (x_hat @ W_${which}).view(${args(view(s, n, w))}).transpose(${ax}, ${ax + 1})  # ${bracket(s.shape)}`,
    ];
    if (which !== 'Q' && n !== h) code.push(`${name} = ${name}.repeat_interleave(${h / n}, dim=${ax})  # each of the ${n} heads serves ${h / n} query heads`);
    return {
      name, label: which, long: `${which} (per-head ${what})`, ...fromP(s), sym: [...lead, n === h ? 'h' : 'g', 'T', which === 'V' ? 'd_v' : 'd_k'],
      purpose: {
        Q: 'Each head’s queries, what every token is looking for: the packed product x̂·W_Q cut into h pieces of d_k and moved so that the head axis comes before the tokens.',
        K: 'Each head’s keys, what every token offers to be found by: x̂·W_K cut into pieces of d_k per head, head axis first.',
        V: 'Each head’s values, what a token hands over when it is attended to: x̂·W_V cut into pieces of d_v per head, head axis first.',
      }[which] + (n !== h ? ` With ${n} key/value heads for ${h} query heads, each ${which} head is shared by ${h / n} query heads (grouped-query attention).` : ''),
      code, row: 'qkv', n, reshape: { packed: [...pre, n * w], view: view(s, n, w), final: s.shape, n, W },
    };
  };
  const wMat = (which, count, n, w) => ({
    name: `w${which.toLowerCase()}`, label: `W_${which}`, long: `W_${which} (packed ${{ Q: 'query', K: 'key', V: 'value' }[which]} projection)`,
    ...derived([d, count / d], `W_${which} = [W_${which}^(1) | … | W_${which}^(${n})], ${n} column slices of width ${w}`,
      `[d_model, params.w${which} / d_model] from the passport's parameter count w${which} = ${int(count)}`),
    sym: ['d_model', `${n === h ? 'h' : 'g'}·${which === 'V' ? 'd_v' : 'd_k'}`],
    purpose: {
      Q: 'Turns each token into queries for all heads at once; its h column slices of width d_k are the heads’ own query projections W_Q^(i).',
      K: 'Turns each token into keys for all heads at once; column slice i is head i’s W_K^(i).',
      V: 'Turns each token into values for all heads at once; column slice i is head i’s W_V^(i).',
    }[which],
    code: [`W_${which} = torch.randn(${d}, ${count / d})  # [in, out]: y = x·W`, `W_${which}_0 = W_${which}[:, 0:${w}]  # head 0’s slice [${d}, ${w}]`],
    row: 'weights', n,
  });
  const S = step('per-head scores'), A = step('per-head attention weights'), O = step('per-head outputs');
  const C = step('concat'), WO = step('W_O'), OUT = step('output');
  const hv = O.shape.length - 3;
  const mask = `mask = torch.ones(${T}, ${T}, dtype=torch.bool).triu(1)  # true = masked (a future key)`;
  return [
    { name: 'x', label: 'X', long: 'X (the block’s input, the residual stream)', ...fromP(X), sym: actSym,
      purpose: 'The residual stream entering the block: one d_model-wide vector per token; each sub-layer reads a normalised copy of it and adds its result back.',
      code: [`x = torch.randn(${args(act)})  # ${bracket(act)}`], row: 'x' },
    { name: 'ln1', label: 'x̂ = LN₁(X)', long: 'x̂ (LayerNorm of X)', ...derived(act, 'x̂ = γ ⊙ (X − μ) / √(σ² + ε) + β, over the last axis', 'LayerNorm keeps the shape of X'), sym: actSym,
      purpose: 'Each token’s vector rescaled to mean 0 and variance 1 (then a learned scale γ and shift β) before attention reads it: the pre-norm placement that keeps deep stacks trainable.',
      code: [`x_hat = F.layer_norm(x, (${d},))  # ${bracket(act)}`], row: 'ln1' },
    wMat('Q', p.params.wQ, h, dK), wMat('K', p.params.wK, g, dK), wMat('V', p.params.wV, g, dV),
    qkv('Q', Q, h, dK, 'wq', 'queries'), qkv('K', K, g, dK, 'wk', 'keys'), qkv('V', V, g, dV, 'wv', 'values'),
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
    { name: 'resid', label: 'X + MHA', long: 'the residual stream after attention', ...derived(act, 'H = X + MHA(LN₁(X))', 'a sum of two tensors of the shape of X'), sym: actSym,
      purpose: 'The residual stream after attention: the block’s input plus the attention output (the skip connection lets the input pass unchanged).',
      code: [`h1 = x + attn  # ${bracket(act)}`], row: 'resid' },
    { name: 'ln2', label: 'LN₂(H)', long: 'LayerNorm of the residual stream', ...derived(act, 'LN₂(H) = γ₂ ⊙ (H − μ) / √(σ² + ε) + β₂', 'LayerNorm keeps the shape'), sym: actSym,
      purpose: 'The second pre-norm: the stream normalised again, this time for the MLP.',
      code: [`h1_hat = F.layer_norm(h1, (${d},))  # ${bracket(act)}`], row: 'ln2' },
    { name: 'w1', label: 'W₁', long: 'W₁ (MLP up-projection)', ...derived([d, dff], 'W₁', `d_ff = ${MLP_RATIO}·d_model = ${dff}, the usual choice (not in the attention passport)`), sym: ['d_model', 'd_ff'],
      purpose: `Widens each token’s vector to d_ff = ${MLP_RATIO}·d_model features; unlike attention it looks at one token at a time.`,
      code: [`W_1 = torch.randn(${d}, ${dff})  # [d_model, d_ff]`], row: 'mlp1' },
    { name: 'hidden', label: 'GELU(LN₂·W₁)', long: 'MLP hidden activations', ...derived([...pre, dff], 'U = GELU(LN₂(H)·W₁)', `d_ff = ${MLP_RATIO}·d_model = ${dff}`), sym: [...lead, 'T', 'd_ff'],
      purpose: 'The MLP’s hidden features per token, after the nonlinearity (GELU here; ReLU or SwiGLU in other models).',
      code: [`u = F.gelu(h1_hat @ W_1)  # ${bracket([...pre, dff])}`], row: 'mlp1' },
    { name: 'w2', label: 'W₂', long: 'W₂ (MLP down-projection)', ...derived([dff, d], 'W₂', `d_ff = ${MLP_RATIO}·d_model = ${dff}`), sym: ['d_ff', 'd_model'],
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

// ---- glyphs (SVG, aria-hidden; the button's label carries the meaning) ----

const STROKE = 'var(--_fg)';

/** A [rows, cols] block: `n` colored bands along `dir` ('cols' | 'rows'), or plain; `lines` faint row lines. */
function block(w, hgt, { n = 0, dir = 'cols', colors, lines = 0, fill } = {}) {
  const bands = [];
  for (let i = 0; i < n; i++) {
    const c = colors ? colors(i) : headColor(i, n);
    bands.push(dir === 'cols'
      ? svg`<rect x=${(w * i) / n} y="0" width=${w / n} height=${hgt} fill=${c}></rect>`
      : svg`<rect x="0" y=${(hgt * i) / n} width=${w} height=${hgt / n} fill=${c}></rect>`);
  }
  const ls = [];
  if (lines > 1 && lines <= 16) for (let r = 1; r < lines; r++) ls.push(svg`<line class="faint" x1="0" x2=${w} y1=${(hgt * r) / lines} y2=${(hgt * r) / lines}></line>`);
  return html`<svg class="glyph" width=${w + 2} height=${hgt + 2} viewBox=${`-1 -1 ${w + 2} ${hgt + 2}`} aria-hidden="true" focusable="false">
    ${n ? nothing : svg`<rect width=${w} height=${hgt} class=${fill ?? 'plain'}></rect>`}${bands}${ls}
    <rect width=${w} height=${hgt} fill="none" stroke=${STROKE} stroke-width="1"></rect></svg>`;
}

/** n cards stacked diagonally, one per head: a [n, T, d_k] tensor. */
function deck(n, w, hgt, colors = (i) => headColor(i, n)) {
  const off = Math.min(5, 40 / Math.max(1, n - 1));
  const W = w + off * (n - 1), H = hgt + off * (n - 1);
  const cards = [];
  for (let i = n - 1; i >= 0; i--) {
    cards.push(svg`<rect x=${off * i} y=${off * (n - 1 - i)} width=${w} height=${hgt} fill=${colors(i)} stroke=${STROKE} stroke-width="0.75"></rect>`);
  }
  return html`<svg class="glyph" width=${W + 2} height=${H + 2} viewBox=${`-1 -1 ${W + 2} ${H + 2}`} aria-hidden="true" focusable="false">${cards}</svg>`;
}

/** One head's T × T map, with the causal mask as a grey staircase above the diagonal. */
function scoreMap(T, s, color, causal, head) {
  const cells = T <= 16;
  const c = s / T;
  const grid = [];
  if (cells) for (let r = 1; r < T; r++) grid.push(svg`<line class="faint" x1="0" x2=${s} y1=${r * c} y2=${r * c}></line><line class="faint" y1="0" y2=${s} x1=${r * c} x2=${r * c}></line>`);
  let mask = nothing;
  if (causal && T > 1) {
    let pts;
    if (cells) {
      pts = [];
      for (let r = 0; r < T - 1; r++) pts.push(`${(r + 1) * c},${r * c}`, `${(r + 1) * c},${(r + 1) * c}`);
      pts.push(`${s},${(T - 1) * c}`, `${s},0`);
    } else {
      pts = [`0,0`, `${s},${s}`, `${s},0`];
    }
    mask = svg`<polygon class="mask" part="mask" data-head=${head} points=${pts.join(' ')}></polygon>`;
  }
  return html`<svg class="glyph map" width=${s + 2} height=${s + 2} viewBox=${`-1 -1 ${s + 2} ${s + 2}`} aria-hidden="true" focusable="false">
    <rect width=${s} height=${s} fill=${color} fill-opacity="0.55"></rect>${grid}${mask}
    <rect width=${s} height=${s} fill="none" stroke=${STROKE} stroke-width="1"></rect></svg>`;
}

/**
 * `<mha-layer-map>` — a map of one multi-head attention layer inside a pre-norm decoder block:
 * X → LayerNorm → the packed W_Q, W_K, W_V, each drawn as its h column slices (one color per head)
 * → the per-head Q_i, K_i, V_i → h score maps (T × T, the causal mask greyed when `causal`) →
 * softmax → ·V_i → concat → W_O → + residual → LayerNorm → MLP → + residual. Every tensor is a
 * button; selecting it (click, Enter or Space) opens a panel with its name, shape, formula, what it
 * is for and a PyTorch line with the numbers filled in; for Q, K and V also the reshape
 * `[B, T, d_model] —view→ [B, T, h, d_k] —transpose(1, 2)→ [B, h, T, d_k]` (Vaswani et al. 2017,
 * eq. of MultiHead; the pre-norm block as in GPT-2, Radford et al. 2019).
 *
 * Shapes come from the engine's `mha.passport({seqLen, dModel, numHeads, batch?, kvHeads?})`: the
 * tensors the passport lists take its step's shape and formula; W_Q, W_K, W_V take
 * `[d_model, params.wQ / d_model]` (and wK, wV) from its parameter counts; the norms, residual sums
 * and the MLP (d_ff = 4 · d_model) are derived and marked so (`source.derived`, a dashed shape).
 * A bad attribute (not a whole number ≥ 1, heads not dividing d-model, kv-heads not dividing heads)
 * keeps the last good map, shows one message naming the attribute, what it expects and what it got,
 * fires `mha-error`, and the attribute stays as written.
 *
 * @element mha-layer-map
 *
 * @attr {number} seq-len - Tokens T (default 5).
 * @attr {number} d-model - d_model (default 24).
 * @attr {number} heads - num_heads h, a divisor of d-model (default 2).
 * @attr {number} batch - Batch size B (optional; left out, the shapes are unbatched `[T, d_model]`).
 * @attr {number} kv-heads - Key/value heads g for grouped-query attention, a divisor of heads
 *   (optional; default g = h).
 * @attr {boolean} causal - Draw the causal mask (the grey upper triangle of each score map).
 * @attr {string} selected - The selected tensor, one of `x ln1 wq wk wv q k v scores weights heads
 *   concat wo attn resid ln2 w1 hidden w2 mlp y` (LAYER_MAP_TENSORS); reflects the user's choice.
 *   An unknown name shows a message listing the valid ones and keeps the last valid selection.
 *
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {object|null} passport - Read-only: the engine's passport of the map drawn (the last good one).
 * @prop {Array<{name: string, label: string, shape: number[], sym: string[], formula: string,
 *   source: {step?: string, derived?: string}, purpose: string, code: string[]}>} tensors -
 *   Read-only: every tensor drawn, in forward order (empty before the first passport).
 * @prop {Error|null} error - Read-only: the last attribute or engine error (null when the map is current).
 *
 * @fires select - `{detail: {tensor, shape}}` when the user selects a tensor (`tensor` is its name,
 *   `shape` its number[]); not fired when the page sets `selected`.
 * @fires mha-error - `{detail: {error}}` (an MHAError) for a bad attribute or an engine refusal (shown in place).
 *
 * @csspart figure - The whole map.
 * @csspart caption - The line with d_model, h, d_k, T (and B, g).
 * @csspart tensor - Each tensor's button (`data-tensor`, `data-shape`, `aria-pressed`).
 * @csspart shape - The shape under a tensor's name (`data-derived` when not from the passport).
 * @csspart slices - A packed weight matrix's SVG (one band per head).
 * @csspart map - One head's score or weight map.
 * @csspart mask - The causal mask of one map (only with `causal`).
 * @csspart attention - The attention sub-layer's frame.
 * @csspart mlp - The MLP sub-layer's frame.
 * @csspart detail - The panel of the selected tensor.
 * @csspart reshape - The view/transpose drawing of Q, K or V.
 * @csspart code - The PyTorch lines.
 * @csspart error - A bad attribute or engine error.
 * @csspart selected-error - An unknown `selected` name.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaLayerMap extends LitElement {
  static properties = {
    seqLen: { type: String, attribute: 'seq-len' },
    dModel: { type: String, attribute: 'd-model' },
    heads: { type: String },
    batch: { type: String },
    kvHeads: { type: String, attribute: 'kv-heads' },
    causal: { type: Boolean },
    selected: { type: String, reflect: true },
    engine: { attribute: false },
    passport: { state: true },
    error: { state: true },
    _drawn: { state: true },
    _wide: { state: true },
  };

  static styles = [baseStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; container-type: inline-size; --_mono: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); }
    figure { margin: 0; }
    figcaption { font-size: 0.92em; margin-bottom: 0.6rem; }
    .legend { font-size: 0.82em; color: var(--_muted); margin: 0.3rem 0 0.8rem; display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; }
    .legend svg { vertical-align: middle; }
    .legend .dash { border-bottom: 1.5px dashed currentColor; }
    .block { display: grid; grid-template-columns: 1.9rem minmax(0, 1fr); }
    .rail { position: relative; }
    .rail::before { content: ''; position: absolute; left: calc(50% - 1.5px); width: 3px; top: 0; bottom: 0; background: var(--_muted); }
    .rail.start::before { top: 50%; }
    .rail.end::before { bottom: 50%; }
    .rail .plus {
      position: absolute; left: 50%; top: 50%; transform: translate(-50%, -50%); width: 1.35rem; height: 1.35rem;
      border-radius: 50%; background: var(--_bg); border: 2px solid var(--_fg); display: grid; place-items: center;
      font-weight: 700; line-height: 1; font-size: 0.95rem;
    }
    .sub { border: 1.5px dashed var(--_border); border-radius: calc(var(--_radius) * 1.5); padding: 0.4rem 0.5rem 0.6rem; margin: 0.4rem 0; }
    .sub > h3 { margin: 0 0 0.2rem; font-size: 0.85em; font-weight: 600; color: var(--_muted); }
    .row { display: flex; flex-wrap: wrap; gap: 0.4rem 0.6rem; align-items: flex-end; justify-content: center; }
    .op { text-align: center; color: var(--_muted); font-size: 0.8em; margin: 0.15rem 0; line-height: 1.3; }
    .op .arrow { display: block; font-size: 1.1em; color: var(--_fg); }
    button.t {
      display: inline-flex; flex-direction: column; align-items: center; gap: 0.2rem; padding: 0.3rem 0.4rem;
      background: var(--_bg); min-width: 4.2rem; max-width: 100%;
    }
    button.t:hover { border-color: var(--_accent); }
    button.t[aria-pressed='true'] { background: var(--_surface); color: var(--_fg); border: 2px solid var(--_accent); box-shadow: 0 0 0 1px var(--_accent); }
    button.t.maps { flex-direction: column; }
    .name { font-size: 0.85em; font-weight: 600; }
    .shape { font-family: var(--_mono); font-size: 0.78em; white-space: nowrap; }
    .shape[data-derived] { border-bottom: 1.5px dashed currentColor; }
    .maps-grid { display: flex; flex-wrap: wrap; gap: 4px; justify-content: center; max-width: 100%; }
    .maps-grid .m { display: flex; flex-direction: column; align-items: center; font-size: 0.68em; color: var(--_muted); }
    .maps-grid .more { align-self: center; font-size: 0.8em; color: var(--_muted); padding: 0 0.3em; }
    /* head numbers as generated content: the button's accessible name (which says h) starts with its visible text */
    .maps-grid [data-n]::after { content: attr(data-n); }
    svg.glyph { display: block; max-width: 100%; height: auto; overflow: visible; }
    svg .plain { fill: var(--_surface); }
    svg .wide { fill: var(--_surface); }
    svg .faint { stroke: var(--_fg); stroke-opacity: 0.18; stroke-width: 0.6; }
    svg .mask { fill: var(--mha-mask, #8c959f); fill-opacity: 0.92; }
    .detail {
      background: var(--_surface); border: 1px solid var(--_border); border-left: 4px solid var(--_accent);
      border-radius: var(--_radius); padding: 0.5rem 0.8rem; margin: 0.5rem 0; font-size: 0.9em; text-align: left;
    }
    .detail h4 { margin: 0 0 0.3rem; font-size: 1em; }
    .detail dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.15rem 0.7rem; margin: 0.2rem 0 0.4rem; }
    .detail dt { color: var(--_muted); }
    .detail dd { margin: 0; overflow-wrap: anywhere; }
    .detail .mono { font-family: var(--_mono); font-size: 0.95em; }
    .detail p { margin: 0.3rem 0; }
    pre {
      font-family: var(--_mono); font-size: 0.85em; background: var(--_bg); border: 1px solid var(--_border);
      border-radius: var(--_radius); padding: 0.4rem 0.6rem; margin: 0.4rem 0 0.2rem; white-space: pre-wrap; overflow-wrap: anywhere;
    }
    .reshape { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.5rem; margin: 0.4rem 0; }
    .reshape figure { display: flex; flex-direction: column; align-items: center; gap: 0.2rem; }
    .reshape figcaption { font-size: 0.78em; margin: 0; text-align: center; }
    .reshape .to { font-size: 0.8em; color: var(--_muted); text-align: center; }
    .hint { color: var(--_muted); font-size: 0.85em; margin: 0.4rem 0; }
    .loading { color: var(--_muted); font-size: 0.9em; }
    @media (prefers-reduced-motion: no-preference) {
      button.t { transition: border-color 120ms ease, background-color 120ms ease; }
    }
    .layout.wide { display: grid; grid-template-columns: minmax(0, 27rem) minmax(0, 1fr); gap: 1.2rem; align-items: start; }
    .layout.wide .side { position: sticky; top: 0.5rem; }
    .layout.wide .side .detail { margin-top: 0; }
    @container (min-width: 640px) {
      .row { gap: 0.5rem 1.2rem; }
    }
  `];

  constructor() {
    super();
    // the attributes as written (null: left out, the default applies); parsed by layerMapConfig
    /** @type {number|string|null} */
    this.seqLen = null;
    /** @type {number|string|null} */
    this.dModel = null;
    /** @type {number|string|null} */
    this.heads = null;
    /** @type {number|string|null} */
    this.batch = null;
    /** @type {number|string|null} */
    this.kvHeads = null;
    this.causal = false;
    /** @type {string|null} */
    this.selected = null;
    this.engine = undefined;
    this.passport = null;
    this.error = null;
    // the map drawn: {cfg, causal, passport, tensors} of the last good configuration
    this._drawn = null;
    this._task = new Task(this, {
      args: () => [this.seqLen, this.dModel, this.heads, this.batch, this.kvHeads, this.causal, this.engine],
      task: async ([seqLen, dModel, heads, batch, kvHeads, causal, engine], { signal }) => {
        const { cfg, problems } = layerMapConfig({ seqLen, dModel, heads, batch, kvHeads });
        if (problems.length) {
          throw new MHAError('INVALID_ARGUMENT', `<mha-layer-map> ${problems.join('; ')}.`, { argument: problems[0].split(':')[0] });
        }
        const mha = await taskEngine(engine, signal);
        let passport;
        try {
          passport = mha.passport(cfg);
        } catch (e) {
          if (e && e.code) {
            e.message = `<mha-layer-map seq-len="${seqLen ?? ''}" d-model="${dModel ?? ''}" heads="${heads ?? ''}"${batch != null && batch !== '' ? ` batch="${batch}"` : ''}${kvHeads != null && kvHeads !== '' ? ` kv-heads="${kvHeads}"` : ''}>: the engine refused: ${e.message}`;
          }
          throw e;
        }
        return { cfg, causal: !!causal, passport, tensors: layerMapTensors(passport, cfg, !!causal) };
      },
      onComplete: (drawn) => {
        this._drawn = drawn;
        this.passport = drawn.passport;
        this.error = null;
      },
      onError: (err) => {
        this.error = err;
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: err }, bubbles: true, composed: true }));
      },
    });
    this._lastSelected = null;
    this._selectedProblem = '';
    this._wide = false;
    // wide enough for the panel beside the map (else it opens under the selected tensor's row)
    this._resize = typeof ResizeObserver === 'function'
      ? new ResizeObserver(([e]) => { const w = e.contentRect.width >= WIDE; if (w !== this._wide) this._wide = w; })
      : null;
  }

  connectedCallback() {
    super.connectedCallback();
    this._resize?.observe(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._resize?.disconnect();
  }

  /** Every tensor drawn, in forward order (empty before the first passport). */
  get tensors() { return this._drawn ? this._drawn.tensors : []; }

  willUpdate(changed) {
    if (changed.has('selected')) {
      const s = this.selected;
      if (s === null || s === undefined || s === '') {
        this._lastSelected = null;
        this._selectedProblem = '';
      } else if (LAYER_MAP_TENSORS.includes(s)) {
        this._lastSelected = s;
        this._selectedProblem = '';
      } else {
        this._selectedProblem = `selected: expected one of ${LAYER_MAP_TENSORS.join(', ')}, got ${JSON.stringify(String(s))}`
          + (this._lastSelected ? `; still showing ${this._lastSelected}.` : '.');
        const err = new MHAError('INVALID_ARGUMENT', `<mha-layer-map> ${this._selectedProblem}`, { argument: 'selected' });
        queueMicrotask(() => this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: err }, bubbles: true, composed: true })));
      }
    }
  }

  _select(t) {
    this.selected = t.name;
    this.dispatchEvent(new CustomEvent('select', { detail: { tensor: t.name, shape: [...t.shape] }, bubbles: true, composed: true }));
  }

  /** One tensor's button: `glyph` above its name and shape. Its accessible name begins with the visible
   * text (W<sub>Q</sub> reads "WQ"), then what the tensor is and where its shape comes from. */
  _button(t, glyph, extra = '') {
    const derived = !!t.source.derived;
    const pressed = this._lastSelected === t.name;
    return html`<button type="button" class=${`t ${extra}`} part="tensor" data-tensor=${t.name} data-shape=${t.shape.join(',')}
      aria-pressed=${pressed ? 'true' : 'false'} aria-label=${`${t.label.replace(/_/g, '')} ${bracket(t.shape)}: ${WHAT[t.name]}${t.row === 'scores' || t.row === 'weights' ? `, ${t.n} maps of ${t.shape.at(-2)} × ${t.shape.at(-1)}${this._drawn.causal ? ', future keys masked' : ''}` : ''}, shape ${derived ? 'derived' : 'from the engine'}`}
      @click=${() => this._select(t)}>
      ${glyph}
      <span class="name">${rich(t.label)}</span>
      <span class="shape" part="shape" ?data-derived=${derived}>${bracket(t.shape)}</span>
    </button>`;
  }

  _maps(t, T, causal, size, what) {
    const n = t.n;
    const idx = n <= MAX_MAPS ? [...Array(n).keys()] : [...Array(MAX_MAPS - 2).keys(), -1, n - 2, n - 1];
    return html`<div class="maps-grid">${idx.map((i) => i < 0
      ? html`<span class="more" data-n=${`… ${n - MAX_MAPS + 1} more …`}></span>`
      : html`<span class="m" part="map" data-map=${what} data-head=${i} data-n=${i + 1}>${scoreMap(T, size, headColor(i, n), causal, i)}</span>`)}</div>`;
  }

  _glyph(t, d) {
    const { h, g, T } = d;
    switch (t.name) {
      case 'x': case 'ln1': case 'attn': case 'resid': case 'ln2': case 'mlp': case 'y':
        return block(76, 26, { lines: T });
      case 'wq': case 'wk': case 'wv':
        return html`<span part="slices" data-slices=${t.n}>${block(64, 56, { n: t.n, colors: t.name === 'wq' ? undefined : (i) => headColor(i * (h / g), h) })}</span>`;
      case 'q': return deck(h, 30, 30);
      case 'k': case 'v': return deck(g, 30, 30, (i) => headColor(i * (h / g), h));
      case 'heads': return deck(h, 26, 30);
      case 'concat': return block(80, 26, { n: h, lines: T });
      case 'wo': return html`<span part="slices" data-slices=${h}>${block(56, 64, { n: h, dir: 'rows' })}</span>`;
      case 'w1': return block(96, 28);
      case 'hidden': return block(110, 26, { lines: T });
      case 'w2': return block(28, 96);
      default: return nothing;
    }
  }

  _reshape(t) {
    const r = t.reshape;
    const n = r.n;
    const h = this._drawn.tensors.find((x) => x.name === 'q').n;
    const c = (i) => headColor(i * (h / n), h);   // K and V head j: the colour of its first query head
    const w = 84, hh = 34;
    const gap = n <= 16 ? 3 : 1;
    const bw = (w - gap * (n - 1)) / n;
    const split = [];
    for (let i = 0; i < n; i++) split.push(svg`<rect x=${i * (bw + gap)} y="0" width=${bw} height=${hh} fill=${c(i)} stroke=${STROKE} stroke-width="0.6"></rect>`);
    const which = t.label;
    const ax = r.final.length === 4 ? 1 : 0;
    return html`<div class="reshape" part="reshape" role="group" aria-label=${`How ${which} gets its head axis`}>
      <figure>${block(w, hh, { n, colors: c })}<figcaption>x̂·W<sub>${which}</sub><br><span class="shape">${bracket(r.packed)}</span></figcaption></figure>
      <span class="to"><span aria-hidden="true">→</span><br>.view</span>
      <figure><svg class="glyph" width=${w + 2} height=${hh + 2} viewBox=${`-1 -1 ${w + 2} ${hh + 2}`} aria-hidden="true" focusable="false">${split}</svg>
        <figcaption>split the last axis<br><span class="shape">${bracket(r.view)}</span></figcaption></figure>
      <span class="to"><span aria-hidden="true">→</span><br>.transpose(${ax}, ${ax + 1})</span>
      <figure>${deck(n, 30, 30, c)}<figcaption>head axis first<br><span class="shape">${bracket(r.final)}</span></figcaption></figure>
    </div>
    <p>The view only reads the same numbers as ${n} groups of ${r.view[r.view.length - 1]}; the transpose swaps two axes without copying, so each head can multiply its own T × ${r.view[r.view.length - 1]} block.</p>`;
  }

  _detail(t, beside = false) {
    if (!t || this._wide !== beside) return nothing;
    const src = t.source.step
      ? html`the engine’s passport, step “${t.source.step}”`
      : html`derived: ${t.source.derived}`;
    return html`<section class="detail" part="detail" aria-labelledby="detail-title" data-tensor=${t.name}>
      <h4 id="detail-title">${t.long}</h4>
      <dl>
        <dt>shape</dt><dd class="mono" data-k="shape">${bracket(t.shape)} = ${bracket(t.sym)}</dd>
        <dt>formula</dt><dd class="mono" data-k="formula">${t.formula}</dd>
        <dt>shape from</dt><dd data-k="source">${src}</dd>
      </dl>
      <p data-k="purpose">${t.purpose}</p>
      ${t.reshape ? this._reshape(t) : nothing}
      <pre part="code"><code>${t.code.join('\n')}</code></pre>
    </section>`;
  }

  /** The buttons of one row, then the detail panel if the selected tensor is in it. */
  _row(names, byName, d, cls = 'row') {
    const ts = names.map((n) => byName.get(n));
    const sel = ts.find((t) => t.name === this._lastSelected);
    return html`<div class=${cls}>${ts.map((t) => this._button(t, this._glyph(t, d), t.row === 'scores' || t.row === 'weights' ? 'maps' : ''))}</div>${this._detail(sel)}`;
  }

  render() {
    const dr = this._drawn;
    const err = this.error ? html`<p class="error" part="error" role="alert">${errorText(this.error).replace(/([^.!?])$/, '$1.')}${dr ? ' The map still shows the last valid attributes.' : ''}</p>` : nothing;
    const selErr = this._selectedProblem ? html`<p class="error" part="selected-error" role="alert">${this._selectedProblem}</p>` : nothing;
    if (!dr) return html`${err}${selErr}${this.error ? nothing : html`<p class="loading">Asking the engine for the layer’s shapes…</p>`}`;
    const { cfg, causal, passport: p, tensors } = dr;
    const byName = new Map(tensors.map((t) => [t.name, t]));
    const h = byName.get('q').n, g = byName.get('k').n;
    const T = cfg.seqLen;
    const d = { h, g, T };
    const mapsBtn = (name, size) => {
      const t = byName.get(name);
      return html`<div class="row">${this._button(t, this._maps(t, T, causal, size, name), 'maps')}</div>${this._detail(t.name === this._lastSelected ? t : null)}`;
    };
    const op = (text) => html`<div class="op"><span class="arrow" aria-hidden="true">↓</span>${text}</div>`;
    const colours = Math.min(h, 10);
    const sel = this._lastSelected ? byName.get(this._lastSelected) : null;
    const hint = html`<p class="hint">Select a tensor (click, or Tab to it and press Enter) to see its shape, formula and a PyTorch line.</p>`;
    return html`${err}${selErr}
    <figure part="figure">
      <figcaption part="caption">One multi-head attention layer in a pre-norm decoder block:
        d<sub>model</sub> = <span data-k="dModel">${cfg.dModel}</span>, h = <span data-k="h">${h}</span>
        → d<sub>k</sub> = <span data-k="dK">${p.dK}</span> (engine)${g !== h ? html`, g = ${g} key/value heads` : nothing},
        T = ${T}${cfg.batch !== undefined ? html`, B = ${cfg.batch}` : nothing}${causal ? ', causal' : nothing}.</figcaption>
      <div class="legend">
        <span><svg class="sw" width=${colours * 9} height="12" aria-hidden="true">${[...Array(colours).keys()].map((i) => svg`<rect x=${i * 9} width="8" height="12" fill=${headColor(i, h)}></rect>`)}</svg> one colour per head${h > colours ? ` (${colours} of ${h} shown)` : ''}</span>
        <span><span class="dash">[dashed]</span> shape derived, not in the engine’s passport</span>
        ${causal ? html`<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" class="mask"></rect></svg> masked (future keys)</span>` : nothing}
        <span>select a tensor for its shape, formula and PyTorch line</span>
      </div>
      <div class=${this._wide ? 'layout wide' : 'layout'}>
      <div class="block">
        <div class="rail start"></div><div>${this._row(['x'], byName, d)}</div>
        <div class="rail"></div>
        <div class="sub" part="attention"><h3>multi-head attention sub-layer</h3>
          ${op('LayerNorm')}
          ${this._row(['ln1'], byName, d)}
          ${op(html`× the packed projections; column slice i (colour i) is head i’s W<sub>Q</sub><sup>(i)</sup>, W<sub>K</sub><sup>(i)</sup>, W<sub>V</sub><sup>(i)</sup>`)}
          ${this._row(['wq', 'wk', 'wv'], byName, d)}
          ${op(html`x̂·W, then .view(…, ${h === g ? 'h' : 'h or g'}, d<sub>k</sub>) and .transpose: the head axis moves before T`)}
          ${this._row(['q', 'k', 'v'], byName, d)}
          ${op(html`per head: Q<sub>i</sub>·K<sub>i</sub><sup>T</sup> / √d<sub>k</sub>${causal ? ' + causal mask' : ''}`)}
          ${mapsBtn('scores', T <= 16 && h <= 8 ? 44 : 34)}
          ${op('softmax over each row')}
          ${mapsBtn('weights', 22)}
          ${op(html`per head: A<sub>i</sub>·V<sub>i</sub>`)}
          ${this._row(['heads'], byName, d)}
          ${op('transpose back, concatenate the heads; then × W_O')}
          ${this._row(['concat', 'wo'], byName, d)}
          ${op(html`concat·W<sub>O</sub>`)}
          ${this._row(['attn'], byName, d)}
        </div>
        <div class="rail"><span class="plus" aria-hidden="true">+</span></div><div>${op('add to the residual stream')}${this._row(['resid'], byName, d)}</div>
        <div class="rail"></div>
        <div class="sub" part="mlp"><h3>MLP sub-layer (d<sub>ff</sub> = ${MLP_RATIO}·d<sub>model</sub>, derived)</h3>
          ${op('LayerNorm')}
          ${this._row(['ln2'], byName, d)}
          ${op(html`× W<sub>1</sub>, GELU`)}
          ${this._row(['w1', 'hidden'], byName, d)}
          ${op(html`× W<sub>2</sub>`)}
          ${this._row(['w2', 'mlp'], byName, d)}
        </div>
        <div class="rail end"><span class="plus" aria-hidden="true">+</span></div><div>${op('add to the residual stream')}${this._row(['y'], byName, d)}</div>
      </div>
      ${this._wide ? html`<div class="side">${sel ? this._detail(sel, true) : hint}</div>` : sel ? nothing : hint}
      </div>
    </figure>`;
  }
}

customElements.get('mha-layer-map') || customElements.define('mha-layer-map', MhaLayerMap);

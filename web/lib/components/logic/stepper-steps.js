// The eight steps of <mha-stepper> as data: for step s and head i of the restaurant example
// (logic/restaurant.js), the step's formula (TeX), its sentence, the two operands and the result
// (captions, row and column labels, values) and, for any result cell, the TeX of the sum that made
// it. Pure: the element only draws what this returns; tests/stepper-steps.test.mjs checks it in Node.
//
// Captions are plain strings in a small notation the element draws: `_X` is a subscript ("W_Q"),
// `^(…)` a superscript ("Q^(1)" is Q with "(1)" above).
import { PEOPLE, FEATURES, HEADS, WO, CONCAT_COLS } from './restaurant.js';
import { fmt } from './format.js';
import { texText as t } from './tex-text.js';

/** `v` for a TeX sum with `digits` decimals: a negative in parentheses with an ASCII minus ("(-0.250)"). */
const term = (v, digits) => {
  const s = fmt(v, digits);
  return s.startsWith('\u2212') ? `(-${s.slice(1)})` : s;
};
/** A number in a TeX sum: 3 decimals, negatives in parentheses with an ASCII minus. */
export const n3 = (v) => term(v, 3);
/** As n3 with 2 decimals (the example's weights). */
export const n2 = (v) => term(v, 2);
/** The transpose of a nested-array matrix. */
export const transpose = (m) => m[0].map((_, j) => m.map((row) => row[j]));

/** The steps: a title and a short tab label each. Steps 0–5 are per head, 6 and 7 for the layer. */
export const STEPS = Object.freeze([
  { title: 'Queries: Q = X · W_Q', short: 'Q' },
  { title: 'Keys: K = X · W_K', short: 'K' },
  { title: 'Values: V = X · W_V', short: 'V' },
  { title: 'Scores: Q · Kᵀ / √d_k', short: 'scores' },
  { title: 'Attention weights: softmax of each row', short: 'softmax' },
  { title: 'Head output: weights · V', short: 'A·V' },
  { title: 'Concatenate the heads', short: 'concat' },
  { title: 'Project back: concat · W_O', short: 'W_O' },
]);

/** Whether every value of X has at most two decimals (then X is shown with two). */
export const is2dp = (X) => X.flat().every((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-9);

/**
 * @typedef {{caption: string, rows: string[], cols: string[], values: number[][], digits?: number, split?: number}} Operand
 * @typedef {{tex: string, text: string, op: string, left: Operand, right: Operand|null, result: Operand,
 *   explain: (r: number, c: number) => string,
 *   link: (r: number, c: number) => {left?: {row?: number, col?: number}, right?: {row?: number, col?: number}}}} StepView
 * @typedef {{q: number[][], k: number[][], v: number[][], scores: number[][], weights: number[][], output: number[][]}} HeadTrace
 * @typedef {{heads: HeadTrace[], concat: number[][], output: number[][]}} StepperTrace
 */

/** Steps 0–2: Q, K or V of head `hi` = X · W. */
function projectionStep(s, hi, X, tr) {
  const H = HEADS[hi], m = tr.heads[hi];
  const sup = `^(${hi + 1})`;
  const key = ['q', 'k', 'v'][s];
  const W = [H.wQ, H.wK, H.wV][s];
  const cols = [H.qCols, H.kCols, H.vCols][s];
  const L = ['Q', 'K', 'V'][s];
  const text = [
    `Each person's six features are projected onto the ${W[0].length} directions head ${hi + 1} asks about (${cols.join(', ')}).`,
    `The same people, projected onto what each of them can offer as an answer to head ${hi + 1}'s question.`,
    `What each person passes on when someone attends to them: ${H.wV[0].length} value features for head ${hi + 1}.`,
  ][s];
  return {
    tex: `${L}^{(${hi + 1})} = X\\,W_${L}^{(${hi + 1})} \\quad [3 \\times 6] \\cdot [6 \\times ${W[0].length}] \\to [3 \\times ${W[0].length}]`,
    text,
    op: '·',
    left: { caption: 'X', rows: PEOPLE, cols: FEATURES, values: X, digits: is2dp(X) ? 2 : 3 },
    right: { caption: `W_${L}${sup}`, rows: FEATURES, cols, values: W, digits: 2 },
    result: { caption: `${L}${sup}`, rows: PEOPLE, cols, values: m[key] },
    explain: (r, c) => {
      const terms = X[r].map((x, j) => `${n2(x)}\\cdot${n2(W[j][c])}`).join(' + ');
      return `${L}_{${t(PEOPLE[r])},\\,${t(cols[c])}} = ${terms} = ${n3(m[key][r][c])}`;
    },
    link: (r, c) => ({ left: { row: r }, right: { col: c } }),
  };
}

/** Step 3: the scaled scores Q·Kᵀ/√d_k of head `hi`. */
function scoresStep(hi, tr) {
  const H = HEADS[hi], m = tr.heads[hi];
  const sup = `^(${hi + 1})`;
  const dk = H.wQ[0].length;
  return {
    tex: `S^{(${hi + 1})} = \\frac{Q^{(${hi + 1})} K^{(${hi + 1})\\top}}{\\sqrt{d_k}} = \\frac{Q K^{\\top}}{\\sqrt{${dk}}} \\quad [3 \\times ${dk}] \\cdot [${dk} \\times 3] \\to [3 \\times 3]`,
    text: 'Every query is compared with every key by a dot product; dividing by √d_k keeps the numbers in a range where softmax is not saturated.',
    op: '· / √d_k',
    left: { caption: `Q${sup}`, rows: PEOPLE, cols: H.qCols, values: m.q },
    right: { caption: `K${sup}ᵀ`, rows: H.kCols, cols: PEOPLE, values: transpose(m.k) },
    result: { caption: `scores S${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.scores },
    explain: (r, c) => {
      const terms = m.q[r].map((q, j) => `${n3(q)}\\cdot${n3(m.k[c][j])}`).join(' + ');
      return `S_{${t(PEOPLE[r])},\\,${t(PEOPLE[c])}} = \\frac{${terms}}{\\sqrt{${dk}}} = ${n3(m.scores[r][c])}`;
    },
    link: (r, c) => ({ left: { row: r }, right: { col: c } }),
  };
}

/** Step 4: the softmax of each row of scores of head `hi`. */
function softmaxStep(hi, tr) {
  const m = tr.heads[hi];
  const sup = `^(${hi + 1})`;
  return {
    tex: `A^{(${hi + 1})}_{r,c} = \\frac{e^{S_{r,c}}}{\\sum_{j} e^{S_{r,j}}} \\quad [3 \\times 3]`,
    text: 'Softmax turns each row of scores into weights that are positive and add up to 1: one distribution per query, per head.',
    op: 'softmax →',
    left: { caption: `scores S${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.scores },
    right: null,
    result: { caption: `attention weights A${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.weights },
    explain: (r, c) => {
      const den = m.scores[r].map((x) => `e^{${n3(x)}}`).join(' + ');
      return `A_{${t(PEOPLE[r])},\\,${t(PEOPLE[c])}} = \\frac{e^{${n3(m.scores[r][c])}}}{${den}} = ${n3(m.weights[r][c])}`;
    },
    link: (r) => ({ left: { row: r } }),
  };
}

/** Step 5: head `hi`'s output, its weights · V. */
function headOutputStep(hi, tr) {
  const H = HEADS[hi], m = tr.heads[hi];
  const sup = `^(${hi + 1})`;
  const dv = H.wV[0].length;
  return {
    tex: `\\text{head}_${hi + 1} = A^{(${hi + 1})} V^{(${hi + 1})} \\quad [3 \\times 3] \\cdot [3 \\times ${dv}] \\to [3 \\times ${dv}]`,
    text: 'Each person\'s result is a blend of everybody\'s values, mixed in the proportions of their row of weights.',
    op: '·',
    left: { caption: `A${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.weights },
    right: { caption: `V${sup}`, rows: PEOPLE, cols: H.vCols, values: m.v },
    result: { caption: `head ${hi + 1} output`, rows: PEOPLE, cols: H.vCols, values: m.output },
    explain: (r, c) => {
      const terms = m.weights[r].map((a, j) => `${n3(a)}\\cdot${n3(m.v[j][c])}`).join(' + ');
      return `\\text{head}_{${hi + 1}}[${t(PEOPLE[r])},${t(H.vCols[c])}] = ${terms} = ${n3(m.output[r][c])}`;
    },
    link: (r, c) => ({ left: { row: r }, right: { col: c } }),
  };
}

/** Step 6: the two head outputs side by side. */
function concatStep(tr) {
  const concat = tr.concat;
  return {
    tex: '\\big[\\,\\text{head}_1 \\;\\|\\; \\text{head}_2\\,\\big] \\quad [3 \\times 3] \\,\\|\\, [3 \\times 2] \\to [3 \\times 5]',
    text: 'The heads are laid side by side, 3 + 2 = 5 columns. No arithmetic happens here, and each column still belongs to one head.',
    op: '‖',
    left: { caption: 'head 1 output', rows: PEOPLE, cols: HEADS[0].vCols, values: tr.heads[0].output },
    right: { caption: 'head 2 output', rows: PEOPLE, cols: HEADS[1].vCols, values: tr.heads[1].output },
    result: { caption: 'concat', rows: PEOPLE, cols: CONCAT_COLS, values: concat, split: 3 },
    explain: (r, c) => {
      const h = c < 3 ? 1 : 2, cc = c < 3 ? c : c - 3;
      return `\\text{concat}[${t(PEOPLE[r])},\\,${c + 1}] = \\text{head}_${h}[${t(PEOPLE[r])},${t(HEADS[h - 1].vCols[cc])}] = ${n3(concat[r][c])}`;
    },
    link: (r, c) => (c < 3 ? { left: { row: r, col: c } } : { right: { row: r, col: c - 3 } }),
  };
}

/** Step 7: the output, concat · W_O. */
function outputStep(tr) {
  const concat = tr.concat, out = tr.output;
  return {
    tex: '\\text{output} = \\text{concat}\\cdot W_O \\quad [3 \\times 5] \\cdot [5 \\times 6] \\to [3 \\times 6]',
    text: 'W_O maps the 5 concatenated features back to the 6 input features. Each output number adds up contributions from both heads.',
    op: '·',
    left: { caption: 'concat', rows: PEOPLE, cols: CONCAT_COLS, values: concat, split: 3 },
    right: { caption: 'W_O', rows: CONCAT_COLS, cols: FEATURES, values: WO, digits: 2 },
    result: { caption: 'output', rows: PEOPLE, cols: FEATURES, values: out },
    explain: (r, c) => {
      const terms = concat[r].map((x, j) => `${n3(x)}\\cdot${n2(WO[j][c])}`);
      return `\\text{out}_{${t(PEOPLE[r])},\\,${t(FEATURES[c])}} = \\underbrace{${terms.slice(0, 3).join(' + ')}}_{\\text{head 1}} + \\underbrace{${terms.slice(3).join(' + ')}}_{\\text{head 2}} = ${n3(out[r][c])}`;
    },
    link: (r, c) => ({ left: { row: r }, right: { col: c } }),
  };
}

/**
 * What step `s` of head `hi` shows.
 * @param {number} s the step, 0–7 (STEPS); 7 or above is the output step
 * @param {number} hi the head, 0 or 1 (ignored for steps 6 and 7)
 * @param {number[][]} X the input [3, 6] as edited
 * @param {StepperTrace} tr the engine's trace of the example's layer on X (nested arrays)
 * @returns {StepView} formula (TeX), sentence, operator between the operands, the operands and the
 *   result, `explain(r, c)`: the TeX of result cell (r, c), `link(r, c)`: which operand row/column made it
 */
export function stepView(s, hi, X, tr) {
  if (s <= 2) return projectionStep(s, hi, X, tr);
  if (s === 3) return scoresStep(hi, tr);
  if (s === 4) return softmaxStep(hi, tr);
  if (s === 5) return headOutputStep(hi, tr);
  if (s === 6) return concatStep(tr);
  return outputStep(tr);
}

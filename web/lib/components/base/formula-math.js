// The engine's formula strings (mha.passport(...).steps[i].formula, e.g. "S_i = Q_i·K_iᵀ / √d_k")
// as MathML the browser draws, through lit's `mathml` tag, as the other elements write their
// formulas (no TeX engine: these are short and of a known form).
import { html, mathml, nothing } from 'lit';

/** Multi-letter names drawn upright as functions (followed by an invisible function application). */
const FUNCTIONS = new Set(['softmax', 'RoPE', 'tanh', 'concat', 'exp']);
/** Words of the formulas' prose ("shared by h/g query heads", "window: … outside …"): drawn as text. */
const PROSE = new Set(['shared', 'by', 'query', 'heads', 'window', 'outside']);

// one token: a name with an optional subscript (_x) and superscript (^(…), ᵀ or ²), a number, √, −∞, or one character
const TOKEN = /\s+|[A-Za-z]+(?:_[A-Za-z0-9]+)?(?:\^\([^)]*\)|ᵀ|²)?|\d+(?:\.\d+)?|−∞|./gu;
const NAME = /^([A-Za-z]+)(?:_([A-Za-z0-9]+))?(?:\^\(([^)]*)\)|(ᵀ)|(²))?$/u;

const ident = (s) => (/^\d+$/.test(s) ? mathml`<mn>${s}</mn>` : mathml`<mi>${s}</mi>`);

/** One name token as MathML: W_Q^(i) → msubsup, K_iᵀ → msubsup with T, T² → msup, head_1 → msub. */
function nameMath(tok) {
  const m = NAME.exec(tok);
  const [, base, sub, paren, tee, sq] = m;
  const b = mathml`<mi>${base}</mi>`;
  const sup = paren !== undefined ? mathml`<mrow><mo stretchy="false">(</mo>${ident(paren)}<mo stretchy="false">)</mo></mrow>`
    : tee ? mathml`<mi mathvariant="normal">T</mi>` : sq ? mathml`<mn>2</mn>` : null;
  if (sub !== undefined && sup) return mathml`<msubsup>${b}${ident(sub)}${sup}</msubsup>`;
  if (sub !== undefined) return mathml`<msub>${b}${ident(sub)}</msub>`;
  if (sup) return mathml`<msup>${b}${sup}</msup>`;
  return b;
}

/**
 * The MathML pieces of a formula string (inside a `<math>`): names with sub- and superscripts,
 * numbers, operators (`·`, `=`, `/`, `→`, `×`, `−`, `+`, brackets, bars, commas), `√x` as a square
 * root of the next name, known functions upright, and runs of prose words as `<mtext>`.
 * @param {string} s e.g. "Q_i = RoPE(X·W_Q^(i))" or "K_j = X·W_K^(j), shared by h/g query heads"
 * @returns {unknown[]} lit MathML templates
 */
export function formulaPieces(s) {
  const toks = String(s ?? '').match(TOKEN) ?? [];
  const out = [];
  let prose = null;   // words of a prose run, joined with their spaces
  const flush = () => {
    if (prose !== null) out.push(mathml`<mtext>${`\u00a0${prose.trim()}\u00a0`}</mtext>`);
    prose = null;
  };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (/^\s+$/.test(t)) { if (prose !== null) prose += ' '; continue; }
    if (PROSE.has(t)) { prose = (prose ?? '') + t; continue; }
    flush();
    if (t === '√' && i + 1 < toks.length && NAME.test(toks[i + 1])) {
      out.push(mathml`<msqrt>${nameMath(toks[++i])}</msqrt>`);
    } else if (FUNCTIONS.has(t)) {
      out.push(mathml`<mi>${t}</mi><mo>\u2061</mo>`);
    } else if (NAME.test(t)) {
      out.push(nameMath(t));
    } else if (/^\d/.test(t)) {
      out.push(mathml`<mn>${t}</mn>`);
    } else if (t === '−∞') {
      out.push(mathml`<mo>−</mo><mi mathvariant="normal">∞</mi>`);
    } else if (t === '(' || t === ')' || t === '[' || t === ']' || t === '|') {
      out.push(mathml`<mo stretchy="false">${t}</mo>`);
    } else if (t === ',' || t === ':') {
      out.push(mathml`<mo separator="true">${t}</mo>`);
    } else if (t === '…') {
      out.push(mathml`<mi mathvariant="normal">…</mi>`);
    } else {
      out.push(mathml`<mo>${t}</mo>`);
    }
  }
  flush();
  return out;
}

/**
 * A formula string of the engine as one inline `<math>` element, with the original text as its
 * accessible name fallback (`alttext`) and in `data-formula` (tests and copy).
 * @param {string|null|undefined} s the formula (empty → nothing)
 */
export function formulaMath(s) {
  if (!s) return nothing;
  return html`<math alttext=${s} data-formula=${s}><mrow>${formulaPieces(s)}</mrow></math>`;
}

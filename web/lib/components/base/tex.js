// TeX formulas as MathML for the lesson elements (<mha-stepper>): KaTeX renders, the browser draws.
import { unsafeHTML } from 'lit/directives/unsafe-html.js';
import katex from 'katex';

/**
 * A TeX formula as MathML markup (KaTeX with `output: 'mathml'`): the browser draws it, so it needs
 * neither KaTeX's CSS nor its fonts, which do not reach inside a shadow root. Bad TeX renders as
 * the source in red (`throwOnError: false`); the formulas are built from numbers and fixed labels.
 * @param {string} src
 * @param {boolean} [display]
 * @returns {string}
 */
export function texToMathML(src, display = true) {
  return katex.renderToString(src, { displayMode: display, throwOnError: false, output: 'mathml' });
}

/** A Lit value that renders a TeX formula as MathML. */
export const tex = (src, display = true) => unsafeHTML(texToMathML(src, display));

export { texText } from '../logic/tex-text.js';

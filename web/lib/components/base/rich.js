// Labels with sub- and superscripts written as plain strings (the notation of logic/'s data).
import { html } from 'lit';

/**
 * A label with `_X` (one word character) drawn as a subscript and `^(…)` as a superscript:
 * 'W_Q' → W<sub>Q</sub>, 'Q^(1)' → Q<sup>(1)</sup>, 'W_Q^(2)' → W<sub>Q</sub><sup>(2)</sup>.
 * @param {string} label
 * @returns {Array<string|import('lit').TemplateResult>} a Lit value
 */
export function rich(label) {
  return String(label).split(/(_\w|\^\([^)]*\))/).map((p) => {
    if (/^_\w$/.test(p)) return html`<sub>${p.slice(1)}</sub>`;
    if (/^\^\(.*\)$/.test(p)) return html`<sup>${p.slice(1)}</sup>`;
    return p;
  });
}

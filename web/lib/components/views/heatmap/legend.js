// What both renderings of <mha-heatmap> show under the cells: the attribute messages, the readout,
// the colour legend and the save buttons.
import { html, nothing } from 'lit';
import { fmt } from '../../base/shared.js';
import { interpolatorFor } from '../../base/color.js';

/**
 * Messages, readout ("query → key: value", a polite live region), legend (the scheme from `lo` to
 * `hi`) and the "Save PNG" / "Save SVG" buttons (unless `no-save`).
 * @param {import('../mha-heatmap.js').MhaHeatmap} el the element
 * @param {number} lo low end of the colour range
 * @param {number} hi high end of the colour range
 * @returns {import('lit').TemplateResult}
 */
export function renderTail(el, lo, hi) {
  const interp = interpolatorFor(el._scheme);
  const stops = Array.from({ length: 11 }, (_, i) => `${interp(i / 10)} ${i * 10}%`).join(', ');
  return html`
      ${el._attrs.view()}
      <div class="readout" part="readout" id="readout" role="status" aria-live="polite">${el._readout}</div>
      <div class="legend" part="legend">
        <span class="lo">${fmt(lo, 2)}</span>
        <span class="bar" role="img" aria-label=${`color scale ${el._scheme} from ${fmt(lo, 2)} to ${fmt(hi, 2)}`}
              style=${`background: linear-gradient(to right, ${stops})`}></span>
        <span class="hi">${fmt(hi, 2)}</span>
      </div>
      ${el.noSave ? nothing : html`<div class="actions">
        <button part="save" type="button" @click=${() => el.download()}
                aria-label=${`Save PNG of ${el.label}`}>Save PNG</button>
        <button part="save save-svg" type="button" @click=${() => el.download(undefined, 'svg')}
                aria-label=${`Save SVG of ${el.label}`}>Save SVG</button></div>`}`;
}

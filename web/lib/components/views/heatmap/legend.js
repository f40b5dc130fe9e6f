// What both renderings of <mha-heatmap> show under the cells: the attribute messages, the readout,
// the colour legend, and one disclosure holding the save buttons (and the canvas plot's table of
// values): one Tab stop per map however many maps a page shows.
import { html, nothing } from 'lit';
import { fmt } from '../../base/shared.js';
import { interpolatorFor } from '../../base/color.js';

/**
 * Messages, readout ("query → key: value", a polite live region), legend (the scheme from `lo` to
 * `hi`) and one `<details>`: the "Save PNG" / "Save SVG" buttons (unless `no-save`) and, for the
 * canvas plot, the table of values (`table`, rendered by the caller only while open). Without
 * either there is no disclosure.
 * @param {import('./view.js').HeatmapView} v what the element draws (its `_view(m)`)
 * @param {import('lit').TemplateResult|typeof nothing|null} [table] the canvas plot's table (null: none offered)
 * @returns {import('lit').TemplateResult}
 */
export function renderTail(v, table = null) {
  const { lo, hi, label, on } = v;
  const save = v.noSave ? nothing : html`<div class="actions">
        <button part="save" type="button" @click=${() => on.save('png')}
                aria-label=${`Save PNG of ${label}`}>Save PNG</button>
        <button part="save save-svg" type="button" @click=${() => on.save('svg')}
                aria-label=${`Save SVG of ${label}`}>Save SVG</button></div>`;
  // a compact map (one of many small multiples) says it in fewer words, on one line of a narrow card
  const summary = table === null ? 'Save PNG or SVG' : v.noSave ? 'Table of values' : v.compact ? 'Values · PNG · SVG' : 'Table of values · save PNG or SVG';
  const interp = interpolatorFor(v.scheme);
  const stops = Array.from({ length: 11 }, (_, i) => `${interp(i / 10)} ${i * 10}%`).join(', ');
  return html`
      ${v.messages}
      <div class="readout" part="readout" id="readout" role="status" aria-live="polite">${v.readout}</div>
      <div class="legend" part="legend">
        <span class="lo">${fmt(lo, 2)}</span>
        <span class="bar" role="img" aria-label=${`color scale ${v.scheme} from ${fmt(lo, 2)} to ${fmt(hi, 2)}`}
              style=${`background: linear-gradient(to right, ${stops})`}></span>
        <span class="hi">${fmt(hi, 2)}</span>
      </div>
      ${table === null && v.noSave ? nothing : html`<details class="values" part=${table === null ? 'downloads' : 'table'}
        @toggle=${on.toggle}><summary>${summary}</summary>${save}${table ?? nothing}</details>`}`;
}

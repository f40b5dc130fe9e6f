// The drawing of <mha-gqa-twins> (mha-gqa-twins.js): the table, chart and verdict of the scored
// twins, their generation side by side, and one model's heads framed by their K/V heads, each a
// function of what it draws, handed in by the element with the callbacks of its buttons and fields;
// the numbers come from the files, the engine and ../logic/gqa-verdict.js.
import { html, svg, css, nothing } from 'lit';
import { trainedStyles, kvGroups, kvGroupStyles, mapCell, mapsLegend, bytesFormula, showChar, headView, f3 } from './trained-shared.js';
import { scrollCueStyles } from '../base/scroll-cue.js';
import { int } from '../base/shared.js';
import { kvName } from '../logic/gqa-twins.js';
import { radioKeys } from '../base/choice.js';
import { phoneFoldStyles } from '../base/phone-fold.js';

/** Styles of <mha-gqa-twins>. */
export const twinsStyles = [trainedStyles, kvGroupStyles, scrollCueStyles, phoneFoldStyles, css`
    :host { container-type: inline-size; }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.4rem 0; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { border-bottom: 1px solid var(--_border); padding: 0.3em 0.8em 0.3em 0; text-align: left; }
    td.num { text-align: right; }
    .top { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: flex-start; }
    .top > * { min-width: 0; max-width: 100%; }
    .chart-box { flex: 1 1 18rem; max-width: 26rem; }
    .chart { margin: 0; }
    .chart svg { width: 100%; height: auto; display: block; overflow: visible; }
    .chart .axis { stroke: var(--_muted); stroke-width: 1; }
    .chart .grid { stroke: var(--_border); stroke-width: 1; }
    .chart text { fill: var(--_fg); font-size: 12px; font-family: inherit; }
    .chart .muted { fill: var(--_muted); }
    .chart .pt { fill: var(--_accent); stroke: var(--_bg); stroke-width: 1.5; }
    .chart .pt.other { fill: var(--_bg); stroke: var(--_accent); stroke-width: 2; }
    .row-controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: center; margin: 0.6rem 0; }
    /* the numbers behind the verdict in two columns where the element is wide enough (each at least 24rem) */
    .verdict .cols { columns: 24rem 2; column-gap: 1.5rem; }
    .verdict p { margin: 0 0 0.5em; break-inside: avoid; }
    .verdict summary, details.how > summary { cursor: pointer; color: var(--_muted); margin: 0.2rem 0 0.4rem; }
    details.how p { margin: 0 0 0.4rem; }
    /* wide: the pickers beside the note on the maps; the shown model's heads in one row, maps of about 100 px whose
       cells are not cut apart */
    @container (min-width: 800px) {
      .heads-top { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 1.5rem; align-items: center; margin: 0.5rem 0; }
      .heads-top .pickers { flex-direction: column; }
      .heads-top .picker { margin: 0.2rem 0; }
      .heads-top .heads-note { margin: 0; }
      .chart figcaption { margin-top: 0.1rem; }
      .groups { flex-wrap: nowrap; gap: 0.4rem; }
      .groups .group { flex: 1 1 0; padding: 0.1rem 0.2rem 0.2rem; }
      .groups .pair { flex-wrap: nowrap; gap: 0.25rem; }
      .groups .head { flex: 1 1 0; min-width: 0; padding: 0.15rem; }
      .groups .head mha-heatmap { --mha-cell-gaps: none; }
      .groups .head mha-heatmap::part(legend) { font-size: 0.6rem; gap: 0.2em; }
      .groups .head .name { font-size: 0.72rem; }
      .groups .head .badge { padding: 0 0.3em; }
      .twin { padding: 0.3em 0.6em; }
      .twin .cache { font-size: 0.8rem; }
    }
    .controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: end; margin: 0.8rem 0 0.4rem; }
    .controls .prompt { flex: 1 1 14rem; display: flex; flex-direction: column; gap: 0.2em; }
    .texts { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 0.6rem; }
    .twin { border: 1px solid var(--_border); border-radius: calc(var(--_radius) * 1.4); padding: 0.3em 0.6em; min-width: 0; }
    /* the model's name and its cache's bar on one line; the cache's bytes and their formula in one paragraph */
    .twin .head-row { display: flex; align-items: center; gap: 0.6rem; }
    .twin h4 { margin: 0.1em 0; font-size: 0.92rem; flex: none; }
    .text { font-family: var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; background: var(--_surface);
      padding: 0.25em 0.5em; border-radius: var(--_radius); margin: 0.25rem 0; font-size: 0.85rem; }
    mark { background: var(--_accent); color: var(--_accent-fg); border-radius: 3px; }
    .cache { margin: 0.2em 0 0.1em; font-size: 0.85rem; font-variant-numeric: tabular-nums; }
    .bar { flex: 1 1 auto; min-width: 2rem; height: 0.55rem; background: var(--_surface); border: 1px solid var(--_border); border-radius: 999px; overflow: hidden; }
    .bar span { display: block; height: 100%; background: var(--_accent); }
    .formula { display: inline-block; max-width: 100%; vertical-align: bottom; overflow-x: auto; overflow-y: hidden; white-space: nowrap; }
    .pickers { display: flex; flex-wrap: wrap; gap: 0 1.5rem; }
    .picker { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; margin: 0.9rem 0 0.4rem; }
    .head .name { font-size: 0.8rem; font-weight: 600; display: block; margin-bottom: 0.2rem; }
    .badge { font-weight: 400; padding: 0 0.4em; border-radius: 999px; border: 1px solid var(--_border); white-space: nowrap; }
    .badge.t-induction, .badge.t-previous-token { border-color: var(--_accent); }
    mha-heatmap::part(label) { font-size: 7px; line-height: 1; }
    /* narrow: four maps to a row (a frame of four, four frames of one, or a frame of eight in two rows) */
    @container (max-width: 520px) {
      .groups { --mha-cell-size: var(--_narrow); gap: 0.3rem; }
      .groups mha-heatmap::part(label) { display: none; }
      .groups mha-heatmap::part(corner) { font-size: 0; padding: 0; }
      .group { padding: 0.1rem 0.1rem 0.2rem; }
      .groups.single .group { flex: 1 1 calc(25% - 0.3rem); }
      .groups.shared .group { flex: 1 1 100%; }
      .groups.shared .pair { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 0.15rem; }
      .head { min-width: 0; }
      .head .name { font-size: 0.68rem; }
      .badge { white-space: normal; overflow-wrap: anywhere; }
      /* the table's rows on one line each */
      table { font-size: 0.85rem; }
      th, td { padding: 0.25em 0.45em 0.25em 0; }
      td:first-child { white-space: nowrap; }
    }
  `];

/** The temperatures offered (with the `temperature` attribute's value when it is another). */
const TEMPERATURES = [0, 0.7, 1];

/**
 * The seed buttons and "Score both seeds": drawn while the twins load too, so that the button a reader
 * pressed keeps focus while its choice loads.
 * @param {object} v
 * @param {number} v.seed the seed shown
 * @param {number[]|null} v.seeds the manifest's seeds (null before it is read)
 * @param {boolean} v.bothSeeds whether every seed is scored
 * @param {(seed: number) => void} v.onSeed a seed button pressed
 * @param {() => void} v.onBothSeeds "Score both seeds" pressed
 */
export function seedsView({ seed, seeds, bothSeeds, onSeed, onBothSeeds }) {
  const allSeeds = [...new Set([seed, ...(seeds ?? [])])].sort((a, b) => a - b);
  return html`
    <div class="row-controls" part="seeds">
      <span id="seed-label">Seed shown</span>
      <span role="radiogroup" aria-labelledby="seed-label" @keydown=${radioKeys}>
        ${allSeeds.map((s) => html`<button type="button" class="seed" data-seed=${s} role="radio" aria-checked=${String(s === seed)}
          tabindex=${s === seed ? 0 : -1} @click=${() => onSeed(s)}>seed ${s}</button> `)}
      </span>
      <button type="button" class="both" aria-pressed=${String(!!bothSeeds)}
        @click=${onBothSeeds}>Score both seeds</button>
    </div>`;
}

/**
 * The table of bytes per token and held-out loss, the chart and the verdict.
 * @param {object} v
 * @param {Array<object>} v.rows every scored model (the element's `rows`)
 * @param {Array<object>} v.verdictRows every twin of the manifest as the verdict judges it
 * @param {string[]} v.verdict the verdict's sentences
 * @param {number} v.lead the index of the sentence that carries the judgement (shown; the others in a disclosure)
 * @param {number} v.seed the seed shown
 * @param {boolean} v.bothSeeds whether every seed is scored
 * @param {boolean} v.open whether the chart's panel is open (folded on a phone, behind its summary line: the table holds its numbers)
 */
export function scoreView({ rows, verdictRows, verdict: lines, lead, seed, bothSeeds, open }) {
  const seeds = [...new Set(rows.map((r) => r.seed))];
  const whole = rows.every((r) => typeof r.heldoutBpc === 'number');
  return html`
    <div class="top">
      <div class="table-box">
      <div class="scroll" tabindex="0" role="region" aria-label="KV-cache bytes per token and held-out loss of the twins">
        <table part="table">
          <caption>Held-out loss, bits per character (lower is better)</caption>
          <thead><tr><th scope="col">K/V heads</th>${seeds.length > 1 ? html`<th scope="col">seed</th>` : nothing}
            <th scope="col">bytes per token</th>${whole ? html`<th scope="col">whole set <span class="hint">(training)</span></th>` : nothing}
            <th scope="col">this page <span class="hint">(here)</span></th></tr></thead>
          <tbody>${rows.map((r) => html`<tr data-file=${r.file} data-kv-heads=${r.kvHeads} data-seed=${r.seed}
            data-per-token=${r.perToken} data-live=${r.live}>
            <td>${r.kvHeads} <span class="hint">(${kvName(r.kvHeads, r.numHeads)})</span></td>
            ${seeds.length > 1 ? html`<td>${r.seed}</td>` : nothing}
            <td class="num">${int(r.perToken)}</td>${whole ? html`<td class="num whole">${f3(r.heldoutBpc)}</td>` : nothing}
            <td class="num">${f3(r.live)}</td></tr>`)}</tbody>
        </table>
      </div>
      <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
      </div>
      <details class="fold chart-box" ?open=${open}><summary>The chart: loss against the KV cache’s bytes per token</summary>
        ${chartView(verdictRows, rows, seed)}</details>
    </div>
    <div class="verdict" part="verdict">
      <p data-i=${lead}>${lines[lead]}</p>
      ${lines.length > 1 ? html`<details><summary>The numbers behind it: each model's loss, each sharing scheme against seed
        noise${lines.length > lead + 1 ? ', this page’s text' : ''}</summary>
        <div class="cols">${lines.map((s, i) => (i === lead ? nothing : html`<p data-i=${i}>${s}</p>`))}</div></details>` : nothing}
      ${bothSeeds ? nothing : html`<p class="hint">Press “Score both seeds” to score the other seed’s twins on this
        page’s text too, and see how much two training runs of the same model differ there.</p>`}
    </div>`;
}

/**
 * Loss against bytes per token (a log scale: each halving of the cache one step): one dot per model scored (hollow: the other seed).
 * @param {Array<object>} all every twin of the manifest as the verdict judges it (`verdictRows`)
 * @param {Array<object>} scored the models scored here (`rows`)
 * @param {number} seed the seed shown (filled dots)
 */
export function chartView(all, scored, seed) {
  // the figure the verdict judges: the whole held-out set (every seed of index.json) when listed, else the page's passages
  const onWhole = all.length > 0 && all.every((r) => typeof r.heldoutBpc === 'number');
  const rows = onWhole ? all.map((r) => ({ ...r, v: r.heldoutBpc })) : scored.map((r) => ({ ...r, v: r.v }));
  const W = 400, H = 220, left = 50, right = 18, top = 14, bottom = 42;
  const xs = rows.map((r) => Math.log2(r.perToken));
  const ys = rows.map((r) => r.v);
  const x0 = Math.min(...xs) - 0.6, x1 = Math.max(...xs) + 0.6;
  let y0 = Math.min(...ys), y1 = Math.max(...ys);
  const pad = Math.max(0.01, (y1 - y0) * 0.25);
  y0 -= pad; y1 += pad;
  const x = (v) => left + ((Math.log2(v) - x0) / (x1 - x0)) * (W - left - right);
  const y = (v) => top + (1 - (v - y0) / (y1 - y0)) * (H - top - bottom);
  const yTicks = [y0 + pad, (y0 + y1) / 2, y1 - pad];
  const xTicks = [...new Set(rows.map((r) => r.perToken))].sort((a, b) => a - b);
  const label = `Chart: bits per character ${onWhole ? 'on the whole held-out set, at training,' : 'on this page’s text'} against KV-cache bytes per token. ${rows.map((r) =>
    `${r.kvHeads} K/V heads, seed ${r.seed}: ${int(r.perToken)} bytes, ${f3(r.v)} bits`).join('; ')}.`;
  return html`<figure class="chart" part="chart">
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label}>
      ${yTicks.map((t) => svg`<line class="grid" x1=${left} x2=${W - right} y1=${y(t)} y2=${y(t)}></line>
        <text x=${left - 6} y=${y(t) + 4} text-anchor="end" class="muted">${t.toFixed(2)}</text>`)}
      <line class="axis" x1=${left} x2=${W - right} y1=${H - bottom} y2=${H - bottom}></line>
      <line class="axis" x1=${left} x2=${left} y1=${top} y2=${H - bottom}></line>
      ${xTicks.map((t) => svg`<text x=${x(t)} y=${H - bottom + 15} text-anchor="middle" class="muted">${int(t)}</text>`)}
      <text x=${(left + W - right) / 2} y=${H - 6} text-anchor="middle">KV-cache bytes per token (log scale)</text>
      <text x=${13} y=${(top + H - bottom) / 2} text-anchor="middle" transform=${`rotate(-90 13 ${(top + H - bottom) / 2})`}>bits per character</text>
      ${rows.map((r) => svg`<circle class=${r.seed === seed ? 'pt' : 'pt other'} cx=${x(r.perToken)} cy=${y(r.v)} r="5.5"></circle>`)}
      ${[...new Set(rows.map((r) => r.kvHeads))].map((g) => {
        const pts = rows.filter((r) => r.kvHeads === g);
        const yy = Math.min(...pts.map((r) => y(r.v)));
        return svg`<text x=${x(pts[0].perToken)} y=${Math.max(top + 10, yy - 10)} text-anchor="middle">${g} K/V</text>`;
      })}
    </svg>
    <figcaption class="hint">${onWhole ? 'Whole held-out set, at training' : 'This page’s text'}${rows.some((r) => r.seed !== seed)
      ? `. Filled: seed ${seed}; hollow: the other seed.` : '.'}</figcaption>
  </figure>`;
}

/**
 * The prompt and buttons, and each twin's text and KV cache (bytes, bar, formula) as it generates.
 * @param {object} v
 * @param {string} v.field the prompt field's value (the `prompt` attribute as written)
 * @param {string} v.prompt the prompt the models read
 * @param {number} v.temperature the sampling temperature
 * @param {Array<object>} v.twins the shown seed's models and their generation (the element's `twins`)
 * @param {object|null} v.config a model's config (its context), null before one is loaded
 * @param {(prompt: string) => void} v.onPrompt the prompt field changed
 * @param {(t: number) => void} v.onTemperature a temperature chosen
 * @param {(n: number) => void} v.onStep "Generate 1 character" or "Generate 16" pressed
 * @param {() => void} v.onRestart "Start again" pressed
 */
export function generateView({ field, prompt, temperature: t, twins, config: c, onPrompt, onTemperature, onStep, onRestart }) {
  const temps = TEMPERATURES.includes(t) ? TEMPERATURES : [...TEMPERATURES, t].sort((a, b) => a - b);
  const maxTotal = Math.max(1, ...twins.map((x) => x.kvBytes.total));
  return html`
    <div class="controls" part="controls">
      <label class="prompt">Prompt of all three <input type="text" part="prompt" maxlength="60" spellcheck="false"
        .value=${field} @change=${(e) => onPrompt(e.target.value)}></label>
      <button type="button" class="step1" @click=${() => onStep(1)}>Generate 1 character</button>
      <button type="button" class="step16" @click=${() => onStep(16)}>Generate 16</button>
      <button type="button" class="reset" @click=${onRestart}>Start again</button>
      <label>temperature <select @change=${(e) => onTemperature(Number(e.target.value))}>
        ${temps.map((v) => html`<option value=${v} ?selected=${v === t}>${v === 0 ? '0 (most likely)' : v}</option>`)}
      </select></label>
    </div>
    <details class="hint how"><summary>How a step fills the cache</summary>
      <p>Each model writes its own text, one character per step: the step feeds the newest character
      through the model, its keys and values are appended to every layer's cache${c ? `, and after ${c.context} characters the cache
      is refilled with the last ${Math.floor(c.context / 2)}` : ''}.</p></details>
    <div class="texts" part="texts">
      ${twins.map((x) => {
        const b = x.kvBytes;
        return html`<div class="twin" data-kv-heads=${b.kvHeads}>
          <div class="head-row"><h4>${b.kvHeads} K/V head${b.kvHeads > 1 ? 's' : ''} (${kvName(b.kvHeads, b.heads)})</h4>
            <div class="bar" aria-hidden="true"><span style=${`width: ${(100 * b.total) / maxTotal}%`}></span></div></div>
          <p class="text"><span class="prompt-text">${prompt}</span>${x.text.length > prompt.length ? html`<mark>${x.text.slice(prompt.length)}</mark>` : nothing}</p>
          <p class="cache" part="cache" data-tokens=${b.tokens} data-per-token=${b.perToken} data-total=${b.total} data-steps=${x.steps}>
            Step ${x.steps}: ${int(b.tokens)} characters cached × ${int(b.perToken)} bytes = <strong>${int(b.total)} bytes</strong>;
            <span class="formula" tabindex="0" role="region" aria-label=${`Bytes per token, ${b.kvHeads} K/V heads`}>${
              bytesFormula([2, b.layers, b.kvHeads, b.dK, b.bytesPerValue], b.perToken)} per token</span></p>
        </div>`;
      })}
    </div>`;
}

/**
 * The model and layer pickers and the shown model's query heads framed by their K/V heads.
 * @param {object} v
 * @param {number[]} v.models the K/V heads of each loaded model, in the pickers' order
 * @param {number} v.shown the K/V heads of the model drawn
 * @param {object} v.config its config
 * @param {number} v.layer the layer shown, 1-based
 * @param {string[]} v.tokens the characters of the text it read
 * @param {{data: Float32Array, shape: number[]}} v.attention that layer's attention [h, T, T] over them
 * @param {Array<{layer: number, head: number, type: string}>|null} v.types each head's measured type (null: none measured)
 * @param {string} v.scheme the heatmaps' colour scale
 * @param {(kvHeads: number) => void} v.onModel a model picked
 * @param {(layer: number) => void} v.onLayer a layer button pressed (1-based)
 */
export function headsView({ models, shown, config: c, layer: L, tokens, attention, types, scheme, onModel, onLayer }) {
  const g = c.kvHeads ?? c.numHeads;
  const l = L - 1;
  const T = tokens.length;
  const labels = tokens.map(showChar);
  // maps of about 100 px a side whatever the text's length (the heads in one row of a wide element)
  const cell = mapCell(100, T);
  return html`
    <div class="heads-top"><div class="pickers"><div class="picker" part="models">
      <span aria-hidden="true">Heads of</span>
      <span role="radiogroup" aria-label="Model whose heads are drawn" @keydown=${radioKeys}>${models.map((gx) => html`<button type="button" class="model" data-kv-heads=${gx} role="radio"
        aria-checked=${String(gx === shown)} tabindex=${gx === shown ? 0 : -1} @click=${() => onModel(gx)}>${gx} K/V head${gx > 1 ? 's' : ''}</button>`)}</span>
    </div>
    <div class="picker" part="layers">
      <span aria-hidden="true">Layer</span>
      <span role="radiogroup" aria-label="Layer shown" @keydown=${radioKeys}>${Array.from({ length: c.numLayers }, (_, i) => html`<button
        type="button" class="layer" data-layer=${i + 1} role="radio" aria-checked=${String(i === l)} tabindex=${i === l ? 0 : -1}
        @click=${() => onLayer(i + 1)}>${i + 1}</button>`)}</span>
    </div></div>
    <p class="hint heads-note">Layer ${L} of the ${g}-K/V-head model over its text (prompt and output, ${T} characters): one map per
      query head (queries down, keys across), named by the type measured on the file's held-out probes. ${g === c.numHeads
        ? 'Every query head has its own keys and values: each frame holds one.'
        : `Each frame is one K/V head: its ${c.numHeads / g} query heads score their own queries against the same keys and mix the same values.`}</p></div>
    ${mapsLegend(scheme)}
    <div class=${`groups ${g === c.numHeads ? 'single' : 'shared'}${cell >= 6 ? ' labels' : ''}`} part="groups" style=${`--_wide: ${cell}px; --_narrow: ${mapCell(60, T)}px`}>
      ${kvGroups(c.numHeads, g, (j, k) => {
        const type = types?.find((x) => x.layer === l && x.head === j)?.type;
        return html`
        <div class="head" part="head" data-layer=${l} data-head=${j} data-type=${type ?? ''}>
          <span class="name">head ${j + 1}${type ? html` <span class=${`badge t-${type}`}>${type}</span>` : nothing}</span>
          <mha-heatmap part="heatmap" compact no-save scheme=${scheme} data-layer=${l} data-head=${j}
            label=${`Layer ${L}, query head ${j + 1} (K/V head ${k + 1})${type ? `: ${type}` : ''}`}
            .tokens=${labels} .weights=${headView(attention, j)}></mha-heatmap>
        </div>`;
      })}
    </div>`;
}


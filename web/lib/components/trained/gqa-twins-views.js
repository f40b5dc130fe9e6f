// The drawing of <mha-gqa-twins> (mha-gqa-twins.js): the table, chart and verdict of the scored
// twins, their generation side by side, and one model's heads framed by their K/V heads, as
// functions of the element; the numbers come from the files, the engine and ../logic/gqa-verdict.js.
import { html, svg, nothing } from 'lit';
import { kvGroups, bytesFormula, showChar, headView, f3 } from './trained-shared.js';
import { errorText, int } from '../base/shared.js';
import { kvName } from '../logic/gqa-twins.js';
import { radioKeys } from '../base/choice.js';

/** The temperatures offered (with the `temperature` attribute's value when it is another). */
const TEMPERATURES = [0, 0.7, 1];

/**
 * The seed buttons and "Score both seeds": drawn while the twins load too, so that the button a reader
 * pressed keeps focus while its choice loads.
 */
export function seedsView(el) {
  const seed = el._c.seed;
  const allSeeds = [...new Set([seed, ...(el._seeds ?? [])])].sort((a, b) => a - b);
  return html`
    <div class="row-controls" part="seeds">
      <span id="seed-label">Seed shown</span>
      <span role="radiogroup" aria-labelledby="seed-label" @keydown=${radioKeys}>
        ${allSeeds.map((s) => html`<button type="button" class="seed" data-seed=${s} role="radio" aria-checked=${String(s === seed)}
          tabindex=${s === seed ? 0 : -1} @click=${() => { el.seed = s; el._changed(); }}>seed ${s}</button> `)}
      </span>
      <button type="button" class="both" aria-pressed=${String(!!el.bothSeeds)}
        @click=${() => { el.bothSeeds = !el.bothSeeds; el._changed(); }}>Score both seeds</button>
    </div>`;
}

/** The table of bytes per token and held-out loss, the chart and the verdict. */
export function scoreView(el) {
  const rows = el.rows;
  const seed = el._c.seed;
  const seeds = [...new Set(rows.map((r) => r.seed))];
  const lines = el.verdict;
  const whole = rows.every((r) => typeof r.heldoutBpc === 'number');
  return html`
    <div class="top">
      <div class="table-box">
      <div class="scroll" tabindex="0" role="region" aria-label="KV-cache bytes per token and held-out loss of the twins">
        <table part="table">
          <caption>KV cache and held-out loss in bits per character (lower is better): on the whole held-out set, as
            measured at training, and on this page’s text, measured here</caption>
          <thead><tr><th scope="col">K/V heads</th>${seeds.length > 1 ? html`<th scope="col">seed</th>` : nothing}
            <th scope="col">bytes per token</th>${whole ? html`<th scope="col">whole set</th>` : nothing}
            <th scope="col">this page</th></tr></thead>
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
      ${chartView(el, rows, seed)}
    </div>
    <div class="verdict" part="verdict">
      ${lines.map((s) => html`<p>${s}</p>`)}
      ${el.bothSeeds ? nothing : html`<p class="hint">Press “Score both seeds” to score the other seed’s twins on this
        page’s text too, and see how much two training runs of the same model differ there.</p>`}
    </div>`;
}

/** Loss against bytes per token (a log scale: each halving of the cache one step): one dot per model scored (hollow: the other seed). */
export function chartView(el, scored, seed) {
  // the figure the verdict judges: the whole held-out set (every seed of index.json) when listed, else the page's passages
  const all = el.verdictRows;
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

/** The prompt and buttons, and each twin's text and KV cache (bytes, bar, formula) as it generates. */
export function generateView(el) {
  const t = el._c.temperature;
  const temps = TEMPERATURES.includes(t) ? TEMPERATURES : [...TEMPERATURES, t].sort((a, b) => a - b);
  const prompt = el._prompt();
  const twins = el.twins;
  const maxTotal = Math.max(1, ...twins.map((x) => x.kvBytes.total));
  const c = el._twins[0]?.lm.config;
  return html`
    <div class="controls" part="controls">
      <label class="prompt">Prompt of all three <input type="text" part="prompt" maxlength="60" spellcheck="false"
        .value=${el.prompt ?? ''} @change=${(e) => { el.prompt = e.target.value; el._changed(); }}></label>
      <button type="button" class="step1" @click=${() => el.step(1)}>Generate 1 character</button>
      <button type="button" class="step16" @click=${() => el.step(16)}>Generate 16</button>
      <button type="button" class="reset" @click=${() => el.restart()}>Start again</button>
      <label>temperature <select @change=${(e) => { el.temperature = Number(e.target.value); el._changed(); }}>
        ${temps.map((v) => html`<option value=${v} ?selected=${v === t}>${v === 0 ? '0 (most likely)' : v}</option>`)}
      </select></label>
    </div>
    <p class="hint">Each model writes its own text, one character per step: the step feeds the newest character
      through the model, its keys and values are appended to every layer's cache${c ? `, and after ${c.context} characters the cache
      is refilled with the last ${Math.floor(c.context / 2)}` : ''}.</p>
    <div class="texts" part="texts">
      ${twins.map((x) => {
        const b = x.kvBytes;
        return html`<div class="twin" data-kv-heads=${b.kvHeads}>
          <h4>${b.kvHeads} K/V head${b.kvHeads > 1 ? 's' : ''} (${kvName(b.kvHeads, b.heads)})</h4>
          <p class="text"><span class="prompt-text">${prompt}</span>${x.text.length > prompt.length ? html`<mark>${x.text.slice(prompt.length)}</mark>` : nothing}</p>
          <p class="cache" part="cache" data-tokens=${b.tokens} data-per-token=${b.perToken} data-total=${b.total} data-steps=${x.steps}>
            Step ${x.steps}: ${int(b.tokens)} characters cached × ${int(b.perToken)} bytes = <strong>${int(b.total)} bytes</strong></p>
          <div class="bar" aria-hidden="true"><span style=${`width: ${(100 * b.total) / maxTotal}%`}></span></div>
          <div class="formula" tabindex="0" role="region" aria-label=${`Bytes per token, ${b.kvHeads} K/V heads`}>
            ${bytesFormula([2, b.layers, b.kvHeads, b.dK, b.bytesPerValue], b.perToken)} per token</div>
        </div>`;
      })}
    </div>`;
}

/** The model and layer pickers and the shown model's query heads framed by their K/V heads. */
export function headsView(el) {
  const tw = el._shownTwin();
  if (!tw) return nothing;
  const c = tw.lm.config;
  const g = c.kvHeads ?? c.numHeads;
  const L = el._layer();
  const l = L - 1;
  const text = Array.from(tw.gen?.text ?? el._prompt()).slice(-c.context).join('');
  let r;
  try {
    // one full forward per model and text, kept while neither changes
    if (el._run?.lm !== tw.lm || el._run.text !== text) el._run = { lm: tw.lm, text, r: tw.lm.run(text), views: new Map() };
    r = el._run.r;
  } catch (e) {
    return html`<p class="error" part="error" role="alert">${errorText(e)}</p>`;
  }
  const views = el._run.views;
  const view = (j) => {
    const k = `${l}:${j}`;
    if (!views.has(k)) views.set(k, headView(r.attention[l], j));
    return views.get(k);
  };
  const T = r.tokens.length;
  const labels = r.tokens.map(showChar);
  // each head's type, measured by the runner on the probes stored in the file (none without probes)
  let types = null;
  try { types = tw.lm.heads; } catch { types = null; }
  const side = (px) => Math.max(1, Math.min(8, Math.floor(px / Math.max(T, 1))));
  const cell = side(120);
  return html`
    <div class="picker" part="models">
      <span aria-hidden="true">Heads of</span>
      <span role="radiogroup" aria-label="Model whose heads are drawn" @keydown=${radioKeys}>${el._twins.map((x) => {
        const gx = x.lm.config.kvHeads ?? x.lm.config.numHeads;
        return html`<button type="button" class="model" data-kv-heads=${gx} role="radio" aria-checked=${String(x === tw)}
          tabindex=${x === tw ? 0 : -1} @click=${() => { el.shown = gx; el._changed(); }}>${gx} K/V head${gx > 1 ? 's' : ''}</button>`;
      })}</span>
    </div>
    <div class="picker" part="layers">
      <span aria-hidden="true">Layer</span>
      <span role="radiogroup" aria-label="Layer shown" @keydown=${radioKeys}>${Array.from({ length: c.numLayers }, (_, i) => html`<button
        type="button" class="layer" data-layer=${i + 1} role="radio" aria-checked=${String(i === l)} tabindex=${i === l ? 0 : -1}
        @click=${() => { el.layer = i + 1; el._changed(); }}>${i + 1}</button>`)}</span>
    </div>
    <p class="hint">Layer ${L} of the model with ${g} K/V head${g > 1 ? 's' : ''}, reading its text (the prompt and what it
      wrote, ${T} characters): one map per query head (queries down, keys across), labelled with the type the engine
      measures on the held-out probes stored in the file. ${g === c.numHeads
        ? 'Every query head has its own keys and values: each frame holds one.'
        : `The frames are the ${g} K/V head${g > 1 ? 's' : ''}: the ${c.numHeads / g} query heads in a frame score their own queries against the same keys and mix the same values.`}</p>
    <div class=${`groups ${g === c.numHeads ? 'single' : 'shared'}${cell >= 6 ? ' labels' : ''}`} part="groups" style=${`--_wide: ${cell}px; --_narrow: ${side(100)}px`}>
      ${kvGroups(c.numHeads, g, (j, k) => {
        const type = types?.find((x) => x.layer === l && x.head === j)?.type;
        return html`
        <div class="head" part="head" data-layer=${l} data-head=${j} data-type=${type ?? ''}>
          <span class="name">head ${j + 1}${type ? html` <span class=${`badge t-${type}`}>${type}</span>` : nothing}</span>
          <mha-heatmap part="heatmap" compact no-save scheme=${el._c.scheme} data-layer=${l} data-head=${j}
            label=${`Layer ${L}, query head ${j + 1} (K/V head ${k + 1})${type ? `: ${type}` : ''}`}
            .tokens=${labels} .weights=${view(j)}></mha-heatmap>
        </div>`;
      })}
    </div>`;
}


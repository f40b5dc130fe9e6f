// The drawing of <mha-gqa-story> (mha-gqa-story.js): its styles and the parts of its view, each a
// function of what it draws (the model's config, the cache's bytes, the attention and the
// measurements), handed in by the element with the callbacks of its buttons; the numbers and
// sentences come from ../logic/gqa-story.js.
import { html, css, nothing } from 'lit';
import { TYPE_THRESHOLD, BROAD_THRESHOLD, INDUCTION_MIN_SPAN } from '../../src/index.js';
import { trainedStyles, SCORE_OF, f2, bytesFormula, kvGroups, kvGroupStyles, mapCell, mapsLegend } from './trained-shared.js';
import { showPiece, SHORT, describeHeads, explainCopying } from '../logic/gqa-story.js';
import { int } from '../base/shared.js';
import { scrollCueStyles } from '../base/scroll-cue.js';
import { radioKeys } from '../base/choice.js';
import { phoneFoldStyles } from '../base/phone-fold.js';

/** Styles of <mha-gqa-story>. */
export const storyStyles = [trainedStyles, kvGroupStyles, scrollCueStyles, phoneFoldStyles, css`
    :host { container-type: inline-size; }
    /* wide: the story beside its KV cache; the shown layer's heads in one row, maps of about 100 px */
    @container (min-width: 800px) {
      .story { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 0 1.2rem; align-items: start; }
      .story .cache { margin-top: 0.5rem; }
      .story .layers { margin-top: 0.6rem; }
      .groups { flex-wrap: nowrap; gap: 0.3rem; }
      .groups .group { flex: 1 1 0; padding: 0.1rem 0.15rem 0.2rem; }
      .groups .group legend { font-size: 0.75rem; }
      .groups .pair { flex-wrap: nowrap; gap: 0.25rem; }
      .groups .head { flex: 1 1 0; min-width: 0; padding: 0.1rem; }
      /* cells of a pixel or two read as one picture: the gaps between them are not cut out */
      .groups .head mha-heatmap { --mha-cell-gaps: none; }
      .groups .head mha-heatmap::part(legend) { font-size: 0.6rem; gap: 0.2em; }
      .groups .head mha-heatmap::part(table) { font-size: 0.75rem; }
      .groups button[role='switch'] { font-size: 0.7rem; padding: 0.1rem 0.2rem; gap: 0.2rem 0.3rem; }
      .groups .badge { padding: 0 0.3em; }
      .groups .scores { font-size: 0.68rem; }
    }
    .rule summary, .summary .more > summary { cursor: pointer; color: var(--_muted); font-size: 0.9em; }
    .summary ul { margin: 0.3rem 0; }
    .controls { display: flex; flex-wrap: wrap; gap: 0.5rem 0.8rem; align-items: end; margin: 0.6rem 0; }
    .controls .prompt { flex: 1 1 14rem; display: flex; flex-direction: column; gap: 0.2em; }
    .text { font-family: var(--_mono); white-space: pre-wrap; overflow-wrap: anywhere; background: var(--_surface);
      padding: 0.5em 0.8em; border-radius: var(--_radius); margin: 0.5rem 0; }
    mark { background: var(--_accent); color: var(--_accent-fg); border-radius: 3px; }
    .cache { border: 1px solid var(--_border); border-radius: calc(var(--_radius) * 1.4); padding: 0.4em 0.9em; margin: 0.6rem 0; }
    .cache p { margin: 0.35em 0; }
    .cache .formula { overflow-x: auto; overflow-y: hidden; }
    .big { font-weight: 700; font-variant-numeric: tabular-nums; }
    .layers { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; margin: 0.8rem 0 0.4rem; }
    .layers button[aria-checked='true'] { background: var(--_accent); color: var(--_accent-fg); border-color: var(--_accent); }
    /* narrow: two K/V heads' frames to a row, four maps */
    @container (max-width: 520px) {
      .groups { --mha-cell-size: var(--_narrow); gap: 0.3rem; }
      .group { padding: 0.1rem 0.15rem 0.2rem; flex: 1 1 calc(50% - 0.3rem); }
      .group legend { font-size: 0.7rem; }
      .pair { gap: 0.2rem; flex-wrap: nowrap; }
      .head { flex: 1 1 0; min-width: 0; }
      .groups button[role='switch'] { font-size: 0.68rem; padding: 0.1rem 0.2rem; }
      .groups .badge { overflow-wrap: anywhere; }
      .groups .scores { font-size: 0.62rem; }
      .cache { font-size: 0.9rem; padding: 0.3em 0.7em; }
    }
    button[role='switch'] { display: flex; flex-wrap: wrap; gap: 0.2rem 0.5rem; align-items: baseline; font-size: 0.82rem; text-align: left; }
    button[role='switch'][aria-checked='false'] { text-decoration: line-through; }
    .name { font-weight: 600; }
    .badge { padding: 0 0.4em; border-radius: 999px; background: var(--_bg); border: 1px solid var(--_border); }
    .scores { margin: 0.2rem 0; font-size: 0.75rem; color: var(--_muted); font-variant-numeric: tabular-nums; }
    mha-heatmap::part(label) { font-size: 7px; line-height: 1; }
    table { border-collapse: collapse; font-size: 0.8rem; font-variant-numeric: tabular-nums; margin: 0.8rem 0 0.3rem; }
    caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
    th, td { border: 1px solid var(--_border); padding: 0.15em 0.45em; text-align: center; white-space: nowrap; }
    thead th.kv { border-bottom: 2px solid var(--_accent); }
    td.first-of-group, th.first-of-group { border-left: 2px solid var(--_accent); }
    td .t { display: block; font-weight: 600; }
    /* a cell: the type, then its score and induction score on one line (on two in a narrow element, where the table scrolls) */
    td .s { color: var(--_muted); }
    @container (max-width: 520px) { td .s { display: block; } td .sep { display: none; } }
    td.off { text-decoration: line-through; }
    td.t-previous-token, td.t-induction, td.t-first-token, td.t-current-token, td.t-two-back { background: var(--_surface); }
    /* wide: the table of every head beside the sentences about them; the search for an induction head in two columns */
    .measures { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 1.5rem; align-items: start; }
    @container (min-width: 800px) { .measures { grid-template-columns: max-content minmax(0, 1fr); } .measures .summary ul { margin-top: 2.2rem; } }
    .copying .cols { columns: 24rem 2; column-gap: 1.5rem; }
    .copying .cols p { margin: 0 0 0.5em; break-inside: avoid; }
    .summary ul { padding-left: 1.2em; margin: 0.3em 0; }
    .summary li { margin: 0.15em 0; }
    .credit a { color: var(--_accent); }
    .copying h4 { margin: 0.8rem 0 0.2rem; font-size: 0.95rem; display: inline; }
    .copying summary { cursor: pointer; margin: 0.6rem 0 0.3rem; }
    .copying p { margin: 0.35em 0; }
  `];

/**
 * The line describing the model: its training name, sizes, K/V sharing, vocabulary and context.
 * @param {object} c the model's config
 * @param {object} [tr] its training record (`lm.training`)
 */
export function aboutView(c, tr = {}) {
  const g = c.kvHeads ?? c.numHeads;
  const per = c.numHeads / g;
  return `${tr.model ? `${tr.model}: ` : ''}${c.numLayers} layers, d_model = ${c.dModel}, ${c.numHeads} query heads of d_k = ${c.dK} ` +
    `sharing ${g} K/V heads (${per} query heads per K/V head), a vocabulary of ${c.vocabSize} tokens, a context of ${c.context} tokens.`;
}

/**
 * The model's credit and licence (from its `training` metadata), or nothing.
 * @param {object} [tr] the training record (`lm.training`)
 * @param {string|null} modelHref the model's URL, against which the licence file resolves
 */
export function creditView(tr = {}, modelHref = null) {
  if (!tr.author) return nothing;
  const lic = String(tr.license ?? '');
  const file = /see ([^\s;)]+)/.exec(lic)?.[1];
  let href = null;
  try { href = file ? new URL(file, modelHref ?? undefined).href : null; } catch { href = null; }
  const licName = lic.split(' (')[0];
  const corpus = tr.corpus ? String(tr.corpus).replace(/, arXiv:[\d.]+/, '').replace(/,\s*(\d{4})\)/, ' $1)') : null;
  const model = String(tr.model ?? 'This model').replace(/ \((.*)\)$/, '');
  const family = /\((.*)\)$/.exec(String(tr.model ?? ''))?.[1];
  const made = [tr.trainedWith, family].filter(Boolean).join(', ');
  return html`<span class="credit" part="credit">${model} by ${tr.author}${made ? ` (${made})` : ''}${corpus ? `, trained on ${corpus}` : ''}, ${
    href ? html`<a href=${href} target="_blank" rel="noopener">${licName} licence</a>` : `${licName} licence`}.</span>`;
}

/**
 * The KV-cache box: tokens cached, the bytes-per-token formulas (grouped and full multi-head), the total now.
 * @param {object} b the cache's bytes (kvCacheBytes)
 * @param {number} context the model's context in tokens
 */
export function cacheView(b, context) {
  const ratio = b.fullPerToken / b.perToken;
  return html`
    <div class="cache" part="cache" data-tokens=${b.tokens} data-per-token=${b.perToken}
      data-full-per-token=${b.fullPerToken} data-total=${b.total} data-full-total=${b.fullTotal}>
      <p>KV cache: <span class="big tokens">${int(b.tokens)}</span> token${b.tokens === 1 ? '' : 's'} cached in each of the
        ${b.layers} layers${b.tokens ? '' : ' (the prompt goes in at the first step)'}; per token, keys and values in float32:</p>
      <div class="formula" part="formula" tabindex="0" role="region" aria-label="Bytes per token, grouped-query and full multi-head attention">
        <p>grouped, ${b.kvHeads} K/V heads: ${bytesFormula([2, b.layers, b.kvHeads, b.dK, b.bytesPerValue], b.perToken)}</p>
        <p>full multi-head, ${b.heads} K/V heads: ${bytesFormula([2, b.layers, b.heads, b.dK, b.bytesPerValue], b.fullPerToken)}</p>
      </div>
      <p>Now: <span class="big total">${int(b.total)} bytes</span> for ${int(b.tokens)} tokens, against ${int(b.fullTotal)} bytes
        with one K/V head per query head: ${ratio === 1 ? 'the same, this model does not share K/V heads' : `${ratio}× less`}.
        Reserved when a story starts, for the whole context of ${int(context)} tokens: ${int(b.reserved)} bytes.</p>
    </div>`;
}

/**
 * The layer buttons and what the maps of the shown layer show.
 * @param {object} v
 * @param {object} v.config the model's config
 * @param {number} v.layer the layer shown, 1-based
 * @param {number} v.tokens T, the tokens whose attention rows are known
 * @param {number} v.promptTokens the prompt's length in tokens
 * @param {(layer: number) => void} v.onLayer a layer button pressed (1-based)
 */
export function layersView({ config: c, layer: L, tokens: T, promptTokens: prompt, onLayer }) {
  const g = c.kvHeads ?? c.numHeads;
  const per = c.numHeads / g;
  const l = L - 1;
  return html`
    <div class="layers" part="layers">
      <span aria-hidden="true">Layer</span>
      <span role="radiogroup" aria-label="Layer shown" @keydown=${radioKeys}>${Array.from({ length: c.numLayers }, (_, i) => html`<button
        type="button" class="layer" data-layer=${i + 1} role="radio" aria-checked=${String(i === l)} tabindex=${i === l ? 0 : -1}
        @click=${() => onLayer(i + 1)}>${i + 1}</button>`)}</span>
    </div>
    <p class="hint">Layer ${L}: one map per query head over the ${T} cached tokens (queries down, keys across); ${prompt > 1
      ? `rows 1–${Math.min(prompt, T)} read the prompt, each` : 'each'} later row is one generation step's query. Each frame is one
      K/V head: its ${per} query heads
      score their queries against the same keys and mix the same values.</p>`;
}

/**
 * The shown layer's query heads, framed by their K/V heads, each with its switch and map.
 * @param {object} v
 * @param {object} v.config the model's config
 * @param {number} v.layer the layer shown, 1-based
 * @param {{data: Float32Array, shape: number[]}|null} v.attention that layer's attention [h, T, T]
 * @param {string[]} v.tokens the pieces of the T tokens
 * @param {Array<[number, number]>} v.ablation the switched-off heads, 0-based
 * @param {Array<object>|null} v.measured every head's type and scores
 * @param {string} v.scheme the heatmaps' colour scale
 * @param {(l: number, j: number) => void} v.onToggle head j of layer l (0-based) switched
 */
export function headsView({ config: c, layer: L, attention: att, tokens, ablation: off, measured: m, scheme, onToggle }) {
  const g = c.kvHeads ?? c.numHeads;
  const l = L - 1;
  const T = att ? att.shape[1] : 0;
  const labels = tokens.map(showPiece);
  const isOff = (j) => off.some(([a, b]) => a === l && b === j);
  // the maps keep one size as the story grows: about 100 px a side (the heads of a layer in one row
  // of a wide element; two K/V heads' pairs side by side in a narrow one), cells of 1 to 8 px
  const cell = mapCell(100, T);
  return html`
    ${mapsLegend(scheme)}
    <div class=${cell >= 6 ? 'groups labels' : 'groups'} part="groups" style=${`--_wide: ${cell}px; --_narrow: ${mapCell(60, T)}px`}>
      ${kvGroups(c.numHeads, g, (j, k) => {
        const h = m?.find((x) => x.layer === l && x.head === j);
        return html`
          <div class=${isOff(j) ? 'head off' : 'head'} part="head" data-layer=${l} data-head=${j}>
            <button type="button" role="switch" part="switch" aria-checked=${String(!isOff(j))} data-layer=${l} data-head=${j}
              @click=${() => onToggle(l, j)}>
              <span class="name">head ${j + 1}</span>
              ${h ? html`<span class=${`badge t-${h.type}`}>${h.type}</span>` : nothing}
            </button>
            ${h ? html`<p class="scores">${scoreLine(h)}</p>` : nothing}
            <mha-heatmap part="heatmap" compact no-save scheme=${scheme} data-layer=${l} data-head=${j}
              label=${`Layer ${L}, query head ${j + 1} (K/V head ${k + 1})${h ? `: ${h.type}` : ''}`}
              .tokens=${labels} .weights=${att ? { data: att.data.subarray(j * T * T, (j + 1) * T * T), shape: [T, T] } : null}></mha-heatmap>
          </div>`;
      })}
    </div>`;
}

/** A head's main score and its induction score, for its box. */
export function scoreLine(h) {
  const key = SCORE_OF[h.type];
  const main = key ? `${SHORT[h.type]} ${f2(h.scores[key])}` : `e ${f2(h.scores.entropy)}`;
  return `${main} · ind ${h.scores.induction === null ? '—' : f2(h.scores.induction)}`;
}

/**
 * The table of every head's type and scores, its legend, the sentences about the heads and the induction-head search.
 * @param {object} v
 * @param {object} v.config the model's config
 * @param {Array<object>|null} v.measured every head's type and scores (nothing is drawn without them)
 * @param {Array<[number, number]>} v.ablation the switched-off heads, 0-based
 * @param {number} v.tokens the story's length in tokens (T of the position scores)
 * @param {object|null} v.repeat the repeated sentence and its bits per token
 * @param {object|null} v.copy the list test
 * @param {boolean} v.open whether the table's panel is open (folded on a phone, behind its summary line)
 */
export function tableView({ config: c, measured: m, ablation: off, tokens: T, repeat, copy, open }) {
  if (!m) return nothing;
  const g = c.kvHeads ?? c.numHeads;
  const per = c.numHeads / g;
  const lines = describeHeads(m, repeat, per);
  return html`
    <div class="measures"><details class="fold table-box" ?open=${open}><summary>Every head's type and scores, layer by layer (a table)</summary>
    <div class="scroll" tabindex="0" role="region" aria-label="Table of every head's measured type">
      <table part="table">
        <caption>What each head does: position scores on the story (${T} tokens), induction on a sentence of it written twice</caption>
        <thead>
          <tr><th rowspan="2" scope="col">layer</th>
            ${Array.from({ length: g }, (_, k) => html`<th colspan=${per} scope="colgroup" class="kv first-of-group">K/V head ${k + 1}</th>`)}</tr>
          <tr>${Array.from({ length: c.numHeads }, (_, j) => html`<th scope="col" class=${j % per ? '' : 'first-of-group'}>head ${j + 1}</th>`)}</tr>
        </thead>
        <tbody>
          ${Array.from({ length: c.numLayers }, (_, l) => html`<tr>
            <th scope="row">${l + 1}</th>
            ${m.filter((h) => h.layer === l).map((h) => {
              const key = SCORE_OF[h.type];
              const v = key ? h.scores[key] : h.scores.entropy;
              const o = off.some(([a, b]) => a === l && b === h.head);
              return html`<td class=${`t-${h.type}${h.head % per ? '' : ' first-of-group'}${o ? ' off' : ''}`}
                data-layer=${l} data-head=${h.head} data-type=${h.type} data-score=${v}
                data-induction=${h.scores.induction ?? ''}>
                <span class="t">${SHORT[h.type]}</span><span class="s">${key ? f2(v) : `e ${f2(v)}`}<span class="sep"> · </span></span><span class="s">ind ${
                  h.scores.induction === null ? '—' : f2(h.scores.induction)}</span>${o ? html`<span class="sr-only"> (switched off)</span>` : nothing}</td>`;
            })}
          </tr>`)}
        </tbody>
      </table>
    </div>
    <p class="scroll-hint" aria-hidden="true">scroll sideways →</p>
    <details class="rule"><summary>How a head gets its name, and what “ind” is</summary>
    <p class="hint">A head gets the name of its strongest pattern when that score reaches ${TYPE_THRESHOLD} (previous, two-back,
      current: attention on the token one or two before the query or on the query itself; first: on the start marker
      &lt;s&gt;; induction: on the token after an earlier copy of the last ${INDUCTION_MIN_SPAN} tokens), else “broad” when its
      attention is spread out (normalised entropy e ≥ ${BROAD_THRESHOLD}), else “mixed”. “ind” is the induction score on the
      repeated sentence${repeat?.sentence ? html`: “${repeat.sentence}”` : '.'}</p></details></details>
    <div class="summary" part="summary">
      <ul>${lines.slice(0, 1).map((s) => html`<li>${s}</li>`)}</ul>
      ${lines.length > 1 ? html`<details class="more"><summary>The strongest heads, whether any is an induction head,
        and more (${lines.length - 1} sentences)</summary><ul>${lines.slice(1).map((s) => html`<li>${s}</li>`)}</ul></details>` : nothing}
    </div></div>
    ${copy ? html`<div class="copying" part="copying"
      data-first=${copy.first} data-second=${copy.second} data-best=${copy.best?.induction ?? ''} data-even=${copy.even ?? ''}>
      <details><summary><h4>Looking for an induction head: a second test, where only copying can help</h4></summary>
      <div class="cols">${explainCopying(m, copy, c, repeat).map((s) => html`<p>${s}</p>`)}</div></details>
    </div>` : nothing}`;
}


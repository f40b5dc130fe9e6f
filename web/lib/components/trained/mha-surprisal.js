import { html, css, nothing } from 'lit';
import { TrainedModelElement, trainedStyles, showChar, showToken, formatAblate } from './trained-shared.js';
import { parseAblateStrict, findRepeat, surprisalBits, measureSurprisal, measureSurprisalAsync, copyPart } from '../logic/surprisal.js';

export { parseAblateStrict, findRepeat, surprisalBits, measureSurprisal, copyPart };
import { interpolatorFor, colorFor, textOn, fmt } from '../base/shared.js';
import { signed } from '../logic/format.js';
import { Announcer } from '../base/announce.js';

const DEFAULT_TEXT = 'The cat sat on the mat. The cat sat on the mat.';

/**
 * `<mha-surprisal>` — how surprised a trained character model is by each character of a text:
 * a strip of cells, one per character, coloured by its surprisal −log₂ p(character | the text
 * before it) as the engine computes it (CharModel.run's log-probabilities); the mean, bits per
 * character, defined in place, beside two baselines: a uniform guess (log₂ V) and a unigram guess
 * that knows this text's character frequencies. For a phrase written twice the mean is split by
 * copy: what the model pays on the first copy and on the second, where an induction head can copy
 * from the first (Olsson et al. 2022). With `ablate`, a second strip shows the same text with
 * those heads switched off, and the table the change per copy.
 *
 * @element mha-surprisal
 *
 * @attr {string} model - URL of a model file (`.safetensors`, format mha-wasm.charlm/1), as in
 *   `<mha-trained-heads>`; default: the shipped h = 4 model, found relative to this module.
 * @attr {string} text - The text (default "The cat sat on the mat. The cat sat on the mat."): 2 to
 *   `context` characters (96 for the shipped models). A phrase written twice (separated by white
 *   space or nothing) is found and split by copy.
 * @attr {boolean} repeat - Read `text` as a phrase written twice, `${text} ${text}` (as
 *   `<mha-induction>` does); the phrase then has at most ⌊(context − 1) / 2⌋ characters.
 * @attr {string} ablate - Heads switched off for the second strip, as 1-based `layer:head` pairs
 *   ("2:1 2:2"), the syntax of `<mha-trained-heads>`; empty: one strip.
 * @attr {'viridis'|'cividis'} scheme - Color scale of the cells.
 *
 * A bad `text` or `ablate` keeps the last good strips, shows one message naming the attribute, the
 * expected and the given value, and fires `mha-error`; the attribute stays as written.
 *
 * @prop {object} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {object|null} measured - Read-only: measureSurprisal's result for the current attributes
 *   (null before the first).
 * @prop {Error|null} error - Read-only: why the model could not be loaded.
 * @prop {Error|null} inputError - Read-only: why the current `text` or `ablate` was not used.
 *
 * @fires mha-computed - `{detail: measured}` after every measurement.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute; the last valid value stays, the attribute as written) or a model that cannot be loaded (shown in place).
 *
 * @csspart definition - The definition of bits per character.
 * @csspart strip - A strip of character cells (`data-ablated` on the second).
 * @csspart cell - One character's cell (`data-t`, `data-bits`).
 * @csspart readout - The line describing the character under the cursor.
 * @csspart legend - The color scale.
 * @csspart table - The table of means and baselines.
 * @csspart summary - The sentence comparing the copies (read in place).
 * @csspart announcement - The visually hidden line announced when a new measurement replaces the last (each copy's bits).
 * @csspart copy-rule - Which characters each copy's mean counts.
 * @csspart error - The error message.
 *
 * @cssprop --mha-accent, --mha-fg, --mha-bg, --mha-surface, --mha-border, --mha-muted, --mha-mono - Theme.
 */
export class MhaSurprisal extends TrainedModelElement {
  static worker = true;

  static properties = {
    ...TrainedModelElement.properties,
    text: { type: String },
    repeat: { type: Boolean },
    ablate: { type: String },
    measured: { state: true },
    inputError: { state: true },
    _cursor: { state: true },
  };

  static styles = [trainedStyles, css`
    :host { container-type: inline-size; }
    .definition { margin: 0.4rem 0; }
    dfn { font-style: normal; font-weight: 700; }
    .nowrap { white-space: nowrap; }
    .strips { margin: 0.6rem 0; border-radius: 8px; }
    .strip-name { font-size: 0.88rem; font-weight: 600; margin: 0.5rem 0 0.2rem; }
    .strip { display: flex; flex-wrap: wrap; gap: 2px; font-family: var(--_mono); }
    .cell { display: inline-flex; flex-direction: column; align-items: center; justify-content: center;
      width: 2.1rem; min-height: 2.1rem; border-radius: 3px; box-sizing: border-box; border-bottom: 4px solid transparent;
      font-variant-numeric: tabular-nums; cursor: default; }
    .cell .ch { font-size: 1rem; line-height: 1.1; }
    .tokens .cell { width: auto; min-width: 2.1rem; padding: 0 0.2rem; }
    .tokens .cell .ch { white-space: pre; }
    .cell .b { font-size: 0.62rem; line-height: 1.1; }
    .cell.none { background: var(--_surface); color: var(--_muted); }
    .cell.c1 { border-bottom-color: var(--_accent); }
    .cell.c2 { border-bottom-color: var(--_focus); border-bottom-style: dashed; }
    .cell.cur { outline: 3px solid var(--_fg); outline-offset: -1px; }
    .readout { min-height: 1.4em; font-size: 0.9rem; margin: 0.4rem 0; font-variant-numeric: tabular-nums; }
    .legend { display: flex; align-items: center; gap: 0.4rem; font-size: 0.8rem; color: var(--_muted); flex-wrap: wrap; }
    .legend .bar { display: inline-block; width: 9rem; height: 0.7rem; border-radius: 3px; }
    .key { display: inline-flex; align-items: center; gap: 0.25rem; }
    .key i { display: inline-block; width: 1.2rem; border-bottom: 4px solid var(--_accent); }
    .key i.c2 { border-bottom-color: var(--_focus); border-bottom-style: dashed; }
    table { border-collapse: collapse; font-size: 0.9rem; font-variant-numeric: tabular-nums; margin: 0.6rem 0; }
    th, td { padding: 0.15em 0.6em; border-bottom: 1px solid var(--_border); text-align: right; vertical-align: top; }
    th[scope='row'] { text-align: left; font-weight: 400; max-width: 24rem; }
    thead th { font-weight: 600; }
    tr.model th, tr.model td { font-weight: 700; }
    .scroll { overflow-x: auto; max-width: 100%; }
    .summary { margin: 0.4rem 0; }
    /* wide: the table beside what it says */
    .result { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 1.5rem; align-items: start; }
    .result > * { min-width: 0; }
    @container (min-width: 800px) { .result { grid-template-columns: max-content minmax(0, 1fr); } }
    details.unigram > summary { cursor: pointer; }
    /* a phone: narrower cells (14 to a row at 390 px), and each row of the table a card (its name, then its values named) */
    @container (max-width: 480px) {
      .cell { width: 1.6rem; }
      .tokens .cell { min-width: 1.6rem; }
      table, tbody, tr { display: block; }
      thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
      tbody tr { display: flex; flex-wrap: wrap; gap: 0.1em 0.9em; padding: 0.15em 0.2em; border-bottom: 1px solid var(--_border); }
      th, td { display: block; border: 0; padding: 0; text-align: left; }
      th[scope='row'] { flex: 1 0 100%; max-width: none; }
      td::before { color: var(--_muted); font-weight: 400; }
      td:nth-of-type(1)::before { content: 'whole text '; }
      td:nth-of-type(2)::before { content: 'copy 1 '; }
      td:nth-of-type(3)::before { content: 'copy 2 '; }
    }
  `];

  constructor() {
    super();
    this.text = DEFAULT_TEXT;
    this.repeat = false;
    this.ablate = '';
    this.measured = null;
    this.inputError = null;
    this._cursor = 1;
    // the summary and the table are read where they are; a new measurement says one short line
    this._announcer = new Announcer(this);
    // the model runs in the engine worker: the newest text and ablation win, at most one measurement waits
    this.runsOnModel(({ lm, text, ablate, repeat }) => measureSurprisalAsync(lm, text, { ablate, repeat }),
      (e, m) => this._measured(e, m));
  }

  willUpdate(changed) {
    super.willUpdate(changed);
    if (this.lm && (changed.has('lm') || changed.has('text') || changed.has('ablate') || changed.has('repeat'))) this._compute();
  }

  _compute() {
    const lm = this.lm;
    let ablate;
    try {
      ablate = parseAblateStrict(this.ablate, lm.config);
    } catch (e) {
      this._runs.cancel();
      this._measured(e, null);
      return;
    }
    // a valid ablate clears its message at once; a text's message waits for the measurement that judges it
    if (this.inputError?.argument === 'ablate') this.inputError = null;
    this._runs.push({ lm, text: this.text ?? '', ablate, repeat: this.repeat });
  }

  /** A measurement (or the error of a bad attribute) arrives: the last good strips stay on an error, whose message names the attribute. */
  _measured(e, m) {
    if (e) {
      this.inputError = e;
      this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: e }, bubbles: true, composed: true }));
      return;
    }
    if (this.measured) this._announcer.say(() => shortLine(this.measured));
    this.measured = m;
    this.inputError = null;
    if (this._cursor >= m.tokens.length) this._cursor = 1;
    this.dispatchEvent(new CustomEvent('mha-computed', { detail: m, bubbles: true, composed: true }));
  }

  _onKey(e) {
    const T = this.measured?.tokens.length ?? 0;
    let c = this._cursor;
    switch (e.key) {
      case 'ArrowLeft': case 'ArrowUp': c = Math.max(0, c - 1); break;
      case 'ArrowRight': case 'ArrowDown': c = Math.min(T - 1, c + 1); break;
      case 'Home': c = 0; break;
      case 'End': c = T - 1; break;
      default: return;
    }
    e.preventDefault();
    this._cursor = c;
  }

  /** Where position t stands in the repeat: its copy (1, 2; 0 for neither) and whether the copy's mean counts it (logic/surprisal.js). */
  _copyOf(t) {
    return copyPart(this.measured.copies, t);
  }

  _strip(bits, ablated, color) {
    const m = this.measured;
    return html`<div class="strip" part="strip" ?data-ablated=${ablated}>${m.tokens.map((ch, t) => {
      const b = bits[t];
      const { copy, counted } = this._copyOf(t);
      // underlined: the characters a copy's mean counts (its first character is in neither mean)
      const cls = `cell${b === null ? ' none' : ''}${counted ? ` c${copy}` : ''}${t === this._cursor ? ' cur' : ''}`;
      const bg = b === null ? null : color(b);
      return html`<span class=${cls} part="cell" data-t=${t} data-bits=${b ?? ''} aria-hidden="true"
        style=${bg ? `background:${bg};color:${textOn(bg)}` : ''}
        @mouseenter=${() => { this._cursor = t; }}><span class="ch">${m.unit === 'token' ? showToken(ch) : showChar(ch)}</span><span class="b">${b === null ? '—' : b.toFixed(1)}</span></span>`;
    })}</div>`;
  }

  _readout() {
    const m = this.measured;
    const t = this._cursor;
    const tok = m.unit === 'token';
    const ch = `‘${tok ? showToken(m.tokens[t]) : showChar(m.tokens[t])}’`;
    const { copy, counted } = this._copyOf(t);
    const where = `${tok ? 'Token' : 'Character'} ${t + 1} of ${m.tokens.length}, ${ch}${copy
      ? ` (copy ${copy}${counted || t === 0 ? '' : `, its first ${tok ? 'token' : 'character'}: in neither copy's mean`})` : ''}`;
    if (t === 0) return `${where}: not scored, there is no ${tok ? 'token' : 'text'} before it.`;
    const p = (b) => { const v = 2 ** -b; return v >= 0.001 ? v.toFixed(3) : v.toExponential(1); };
    const one = (b) => `${fmt(b, 2)} bits (the model gave it p = ${p(b)})`;
    const parts = [`${where}: ${one(m.bits[t])}`];
    if (m.ablated) parts.push(`with heads ${formatAblate(m.ablate)} off: ${one(m.ablated.bits[t])}`);
    return `${parts.join('; ')}.`;
  }

  _table() {
    const m = this.measured;
    const copies = !!m.copies;
    const row = (cls, label, whole, first, second, sign = false) => {
      const f = (v) => (v === null ? '—' : sign ? signed(v, 2) : fmt(v, 2));
      return html`<tr class=${cls}><th scope="row">${label}</th><td>${f(whole)}</td>${copies
        ? html`<td>${f(first)}</td><td>${f(second)}</td>` : nothing}</tr>`;
    };
    const a = m.ablated;
    const offName = a ? `heads ${formatAblate(m.ablate)} switched off` : '';
    const u = m.unit ?? 'character';
    return html`<div class="scroll" tabindex="0" role="region" aria-label=${`Bits per ${u} and baselines`}>
      <table part="table">
        <caption class="sr-only">Bits per ${u}: the model and two baselines${copies ? ', on the whole text and on each copy' : ''}</caption>
        <thead><tr><th scope="col">bits per ${u}</th><th scope="col">whole text</th>${copies
          ? html`<th scope="col">copy 1</th><th scope="col">copy 2</th>` : nothing}</tr></thead>
        <tbody>
          ${row('model', a ? 'the model, all heads on' : 'the model', m.mean, m.copies?.first ?? null, m.copies?.second ?? null)}
          ${a ? row('model ablated', `the model, ${offName}`, a.mean, a.first, a.second) : nothing}
          ${a ? row('delta', 'change from switching them off', a.mean - m.mean,
            copies ? a.first - m.copies.first : null, copies ? a.second - m.copies.second : null, true) : nothing}
          ${row('uniform', html`uniform guess (all ${m.vocabSize.toLocaleString('en-US')} ${u}s equally likely): <span class="nowrap">log₂ ${m.vocabSize}</span>`,
            m.uniform, copies ? m.uniform : null, copies ? m.uniform : null)}
          ${row('unigram', `unigram guess (this text's ${u} frequencies)`,
            m.unigram.whole, m.unigram.first, m.unigram.second)}
        </tbody>
      </table></div>`;
  }

  _summary() {
    const m = this.measured;
    const parts = [];
    if (m.copies) {
      const { first, second } = m.copies;
      parts.push(`The model pays ${fmt(first, 2)} bits per ${m.unit ?? 'character'} on the first copy and ${fmt(second, 2)} on the second` +
        (second < first ? ': having read the phrase once, it predicts the repeat from it.' : ': the repeat is no easier for it.'));
      if (m.ablated) {
        const d1 = m.ablated.first - first, d2 = m.ablated.second - second;
        parts.push(`Switching off heads ${formatAblate(m.ablate)} changes the first copy by ${signed(d1, 2)} ` +
          `and the second by ${signed(d2, 2)} bits per ${m.unit ?? 'character'}.`);
      }
    } else {
      parts.push('This text is not a phrase written twice, so there is no per-copy split (write a phrase twice, or set repeat).');
    }
    return parts.join(' ');
  }

  /** The definition of the unit a model reads (characters or byte-pair tokens), shown once above the strips. */
  _definition(m) {
    if (m.unit === 'token') {
      return html`<p class="definition" part="definition"><dfn>Bits per token</dfn>: the average of −log₂ of the probability the
        model gave the token that came next. This model reads byte-pair tokens, pieces of words from its vocabulary of
        ${m.vocabSize.toLocaleString('en-US')}; each cell below is one token, shown as its piece (␣ is a space), coloured by
        that number for it alone (its surprisal): dark, the model expected it; bright, it did not. The first token has no
        token before it and is not scored. Bits per token are not bits per character: a token covers several characters.</p>`;
    }
    return html`<p class="definition" part="definition"><dfn>Bits per character</dfn>: the average of −log₂ of the probability the
        model gave the character that came next. Each cell below is one character, coloured by that number for it alone
        (its surprisal): dark, the model expected it; bright, it did not. The first character has no text before it and
        is not scored.</p>`;
  }

  /** The note under a character model's table: where its unigram baseline comes from. */
  _unigramNote(m) {
    if (m.unit === 'token') return nothing;
    return html`<details class="hint unigram"><summary>How the unigram guess is fitted</summary>The unigram guess gives each character the share of this text it makes up; on the whole text it
        pays the entropy of those character frequencies. It is fitted to this very text (the model file carries no character counts of its
        training data), so it is a generous baseline: it already knows which characters the text uses.${m.unknown
          ? ` ${m.unknown} character${m.unknown > 1 ? 's are' : ' is'} not in the model's vocabulary and ${m.unknown > 1 ? 'are' : 'is'} read as ‘${this.lm.vocab[this.lm.config.unk]}’.` : ''}</details>`;
  }

  renderView() {
    if (this.error && !this.lm) return html`<p class="error" part="error" role="alert">${this.errorMessage()}</p>`;
    if (!this.lm) return this.loadingView();
    const m = this.measured;
    const bad = this.inputError
      ? html`<p class="error" part="error" role="alert">${this.inputError.message}${m ? ' The strips show the last good value.' : ''}</p>` : nothing;
    if (!m) return bad;
    const hi = m.uniform;
    const color = colorFor(this._scheme, 0, hi);
    const interp = interpolatorFor(this._scheme);
    const stops = Array.from({ length: 11 }, (_, i) => `${interp(i / 10)} ${i * 10}%`).join(', ');
    const unit = m.unit === 'token' ? 'token' : 'character';
    return html`
      ${bad}
      ${this._definition(m)}
      <div class=${m.unit === 'token' ? 'strips tokens' : 'strips'} tabindex="0" role="group" @keydown=${this._onKey}
        aria-label=${`Surprisal of each ${unit}. Arrow keys move between ${unit}s; the line below reads the current one.`}
        aria-describedby="readout">
        ${m.ablated ? html`<p class="strip-name" aria-hidden="true">All heads on</p>` : nothing}
        ${this._strip(m.bits, false, color)}
        ${m.ablated ? html`<p class="strip-name" aria-hidden="true">Heads ${formatAblate(m.ablate)} switched off</p>
          ${this._strip(m.ablated.bits, true, color)}` : nothing}
      </div>
      <p class="readout" part="readout" id="readout" role="status" aria-live="polite">${this._readout()}</p>
      ${this._announcer.view()}
      <div class="legend" part="legend">
        <span>0 bits</span>
        <span class="bar" role="img" aria-label=${`color scale ${this._scheme} from 0 to ${fmt(hi, 2)} bits (log₂ ${m.vocabSize}, the uniform guess) and above`}
          style=${`background: linear-gradient(to right, ${stops})`}></span>
        <span>≥ ${fmt(hi, 2)} bits (log₂ ${m.vocabSize})</span>
        ${m.copies ? html`<span class="key"><i></i> copy 1</span><span class="key"><i class="c2"></i> copy 2</span>` : nothing}
      </div>
      ${m.copies ? html`<p class="hint" part="copy-rule">Each copy's mean counts its ${unit}s from the second to the last, the ones
        underlined. Its first ${unit} is in neither mean: copy 1's has nothing before it, and before copy 2's nothing says that
        the phrase starts again, so no head can copy it yet.</p>` : nothing}
      <div class="result">${this._table()}<div>
      <p class="summary" part="summary">${this._summary()}</p>
      ${this._unigramNote(m)}</div></div>`;
  }
}

/** The line announced when a measurement replaces the last: the bits of each copy (or of the whole text), with heads off too. */
export function shortLine(m) {
  const u = m.unit ?? 'character';
  const a = m.ablated;
  if (!m.copies) return `${fmt(m.mean, 2)} bits per ${u}${a ? `, ${fmt(a.mean, 2)} with heads ${formatAblate(m.ablate)} off` : ''}; no phrase written twice.`;
  return `Copy 1: ${fmt(m.copies.first, 2)}, copy 2: ${fmt(m.copies.second, 2)} bits per ${u}${
    a ? `; with heads ${formatAblate(m.ablate)} off ${fmt(a.first, 2)} and ${fmt(a.second, 2)}` : ''}.`;
}

customElements.get('mha-surprisal') || customElements.define('mha-surprisal', MhaSurprisal);

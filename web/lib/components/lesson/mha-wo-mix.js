import { LitElement, html, css } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, taskEngine, renderLatest, toMatrix, fmt } from '../base/shared.js';
import { PEOPLE, FEATURES, X0, HEADS, restaurantLayerOptions, woOnly } from '../logic/restaurant.js';
import { matrixTable, matrixStyles } from '../base/matrix.js';
import { AttrGuard, intAttr, rawAttr, fireError } from '../base/attr-check.js';
import { StepperLink } from '../base/stepper-link.js';
import { ScrollCue } from '../base/scroll-cue.js';

/**
 * `<mha-wo-mix>` — where the heads meet: one person's output of the restaurant example split by
 * head. The engine computes the layer three times: with the rows of W_O that face head 2 set to
 * zero (head 1's contribution), with those facing head 1 set to zero (head 2's), and whole. The two
 * contributions add up to the full output, which shows that W_O is the first step in which numbers
 * of different heads land in the same sum.
 *
 * Design: the element has its own input `x` (default: the example's X), so it works alone. To
 * follow a `<mha-stepper>` on the same page, give it `for="<id of the stepper>"`: it takes the
 * stepper's X at once and again at every `mha-computed` event of that stepper (an edited cell of
 * the stepper's X updates this table).
 *
 * @element mha-wo-mix
 *
 * @attr {string} for - Id of a `<mha-stepper>` (in the same document or shadow root) whose X to follow.
 *   An id of no element (once the page is parsed) or of another kind of element shows a message
 *   and fires `mha-error`; the element then shows its own X.
 * @attr {number} person - Row of X shown, 0–2 (Alex, Emma, Daniel; default 0).
 * @attr {number} feature - Output feature of the sentence under the table, 0–5 (default 1, "cheap").
 *
 * A bad attribute value keeps the last valid value (or the default), shows one message naming the
 * attribute, the value and what is allowed, and fires `mha-error`; the attribute stays as written.
 *
 * @prop {number[][]} x - The input X `[3, 6]` (nested arrays or `{data, shape}`); set by the
 *   followed stepper when `for` is given.
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {{heads: number[][], full: number[]}|null} contributions - Read-only: the person's output
 *   row from each head alone (`heads[i]`, W_O's other rows zeroed) and from the whole layer (`full`).
 * @prop {Error|null} error - Read-only: the last engine error.
 *
 * @fires mha-computed - `{detail: {x, contributions}}` after every recomputation.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (an MHAError INVALID_ARGUMENT, `argument` = the
 *   attribute), or the engine's error when it cannot load or refuses the computation (shown in place).
 *
 * @csspart table - The contributions table.
 * @csspart note - The sentence that adds up one feature.
 * @csspart error - An engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-error - Theme.
 * @cssprop --mha-highlight, --mha-highlight-fg - Background and text of highlighted cells.
 */
export class MhaWoMix extends LitElement {
  static properties = {
    for: { type: String },
    person: { converter: rawAttr },
    feature: { converter: rawAttr },
    x: { attribute: false },
    engine: { attribute: false },
  };

  static styles = [baseStyles, matrixStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; }
    .note { margin: 0.5rem 0 0; max-width: 46rem; }
    .loading { color: var(--_muted); font-size: 0.9em; }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    this.for = '';
    /** @type {number|string} */ this.person = 0;
    /** @type {number|string} */ this.feature = 1;
    this.x = X0;
    this.engine = undefined;
    this._attrs = new AttrGuard(this);
    this._p = 0;
    this._f = 1;
    this._stepper = new StepperLink(this);
    // every person's output rows from each head alone and the whole layer: the task's value, drawn with
    // Task.render; `contributions` picks the shown person's
    this._task = new Task(this, {
      args: () => [this.x, this.engine],
      task: async ([x, engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        const X = toMatrix(x);
        const rows = [];
        for (const wO of [woOnly(0), woOnly(1), undefined]) {
          const layer = mha.createLayer(restaurantLayerOptions(wO));
          try {
            rows.push(toMatrix(layer.forward(X, { needWeights: false }).output));
          } finally {
            layer.dispose();
          }
        }
        return { X, rows };
      },
      onComplete: ({ X, rows }) => {
        this.dispatchEvent(new CustomEvent('mha-computed', {
          detail: { x: X, contributions: pick(rows, this._p) }, bubbles: true, composed: true,
        }));
      },
      onError: (err) => fireError(this, err),
    });
  }

  /** The shown person's output row from each head alone and from the whole layer (null before the first result and after an error). */
  get contributions() {
    const rows = this._task.value?.rows;
    return rows ? pick(rows, this._p) : null;
  }

  /** The engine's error, if the last computation failed. */
  get error() {
    return this._task.error ?? null;
  }

  willUpdate(changed) {
    if (changed.has('for') && this.isConnected) this._stepper.link();
    const g = this._attrs;
    g.begin();
    if (this._stepper.error) g.add(this._stepper.error);
    this._p = g.take('person', intAttr('person', this.person, { dflt: 0, min: 0, max: PEOPLE.length - 1 }));
    this._f = g.take('feature', intAttr('feature', this.feature, { dflt: 1, min: 0, max: FEATURES.length - 1 }));
    g.end();
  }

  render() {
    // a new X keeps the last table until its rows arrive
    return html`${this._attrs.view()}${renderLatest(this._task, (v) => this._table(pick(v.rows, this._p)))}`;
  }

  _table(k) {
    const p = this._p, f = this._f;
    const rows = HEADS.map((h, i) => `from head ${i + 1} (${h.name}) only`).concat('full layer');
    return html`
      <div class="scroll" tabindex="0" role="region" aria-label=${`${PEOPLE[p]}'s output, split by head`}>
        ${matrixTable({ caption: `${PEOPLE[p]}'s output, split by head`, rows, cols: FEATURES,
          values: [...k.heads, k.full], kind: 'result', part: 'table' })}
      </div>
      <p class="note" part="note">For <q>${FEATURES[f]}</q>: ${fmt(k.heads[0][f])} from the ${HEADS[0].name} head
        + ${fmt(k.heads[1][f])} from the ${HEADS[1].name} head = <strong>${fmt(k.full[f])}</strong>.
        Neither head alone explains the final number.</p>`;
  }
}

/** Person p's output row from each head alone (`heads`) and from the whole layer (`full`), out of every person's `rows`. */
function pick(rows, p) {
  return { heads: [rows[0][p].slice(), rows[1][p].slice()], full: rows[2][p].slice() };
}

customElements.get('mha-wo-mix') || customElements.define('mha-wo-mix', MhaWoMix);

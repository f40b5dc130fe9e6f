import { LitElement, html, css, nothing } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, formStyles, taskEngine, renderLatest, errorText, int } from '../base/shared.js';
import { AttrGuard, intAttr, numberAttr, enumAttr } from '../base/attr-check.js';
import { DECODERS } from '../logic/models-data.js';
import { costLedger, bytesText, flopsText, memorySentence, flopsSentence, LEDGER_LIMITS, headChoices, kvFor, ledgerByHeads } from '../logic/cost-ledger.js';
import { ScrollCue } from '../base/scroll-cue.js';
import { Announcer } from '../base/announce.js';

const CUSTOM = 'none';

/** The note under the table of every h: what g does in it, and why the projection FLOPs stay. */
function groupNote(group) {
  if (!Number.isInteger(group)) return 'g does not divide h here, so the engine refuses these layers.';
  if (group === 1) return 'Every row is standard multi-head attention (g = h): the projections cost the same in every row,; only the softmax and the scores grow with h.';
  return `Each row keeps ${group} query heads per K/V head (g = h/${group}), so K and V stay d_model/${group} wide and the projections cost the same in every row; ` +
    `h below ${group} cannot keep that grouping and is left out. Holding g itself fixed instead would narrow K and V as h grows.`;
}
const DTYPES = [[4, 'float32 (4 bytes)'], [2, 'float16 / bfloat16 (2 bytes)'], [1, 'int8 (1 byte)'], [0.5, 'int4 (½ byte)']];

export { headChoices, kvFor };

const whole = (max) => (name, raw) => intAttr(name, raw, { dflt: undefined, min: 1, max });
/** The attributes: property, HTML name, parser (absent → undefined: the preset's value). */
const ATTRS = [
  ['model', 'model', (name, raw) => enumAttr(name, raw, { dflt: undefined, values: [...DECODERS.map((m) => m.name), CUSTOM] })],
  ['heads', 'heads', whole(LEDGER_LIMITS.heads)],
  ['kvHeads', 'kv-heads', whole(LEDGER_LIMITS.heads)],
  ['context', 'context', whole(LEDGER_LIMITS.context)],
  ['batch', 'batch', whole(LEDGER_LIMITS.batch)],
  ['dModel', 'd-model', whole(LEDGER_LIMITS.dModel)],
  ['layers', 'layers', whole(LEDGER_LIMITS.layers)],
  ['dtypeBytes', 'dtype-bytes', (name, raw) => numberAttr(name, raw, { dflt: undefined, min: 0, max: LEDGER_LIMITS.dtypeBytes, minExclusive: true, what: 'bytes per stored value, e.g. 4, 2, 1, 0.5' })],
];

/**
 * `<mha-cost-ledger>` — what an attention configuration costs, side by side: the bytes of its weights
 * (one attention layer, and the whole model for a preset), of its KV cache, and of the attention
 * scores one layer materialises (B·h·T², what FlashAttention, Dao et al. 2022, never writes to main
 * memory), and the FLOPs of one forward over T tokens with the softmax counted (the engine's
 * convention: 6 FLOPs per score — scale, max, subtract, exp counted as ONE FLOP, add, multiply — and
 * 1 per row). Two sentences computed from the numbers say which memory is largest and what share
 * the softmax takes. A table behind a disclosure, of the same layer at every offered h, with d_model fixed and each K/V
 * head serving the same h/g query heads, shows the projection FLOPs staying while the score memory
 * and the softmax grow with h.
 *
 * Every attention figure comes from the engine's `mha.passport()` (params.total, flops.matmul,
 * flops.softmax, flops.total, memory.scores, memory.kvCache) times the layers and bytes per value;
 * a preset's MLP, embeddings and norms are counted from its published sizes (models-data.js,
 * cost-ledger.js). A bad attribute shows a message naming it (the last good value stays, the
 * attribute stays as written) and fires `mha-error`; a configuration the engine refuses (kv-heads
 * not dividing heads) shows the engine's message.
 *
 * @element mha-cost-ledger
 *
 * @attr {string} model - A preset: "GPT-2 (small)", "GPT-3 175B", "LLaMA-2 70B" (default, unless
 *   d-model is given), or "none" (the attention layers only). Its sizes are the defaults of the
 *   attributes below; with a d-model other than the preset's, only the attention layers are counted.
 * @attr {number} heads - Query heads h (default: the preset's, else 1).
 * @attr {number} kv-heads - K/V heads g, dividing h (default: the preset's, else h).
 * @attr {number} context - Tokens T of the forward and of the KV cache (default: the preset's trained context, else 1024), 1…1,048,576.
 * @attr {number} batch - Sequences B (default 1), 1…4,096.
 * @attr {number} d-model - d_model (default: the preset's), 1…65,536.
 * @attr {number} layers - Layers L (default: the preset's, else 1), 1…1,000.
 * @attr {number} dtype-bytes - Bytes per stored value, a number in (0, 8] (default 2; 0.5 for int4).
 *
 * @prop {object} engine - An engine from `createMHA()` (or a promise of one); by default the shared one.
 * @prop {object|null} result - Read-only: the last ledger (cost-ledger.js `costLedger`), with
 *   `config` (the configuration used) and `byHeads` (one passport summary per offered h, cost-ledger.js `ledgerByHeads`) and `group` (h/g).
 * @prop {Error|null} error - Read-only: the engine's last error.
 * @prop {MHAError[]} attributeErrors - Read-only: the current bad-attribute errors.
 *
 * @fires change - `{detail: config}` when the user changes a control.
 * @fires mha-computed - `{detail: result}` after every computation.
 * @fires mha-error - `{detail: {error}}`: a bad attribute (MHAError INVALID_ARGUMENT naming it) or an
 *   engine error (INVALID_CONFIG, or the load error).
 *
 * @csspart form - The controls.
 * @csspart control - Each select and input.
 * @csspart ledger - The ledger table.
 * @csspart sentence - The computed comparison sentences, read in place.
 * @csspart announcement - The visually hidden line announced once a choice settles (the largest memory item, the total FLOPs).
 * @csspart heads-details - The disclosure (closed at first) holding the table at every h and its note.
 * @csspart counting - The disclosure (closed at first) saying how exp and the scores are counted, and the sources.
 * @csspart heads-table - The table of the same layer at every h.
 * @csspart input-error - The message of a refused typed number.
 * @csspart error - An attribute or engine error.
 *
 * @cssprop --mha-fg, --mha-bg, --mha-surface, --mha-muted, --mha-border, --mha-accent, --mha-focus, --mha-error, --mha-radius - Theme.
 */
export class MhaCostLedger extends LitElement {
  static properties = {
    model: { type: String },
    heads: { type: String },
    kvHeads: { type: String, attribute: 'kv-heads' },
    context: { type: String },
    batch: { type: String },
    dModel: { type: String, attribute: 'd-model' },
    layers: { type: String },
    dtypeBytes: { type: String, attribute: 'dtype-bytes' },
    engine: { attribute: false },
    attributeErrors: { state: true },
    _ui: { state: true },
    _inputError: { state: true },
  };

  static styles = [baseStyles, formStyles, css`
    :host { display: block; max-width: 100%; min-width: 0; }
    .scroll {
      overflow-x: auto; max-width: 100%; padding-bottom: 0.3rem;
    }
    table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.88rem; margin: 0.4rem 0 0.8rem; }
    p.title { font-weight: 600; font-size: 0.88rem; margin: 0.4rem 0 0.2rem; }
    th, td { padding: 0.28em 0.7em; border-bottom: 1px solid var(--_border); text-align: right; vertical-align: top; }
    th[scope='row'], thead th:first-child { text-align: left; font-weight: 500; }
    thead th { color: var(--_muted); font-weight: 600; font-size: 0.85em; }
    tbody.group th[scope='rowgroup'] { text-align: left; background: var(--_surface); font-weight: 600; }
    td.how { color: var(--_muted); text-align: left; font-family: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); font-size: 0.9em; }
    td.num, td.bytes, table[part='heads-table'] td { white-space: nowrap; }
    td.bytes { font-weight: 600; }
    tr.total > * { font-weight: 600; }
    tr[aria-current='true'] > * { background: var(--_surface); font-weight: 600; }
    .sentence { background: var(--_surface); border-radius: calc(var(--_radius) * 1.4); padding: 0.5em 1em; margin: 0.4rem 0 0.8rem; }
    .sentence p { margin: 0.3em 0; }
    .note { color: var(--_muted); font-size: 0.88em; }
    details.note > summary { cursor: pointer; }
    details.note p { margin: 0.3em 0; }
    .loading { color: var(--_muted); font-size: 0.9em; }
    /* wide: the sentences and notes beside the table, its "how" column wrapped to leave them room */
    @container (min-width: 60rem) {
      .split { display: grid; grid-template-columns: auto minmax(17rem, 1fr); gap: 0 1.2rem; align-items: start; }
      table[part='ledger'] td.how { white-space: normal; min-width: 12em; max-width: 25em; }
      .side .sentence { margin-top: 0.4rem; }
    }
    details.heads > summary { cursor: pointer; font-weight: 600; font-size: 0.92rem; margin: 0.2rem 0; }
    /* a phone: the controls two to a row */
    @container (max-width: 34rem) {
      form { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); align-items: end; }
      form select, form input { width: 100%; box-sizing: border-box; }
      /* the model and the dtype, whose names are long, on a row of their own: nothing cut off */
      form label:has(select[name='model']), form label:has(select[name='dtype']) { grid-column: 1 / -1; }
    }
    th[scope='row'] { white-space: nowrap; }
    /* a phone: each row a card (label, then its values with their column names), nothing cut off at the side */
    :host { container-type: inline-size; }
    @container (max-width: 34rem) {
      .scroll { overflow-x: visible; }
      table, tbody, tr { display: block; }
      thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
      tbody tr { display: flex; flex-wrap: wrap; gap: 0.1em 0.8em; align-items: baseline; padding: 0.25em 0.2em; border-bottom: 1px solid var(--_border); }
      /* d_model is in the ledger's title line: the heads label stays on one line */
      .dmodel { display: none; }
      th, td { display: block; box-sizing: border-box; border: 0; padding: 0; text-align: left; white-space: normal; }
      /* the name and the value on the first line, the count and how it is counted on the second */
      tbody tr::before { content: ''; flex: 0 0 100%; order: 1; height: 0; }
      th[scope='row'] { flex: 1 1 auto; white-space: normal; }
      th[scope='rowgroup'] { flex: 1 0 100%; }
      td.bytes { flex: 0 0 auto; text-align: right; margin-left: auto; }
      td.num:empty { display: none; }
      td.num { flex: 0 0 auto; order: 2; }
      td.how { flex: 1 1 12em; order: 2; }
      table[part='heads-table'] th[scope='row'] { flex: 1 0 100%; }
      tbody.group th[scope='rowgroup'] { padding: 0.2em 0.3em; }
      table[part='heads-table'] th[scope='row']::before { content: 'h = '; }
      table[part='heads-table'] td:not([colspan])::before { color: var(--_muted); font-weight: 400; }
      table[part='heads-table'] td:nth-of-type(1)::before { content: 'g '; }
      table[part='heads-table'] td:nth-of-type(2)::before { content: 'd_k '; }
      table[part='heads-table'] td:nth-of-type(3)::before { content: 'projections '; }
      table[part='heads-table'] td:nth-of-type(4)::before { content: 'scaling + softmax '; }
      table[part='heads-table'] td:nth-of-type(5)::before { content: 'scores '; }
      table[part='heads-table'] td:nth-of-type(6)::before { content: 'KV cache '; }
    }
  `];

  constructor() {
    super();
    new ScrollCue(this);   // the sideways-scroll cue of its boxes (base/scroll-cue.js)
    // the ledger and its sentences are read where they are; a choice says one short line once it settles
    this._announcer = new Announcer(this);
    this.model = undefined;
    this.heads = undefined;
    this.kvHeads = undefined;
    this.context = undefined;
    this.batch = undefined;
    this.dModel = undefined;
    this.layers = undefined;
    this.dtypeBytes = undefined;
    this.engine = undefined;
    this.attributeErrors = [];
    this._ui = {};
    this._inputError = '';
    this._good = {};   // the attributes' values in use (undefined = absent)
    this._attrs = new AttrGuard(this);
    this._cfg = null;
    this._task = new Task(this, {
      args: () => [this._cfg, this.engine],
      task: async ([cfg, engine], { signal }) => {
        const mha = await taskEngine(engine, signal);
        const r = costLedger(mha, cfg);
        const { rows: byHeads, group } = ledgerByHeads(mha, cfg);
        return { ...r, config: cfg, byHeads, group };
      },
      onComplete: (r) => {
        this.dispatchEvent(new CustomEvent('mha-computed', { detail: r, bubbles: true, composed: true }));
      },
      onError: (err) => {
        this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: err }, bubbles: true, composed: true }));
      },
    });
  }

  /** The last ledger (null before the first one and after an engine error). */
  get result() { return this._task.value ?? null; }

  /** The engine's last error (null after a ledger that succeeded). */
  get error() { return this._task.error ?? null; }

  /** Parses the attributes (a bad one keeps its last good value: AttrGuard) and resolves the configuration. */
  willUpdate(changed) {
    if (this._cfg && !changed.has('_ui') && !ATTRS.some(([key]) => changed.has(key))) return;
    const g = this._attrs;
    g.begin();
    const good = {};
    for (const [key, name, parse] of ATTRS) good[key] = g.take(name, parse(name, this[key]));
    g.end();
    for (const [key, name] of ATTRS) {
      if (changed.has(key) && !g.has(name)) delete this._ui[key];   // the author's new value wins over an earlier control choice
    }
    this._good = good;
    this.attributeErrors = g.errors;
    this._cfg = this._resolve();
  }

  /** The configuration: control choices over attributes over the preset's sizes. */
  _resolve() {
    const v = (k) => this._ui[k] ?? this._good[k];
    let name = v('model');
    if (name === undefined) name = v('dModel') === undefined ? 'LLaMA-2 70B' : CUSTOM;
    const preset = DECODERS.find((m) => m.name === name) ?? null;
    const dModel = v('dModel') ?? preset?.dModel ?? 24;
    const heads = v('heads') ?? preset?.heads ?? 1;
    const kvHeads = v('kvHeads') ?? (preset && heads === preset.heads ? preset.kvHeads : preset ? kvFor(heads, preset.heads, preset.kvHeads) : heads);
    const sameWidth = preset && dModel === preset.dModel;
    return {
      name, preset, dModel, heads, kvHeads,
      presetHeads: preset?.heads,
      layers: v('layers') ?? preset?.layers ?? 1,
      context: v('context') ?? preset?.context ?? 1024,
      batch: v('batch') ?? 1,
      dtypeBytes: v('dtypeBytes') ?? 2,
      bias: preset ? preset.bias !== false : true,
      model: sameWidth ? preset : null,
    };
  }

  _set(patch) {
    this._ui = { ...this._ui, ...patch };
    // the detail: the configuration the ledger will now use
    const c = this._resolve();
    this._announcer.say(() => {
      const r = this.result;
      if (!r) return '';
      const k = r.config;
      const [big] = [['the weights', r.weights.bytes], ['the KV cache', r.kvCache.bytes], ["one layer's scores", r.scores.bytesPerLayer]]
        .sort((a, b) => b[1] - a[1]);
      return `${k.name}, h = ${k.heads}, g = ${k.kvHeads}, T = ${int(k.context)}, B = ${int(k.batch)}: largest ${big[0]} (${
        bytesText(big[1])}); ${flopsText(r.flops.total)} in total.`;
    });
    this.dispatchEvent(new CustomEvent('change', {
      detail: { model: c.name, heads: c.heads, kvHeads: c.kvHeads, context: c.context, batch: c.batch, dModel: c.dModel, layers: c.layers, dtypeBytes: c.dtypeBytes },
      bubbles: true, composed: true,
    }));
  }

  _onModel(e) {
    const name = e.target.value;
    const m = DECODERS.find((x) => x.name === name);
    const c = this._cfg;
    this._set(m ? { model: name, dModel: m.dModel, heads: m.heads, kvHeads: m.kvHeads, layers: m.layers, context: m.context }
      : { model: CUSTOM, dModel: c.dModel, heads: c.heads, kvHeads: c.kvHeads, layers: c.layers, context: c.context });
  }

  _onHeads(e) {
    const h = Number(e.target.value);
    const c = this._cfg;
    this._set({ heads: h, kvHeads: kvFor(h, c.heads, c.kvHeads) });
  }

  _onNumber(e, key, label, max) {
    const inp = e.target;
    const v = Number(inp.value);
    if (inp.validity.badInput || inp.value.trim() === '' || !Number.isInteger(v) || v < 1 || v > max) {
      inp.setAttribute('aria-invalid', 'true');
      this._inputError = `${label}: not accepted — enter a whole number from 1 to ${int(max)}. The ledger still uses ${int(this._cfg[key])}.`;
      return;
    }
    inp.removeAttribute('aria-invalid');
    if (!this.renderRoot.querySelector('input[aria-invalid="true"]')) this._inputError = '';
    if (this._cfg[key] !== v) this._set({ [key]: v });
  }

  _kvOptions(h, g) {
    const opts = [];
    for (let k = 1; k <= h; k++) if (h % k === 0) opts.push(k);
    if (!opts.includes(g)) opts.push(g);
    return opts.map((k) => [k, k === h ? `${k} (standard MHA)` : k === 1 ? '1 (multi-query)' : h % k ? `${k} (does not divide h = ${h})` : `${k} (grouped)`]);
  }

  _controls(c) {
    const dts = DTYPES.some(([b]) => b === c.dtypeBytes) ? DTYPES : [...DTYPES, [c.dtypeBytes, `${c.dtypeBytes} bytes`]];
    const heads = headChoices(c.dModel, c.presetHeads, c.heads);
    return html`<form part="form" @submit=${(e) => e.preventDefault()}>
      <label><span>model</span> <select part="control" name="model" @change=${this._onModel}>
        ${DECODERS.map((m) => html`<option value=${m.name} ?selected=${m.name === c.name}>${m.name}</option>`)}
        <option value=${CUSTOM} ?selected=${c.name === CUSTOM}>none (attention layers only)</option>
      </select></label>
      <label><span>heads h<span class="dmodel"> (d<sub>model</sub> = ${int(c.dModel)})</span></span> <select part="control" name="heads" @change=${this._onHeads}>
        ${heads.map((h) => html`<option value=${h} ?selected=${h === c.heads}>${h}${c.dModel % h ? ' (does not divide d_model)' : ` (d_k = ${c.dModel / h})`}</option>`)}
      </select></label>
      <label><span>K/V heads g</span> <select part="control" name="kv-heads" @change=${(e) => this._set({ kvHeads: Number(e.target.value) })}>
        ${this._kvOptions(c.heads, c.kvHeads).map(([k, label]) => html`<option value=${k} ?selected=${k === c.kvHeads}>${label}</option>`)}
      </select></label>
      <label><span>context T</span> <input part="control" name="context" type="number" min="1" max=${LEDGER_LIMITS.context} step="1"
        .value=${String(c.context)} @input=${(e) => this._onNumber(e, 'context', 'context T', LEDGER_LIMITS.context)}></label>
      <label><span>batch B</span> <input part="control" name="batch" type="number" min="1" max=${LEDGER_LIMITS.batch} step="1"
        .value=${String(c.batch)} @input=${(e) => this._onNumber(e, 'batch', 'batch B', LEDGER_LIMITS.batch)}></label>
      <label><span>dtype</span> <select part="control" name="dtype" @change=${(e) => this._set({ dtypeBytes: Number(e.target.value) })}>
        ${dts.map(([b, label]) => html`<option value=${b} ?selected=${b === c.dtypeBytes}>${label}</option>`)}
      </select></label>
    </form>`;
  }

  _ledger(r) {
    const c = r.config;
    const m = c.model;
    const L = c.layers;
    const row = (k, label, how, count, value) => html`<tr data-k=${k}><th scope="row">${label}</th>
      <td class="bytes" data-value=${String(value.raw)}>${value.text}</td><td class="num">${count}</td><td class="how">${how}</td></tr>`;
    const b = (x) => ({ raw: x, text: bytesText(x) });
    const f = (x) => ({ raw: x, text: flopsText(x) });
    const per = c.batch === 1 ? '' : `·${c.batch}`;
    // the table's title above the table and the sentences beside it (one line on a wide page), naming the table
    return html`<p class="title" id="ledger-title">Cost ledger: ${c.name === CUSTOM || !c.preset ? 'attention layers' : c.name}${m ? nothing : c.preset ? ' (attention layers only)' : nothing} ·
      d<sub>model</sub> = ${int(c.dModel)}, h = ${c.heads}, g = ${c.kvHeads}, d<sub>k</sub> = ${r.dK}, L = ${L}, T = ${int(c.context)}, B = ${c.batch}, ${c.dtypeBytes} bytes per value</p>
    <div class="split"><div class="scroll" tabindex="0" role="region" aria-label="Cost ledger table">
      <table part="ledger" aria-labelledby="ledger-title">
        <thead><tr><th scope="col">what</th><th scope="col">size</th><th scope="col">count</th><th scope="col">how it is counted</th></tr></thead>
        <tbody class="group"><tr><th scope="rowgroup" colspan="4">Memory</th></tr>
          ${row('attnWeights', 'projection weights, one layer', c.bias ? 'W_Q, W_K, W_V, W_O + biases' : 'W_Q, W_K, W_V, W_O (no biases)', `${int(r.attention.params)} params`, b(r.attention.bytesPerLayer))}
          ${row('weights', m ? 'weights, whole model' : `projection weights, ${L} layer${L === 1 ? '' : 's'}`,
            m ? `L·(attention + ${m.mlp === 'swiglu' ? 'SwiGLU MLP 3' : 'GELU MLP 2'}·d·d_ff + norms) + embeddings${m.tied ? ' (tied)' : ' + output'}${m.positions ? ' + positions' : ''}` : 'L · attention',
            `${int(r.weights.params)} params`, b(r.weights.bytes))}
          ${row('kv', `KV cache, ${L} layer${L === 1 ? '' : 's'}`, `2·L${per}·T·g·d_k`, `${int(r.kvCache.elements)} values`, b(r.kvCache.bytes))}
          ${row('scores', 'attention scores, one layer', `B·h·T² (per layer, per forward)`, `${int(r.scores.elements)} values`, b(r.scores.bytesPerLayer))}
        </tbody>
        <tbody class="group"><tr><th scope="rowgroup" colspan="4">FLOPs of one forward over ${c.batch === 1 ? '' : `${c.batch} × `}${int(c.context)} tokens</th></tr>
          ${row('projections', 'Q, K, V, O projections', 'X·W_Q, X·W_K, X·W_V, concat·W_O', '', f(r.flops.projections))}
          ${row('matmul', 'attention matrix products', 'projections + Q·Kᵀ + A·V', '', f(r.flops.matmul))}
          ${row('softmax', 'scaling + softmax', '6 per score (exp = 1) + 1 per row', '', f(r.flops.softmax))}
          ${m ? row('mlp', 'MLP', `L·2·T·${m.mlp === 'swiglu' ? 3 : 2}·d·d_ff`, '', f(r.flops.mlp)) : nothing}
          ${m ? row('logits', 'output logits', '2·T·d·vocab', '', f(r.flops.unembedding)) : nothing}
          <tr class="total" data-k="total"><th scope="row">total</th>
            <td class="bytes" data-value=${String(r.flops.total)}>${flopsText(r.flops.total)}</td><td></td><td class="how">${m ? 'attention + MLP + logits' : 'attention layers'}</td></tr>
          <tr data-k="perToken"><th scope="row">per token</th>
            <td class="bytes" data-value=${String(r.flops.perToken)}>${flopsText(r.flops.perToken)}</td><td></td><td class="how">total / (B·T)</td></tr>
        </tbody>
      </table>
    </div>
    <div class="side"><div class="sentence" part="sentence">
      <p data-k="memory-sentence">${memorySentence(r)}</p>
      <p data-k="flops-sentence">${flopsSentence(r)}</p>
    </div>
    ${!m && c.preset ? html`<p class="note">d-model ${int(c.dModel)} differs from ${c.preset.name}'s ${int(c.preset.dModel)}: its MLP and embeddings are not counted.</p>` : nothing}
    <details class="note" part="counting"><summary>How exp and the scores are counted, and the sources</summary>
      <p>Exp is counted as one FLOP (a real exp costs tens of instructions). Scores are counted at ${c.dtypeBytes} bytes per value; many kernels keep them in float32. Attention figures: the engine's <code>mha.passport()</code>${m ? html`; MLP, embeddings and norms: ${m.source}` : nothing}.</p></details></div></div>`;
  }

  _headsTable(r) {
    const c = r.config;
    // the same layers at every h: secondary to the ledger, so behind a disclosure (its rows are in the page either way)
    return html`<details class="heads" part="heads-details"><summary><span id="heads-title">All ${c.layers} layer${c.layers === 1 ? '' : 's'} at d<sub>model</sub> = ${int(c.dModel)},
      T = ${int(c.context)}, as h varies</span>: projections, softmax, scores and KV cache at every h</summary>
    <div class="scroll" tabindex="0" role="region" aria-label="One layer at every h">
      <table part="heads-table" aria-labelledby="heads-title">
        <thead><tr><th scope="col">h</th><th scope="col">g</th><th scope="col">d<sub>k</sub></th><th scope="col">Q, K, V, O projections</th>
          <th scope="col">scaling + softmax</th><th scope="col">scores, one layer</th><th scope="col">KV cache</th></tr></thead>
        <tbody>${r.byHeads.map((x) => html`<tr data-h=${x.h} aria-current=${x.h === c.heads ? 'true' : 'false'}>
          <th scope="row">${x.h}</th><td>${x.g}</td>
          ${x.error ? html`<td colspan="5" class="how">${errorText(x.error)}</td>` : html`<td>${x.dK}</td>
          <td data-value=${String(x.projections)}>${flopsText(x.projections)}</td>
          <td data-value=${String(x.softmax)}>${flopsText(x.softmax)}</td>
          <td data-value=${String(x.scores)}>${int(x.scores)} (${bytesText(x.scoreBytes)})</td>
          <td data-value=${String(x.kvBytes)}>${bytesText(x.kvBytes)}</td>`}
        </tr>`)}</tbody>
      </table>
    </div>
    <p class="note" data-k="heads-note">${groupNote(r.group)}</p></details>`;
  }

  render() {
    const c = this._cfg;
    return html`
      ${this._controls(c)}
      <div role="status" aria-live="polite">${this._inputError ? html`<p class="error" part="input-error">${this._inputError}</p>` : nothing}</div>
      ${this._announcer.view()}
      ${this._attrs.view()}
      ${renderLatest(this._task, (r) => html`${this._ledger(r)}${this._headsTable(r)}${r.config === this._cfg ? nothing : html`<p class="loading">Updating…</p>`}`)}`;
  }
}

customElements.get('mha-cost-ledger') || customElements.define('mha-cost-ledger', MhaCostLedger);

import { LitElement, html, css } from 'lit';
import { Task } from '@lit/task';
import { baseStyles, getEngine, errorText } from '../base/shared.js';
import { onModelEngine } from '../base/worker-engine.js';

const TIER_NOTE = { 'relaxed-simd': ' (SIMD with fused multiply-add)', simd: ' (SIMD)', scalar: ' (no SIMD)' };

/**
 * `<mha-engine-info>` — one status line about the page's attention engine: "Loading…", then its
 * version, the build ("tier") this browser runs (relaxed-simd, simd or scalar: see the README,
 * "Which build runs") and how many threads it uses (more than one in cross-origin isolated pages),
 * or why it could not be loaded. Starting it early starts fetching and
 * compiling the wasm before any other element asks for it. Once a trained-model element has
 * started the page's model engine, a second sentence says where the models run: "Models run in
 * a worker." (the engine worker), or "Models run on the main thread" and why (no worker could
 * start, or the page gave its own engine).
 *
 * @element mha-engine-info
 *
 * @prop {object|Promise<object>} engine - An engine from `createMHA()`; by default the page's shared one.
 * @prop {{version: string, simd: boolean, tier: string, threads: number}|null} info - Read-only: `mha.info` once loaded.
 * @prop {Error|null} error - Read-only: why the engine could not be loaded.
 * @prop {object|null} modelInfo - Read-only: the model engine's `info` once started (`worker`: true
 *   in the engine worker, false on the main thread; `fallback`: why not in a worker).
 *
 * @fires mha-engine - `{detail: {engine, info}}` once the engine is ready.
 * @fires mha-error - `{detail: {error}}` when it cannot be loaded.
 *
 * @csspart status - The status line (class `error` on failure).
 */
export class MhaEngineInfo extends LitElement {
  static properties = {
    engine: { attribute: false },
    modelInfo: { state: true },
  };

  static styles = [baseStyles, css`
    :host { display: block; }
    p { margin: 0; color: var(--_muted); font-size: 0.9em; }
    p.error { color: var(--_error); }
  `];

  constructor() {
    super();
    this.engine = undefined;
    this.modelInfo = null;
    this._stop = null;
    // the engine given (or the page's shared one); a newer `engine` supersedes a load in flight
    this._task = new Task(this, {
      args: () => [this.engine],
      task: async ([engine], { signal }) => {
        let mha;
        try {
          mha = await (engine ?? getEngine());
        } catch (err) {
          if (!signal.aborted) this.dispatchEvent(new CustomEvent('mha-error', { detail: { error: err }, bubbles: true, composed: true }));
          throw err;
        }
        signal.throwIfAborted();
        this.dispatchEvent(new CustomEvent('mha-engine', { detail: { engine: mha, info: mha.info ?? null }, bubbles: true, composed: true }));
        return mha;
      },
    });
  }

  /** `mha.info` once the engine is loaded, else null. */
  get info() { return this._task.value?.info ?? null; }

  /** Why the engine could not be loaded, else null. */
  get error() { return this._task.error ?? null; }

  connectedCallback() {
    super.connectedCallback();
    this._stop = onModelEngine((p) => p.then((m) => { this.modelInfo = m.info; }, () => {}));
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._stop?.();
  }

  render() {
    return this._task.render({
      initial: () => this._loading(),
      pending: () => this._loading(),
      error: (err) => html`<p part="status" class="error" role="alert">The attention engine could not be loaded: ${errorText(err)}</p>`,
      complete: (mha) => this._ready(mha.info ?? {}),
    });
  }

  _loading() { return html`<p part="status" role="status">Loading the attention engine…</p>`; }

  _ready({ version, tier, threads = 1 }) {
    const m = this.modelInfo;
    const where = !m ? '' : m.worker ? ' Models run in a worker.' : ` Models run on the main thread (${m.fallback ?? 'no worker'}).`;
    return html`<p part="status" role="status" data-models=${!m ? '' : m.worker ? 'worker' : 'main'}>Engine ready · version ${version} · build ${tier}${TIER_NOTE[tier] ?? ''} · ${threads} thread${threads === 1 ? '' : 's'}.${where}</p>`;
  }
}

customElements.get('mha-engine-info') || customElements.define('mha-engine-info', MhaEngineInfo);

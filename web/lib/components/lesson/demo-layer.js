// What the small demo-layer elements (<mha-causal-mask>, <mha-cross-attention>) share: the attributes
// of their layer (d-model, heads, seed, scheme), the one error contract (a message per bad attribute,
// one mha-error per new message, the last valid configuration kept), the task's result and error
// events, and the error paragraph.
import { html, nothing } from 'lit';
import { errorText } from '../base/shared.js';
import { intAttr, attrError, schemeAttr, fireError } from '../base/attr-check.js';

/** Largest d_model a demo layer accepts (one DOM node per heatmap cell stays cheap). */
export const MAX_D_MODEL = 128;

/**
 * Parses d-model, heads (a divisor of d-model: d_k = d_model / h) and seed from the host's
 * `dModelAttr`, `headsAttr`, `seedAttr`, adding each bad one to `errors` through `pick`.
 * @param {{dModelAttr?: string, headsAttr?: string, seedAttr?: string}} host
 * @param {(r: {value?: any, error?: Error}) => any} pick returns r.value, records r.error
 * @param {Error[]} errors the pass's errors (a non-divisor heads is added here)
 * @param {{dModel: number, dModelMin: number}} dflt the element's default and least d-model
 * @returns {{dModel: number|undefined, heads: number|undefined, seed: number|undefined}}
 */
export function pickLayerAttrs(host, pick, errors, { dModel: dfltD, dModelMin }) {
  const dModel = pick(intAttr('d-model', host.dModelAttr, { dflt: dfltD, min: dModelMin, max: MAX_D_MODEL }));
  let heads = pick(intAttr('heads', host.headsAttr, { dflt: 2, min: 1, max: MAX_D_MODEL }));
  if (heads !== undefined && dModel !== undefined && dModel % heads !== 0) {
    errors.push(attrError('heads', `a divisor of d-model = ${dModel} (d_k = d_model / h)`, host.headsAttr));
    heads = undefined;
  }
  const seed = pick(intAttr('seed', host.seedAttr, { dflt: 7, min: 0, max: 1000000 }));
  return { dModel, heads, seed };
}

/**
 * A demo layer's configuration, kept by its element: the last valid one (`cfg`, whose `key` changes
 * only when it does), the colour scheme, and the attribute errors of the last pass.
 */
export class LayerConfig {
  /** @param {HTMLElement} host the element (its `mha-error` events) */
  constructor(host) {
    this.host = host;
    /** @type {object|null} */ this.cfg = null;
    this.key = '';
    /** @type {'viridis'|'cividis'} */ this.scheme = 'viridis';
    /** @type {Error[]} */ this.errors = [];
    this._shown = '';
  }

  /**
   * Ends an attribute pass: with no error so far `cfg` becomes the configuration, else the last valid
   * one stays; `scheme` is parsed on its own (a bad scheme keeps the configuration); `errors` holds
   * the pass's errors and each changed set of messages fires one mha-error per error.
   * @param {Error[]} errors
   * @param {object} cfg the parsed configuration (its values, in order, are its key)
   * @param {string|undefined} scheme the host's `scheme` attribute
   */
  settle(errors, cfg, scheme) {
    const cfgOk = !errors.length;
    const sc = schemeAttr(scheme);
    if (sc.error) errors.push(sc.error); else this.scheme = sc.value;
    this.errors = errors;
    if (cfgOk) {
      const key = JSON.stringify(Object.values(cfg));
      if (key !== this.key) { this.cfg = cfg; this.key = key; }
    }
    const shown = errors.map((e) => e.message).join('\n');
    if (shown !== this._shown) {
      this._shown = shown;
      for (const e of errors) fireError(this.host, e);
    }
  }
}

/**
 * The `onComplete` / `onError` of a demo element's @lit/task: a new result is announced with
 * `mha-computed` (detail: the result), an error fired as `mha-error`. The result and the error
 * themselves are the task's `value` and `error`, which the element reads (its `result`, `error`).
 * @param {HTMLElement} host
 * @param {(r: object) => void} [onResult] extra work on a new result
 */
export function taskHandlers(host, onResult = () => {}) {
  return {
    onComplete: (r) => {
      if (!r) return;
      onResult(r);
      host.dispatchEvent(new CustomEvent('mha-computed', { detail: r, bubbles: true, composed: true }));
    },
    onError: (err) => fireError(host, err),
  };
}

/**
 * The error paragraph: every attribute error and the engine's, and, when a result is still shown,
 * that it is the last valid settings'.
 * @param {Error[]} attrErrors the attribute errors (LayerConfig's `errors`)
 * @param {Error|null} error the engine's
 * @param {object|null} r the result shown
 */
export function errorsView(attrErrors, error, r) {
  const errs = [...attrErrors, ...(error ? [error] : [])];
  if (!errs.length) return nothing;
  return html`<p class="error" part="error" role="alert">${errs.map((e, i) => html`${i ? html`<br>` : nothing}${errorText(e)}`)}${attrErrors.length && r ? html`<br>Showing the last valid settings.` : nothing}</p>`;
}

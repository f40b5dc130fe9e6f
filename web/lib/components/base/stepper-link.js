import { refAttr } from './attr-check.js';

/**
 * The `for` link of an element that follows a `<mha-stepper>`'s input X (`<mha-wo-mix>`,
 * `<mha-flash-attention>`): a Lit ReactiveController that finds the stepper named by the host's
 * `for` id (`refAttr`: the same document or shadow root), sets `host.x` to the stepper's X `[3, 6]`
 * at once and again at every `mha-computed` event of that stepper (an edited cell), and lets go of
 * it when the host leaves the page or `for` changes.
 *
 * The host calls `link()` from `willUpdate` when `for` changed, and adds `error` (an MHAError naming
 * `for`, or null) to its AttrGuard, so a bad id gets the shared one-message contract.
 */
export class StepperLink {
  /** @param {import('lit').ReactiveControllerHost & HTMLElement & {for: string, x: number[][]}} host */
  constructor(host) {
    this.host = host;
    /** @type {HTMLElement|null} the followed stepper */
    this.target = null;
    /** @type {Error|null} why `for` names no stepper (null when it does, or is empty) */
    this.error = null;
    this._onComputed = (e) => { if (e.target === this.target && e.detail?.x) this.host.x = e.detail.x; };
    host.addController(this);
  }

  hostConnected() {
    this.link();
    // a `for` that names an element further down the page: look again once the page is parsed
    if (document.readyState === 'loading') {
      document.addEventListener('DOMContentLoaded', () => {
        if (this.host.isConnected) { this.link(); this.host.requestUpdate(); }
      }, { once: true });
    }
  }

  hostDisconnected() { this.unlink(); }

  /** Stops following the current stepper, if any. */
  unlink() {
    this.target?.removeEventListener('mha-computed', this._onComputed);
    this.target = null;
  }

  /** Follows the stepper the host's `for` names now (its X taken once it is defined). */
  link() {
    this.unlink();
    const r = refAttr(this.host, 'for', this.host.for, { tags: ['mha-stepper'] });
    this.error = r.error ?? null;
    const target = r.value;
    if (!target) return;
    this.target = target;
    target.addEventListener('mha-computed', this._onComputed);
    const take = () => { if (this.target === target && Array.isArray(target.x)) this.host.x = target.x; };
    if (customElements.get(target.localName)) take();
    else customElements.whenDefined(target.localName).then(take);
  }
}

// Short announcements for screen readers, made once the input settles: a reader typing or going
// through options with the arrow keys hears one line at the end, not one per key. An element keeps
// one Announcer (a Lit reactive controller), calls `say(text)` after each edit, and renders
// `announcer.view()` once: a visually hidden polite live region whose text changes only after
// `delay` ms without a newer `say`.
import { html } from 'lit';

/** How long the input must rest before the last line is announced, in ms. */
export const SETTLE_MS = 700;

export class Announcer {
  /**
   * @param {import('lit').ReactiveControllerHost} host the element
   * @param {number} [delay] ms of rest before announcing (default SETTLE_MS)
   */
  constructor(host, delay = SETTLE_MS) {
    this.host = host;
    this.delay = delay;
    this.text = '';
    this._timer = null;
    host.addController(this);
  }

  /**
   * Announces the line once no other `say` has come for `delay` ms (the newest text wins). Saying the
   * same text twice in a row announces it again (a zero-width space tells the two apart).
   * @param {string|(() => string)} line one short sentence, or a function that gives it when the
   *   input has settled (for a sentence about a result the element computes after the edit)
   */
  say(line) {
    clearTimeout(this._timer);
    this._timer = setTimeout(() => {
      this._timer = null;
      const text = typeof line === 'function' ? line() : line;
      this.text = text === this.text.replace(/\u200b$/, '') && !this.text.endsWith('\u200b') ? `${text}\u200b` : text;
      this.host.requestUpdate();
    }, this.delay);
  }

  hostDisconnected() {
    clearTimeout(this._timer);
    this._timer = null;
  }

  /** The live region (render it once, anywhere in the element's shadow root). */
  view() {
    return html`<p class="sr-only" part="announcement" role="status" aria-live="polite" aria-atomic="true">${this.text}</p>`;
  }
}

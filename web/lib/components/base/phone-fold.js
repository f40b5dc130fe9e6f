// A secondary panel that is shown open on a wide element and folded on a phone: the element's
// `<details>` take `?open=${fold.open}`, which follows the host's width (a ResizeObserver). On a
// narrow element the reader sees the panel's summary line and opens it when wanted; the element's
// first result stays in view. The binding only changes the `open` attribute when the host crosses
// the width, so a panel the reader opened or closed stays so while the width stays on one side.
import { css } from 'lit';

/** Hosts narrower than this (px) fold their secondary panels: a phone's column. */
export const FOLD_BELOW = 520;

/**
 * Reactive controller: `open` is true while the host is at least `below` px wide (true where no
 * ResizeObserver exists, and before the first measurement if the host is not laid out yet).
 */
export class PhoneFold {
  /**
   * @param {import('lit').ReactiveControllerHost & HTMLElement} host
   * @param {number} [below] the width (px) under which panels fold
   */
  constructor(host, below = FOLD_BELOW) {
    this.host = host;
    this.below = below;
    this.open = true;
    this._ro = null;
    host.addController(this);
  }

  hostConnected() {
    if (typeof ResizeObserver === 'undefined') return;
    const w = this.host.getBoundingClientRect().width;
    if (w > 0) this.open = w >= this.below;
    this._ro = new ResizeObserver((entries) => {
      const width = entries[entries.length - 1].contentRect.width;
      if (width <= 0) return;
      const open = width >= this.below;
      if (open !== this.open) {
        this.open = open;
        this.host.requestUpdate();
      }
    });
    this._ro.observe(this.host);
  }

  hostDisconnected() {
    this._ro?.disconnect();
    this._ro = null;
  }
}

/** The summary line of a folded panel: visible only where the panel folds (a narrow host). */
export const phoneFoldStyles = css`
  details.fold > summary { display: none; }
  @container (max-width: 519.98px) {
    details.fold > summary { display: list-item; cursor: pointer; color: var(--_muted); margin: 0.3rem 0; font-size: 0.9em; }
  }
`;

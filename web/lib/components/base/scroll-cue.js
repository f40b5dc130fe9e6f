// The one cue on boxes that scroll sideways (a wide table or formula on a 390 px phone), for every
// element: while a `.scroll`, `.tex`, `.formula`, `.table-wrap` or `.cell-formula` box is wider inside
// than out, it gets `data-overflow` (with `start`/`end` telling which side has more to show), edge
// shadows on that side, and a `.scroll-hint` line right after it ("scroll sideways →"), if the element
// has one, is shown. Nothing shows when the box fits. Works in every browser (a ResizeObserver and
// scroll events; no scroll-driven animation needed). The styles are part of baseStyles; an element
// turns the marking on with `new ScrollCue(this)` (or watchOverflow/unwatchOverflow by hand); a page
// marks its own boxes with watchBoxes. A box that overflows takes focus (tabindex, role, name) while it does.
import { css } from 'lit';

/** The boxes that may scroll sideways. */
export const SCROLL_BOXES = '.scroll, .tex, .formula, .table-wrap, .cell-formula';

/** Styles of the cue: shadows on the side with more to show, and the hint line after an overflowing box. */
export const scrollCueStyles = css`
  :is(.scroll, .tex, .formula, .table-wrap, .cell-formula)[data-overflow] {
    --_shade: color-mix(in srgb, var(--_fg) 28%, transparent);
    background-repeat: no-repeat; background-size: 0.9rem 100%; background-position: left center, right center;
    background-attachment: scroll;
  }
  :is(.scroll, .tex, .formula, .table-wrap, .cell-formula)[data-overflow~='end'] {
    background-image: none, radial-gradient(farthest-side at 100% 50%, var(--_shade), transparent);
  }
  :is(.scroll, .tex, .formula, .table-wrap, .cell-formula)[data-overflow~='start'] {
    background-image: radial-gradient(farthest-side at 0 50%, var(--_shade), transparent), none;
  }
  :is(.scroll, .tex, .formula, .table-wrap, .cell-formula)[data-overflow~='start'][data-overflow~='end'] {
    background-image: radial-gradient(farthest-side at 0 50%, var(--_shade), transparent),
      radial-gradient(farthest-side at 100% 50%, var(--_shade), transparent);
  }
  .scroll-hint { display: none; margin: 0.1rem 0 0.4rem; font-size: 0.8rem; color: var(--_muted); text-align: right; }
  [data-overflow] + .scroll-hint { display: block; }
`;

/**
 * Marks the sideways-scrolling boxes of an element's shadow root: call from `updated()` (cheap when
 * nothing changed). Each box (SCROLL_BOXES) is observed for size changes and scrolls, and gets
 * `data-overflow="start end"`, `"end"`, `"start"` or no attribute.
 * @param {HTMLElement & {renderRoot: ShadowRoot}} host the element
 */
export function watchOverflow(host) {
  const state = (host.__scrollCue ??= {
    seen: new WeakSet(),
    ro: new ResizeObserver((entries) => { for (const e of entries) mark(e.target); }),
  });
  for (const box of host.renderRoot.querySelectorAll(SCROLL_BOXES)) {
    if (state.seen.has(box)) { mark(box); continue; }
    state.seen.add(box);
    state.ro.observe(box);
    const inner = box.firstElementChild;
    if (inner) state.ro.observe(inner);
    box.addEventListener('scroll', () => mark(box), { passive: true });
    mark(box);
  }
}

/** Stops observing (from `disconnectedCallback()`). */
export function unwatchOverflow(host) {
  host.__scrollCue?.ro.disconnect();
  host.__scrollCue = undefined;
}

/**
 * A Lit reactive controller that keeps the cue of a host's boxes: marks them after every update and
 * stops observing when the host leaves the page. Use: `new ScrollCue(this)` in the constructor.
 */
export class ScrollCue {
  /** @param {import('lit').ReactiveControllerHost & HTMLElement} host */
  constructor(host) {
    this.host = host;
    host.addController(this);
  }

  hostUpdated() { watchOverflow(this.host); }

  hostDisconnected() { unwatchOverflow(this.host); }
}

function mark(box) {
  if (!box.isConnected) return;
  const more = box.scrollWidth - box.clientWidth;
  const sides = [];
  if (more > 1) {
    if (box.scrollLeft > 1) sides.push('start');
    if (box.scrollLeft < more - 1) sides.push('end');
  }
  const v = sides.join(' ');
  if (v) { if (box.getAttribute('data-overflow') !== v) box.setAttribute('data-overflow', v); } else if (box.hasAttribute('data-overflow')) box.removeAttribute('data-overflow');
  focusable(box, more > 1);
}

/**
 * A box that scrolls sideways must take focus, so that a keyboard reader can scroll it (WCAG 2.1.1):
 * one without a tabindex of its own gets `tabindex="0"`, `role="region"` and an `aria-label` (its
 * `data-scroll-label`, else "formula, scrolls sideways") while it overflows, and loses them when it fits.
 */
function focusable(box, scrolls) {
  const ours = box.hasAttribute('data-scroll-focus');
  if (scrolls && !ours && !box.hasAttribute('tabindex')) {
    box.setAttribute('data-scroll-focus', '');
    box.setAttribute('tabindex', '0');
    if (!box.hasAttribute('role')) {
      box.setAttribute('role', 'region');
      box.setAttribute('aria-label', box.dataset.scrollLabel ?? 'formula, scrolls sideways');
    }
  } else if (!scrolls && ours) {
    box.removeAttribute('data-scroll-focus');
    box.removeAttribute('tabindex');
    if (box.getAttribute('role') === 'region') { box.removeAttribute('role'); box.removeAttribute('aria-label'); }
  }
}

/**
 * The same marking for boxes outside any element (a page's own display formulas): observed for
 * size changes and scrolls, marked with `data-overflow`, and focusable while they scroll.
 * @param {Iterable<HTMLElement>} boxes
 * @returns {() => void} stops observing
 */
export function watchBoxes(boxes) {
  const ro = new ResizeObserver((entries) => { for (const e of entries) mark(e.target); });
  for (const box of boxes) {
    ro.observe(box);
    box.addEventListener('scroll', () => mark(box), { passive: true });
    mark(box);
  }
  return () => ro.disconnect();
}

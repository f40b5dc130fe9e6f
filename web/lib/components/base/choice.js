// The one way the elements show a single choice among a few (h, a step, a head, a seed, a layer, a
// model): a WAI-ARIA radio group as the Authoring Practices describe it. The group is one Tab stop
// (the checked option has tabindex 0, the others -1); the arrow keys move to the previous or next
// option and select it (selection follows focus), Home and End to the first and last; Space and Enter
// select as on any button. The element writes its own buttons (their data attributes and click
// handlers stay its own):
//   <div role="radiogroup" aria-label="…" @keydown=${radioKeys}>
//     <button type="button" role="radio" aria-checked=${String(c)} tabindex=${c ? 0 : -1} @click=…>
// A key selects by clicking the option, so the element's handler is the only path a choice takes; the
// options stay the same DOM nodes through the re-render, so focus stays. baseStyles (shared.js) draws
// the checked option as a pressed button.

/** The options of a group that a key can move to: not disabled, not aria-disabled. */
function options(group) {
  return [...group.querySelectorAll('[role="radio"]')]
    .filter((b) => !b.disabled && b.getAttribute('aria-disabled') !== 'true' && b.closest('[role="radiogroup"]') === group);
}

const MOVES = {
  ArrowRight: (i, n) => (i + 1) % n, ArrowDown: (i, n) => (i + 1) % n,
  ArrowLeft: (i, n) => (i - 1 + n) % n, ArrowUp: (i, n) => (i - 1 + n) % n,
  Home: () => 0, End: (i, n) => n - 1,
};

/**
 * The keydown listener of a `role="radiogroup"` element (`@keydown=${radioKeys}`): an arrow key,
 * Home or End focuses the option it names and clicks it (wrapping round at the ends). Other keys pass.
 * @param {KeyboardEvent} e
 */
export function radioKeys(e) {
  const move = MOVES[e.key];
  if (!move || e.altKey || e.ctrlKey || e.metaKey) return;
  const group = e.currentTarget;
  const all = options(group);
  if (!all.length) return;
  const here = all.indexOf(e.composedPath().find((n) => n.getAttribute?.('role') === 'radio'));
  const next = all[move(Math.max(here, 0), all.length)];
  e.preventDefault();
  if (!next || next === all[here]) return;
  next.focus();
  next.click();
}

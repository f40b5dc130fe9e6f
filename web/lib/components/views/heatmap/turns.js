// The canvas heatmaps of a page take turns: an update of a canvas map (its labels rendered, its
// cell size read, its cells painted) costs a few milliseconds and a style and layout pass, so a
// page that hands new weights to a dozen 128 × 128 maps at once (a trained model's layer after a
// run) would do all of them in one long main-thread task. Here the maps updating in one task share
// a time budget; once it is spent, the next ones wait for a later task (the browser can handle
// input and paint a frame in between) and go first there, in the order they asked.

/** Milliseconds of map updates one task may hold before the next maps wait for a later task. */
export const TURN_BUDGET_MS = 30;

let started = null;   // performance.now() at the first map update of the current task (null: none yet)
let wake = null;      // {promise, resolve} of the maps waiting for a later task
let resetPosted = false;
let wakePosted = false;
let port = null;

/** Runs `f` in the next task: a message to ourselves (no 4 ms clamp as nested timers have). */
function nextTask(f) {
  if (!port && typeof MessageChannel === 'function') {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => { for (const g of queue.splice(0)) g(); };
    port = ch.port2;
  }
  queue.push(f);
  if (port) { if (queue.length === 1) port.postMessage(0); } else setTimeout(() => { for (const g of queue.splice(0)) g(); }, 0);
}
const queue = [];

/** The budget starts again in the next task. */
function reset() {
  if (resetPosted) return;
  resetPosted = true;
  nextTask(() => { resetPosted = false; started = null; });
}

/** Milliseconds after which waiting maps wake even if no frame came (a frame whose rendering is throttled). */
const FRAME_WAIT_MS = 100;

/**
 * The waiting maps wake in a task after the next frame (so the maps of this turn are laid out and
 * painted before more are added), or after FRAME_WAIT_MS where no frame comes (a hidden page, which
 * paints none, wakes them in the next task).
 */
function postWake() {
  if (wakePosted) return;
  wakePosted = true;
  let gone = false;
  const go = () => {
    if (gone) return;
    gone = true;
    nextTask(() => {
      wakePosted = false;
      started = null;
      const w = wake;
      wake = null;
      w?.resolve();
    });
  };
  if (typeof requestAnimationFrame === 'function' && typeof document !== 'undefined' && !document.hidden) {
    requestAnimationFrame(go);
    setTimeout(go, FRAME_WAIT_MS);
  } else go();
}

/**
 * Whether a map may update now: true while the current task has spent less than TURN_BUDGET_MS on
 * map updates (the first map of a task always may).
 * @returns {boolean}
 */
export function turnNow() {
  const now = performance.now();
  if (started === null) {
    started = now;
    reset();   // the budget is the task's: it starts again in the next one
    return true;
  }
  return now - started < TURN_BUDGET_MS;
}

/**
 * Resolves in a later task, when a waiting map may ask turnNow() again.
 * @returns {Promise<void>}
 */
export function nextTurn() {
  if (!wake) {
    let resolve;
    const promise = new Promise((r) => { resolve = r; });
    wake = { promise, resolve };
  }
  postWake();
  return wake.promise;
}

/** Whether maps wait for a later task (a map asking now goes after them). @returns {boolean} */
export function waitingTurn() {
  return wake !== null;
}

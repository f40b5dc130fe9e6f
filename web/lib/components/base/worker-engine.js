// The engine the trained-model elements compute on: one dedicated module worker per page
// (createWorkerMHA, src/worker.js), shared by every element, or, where no worker can start, the
// page's engine on the main thread behind the same asynchronous surface. And LatestRun, the
// "latest input wins" queue of an element's computations.
import { createWorkerMHA, mainThreadEngine } from '../../src/worker.js';
import { getEngine, pageEngine } from './shared.js';

let modelEngine = null;
const listeners = new Set();
const wrapped = new WeakMap();   // an engine given by the page → its mainThreadEngine (one per engine, so models are shared)

/** mainThreadEngine(mha), one per engine. */
function wrap(mha, why) {
  if (!wrapped.has(mha)) wrapped.set(mha, mainThreadEngine(mha, why));
  return wrapped.get(mha);
}

/** Whether an object is already an engine of the asynchronous surface (worker or wrapped). */
const isAsync = (e) => typeof e?.info?.worker === 'boolean';

/**
 * The page's model engine, started on first use: the engine worker; its fallback on the main thread
 * where no worker starts (`info.worker` false, `info.fallback` why); an engine the page gave to
 * setEngine(), on the main thread. A failed start is not kept: the next element to ask starts again.
 * @returns {Promise<object>} an engine of src/worker.js's asynchronous surface
 */
export function getModelEngine() {
  if (!modelEngine) {
    const given = pageEngine();
    const mine = given ? given.then((mha) => (isAsync(mha) ? mha : wrap(mha, 'the page gave its own engine (setEngine)')))
      : createWorkerMHA({ fallback: false }).catch((e) => getEngine().then((mha) => wrap(mha, e.message.replace(/^the engine worker could not start: /, ''))));
    modelEngine = mine;
    mine.catch(() => { if (modelEngine === mine) modelEngine = null; });
    for (const f of listeners) f(mine);
  }
  return modelEngine;
}

/**
 * Calls `f(promise)` with the model engine's promise once it is started (at once if it is).
 * @param {(p: Promise<object>) => void} f
 * @returns {() => void} stops listening
 */
export function onModelEngine(f) {
  listeners.add(f);
  if (modelEngine) f(modelEngine);
  return () => listeners.delete(f);
}

/**
 * The model engine for one run of an element's task: its `engine` property (an engine from
 * createMHA, run on the main thread; or one from createWorkerMHA) if set, else the page's. Throws
 * the task's abort reason when a newer run overtook this one.
 * @param {object|Promise<object>|undefined} engine
 * @param {AbortSignal} signal
 * @returns {Promise<object>}
 */
export async function taskModelEngine(engine, signal) {
  const mha = engine ? await Promise.resolve(engine) : await getModelEngine();
  signal.throwIfAborted();
  return isAsync(mha) ? mha : wrap(mha, 'the element was given an engine (its engine property)');
}

/**
 * The latest input wins: `push(args)` runs `work(args)` at once when nothing runs, else keeps args
 * as the one computation waiting (replacing any older one); the result of a run that a newer input
 * overtook is dropped, and `done(error, result, args)` is called only for the newest.
 */
export class LatestRun {
  /**
   * @param {(args: any) => Promise<any>} work
   * @param {(error: any, result: any, args: any) => void} done
   */
  constructor(work, done) {
    this._work = work;
    this._done = done;
    this._next = null;
    this._busy = null;
    this._epoch = 0;
  }

  /** Asks for a computation with these arguments (the newest replaces any waiting one). */
  push(args) {
    this._next = { args };
    if (!this._busy) this._busy = this._pump();
    return this._busy;
  }

  /** Drops the waiting computation and the result of the running one. */
  cancel() {
    this._next = null;
    this._epoch++;
  }

  /** Resolves once no computation runs or waits. */
  get settled() {
    return this._busy ?? Promise.resolve();
  }

  async _pump() {
    try {
      while (this._next) {
        const { args } = this._next;
        this._next = null;
        const epoch = this._epoch;
        let error = null, result = null;
        try { result = await this._work(args); } catch (e) { error = e; }
        if (!this._next && epoch === this._epoch) this._done(error, result, args);
      }
    } finally {
      this._busy = null;
    }
  }
}

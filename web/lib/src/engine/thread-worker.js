/**
 * Node only: the entry of one pthread worker of the threaded core (a node:worker_threads Worker
 * made by threads.js). Gives Emscripten's worker script (`mha_core*_mt.worker.js`, written for
 * browsers' workers) the globals it reads — self, postMessage, onmessage, location and
 * importScripts, whose presence makes the glue take its worker path — then loads it.
 * @module thread-worker
 */
import { parentPort, workerData } from 'node:worker_threads';

const g = globalThis;
g.self = g;
g.location = { href: workerData.script };
g.importScripts = () => { throw new Error('importScripts is not available in this worker'); };
g.postMessage = (data, transfer) => parentPort.postMessage(data, transfer);
await import(workerData.script);
parentPort.on('message', (data) => g.onmessage({ data }));

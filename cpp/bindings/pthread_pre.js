// Prepended to the glue of the threaded modules (em++ --pre-js), inside the module factory.
// Emscripten creates its pthread workers with the global `Worker`. Node has none: the JS loader
// passes a Worker-like class over node:worker_threads as Module.mhaWorker (web/lib/src/engine/threads.js),
// and this local name makes the glue use it. Browsers use their own Worker.
var Worker = Module['mhaWorker'] || globalThis.Worker;

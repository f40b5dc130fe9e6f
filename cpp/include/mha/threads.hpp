// How many threads the core's forward uses: the calling thread plus a pool of workers.
//
// Builds without threads (the single-thread wasm modules, or MHA_THREADS undefined) run every
// call on the calling thread and report 1. Threaded builds (native; the wasm `_mt` modules built
// with Emscripten's -pthread) split the projection GEMMs by row splits or column panels and the
// attention by (head × query tile); small calls stay on the calling thread. Every split computes
// each output element with the same operations in the same order as one thread does, so results
// are bit-identical for every thread count.
#pragma once

namespace mha {

/// Sets the number of threads the core uses (the calling thread included): starts or stops pool
/// workers. n is clamped to [1, 64]. Not to be called while a forward runs. Returns the count now
/// in use. In wasm, n − 1 workers must have been preloaded (Emscripten's PTHREAD_POOL_SIZE, which
/// the JS loader sets to threads − 1): a thread beyond them would start only once the page's
/// thread returns to its event loop, and the first parallel region would wait for it forever.
int set_num_threads(int n);

/// The number of threads the core now uses (1 without threads).
int num_threads();

}  // namespace mha

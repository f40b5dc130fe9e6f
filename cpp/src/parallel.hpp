// The core's thread pool: runs the tasks of one parallel region on the calling thread and the
// pool's workers (see mha/threads.hpp for the public knob).
#pragma once
#include <cstddef>
#include <type_traits>

namespace mha {
namespace parallel {

/// A task of a parallel region: task index in [0, n) and the index of the thread running it in
/// [0, num_threads()) (0 is the calling thread), for per-thread scratch.
using TaskFn = void (*)(void* ctx, int task, int thread);

/// Runs fn(ctx, t, thread) for every t in [0, n) and returns when all are done. Serial (on the
/// calling thread, tasks in order) when the pool has one thread, n ≤ 1, or when called from
/// inside a task (no nested regions: the tasks then get the index of the thread running them, so
/// per-thread scratch stays private). Per-thread scratch is indexed by `thread` < num_threads().
void run(int n, TaskFn fn, void* ctx);

/// Convenience: run(n, f) with a callable f(int task, int thread).
template <class F>
void for_each(int n, F&& f) {
  using Fn = std::remove_reference_t<F>;
  run(n, [](void* c, int t, int th) { (*static_cast<Fn*>(c))(t, th); }, const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace parallel
}  // namespace mha

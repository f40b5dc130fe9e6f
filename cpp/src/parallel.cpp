// The thread pool behind mha/threads.hpp and parallel.hpp.
//
// One region at a time: the caller publishes (fn, ctx, n), bumps a generation counter and wakes
// the workers; every thread, the caller included, takes task indices from one atomic counter
// until none are left; the caller then spins until every worker has finished its last task.
// Workers sleep on a condition variable between regions (in wasm: Atomics.wait in the worker).
// The caller never sleeps or joins: the browser's main thread may not block.
#include "mha/threads.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace mha {
namespace parallel {
namespace {

thread_local bool tl_in_task = false;
thread_local int tl_thread = 0;  // index of this thread in the pool (0: the caller)

#ifdef MHA_THREADS
/// Threads beyond this are never started (a guard against absurd requests, not a tuning knob).
constexpr int kMaxThreads = 64;
/// Polls of the generation counter a worker makes before it sleeps.
constexpr long kSpins = 1L << 22;

std::atomic<int> thread_exits{0};

/// Registers a thread_local destructor on the calling thread. The first registration in a process
/// sets up libc++abi's table of them behind a once-guard: made by the caller before any worker
/// exists, no worker's first thread_local (the kernels' scratch) can hold that guard while the
/// caller waits on it, which in a browser's main thread is a blocking wait and a console warning.
/// (thread_exits is never read: a destructor with an effect is what makes the registration.)
void register_thread_exit() {
  struct Counted {
    ~Counted() { thread_exits.fetch_add(1, std::memory_order_relaxed); }
  };
  static thread_local Counted counted;
  (void)&counted;
}

class Pool {
 public:
  ~Pool() { resize(1); }

  int size() const { return workers_ + 1; }

  int resize(int n) {
    n = std::max(1, std::min(n, kMaxThreads));
    if (n == size()) return n;
    register_thread_exit();
    stop_workers();
    stop_ = false;
    alive_.store(n - 1);
    // Detached at once: a detach after the thread has ended joins it, and a join blocks.
    const unsigned now = generation_.load();
    for (int i = 1; i < n; ++i) std::thread([this, i, now] { loop(i, now); }).detach();
    workers_ = n - 1;
    return size();
  }

  void run(int n, TaskFn fn, void* ctx) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = fn; ctx_ = ctx; n_ = n;
      next_.store(0, std::memory_order_relaxed);
      busy_.store(workers_, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    work(0);
    // The caller spins for the workers' last tasks instead of sleeping: the browser's main thread
    // may not block, and the wait is at most one task long.
    while (busy_.load(std::memory_order_acquire) != 0) {
    }
  }

 private:
  void work(int thread) {
    tl_in_task = true;
    tl_thread = thread;
    for (int t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) fn_(ctx_, t, thread);
    tl_in_task = false;
  }

  void loop(int thread, unsigned seen) {
    for (;;) {
      // Spin a while before sleeping: the regions of one forward come microseconds apart, and
      // waking a sleeping worker costs far more than that.
      for (long i = 0; i < kSpins && generation_.load(std::memory_order_acquire) == seen && !stop_.load(); ++i) {
      }
      if (generation_.load(std::memory_order_acquire) == seen && !stop_.load()) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      }
      if (stop_.load()) break;
      seen = generation_.load(std::memory_order_acquire);
      work(thread);
      busy_.fetch_sub(1, std::memory_order_release);
    }
    alive_.fetch_sub(1, std::memory_order_release);
  }

  // Stops every worker: they leave their loops and the caller spins until they have (no join: a
  // join blocks, which the browser's main thread may not).
  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    while (alive_.load(std::memory_order_acquire) != 0) {
    }
    workers_ = 0;
  }

  int workers_ = 0;  // started and not stopped (detached threads)
  std::mutex mu_;
  std::condition_variable wake_;
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
  std::atomic<int> next_{0}, busy_{0}, alive_{0};
  std::atomic<unsigned> generation_{0};
  std::atomic<bool> stop_{false};
};

Pool& pool() {
  static Pool p;
  return p;
}
#endif

}  // namespace

void run(int n, TaskFn fn, void* ctx) {
#ifdef MHA_THREADS
  if (n > 1 && !tl_in_task && pool().size() > 1) return pool().run(n, fn, ctx);
#endif
  for (int t = 0; t < n; ++t) fn(ctx, t, tl_thread);
}

}  // namespace parallel

int set_num_threads(int n) {
#ifdef MHA_THREADS
  return parallel::pool().resize(n);
#else
  (void)n;
  return 1;
#endif
}

int num_threads() {
#ifdef MHA_THREADS
  return parallel::pool().size();
#else
  return 1;
#endif
}

}  // namespace mha

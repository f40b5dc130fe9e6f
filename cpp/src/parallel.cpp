// The thread pool behind mha/threads.hpp and parallel.hpp.
//
// One region at a time: the caller publishes (fn, ctx, n) and a claim word (the region's tag, n,
// the next task index), bumps a generation counter and wakes the workers that sleep; every thread,
// the caller included, claims task indices from the claim word (a compare-and-swap that fails once
// the word belongs to another region) until none are left; the caller returns when all n tasks are
// done. A worker that has not yet woken when the caller runs out of tasks is not waited for: the
// caller has taken its tasks.
//
// Every wait (a worker's for the next region, the caller's for the last tasks) polls a counter
// for a short bounded while and then sleeps on a futex (in wasm: memory.atomic.wait32, i.e.
// Atomics.wait), so a thread without work never holds a core that another process or thread could
// use. The browser's main thread may not block: there Emscripten's futex wait polls, and the
// caller's wait lasts at most one task of a worker.
//
// When other work holds the cores, a worker is often descheduled in the middle of a task and the
// caller waits for it a scheduler time slice, milliseconds where a region takes a fraction of one.
// The caller measures that: when, over a window of regions, the regions took more than 90 % of
// what the caller alone would have taken (its own tasks' time, per task, times the tasks), it runs
// the next regions alone (as one thread does: the same tasks, the same results) for a back-off
// time, then tries the workers again.
#include "mha/threads.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <chrono>
#include <thread>

#ifdef MHA_THREADS
#if defined(__EMSCRIPTEN__)
#include <emscripten/threading.h>
#include <cmath>
#elif defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace mha {
namespace parallel {
namespace {

thread_local int tl_thread = 0;  // index of this thread in the pool (0: the caller)

#ifdef MHA_THREADS
thread_local bool tl_in_task = false;  // inside a task: a region started here runs serially
/// Threads beyond this are never started (a guard against absurd requests, not a tuning knob).
constexpr int kMaxThreads = 64;
/// How long a thread polls a counter before it sleeps on it (milliseconds): the regions of one
/// forward or generation step come microseconds apart, and a sleeping thread takes tens to
/// hundreds of microseconds to wake (the caller would meanwhile have taken its tasks), but a thread
/// that polls longer takes a core from whatever else the machine runs.
constexpr double kSpinMs = 0.5;

static_assert(sizeof(std::atomic<uint32_t>) == 4, "a futex word is 32 bits");

/// Sleeps while *word == expected (returns at once if it differs; may return spuriously).
void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
#if defined(__EMSCRIPTEN__)
  emscripten_futex_wait(word, expected, INFINITY);
#elif defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
#else
  if (word->load() == expected) std::this_thread::yield();
#endif
}

/// Wakes every thread sleeping in futex_wait(word, …).
void futex_wake_all(std::atomic<uint32_t>* word) {
#if defined(__EMSCRIPTEN__)
  emscripten_futex_wake(word, INT_MAX);
#elif defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

/// Milliseconds on a monotonic clock.
double now_ms() {
#if defined(__EMSCRIPTEN__)
  return emscripten_get_now();
#else
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

/// Returns once word != value: polls for kSpinMs, then sleeps until a futex_wake_all. `sleepers`
/// counts the threads asleep on `word`, so that the thread that changes it wakes only when one is
/// (seq_cst on both sides: either the changer sees the count, or the sleeper sees the new value).
void wait_while_equal(std::atomic<uint32_t>& word, uint32_t value, std::atomic<int>& sleepers) {
  for (const double until = now_ms() + kSpinMs;;) {
    for (int i = 0; i < 256; ++i) {
      if (word.load(std::memory_order_acquire) != value) return;
    }
    if (now_ms() > until) break;
  }
  sleepers.fetch_add(1);
  while (word.load() == value) futex_wait(&word, value);
  sleepers.fetch_sub(1);
}

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

/// Contention: regions per measuring window; the share of the caller's time alone that the
/// window's regions may take before the caller prefers to run alone; how long it then does before
/// it tries the workers again.
constexpr int kWindow = 32;
constexpr double kMaxShareOfAlone = 0.9;
constexpr double kAloneMs = 200;

/// The claim word: the region's tag (24 bits), its task count (20 bits), the next task (20 bits).
constexpr int kTaskBits = 20;
constexpr uint64_t kTaskMask = (uint64_t(1) << kTaskBits) - 1;
constexpr int kMaxTasks = int(kTaskMask);
constexpr uint64_t claim_word(uint32_t tag, int n, int next) {
  return (uint64_t(tag & 0xFFFFFF) << (2 * kTaskBits)) | (uint64_t(n) << kTaskBits) | uint64_t(next);
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
    stop_.store(false);
    alive_.store(n - 1);
    // Detached at once: a detach after the thread has ended joins it, and a join blocks.
    const uint32_t now = generation_.load();
    for (int i = 1; i < n; ++i) std::thread([this, i, now] { loop(i, now); }).detach();
    workers_ = n - 1;
    alone_until_ = 0;
    window_regions_ = 0;
    window_ms_ = window_alone_ms_ = 0;
    return size();
  }

  void run(int n, TaskFn fn, void* ctx) {
    for (int t0 = 0; t0 < n; t0 += kMaxTasks) run_region(t0, std::min(n - t0, kMaxTasks), fn, ctx);
  }

 private:
  // Runs tasks [t0, t0 + n) of fn.
  void run_region(int t0, int n, TaskFn fn, void* ctx) {
    const double start = now_ms();
    if (start < alone_until_) {
      serial(t0, n, fn, ctx);
      return;
    }
    fn_ = fn; ctx_ = ctx; t0_ = t0;
    done_.store(0, std::memory_order_relaxed);
    const uint32_t tag = generation_.load(std::memory_order_relaxed) + 1;
    claim_.store(claim_word(tag, n, 0), std::memory_order_release);
    generation_.store(tag);  // seq_cst: publishes the region before the sleepers are counted
    if (worker_sleepers_.load() > 0) futex_wake_all(&generation_);
    const int mine = work(tag, 0);
    const double own = now_ms();
    if (done_.load(std::memory_order_acquire) != uint32_t(n)) wait_until(done_, uint32_t(n), caller_sleepers_);
    const double end = now_ms();
    // the region's time, and what it would have taken the caller alone (its own tasks' time per
    // task, times n; a region whose tasks all went to workers counts as no faster)
    window_ms_ += end - start;
    window_alone_ms_ += mine > 0 ? (own - start) * n / mine : end - start;
    if (++window_regions_ == kWindow) {
      if (window_ms_ > kMaxShareOfAlone * window_alone_ms_) alone_until_ = end + kAloneMs;
      window_regions_ = 0;
      window_ms_ = window_alone_ms_ = 0;
    }
  }

  void serial(int t0, int n, TaskFn fn, void* ctx) {
    tl_in_task = true;
    for (int t = 0; t < n; ++t) fn(ctx, t0 + t, 0);
    tl_in_task = false;
  }

  // Claims and runs tasks of the region tagged `tag` until none are left (or the claim word
  // belongs to another region); counts each one done. Returns how many it ran.
  int work(uint32_t tag, int thread) {
    int ran = 0;
    tl_in_task = true;
    tl_thread = thread;
    uint64_t c = claim_.load(std::memory_order_acquire);
    for (;;) {
      if ((c >> (2 * kTaskBits)) != (tag & 0xFFFFFF)) break;
      const int n = int((c >> kTaskBits) & kTaskMask), t = int(c & kTaskMask);
      if (t >= n) break;
      if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      fn_(ctx_, t0_ + t, thread);
      ++ran;
      if (done_.fetch_add(1) + 1 == uint32_t(n) && thread != 0 && caller_sleepers_.load() > 0) futex_wake_all(&done_);
      c = claim_.load(std::memory_order_acquire);
    }
    tl_in_task = false;
    return ran;
  }

  // Returns once word == target (done_ counts up to it, alive_ down).
  static void wait_until(std::atomic<uint32_t>& word, uint32_t target, std::atomic<int>& sleepers) {
    for (uint32_t v; (v = word.load(std::memory_order_acquire)) != target;) wait_while_equal(word, v, sleepers);
  }

  void loop(int thread, uint32_t seen) {
    for (;;) {
      wait_while_equal(generation_, seen, worker_sleepers_);
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load()) break;
      work(seen, thread);
    }
    alive_.fetch_sub(1);
    if (caller_sleepers_.load() > 0) futex_wake_all(&alive_);
  }

  // Stops every worker: they leave their loops and the caller waits until they have (no join: a
  // join blocks, which the browser's main thread may not; there the futex wait polls).
  void stop_workers() {
    stop_.store(true);
    claim_.store(0);
    generation_.fetch_add(1);
    futex_wake_all(&generation_);
    wait_until(alive_, 0, caller_sleepers_);
    workers_ = 0;
  }

  int workers_ = 0;  // started and not stopped (detached threads)
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int t0_ = 0;
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> done_{0}, alive_{0}, generation_{0};
  std::atomic<int> worker_sleepers_{0}, caller_sleepers_{0};
  std::atomic<bool> stop_{false};
  // the caller's contention measure (touched by the caller only)
  double alone_until_ = 0, window_ms_ = 0, window_alone_ms_ = 0;
  int window_regions_ = 0;
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

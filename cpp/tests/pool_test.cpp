// The thread pool (cpp/src/parallel.cpp) built with MHA_THREADS on native threads: every task of a
// region runs exactly once, on a thread index below num_threads(), at every pool size and across
// resizes; nested regions run on the calling thread; a worker that stalls in its tasks makes the
// caller run the following regions alone. (The wasm builds run the same file: tests/threads.test.mjs.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "mha/threads.hpp"
#include "parallel.hpp"

namespace {

// Runs `regions` regions of 1..37 tasks each and checks each task ran once on a valid thread.
void check_regions(int threads, int regions) {
  ASSERT_EQ(mha::set_num_threads(threads), threads);
  ASSERT_EQ(mha::num_threads(), threads);
  for (int r = 0; r < regions; ++r) {
    const int n = 1 + r % 37;
    std::vector<std::atomic<int>> hits(n);
    for (auto& h : hits) h = 0;
    std::atomic<int> bad_thread{0};
    mha::parallel::for_each(n, [&](int t, int th) {
      if (th < 0 || th >= threads) bad_thread++;
      hits[t]++;
    });
    ASSERT_EQ(bad_thread.load(), 0) << "region " << r;
    for (int t = 0; t < n; ++t) ASSERT_EQ(hits[t].load(), 1) << "region " << r << ", task " << t << " of " << n;
  }
}

TEST(Pool, EveryTaskOnceAtEverySizeAndAcrossResizes) {
  for (int threads : {2, 3, 4, 1, 2, 64}) check_regions(threads, 5000);
  EXPECT_EQ(mha::set_num_threads(0), 1);
  EXPECT_EQ(mha::set_num_threads(1000), 64);
  EXPECT_EQ(mha::set_num_threads(1), 1);
}

TEST(Pool, WorkersTakeTasks) {
  mha::set_num_threads(2);
  std::atomic<long> on_worker{0};
  for (int r = 0; r < 200; ++r) {
    mha::parallel::for_each(8, [&](int, int th) {
      if (th != 0) on_worker++;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
  }
  EXPECT_GT(on_worker.load(), 0) << "no task ran on the worker in 200 regions of 8 tasks of 0.2 ms";
  mha::set_num_threads(1);
}

TEST(Pool, NestedRegionsRunOnTheCallingThread) {
  mha::set_num_threads(3);
  std::atomic<int> wrong{0}, inner{0};
  mha::parallel::for_each(6, [&](int, int th) {
    mha::parallel::for_each(5, [&](int, int th2) {
      if (th2 != th) wrong++;
      inner++;
    });
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(inner.load(), 30);
  mha::set_num_threads(1);
}

// A worker that stalls (a task takes it 2 ms, the caller 0.1 ms): the caller then runs whole
// regions alone, every task on thread 0, and the results stay complete.
TEST(Pool, StallingWorkerMakesTheCallerRunAlone) {
  mha::set_num_threads(2);
  int longest_alone = 0, run = 0;
  bool worker_took = false;
  for (int r = 0; r < 400 && longest_alone < 40; ++r) {
    std::atomic<int> on_worker{0}, done{0};
    mha::parallel::for_each(2, [&](int, int th) {
      if (th != 0) on_worker++;
      std::this_thread::sleep_for(std::chrono::microseconds(th != 0 ? 2000 : 100));
      done++;
    });
    ASSERT_EQ(done.load(), 2);
    if (on_worker.load() > 0) worker_took = true;
    run = on_worker.load() == 0 ? run + 1 : 0;
    if (worker_took) longest_alone = std::max(longest_alone, run);
  }
  EXPECT_TRUE(worker_took);
  EXPECT_GE(longest_alone, 40) << "after the worker stalled, the caller should run the next regions alone";
  mha::set_num_threads(1);
}

}  // namespace

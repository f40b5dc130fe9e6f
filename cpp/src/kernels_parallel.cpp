// The projection GEMM over the pool's threads (kernels.hpp: gemm_packed_cols_mt).
#include <algorithm>

#include "kernels.hpp"
#include "mha/threads.hpp"
#include "parallel.hpp"

namespace mha {
namespace kernels {

void gemm_packed_cols_mt(int M, const float* A, int lda, const PackedB& B, int n0, int n, const float* bias,
                         float* C, int ldc) {
  const int T = num_threads();
  if (T == 1 || long(M) * n * B.k < kParallelMacs) return gemm_packed_cols(M, A, lda, B, n0, n, bias, C, ldc);
  const int row_splits = (M + kRowSplit - 1) / kRowSplit;
  const int panels = (n + kPanel - 1) / kPanel;
  // Up to kColSplitRows rows (a prompt's), with enough panels for every thread: groups of whole
  // panels, so that B is read (and a 16-bit B widened) once in all, not once per thread.
  const bool by_cols = M <= kColSplitRows && panels >= kColGroup * T;
  if (by_cols) {
    const int groups = (panels + kColGroup - 1) / kColGroup;
    parallel::for_each(T, [&](int t, int) {
      const int p0 = groups * t / T * kColGroup, p1 = std::min(panels, groups * (t + 1) / T * kColGroup);
      const int c0 = p0 * kPanel, c1 = std::min(n, p1 * kPanel);
      if (c1 > c0) gemm_packed_cols(M, A, lda, B, n0 + c0, c1 - c0, bias, C + c0, ldc);
    });
    return;
  }
  if (row_splits >= 2) {  // contiguous runs of whole row splits, one run per task
    const int tasks = std::min(T, row_splits);
    parallel::for_each(tasks, [&](int t, int) {
      const int b0 = row_splits * t / tasks, b1 = row_splits * (t + 1) / tasks;
      const int r0 = b0 * kRowSplit, r1 = std::min(M, b1 * kRowSplit);
      gemm_packed_cols(r1 - r0, A + size_t(r0) * lda, lda, B, n0, n, bias, C + size_t(r0) * ldc, ldc);
    });
    return;
  }
  // groups of whole panels, one group per task
  const int tasks = std::min(T, panels);
  parallel::for_each(tasks, [&](int t, int) {
    const int p0 = panels * t / tasks, p1 = panels * (t + 1) / tasks;
    const int c0 = p0 * kPanel, c1 = std::min(n, p1 * kPanel);
    if (c1 > c0) gemm_packed_cols(M, A, lda, B, n0 + c0, c1 - c0, bias, C + c0, ldc);
  });
}

}  // namespace kernels
}  // namespace mha

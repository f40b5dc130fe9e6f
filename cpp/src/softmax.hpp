// Scalar, numerically stable softmax of one row: shared by the portable kernels and as the edge
// path of the SIMD kernels. Internal header.
#pragma once
#include <cmath>
#include <limits>

namespace mha {
namespace kernels {

/// x[0..n) <- softmax(x) with the row maximum subtracted first. -inf entries get weight 0; a row
/// of only -inf becomes all zeros (never NaN).
inline void softmax_row_scalar(int n, float* x) {
  float m = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  if (m == -std::numeric_limits<float>::infinity()) {
    for (int j = 0; j < n; ++j) x[j] = 0.f;
    return;
  }
  float sum = 0.f;
  for (int j = 0; j < n; ++j) {
    const float e = std::exp(x[j] - m);
    x[j] = e;
    sum += e;
  }
  const float inv = 1.f / sum;
  for (int j = 0; j < n; ++j) x[j] *= inv;
}

}  // namespace kernels
}  // namespace mha

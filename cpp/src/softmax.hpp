// Scalar, numerically stable softmax of one row: the portable kernels' softmax (kernels_eigen.cpp).
// The SIMD kernels have their own vector softmax and do not use it. Internal header.
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

/// Online-softmax step of one row (see kernels.hpp, softmax_online_tile).
inline void softmax_online_row_scalar(int n, float* x, float& m, float& l, float& alpha) {
  float mb = m;
  for (int j = 0; j < n; ++j) mb = x[j] > mb ? x[j] : mb;
  if (mb == -std::numeric_limits<float>::infinity()) {
    for (int j = 0; j < n; ++j) x[j] = 0.f;
    alpha = 1.f;
    return;
  }
  alpha = std::exp(m - mb);  // m = -inf on the first finite tile: alpha = 0
  float sum = 0.f;
  for (int j = 0; j < n; ++j) {
    const float e = std::exp(x[j] - mb);
    x[j] = e;
    sum += e;
  }
  l = l * alpha + sum;
  m = mb;
}

}  // namespace kernels
}  // namespace mha

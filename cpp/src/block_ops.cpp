// Row-wise block operations (block_ops.hpp). Plain loops: clang vectorizes the element-wise ones;
// erf and exp come from the C library (a few per element of a lesson-sized MLP); the tanh GELU of
// GPT-2's MLP is a kernel (kernels.hpp: vectors and the softmax's exp in the SIMD builds).
#include "block_ops.hpp"

#include "kernels.hpp"

#include <algorithm>
#include <cmath>

namespace mha {
namespace ops {

void layer_norm(int rows, int d, const float* x, const float* w, const float* b, float eps, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * d;
    float* yr = y + size_t(r) * d;
    double mean = 0;
    for (int i = 0; i < d; ++i) mean += xr[i];
    mean /= d;
    double var = 0;
    for (int i = 0; i < d; ++i) { const double z = xr[i] - mean; var += z * z; }
    const double inv = 1.0 / std::sqrt(var / d + double(eps));
    for (int i = 0; i < d; ++i) {
      const float v = float((xr[i] - mean) * inv) * w[i];
      yr[i] = b ? v + b[i] : v;
    }
  }
}

void rms_norm(int rows, int d, const float* x, const float* w, float eps, float* y) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * d;
    float* yr = y + size_t(r) * d;
    double ss = 0;
    for (int i = 0; i < d; ++i) ss += double(xr[i]) * xr[i];
    const float inv = float(1.0 / std::sqrt(ss / d + double(eps)));
    for (int i = 0; i < d; ++i) yr[i] = xr[i] * inv * w[i];
  }
}

void relu(size_t n, float* x) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

void gelu_erf(size_t n, float* x) {
  const float inv_sqrt2 = 0.70710678118654752f;
  for (size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.f + std::erf(x[i] * inv_sqrt2));
}

void gelu_tanh(size_t n, float* x) { kernels::gelu_tanh(n, x); }

void silu_mul(size_t n, float* gate, const float* up) {
  for (size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.f + std::exp(-g)) * up[i];
  }
}

void add(size_t n, float* x, const float* y) {
  for (size_t i = 0; i < n; ++i) x[i] += y[i];
}

void log_softmax(int rows, int n, float* z) {
  for (int r = 0; r < rows; ++r) {
    float* zr = z + size_t(r) * n;
    const float m = *std::max_element(zr, zr + n);
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::exp(double(zr[i] - m));
    const float lse = float(m + std::log(s));
    for (int i = 0; i < n; ++i) zr[i] -= lse;
  }
}

}  // namespace ops
}  // namespace mha

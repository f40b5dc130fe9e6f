// Portable kernels on Eigen: the native build and the reference the SIMD kernels are tested against.
// Compiled when MHA_SIMD128 is not defined (see kernels_simd_gemm.cpp and kernels_simd_softmax.cpp for the wasm SIMD build).
#include "kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "half.hpp"
#include "softmax.hpp"

namespace mha {
namespace kernels {
namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using CMap = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;
using MMap = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;
}  // namespace

#ifndef MHA_SIMD128
void pack_b_slices(int K, int N, std::initializer_list<ColumnSlice> slices, PackedB& out) {
  out.k = K;
  out.n = N;
  out.data.assign(static_cast<size_t>(K) * N, 0.f);
  for (const ColumnSlice& blk : slices)
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < blk.n; ++c)
        out.data[static_cast<size_t>(r) * N + blk.n0 + c] = blk.b[static_cast<size_t>(r) * blk.ld + c];
}

void pack_b_t(int K, int N, const float* Bt, int ldbt, PackedB& out) {
  out.k = K;
  out.n = N;
  out.data.resize(static_cast<size_t>(K) * N);
  if (K == 0 || N == 0) return;
  MMap(out.data.data(), K, N, Eigen::OuterStride<>(N)) = CMap(Bt, N, K, Eigen::OuterStride<>(ldbt)).transpose();
}

void packed_column(const PackedB& B, int n, float* out) {
  if (B.half) return packed_column16(B, n, out);
  const float* p = B.data.data() + n;
  for (int k = 0; k < B.k; ++k) out[k] = p[static_cast<size_t>(k) * B.n];
}

void gemm_packed_cols(int M, const float* A, int lda, const PackedB& B, int n0, int n, const float* bias,
                      float* C, int ldc) {
  if (M == 0 || n == 0) return;
  MMap c(C, M, n, Eigen::OuterStride<>(ldc));
  if (B.k == 0) {
    c.setZero();
  } else if (B.half) {
    // 16-bit panels: slices of kHalfCols columns widened into a row-major float32 copy, then Eigen.
    constexpr int kHalfCols = 64;
    thread_local std::vector<float> wide;
    wide.resize(static_cast<size_t>(B.k) * kHalfCols);
    CMap a(A, M, B.k, Eigen::OuterStride<>(lda));
    for (int j0 = 0; j0 < n; j0 += kHalfCols) {
      const int cw = std::min(kHalfCols, n - j0);
      for (int j = 0; j < cw; ++j) {
        const int col = n0 + j0 + j;
        const uint16_t* p = B.bits.data() + static_cast<size_t>(col / kPanel) * kPanel * B.k + half_lane(col % kPanel);
        for (int k = 0; k < B.k; ++k) wide[static_cast<size_t>(k) * cw + j] = half_to_float(p[static_cast<size_t>(k) * kPanel], B.half);
      }
      CMap b(wide.data(), B.k, cw, Eigen::OuterStride<>(cw));
      c.middleCols(j0, cw).noalias() = a * b;
    }
  } else {
    CMap a(A, M, B.k, Eigen::OuterStride<>(lda));
    CMap b(B.data.data() + n0, B.k, n, Eigen::OuterStride<>(B.n));
    c.noalias() = a * b;
  }
  if (bias) c.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias + n0, n);
}

void pack_panels(int K, int N, const float* B, int ldb, float* out, size_t stride) {
  for (int p = 0, n0 = 0; n0 < N; ++p, n0 += kPanel)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < kPanel; ++j)
        out[p * stride + size_t(k) * kPanel + j] = n0 + j < N ? B[size_t(k) * ldb + n0 + j] : 0.f;
}

void pack_panels_t(int K, int N, const float* Bt, int ldbt, float* out, size_t stride) {
  for (int p = 0, n0 = 0; n0 < N; ++p, n0 += kPanel)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < kPanel; ++j)
        out[p * stride + size_t(k) * kPanel + j] = n0 + j < N ? Bt[size_t(n0 + j) * ldbt + k] : 0.f;
}

void gemm_panels(int M, int N, int K, float alpha, const float* A, int lda, const float* Bp, size_t stride,
                 float* C, int ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
  MMap c(C, M, N, Eigen::OuterStride<>(ldc));
  if (K == 0) { if (!accumulate) c.setZero(); return; }
  CMap a(A, M, K, Eigen::OuterStride<>(lda));
  for (int p = 0, n0 = 0; n0 < N; ++p, n0 += kPanel) {
    const int nc = std::min(kPanel, N - n0);
    CMap b(Bp + p * stride, K, nc, Eigen::OuterStride<>(kPanel));
    if (accumulate) c.middleCols(n0, nc).noalias() += alpha * (a * b);
    else c.middleCols(n0, nc).noalias() = alpha * (a * b);
  }
}

void scale_rows(int rows, int cols, float* X, int ldx, const float* f) {
  for (int r = 0; r < rows; ++r) {
    if (f[r] == 1.f) continue;
    float* x = X + size_t(r) * ldx;
    for (int c = 0; c < cols; ++c) x[c] *= f[r];
  }
}

void gemm_abt(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  if (M == 0 || N == 0) return;
  MMap c(C, M, N, Eigen::OuterStride<>(ldc));
  if (K == 0) { c.setZero(); return; }
  CMap a(A, M, K, Eigen::OuterStride<>(lda));
  CMap b(B, N, K, Eigen::OuterStride<>(ldb));
  c.noalias() = alpha * (a * b.transpose());
}

void gemm_ab(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
  MMap c(C, M, N, Eigen::OuterStride<>(ldc));
  if (K == 0) { if (!accumulate) c.setZero(); return; }
  CMap a(A, M, K, Eigen::OuterStride<>(lda));
  CMap b(B, K, N, Eigen::OuterStride<>(ldb));
  if (accumulate) c.noalias() += a * b; else c.noalias() = a * b;
}

void gelu_tanh(size_t n, float* x) {
  const float k = 0.79788456080286536f;  // √(2/π)
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}

void softmax_rows(int rows, int n, float* S, int lds) {
  for (int r = 0; r < rows; ++r) softmax_row_scalar(n, S + static_cast<size_t>(r) * lds);
}

void softmax_rows_unnormalized(int rows, int n, float* S, int lds, float* inv) {
  softmax_rows(rows, n, S, lds);
  std::fill(inv, inv + rows, 1.f);
}

void gemm_panels_scaled(int M, int N, int K, const float* ascale, float* A, int lda, const float* Bp, size_t stride,
                        float* C, int ldc, bool accumulate) {
  scale_rows(M, K, A, lda, ascale);
  gemm_panels(M, N, K, 1.f, A, lda, Bp, stride, C, ldc, accumulate);
}

void softmax_online_tile(int rows, int n, float* S, int lds, float* m, float* l, float* alpha) {
  for (int r = 0; r < rows; ++r) softmax_online_row_scalar(n, S + static_cast<size_t>(r) * lds, m[r], l[r], alpha[r]);
}
#endif

}  // namespace kernels
}  // namespace mha

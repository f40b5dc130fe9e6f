// Shared harness of the kernel tests (cpp/tests/kernels_test*.cpp, one program: see kernels_test.cpp):
// the check counters and KT_CHECK, a deterministic generator, random matrices, bitwise equality,
// the GEMM comparison with its float64 reference and error bound, and the test functions each file
// defines. Plain C++17, no test framework (it builds with em++ for the wasm kernels and natively).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace kt {

using namespace mha::kernels;

/// Checks run, failures and result elements compared, over the whole program.
inline long g_checks = 0, g_failures = 0, g_elements = 0;

#define KT_CHECK(cond, ...)                                     \
  do {                                                          \
    ++g_checks;                                                 \
    if (!(cond)) {                                              \
      if (++g_failures <= 25) {                                 \
        std::printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
        std::printf(__VA_ARGS__);                               \
        std::printf("\n");                                      \
      }                                                         \
    }                                                           \
  } while (0)

/// Deterministic xorshift64* generator.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 2654435761ull + 88172645463325252ull) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * ((next() >> 11) * (1.0 / 9007199254740992.0)); }
  int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
};

inline const float kSentinel = -7.77e33f;

/// rows×ld matrix (plus one slack element) of uniform values in [lo, hi).
inline std::vector<float> random_matrix(Rng& rng, int rows, int ld, double lo = -1, double hi = 1) {
  std::vector<float> m(static_cast<size_t>(rows) * ld + 1);
  for (auto& x : m) x = static_cast<float>(rng.uniform(lo, hi));
  return m;
}

/// Bitwise equality (NaN sentinels compare equal to themselves).
inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// Compares C[M, N] (leading dimension ldc) with the reference ref (M×N, value and error bound),
/// and checks that the padding columns N..ldc-1 of C still equal `orig`. One check per call.
inline void compare(const char* what, int M, int N, int K, const std::vector<float>& C, int ldc,
                    const std::vector<float>& orig, const std::vector<double>& ref,
                    const std::vector<double>& bound) {
  int bad = 0;
  double worst = 0;
  int wi = -1, wj = -1;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < ldc; ++j) {
      const size_t idx = static_cast<size_t>(i) * ldc + j;
      if (j >= N) {
        if (!same_bits(C[idx], orig[idx])) { ++bad; wi = i; wj = j; }
        continue;
      }
      ++g_elements;
      const double err = std::fabs(static_cast<double>(C[idx]) - ref[static_cast<size_t>(i) * N + j]);
      const double b = bound[static_cast<size_t>(i) * N + j];
      if (!(err <= b)) {
        ++bad;
        if (!(err / b <= worst)) { worst = err / b; wi = i; wj = j; }
      }
    }
  }
  // Elements past the last row (the +1 slack) must be untouched too.
  for (size_t idx = static_cast<size_t>(M) * ldc; idx < C.size(); ++idx)
    if (!same_bits(C[idx], orig[idx])) ++bad;
  KT_CHECK(bad == 0, "%s M=%d N=%d K=%d ldc=%d: %d bad elements (worst at %d,%d: got %g want %g)", what,
           M, N, K, ldc, bad, wi, wj,
           wi >= 0 && wj >= 0 && wj < N ? C[static_cast<size_t>(wi) * ldc + wj] : 0.0,
           wi >= 0 && wj >= 0 && wj < N ? ref[static_cast<size_t>(wi) * N + wj] : 0.0);
}

/// The double-precision reference of C[i, j] = c0(i, j) + alpha·Σ_k A[i, k]·b(k, j) for an [M, N]
/// result (A row-major with leading dimension lda), and each element's error bound
/// 1e-5·|alpha|·Σ_k |A[i, k]·b(k, j)| + 1e-6·|c0(i, j)| + 1e-6 (float32 accumulation over K terms).
template <class BAt, class C0>
void reference_gemm(int M, int N, int K, double alpha, const std::vector<float>& A, int lda, BAt b, C0 c0,
                    std::vector<double>& ref, std::vector<double>& bound) {
  ref.assign(static_cast<size_t>(M) * N, 0.0);
  bound.assign(ref.size(), 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, sa = 0;
      for (int k = 0; k < K; ++k) {
        const double t = static_cast<double>(A[static_cast<size_t>(i) * lda + k]) * b(k, j);
        s += t;
        sa += std::fabs(t);
      }
      const double c = c0(i, j);
      ref[static_cast<size_t>(i) * N + j] = c + alpha * s;
      bound[static_cast<size_t>(i) * N + j] = 1e-5 * std::fabs(alpha) * sa + 1e-6 * std::fabs(c) + 1e-6;
    }
}


// GEMM and packing (kernels_test_gemm.cpp).
void test_gemm_packed(Rng& rng, int M, int N, int K, bool strided, bool with_bias);
// 16-bit weights (kernels_test_half.cpp).
void half_suite(Rng& rng, bool quick);
void test_gemm_abt(Rng& rng, int M, int N, int K, bool strided);
void test_gemm_ab(Rng& rng, int M, int N, int K, bool strided, bool accumulate);
void test_gemm_panels(Rng& rng, int M, int N, int K, bool transposed, bool accumulate);
void test_gemm_panels_scaled(Rng& rng, int M, int N, int K);
void test_pack_b_slices(Rng& rng, int M, int K, int n1, int n2, int n3);
void test_pack_b_t(Rng& rng, int K, int N);
void test_gemm_packed_cols(Rng& rng, int M, int Nt, int K, bool with_bias);
void test_scale_rows(Rng& rng, int rows, int cols);
// Softmax (kernels_test_softmax.cpp).
void softmax_suite(Rng& rng);
// Degenerate sizes, scratch failure and register tiles (kernels_test_edges.cpp).
void degenerate_suite(Rng& rng);
#ifdef MHA_SIMD128
void scratch_failure_suite(Rng& rng);
void tile_rows_suite(Rng& rng);
#endif

}  // namespace kt

// Correctness harness of the compute kernels (cpp/src/kernels.hpp) against naive float64 loops.
//
// Plain C++17, no test framework: builds with em++ against the wasm SIMD kernels
// (-msimd128 -DMHA_SIMD128, kernels_simd_gemm.cpp and kernels_simd_softmax.cpp; with -DMHA_RELAXED_SIMD the relaxed-SIMD variant, built
// by clang 16) and natively with g++ against the Eigen kernels (kernels_eigen.cpp);
// the CMake targets kernel_tests (both wasm builds) and kernels_test_native do all three. Prints one line per failure (the
// first few), a summary line "kernels_test: <checks> checks, <failures> failures, <elements>
// elements compared", and exits non-zero on any failure.
//
// Covered: gemm_packed / gemm_abt / gemm_ab on every M 1..9 × N 1..35 × K 1..40 with random
// leading dimensions (ld > width), bias on/off, alpha, accumulate on/off, K = 0 and M or N = 0,
// remainder rows over 5..13 panels (N 40..104),
// plus large shapes (128×768·768×768, head sizes T = 512, d_k = 64, blocks past the cache block
// sizes); gemm_panels on row/column sub-blocks of panels packed by pack_panels / pack_panels_t
// (with the packed layout checked element by element), gemm_packed_cols on column ranges,
// scale_rows; pack_b_blocks (three blocks, through gemm_packed); pack_b_t against pack_b of the
// transpose and packed_column against the rows it was packed from (bitwise); softmax_rows on rows with -inf entries, all -inf, huge (1e3..1e30), tiny and mixed
// logits. GEMM tolerance: |c - ref| ≤ 1e-5·Σ_k|a_ik·b_kj| (·|alpha|, + |C_old|·1e-6 when
// accumulating) + 1e-6. Softmax tolerance: |w - ref| ≤ 1e-6 + 1e-5·ref, masked entries exactly 0.
// Padding between rows of C (ld > width) must be left untouched (checked bitwise). SIMD builds:
// the 6 × 8 register tile (set_tile_rows) gives the 4 × 8 tile's bits, and the large shapes pass
// the references with it too.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace {

using namespace mha::kernels;

long g_checks = 0, g_failures = 0, g_elements = 0;

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

const float kSentinel = -7.77e33f;

/// rows×ld matrix (plus one slack element) of uniform values in [lo, hi).
std::vector<float> random_matrix(Rng& rng, int rows, int ld, double lo = -1, double hi = 1) {
  std::vector<float> m(static_cast<size_t>(rows) * ld + 1);
  for (auto& x : m) x = static_cast<float>(rng.uniform(lo, hi));
  return m;
}

/// Bitwise equality (NaN sentinels compare equal to themselves).
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// Compares C[M, N] (leading dimension ldc) with the reference ref (M×N, value and error bound),
/// and checks that the padding columns N..ldc-1 of C still equal `orig`. One check per call.
void compare(const char* what, int M, int N, int K, const std::vector<float>& C, int ldc,
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

/// gemm_packed: C = A·B (+ bias) with B packed once by pack_b.
void test_gemm_packed(Rng& rng, int M, int N, int K, bool strided, bool with_bias) {
  const int lda = K + (strided ? rng.range(1, 5) : 0);
  const int ldb = N + (strided ? rng.range(1, 5) : 0);
  const int ldc = N + (strided ? rng.range(1, 5) : 0);
  auto A = random_matrix(rng, M, lda > 0 ? lda : 1);
  auto B = random_matrix(rng, K, ldb > 0 ? ldb : 1);
  auto bias = random_matrix(rng, 1, N);
  std::vector<float> C(static_cast<size_t>(M) * ldc + 1, kSentinel);
  for (size_t i = 0; i < C.size(); ++i) C[i] = (i % 3 == 0) ? kSentinel : std::numeric_limits<float>::quiet_NaN();
  const auto orig = C;
  PackedB pb;
  pack_b(K, N, B.data(), ldb, pb);
  gemm_packed(M, A.data(), lda, pb, with_bias ? bias.data() : nullptr, C.data(), ldc);
  std::vector<double> ref, bound;
  reference_gemm(M, N, K, 1.0, A, lda, [&](int k, int j) { return B[static_cast<size_t>(k) * ldb + j]; },
                 [&](int, int j) { return with_bias ? double(bias[j]) : 0.0; }, ref, bound);
  compare(with_bias ? "gemm_packed+bias" : "gemm_packed", M, N, K, C, ldc, orig, ref, bound);
}

/// gemm_abt: C = alpha·A·Bᵀ, B given as [N, K].
void test_gemm_abt(Rng& rng, int M, int N, int K, bool strided) {
  const int lda = K + (strided ? rng.range(1, 5) : 0);
  const int ldb = K + (strided ? rng.range(1, 5) : 0);
  const int ldc = N + (strided ? rng.range(1, 5) : 0);
  const float alpha = (rng.next() & 1) ? 1.f : static_cast<float>(rng.uniform(-2, 2));
  auto A = random_matrix(rng, M, lda > 0 ? lda : 1);
  auto B = random_matrix(rng, N, ldb > 0 ? ldb : 1);
  std::vector<float> C(static_cast<size_t>(M) * ldc + 1, std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i < C.size(); i += 2) C[i] = kSentinel;
  const auto orig = C;
  gemm_abt(M, N, K, alpha, A.data(), lda, B.data(), ldb, C.data(), ldc);
  std::vector<double> ref, bound;
  reference_gemm(M, N, K, alpha, A, lda, [&](int k, int j) { return B[static_cast<size_t>(j) * ldb + k]; },
                 [](int, int) { return 0.0; }, ref, bound);
  compare("gemm_abt", M, N, K, C, ldc, orig, ref, bound);
}

/// gemm_ab: C = A·B or C += A·B, B unpacked [K, N].
void test_gemm_ab(Rng& rng, int M, int N, int K, bool strided, bool accumulate) {
  const int lda = K + (strided ? rng.range(1, 5) : 0);
  const int ldb = N + (strided ? rng.range(1, 5) : 0);
  const int ldc = N + (strided ? rng.range(1, 5) : 0);
  auto A = random_matrix(rng, M, lda > 0 ? lda : 1, 0, 1);  // attention weights are ≥ 0
  auto B = random_matrix(rng, K, ldb > 0 ? ldb : 1);
  std::vector<float> C(static_cast<size_t>(M) * ldc + 1);
  for (auto& x : C) x = static_cast<float>(rng.uniform(-1, 1));
  if (!accumulate)
    for (size_t i = 0; i < C.size(); i += 2) C[i] = std::numeric_limits<float>::quiet_NaN();
  const auto orig = C;
  gemm_ab(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate);
  std::vector<double> ref, bound;
  reference_gemm(M, N, K, 1.0, A, lda, [&](int k, int j) { return B[static_cast<size_t>(k) * ldb + j]; },
                 [&](int i, int j) { return accumulate ? double(orig[static_cast<size_t>(i) * ldc + j]) : 0.0; }, ref, bound);
  compare(accumulate ? "gemm_ab+=" : "gemm_ab", M, N, K, C, ldc, orig, ref, bound);
}

/// gemm_panels on sub-matrices of a panelled matrix, as attention uses them: a big B [Kt, Nt] is
/// packed once (pack_panels, or pack_panels_t from Bᵀ) with a padded panel stride, then the block
/// rows k0..k0+K, columns n0..n0+N (n0 a multiple of kPanel) are multiplied without repacking:
/// C (=|+=) alpha·A·B[k0.., n0..].
void test_gemm_panels(Rng& rng, int M, int N, int K, bool transposed, bool accumulate) {
  const int k0 = rng.range(0, 9), p0 = rng.range(0, 2), n0 = p0 * kPanel;
  const int Kt = k0 + K + rng.range(0, 9), Nt = n0 + N + rng.range(0, 11);
  const size_t stride = size_t(Kt) * kPanel + rng.range(0, 3) * 4;
  const int lda = K + rng.range(0, 4), ldc = N + rng.range(0, 4);
  const float alpha = (rng.next() & 1) ? 1.f : static_cast<float>(rng.uniform(-2, 2));
  const int ldb = (transposed ? Kt : Nt) + rng.range(0, 3);
  auto A = random_matrix(rng, M, lda > 0 ? lda : 1);
  auto Bs = random_matrix(rng, transposed ? Nt : Kt, ldb);  // B [Kt, Nt], or Bᵀ [Nt, Kt]
  auto b = [&](int k, int j) { return transposed ? Bs[size_t(j) * ldb + k] : Bs[size_t(k) * ldb + j]; };
  const int P = (Nt + kPanel - 1) / kPanel;
  std::vector<float> packed(stride * P + 1, kSentinel);
  if (transposed) pack_panels_t(Kt, Nt, Bs.data(), ldb, packed.data(), stride);
  else pack_panels(Kt, Nt, Bs.data(), ldb, packed.data(), stride);
  // The layout itself: element (k, j) at panel j/8, [k·8 + j%8]; zero padding past Nt.
  int bad_layout = 0;
  for (int p = 0; p < P; ++p)
    for (int k = 0; k < Kt; ++k)
      for (int j = 0; j < kPanel; ++j) {
        const float want = p * kPanel + j < Nt ? b(k, p * kPanel + j) : 0.f;
        bad_layout += !same_bits(packed[p * stride + size_t(k) * kPanel + j], want);
      }
  KT_CHECK(bad_layout == 0, "%s layout: %d wrong elements (Kt=%d Nt=%d)", transposed ? "pack_panels_t" : "pack_panels", bad_layout, Kt, Nt);
  std::vector<float> C(static_cast<size_t>(M) * ldc + 1);
  for (auto& x : C) x = static_cast<float>(rng.uniform(-1, 1));
  if (!accumulate)
    for (size_t i = 0; i < C.size(); i += 2) C[i] = std::numeric_limits<float>::quiet_NaN();
  const auto orig = C;
  gemm_panels(M, N, K, alpha, A.data(), lda, packed.data() + p0 * stride + size_t(k0) * kPanel, stride, C.data(), ldc,
              accumulate);
  std::vector<double> ref, bound;
  reference_gemm(M, N, K, alpha, A, lda, [&](int k, int j) { return double(b(k0 + k, n0 + j)); },
                 [&](int i, int j) { return accumulate ? double(orig[static_cast<size_t>(i) * ldc + j]) : 0.0; }, ref, bound);
  compare(transposed ? (accumulate ? "gemm_panels(Bᵀ)+=" : "gemm_panels(Bᵀ)") : (accumulate ? "gemm_panels+=" : "gemm_panels"),
          M, N, K, C, ldc, orig, ref, bound);
}

/// pack_b_blocks of three column blocks (each starting on a panel, zero columns between them: the
/// fused W_Q | W_K | W_V layout): gemm_packed with it equals the reference product with the
/// assembled matrix (so the check does not go through pack_b, which shares pack_b_blocks' code).
void test_pack_b_blocks(Rng& rng, int M, int K, int n1, int n2, int n3) {
  auto up8 = [](int n) { return (n + kPanel - 1) / kPanel * kPanel; };
  const int o2 = up8(n1), o3 = o2 + up8(n2), N = o3 + n3;
  auto b1 = random_matrix(rng, K, n1), b2 = random_matrix(rng, K, n2), b3 = random_matrix(rng, K, n3);
  auto whole = [&](int k, int j) -> double {
    if (j < n1) return b1[size_t(k) * n1 + j];
    if (j >= o2 && j < o2 + n2) return b2[size_t(k) * n2 + j - o2];
    if (j >= o3) return b3[size_t(k) * n3 + j - o3];
    return 0.0;  // the gap columns
  };
  PackedB pb;
  pack_b_blocks(K, N, {{b1.data(), n1, 0, n1}, {b2.data(), n2, o2, n2}, {b3.data(), n3, o3, n3}}, pb);
  auto A = random_matrix(rng, M, K);
  std::vector<float> C(static_cast<size_t>(M) * N + 1, kSentinel);
  const auto orig = C;
  gemm_packed(M, A.data(), K, pb, nullptr, C.data(), N);
  std::vector<double> ref, bound;
  reference_gemm(M, N, K, 1.0, A, K, whole, [](int, int) { return 0.0; }, ref, bound);
  compare("pack_b_blocks + gemm_packed", M, N, K, C, N, orig, ref, bound);
}

/// pack_b_t of Bt [N, K] (leading dimension ldbt > K) is pack_b of B = Btᵀ, float for float (so
/// gemm_packed gives the same bits), and packed_column(n) of either returns row n of Bt exactly.
void test_pack_b_t(Rng& rng, int K, int N) {
  const int ldbt = K + 3;
  auto Bt = random_matrix(rng, N, ldbt);
  std::vector<float> B(static_cast<size_t>(K) * N);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) B[static_cast<size_t>(k) * N + n] = Bt[static_cast<size_t>(n) * ldbt + k];
  PackedB pt, pb;
  pt.data.assign(7, 9.f);  // leftovers of an earlier pack must not survive
  pack_b_t(K, N, Bt.data(), ldbt, pt);
  pack_b(K, N, B.data(), N, pb);
  size_t bad = pt.data.size() == pb.data.size() ? 0 : 1;
  for (size_t i = 0; !bad && i < pb.data.size(); ++i) bad += !same_bits(pt.data[i], pb.data[i]);
  KT_CHECK(pt.k == K && pt.n == N && bad == 0, "pack_b_t %dx%d differs from pack_b of the transpose (%zu floats)", K, N, bad);
  ++g_elements;
  std::vector<float> col(static_cast<size_t>(K) + 1, kSentinel);
  bad = 0;
  for (int n = 0; n < N; ++n) {
    packed_column(pt, n, col.data());
    for (int k = 0; k < K; ++k) bad += !same_bits(col[k], Bt[static_cast<size_t>(n) * ldbt + k]);
    bad += !same_bits(col[K], kSentinel);
    g_elements += K;
  }
  KT_CHECK(bad == 0, "packed_column of a %dx%d pack_b_t: %zu floats differ from the rows of Bt or past K", K, N, bad);
}

/// gemm_packed_cols: C = A·B[:, n0 .. n0+n) (+ bias) on a pack_b matrix, n0 a multiple of kPanel.
void test_gemm_packed_cols(Rng& rng, int M, int Nt, int K, bool with_bias) {
  const int n0 = kPanel * rng.range(0, (Nt - 1) / kPanel);
  const int n = rng.range(1, Nt - n0);
  const int lda = K + rng.range(0, 3), ldb = Nt + rng.range(0, 3), ldc = n + rng.range(0, 3);
  auto A = random_matrix(rng, M, lda > 0 ? lda : 1);
  auto B = random_matrix(rng, K, ldb);
  auto bias = random_matrix(rng, 1, Nt);
  std::vector<float> C(static_cast<size_t>(M) * ldc + 1, kSentinel);
  const auto orig = C;
  PackedB pb;
  pack_b(K, Nt, B.data(), ldb, pb);
  gemm_packed_cols(M, A.data(), lda, pb, n0, n, with_bias ? bias.data() : nullptr, C.data(), ldc);
  std::vector<double> ref, bound;
  reference_gemm(M, n, K, 1.0, A, lda, [&](int k, int j) { return B[static_cast<size_t>(k) * ldb + n0 + j]; },
                 [&](int, int j) { return with_bias ? double(bias[n0 + j]) : 0.0; }, ref, bound);
  compare("gemm_packed_cols", M, n, K, C, ldc, orig, ref, bound);
}

/// scale_rows: rows times their factor, factor-1 rows and padding untouched (bitwise).
void test_scale_rows(Rng& rng, int rows, int cols) {
  const int ld = cols + rng.range(0, 5);
  auto X = random_matrix(rng, rows, ld);
  std::vector<float> f(rows);
  for (auto& x : f) x = (rng.next() % 3 == 0) ? 1.f : static_cast<float>(rng.uniform(0, 1));
  const auto orig = X;
  scale_rows(rows, cols, X.data(), ld, f.data());
  int bad = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < ld; ++c) {
      const size_t i = size_t(r) * ld + c;
      const float want = c < cols ? orig[i] * f[r] : orig[i];
      bad += !same_bits(X[i], want);
      ++g_elements;
    }
  KT_CHECK(bad == 0, "scale_rows rows=%d cols=%d: %d wrong elements", rows, cols, bad);
}

/// softmax_rows on the given rows (each of length n) stored with leading dimension lds.
void test_softmax(const char* what, int n, const std::vector<std::vector<float>>& rows, int pad) {
  const int R = static_cast<int>(rows.size());
  const int lds = n + pad;
  std::vector<float> S(static_cast<size_t>(R) * lds + 1, kSentinel);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < n; ++j) S[static_cast<size_t>(r) * lds + j] = rows[r][j];
  const auto orig = S;
  softmax_rows(R, n, S.data(), lds);
  int bad = 0, br = -1, bj = -1;
  double got = 0, want = 0;
  for (int r = 0; r < R; ++r) {
    const auto& x = rows[r];
    double m = -INFINITY;
    for (float v : x) m = v > m ? v : m;
    std::vector<double> ref(n, 0.0);
    if (m > -INFINITY) {
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += (ref[j] = std::exp(static_cast<double>(x[j]) - m));
      for (int j = 0; j < n; ++j) ref[j] /= sum;
    }
    double wsum = 0;
    for (int j = 0; j < lds; ++j) {
      const size_t idx = static_cast<size_t>(r) * lds + j;
      if (j >= n) {
        if (!same_bits(S[idx], orig[idx])) ++bad;
        continue;
      }
      ++g_elements;
      const double w = S[idx];
      wsum += w;
      const bool masked = x[j] == -INFINITY;
      const bool ok = std::isfinite(w) && w >= 0 && (masked ? w == 0.0 : std::fabs(w - ref[j]) <= 1e-6 + 1e-5 * ref[j]);
      if (!ok) {
        if (bad++ == 0) { br = r; bj = j; got = w; want = ref[j]; }
      }
    }
    const double expect_sum = m > -INFINITY ? 1.0 : 0.0;
    if (!(std::fabs(wsum - expect_sum) <= 1e-5)) {
      if (bad++ == 0) { br = r; bj = -1; got = wsum; want = expect_sum; }
    }
  }
  for (size_t idx = static_cast<size_t>(R) * lds; idx < S.size(); ++idx)
    if (!same_bits(S[idx], orig[idx])) ++bad;
  KT_CHECK(bad == 0, "softmax %s n=%d lds=%d: %d bad (first row %d col %d: got %.9g want %.9g)", what, n,
           lds, bad, br, bj, got, want);
}

/// softmax_rows on lengths 1..40 and larger, with normal, masked, all -inf, huge, tiny, mixed and
/// wide-range logits, ±3e38 extremes, a dense [0, -t] accuracy sweep and zero-size calls.
void softmax_suite(Rng& rng) {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<int> lengths;
  for (int n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int n : {63, 64, 65, 127, 128, 129, 511, 512, 513, 1000, 2049}) lengths.push_back(n);
  for (int n : lengths) {
    const int pad = (n % 3 == 0) ? 0 : rng.range(1, 5);
    std::vector<std::vector<float>> normal, masked, allmasked, huge, tiny, mixed, wide;
    for (int r = 0; r < 3; ++r) {
      std::vector<float> a(n), b(n), c(n, ninf), d(n), e(n), f(n), g(n);
      for (int j = 0; j < n; ++j) {
        a[j] = static_cast<float>(rng.uniform(-5, 5));
        b[j] = (rng.next() % 3 == 0) ? ninf : static_cast<float>(rng.uniform(-10, 10));
        const double mag = std::pow(10.0, rng.uniform(3, 30));
        d[j] = static_cast<float>((rng.next() & 1) ? mag : -mag);
        e[j] = static_cast<float>(rng.uniform(-1, 1) * std::pow(10.0, -rng.uniform(5, 37)));
        f[j] = (rng.next() % 4 == 0) ? ninf : static_cast<float>(rng.uniform(-100, 100));
        g[j] = static_cast<float>(rng.uniform(-120, 5));
      }
      if (r == 0) b[rng.range(0, n - 1)] = ninf;  // at least one masked entry
      if (r == 1) {                                // all but one masked
        for (int j = 0; j < n; ++j) b[j] = ninf;
        b[rng.range(0, n - 1)] = static_cast<float>(rng.uniform(-3, 3));
      }
      normal.push_back(a);
      masked.push_back(b);
      allmasked.push_back(c);
      huge.push_back(d);
      tiny.push_back(e);
      mixed.push_back(f);
      wide.push_back(g);
    }
    // A block with an all-masked row between normal rows.
    std::vector<std::vector<float>> block = {normal[0], allmasked[0], masked[0], allmasked[1]};
    test_softmax("normal", n, normal, pad);
    test_softmax("masked", n, masked, pad);
    test_softmax("all -inf", n, allmasked, pad);
    test_softmax("huge", n, huge, pad);
    test_softmax("tiny", n, tiny, pad);
    test_softmax("mixed", n, mixed, pad);
    test_softmax("wide range", n, wide, pad);
    test_softmax("rows with all -inf", n, block, pad);
  }
  // Extremes: ±FLT_MAX-scale logits, a single huge value, equal values.
  for (int n : {1, 2, 5, 8, 13}) {
    std::vector<float> a(n, 3e38f), b(n, -3e38f), c(n, 7.f);
    a[0] = -3e38f;
    b[n - 1] = 3e38f;
    test_softmax("extreme", n, {a, b, c}, 1);
  }
  // exp accuracy over a dense range: rows [0, -t] give weights 1/(1+e^-t) and e^-t/(1+e^-t).
  std::vector<std::vector<float>> pairs;
  for (int i = 0; i <= 2000; ++i) pairs.push_back({0.f, static_cast<float>(-i * 0.05)});
  test_softmax("pairs", 2, pairs, 0);
  // n = 0 and rows = 0 must be no-ops.
  float dummy[4] = {1, 2, 3, 4};
  softmax_rows(0, 4, dummy, 4);
  softmax_rows(1, 0, dummy, 4);
  KT_CHECK(dummy[0] == 1 && dummy[3] == 4, "softmax with zero rows or zero length wrote data");
}

/// K = 0 (C = bias or 0; accumulate leaves C) and M = 0 or N = 0 (nothing written) for every GEMM.
void degenerate_suite(Rng& rng) {
  // K = 0: C = 0 (+ bias) for gemm_packed / gemm_abt / gemm_ab; gemm_ab accumulate leaves C.
  for (int M : {1, 3, 5})
    for (int N : {1, 7, 9}) {
      test_gemm_packed(rng, M, N, 0, true, true);
      test_gemm_packed(rng, M, N, 0, true, false);
      test_gemm_abt(rng, M, N, 0, true);
      test_gemm_ab(rng, M, N, 0, true, false);
      test_gemm_ab(rng, M, N, 0, true, true);
    }
  // M = 0 or N = 0: nothing written.
  std::vector<float> C(16, kSentinel), A(16, 1.f), B(16, 1.f);
  PackedB pb;
  pack_b(2, 0, B.data(), 1, pb);
  gemm_packed(2, A.data(), 2, pb, nullptr, C.data(), 1);
  pack_b(2, 3, B.data(), 3, pb);
  gemm_packed(0, A.data(), 2, pb, nullptr, C.data(), 3);
  gemm_abt(0, 3, 2, 1.f, A.data(), 2, B.data(), 2, C.data(), 3);
  gemm_abt(3, 0, 2, 1.f, A.data(), 2, B.data(), 2, C.data(), 1);
  gemm_ab(0, 3, 2, A.data(), 2, B.data(), 3, C.data(), 3, false);
  gemm_ab(3, 0, 2, A.data(), 2, B.data(), 1, C.data(), 1, false);
  bool untouched = true;
  for (float x : C) untouched = untouched && same_bits(x, kSentinel);
  KT_CHECK(untouched, "a GEMM with M = 0 or N = 0 wrote to C");
}

#ifdef MHA_SIMD128
/// Without packing scratch (an allocation that fails: set_scratch_limit), gemm_packed reads A in
/// place and gemm_abt / gemm_ab compute element by element: the same bits as with it.
void scratch_failure_suite(Rng& rng) {
  struct Shape { int M, N, K; };
  for (const Shape& sh : {Shape{40, 24, 20}, Shape{64, 96, 300}, Shape{33, 45, 7}, Shape{21, 13, 1500}, Shape{70, 72, 90}}) {
    const int M = sh.M, N = sh.N, K = sh.K;
    auto A = random_matrix(rng, M, K);
    auto Bt = random_matrix(rng, N, K);   // B[N, K] for gemm_abt
    auto B = random_matrix(rng, K, N);    // B[K, N] for gemm_ab and gemm_packed
    auto bias = random_matrix(rng, 1, N);
    PackedB pb;
    pack_b(K, N, B.data(), N, pb);
    std::vector<float> c[2][3];
    for (int limited = 0; limited < 2; ++limited) {
      set_scratch_limit(limited ? 1 : 0);
      for (auto& x : c[limited]) x.assign(static_cast<size_t>(M) * N, 0.5f);
      gemm_packed(M, A.data(), K, pb, bias.data(), c[limited][0].data(), N);
      gemm_abt(M, N, K, 0.37f, A.data(), K, Bt.data(), K, c[limited][1].data(), N);
      gemm_ab(M, N, K, A.data(), K, B.data(), N, c[limited][2].data(), N, true);
    }
    set_scratch_limit(0);
    const char* names[] = {"gemm_packed", "gemm_abt", "gemm_ab+="};
    for (int f = 0; f < 3; ++f) {
      size_t bad = 0;
      for (size_t i = 0; i < c[0][f].size(); ++i) bad += !same_bits(c[0][f][i], c[1][f][i]);
      KT_CHECK(bad == 0, "%s %dx%dx%d without scratch: %zu of %zu elements differ", names[f], M, N, K, bad, c[0][f].size());
    }
  }
}

/// The 6 × 8 register tile (set_tile_rows(6)) gives the bits of the default 4 × 8 tile on every
/// product: row counts around the packing threshold (32) with every remainder mod 6 and mod 4,
/// row blocks past the cache block (126 / 128 rows), depth splits, bias, alpha and accumulate.
void tile_rows_suite(Rng& rng) {
  struct Shape { int M, N, K; };
  const Shape shapes[] = {{31, 24, 20}, {32, 40, 33}, {33, 45, 7}, {34, 64, 64}, {35, 72, 90}, {36, 17, 300},
                          {37, 104, 16}, {41, 33, 64}, {64, 512, 64}, {64, 64, 512}, {127, 96, 200}, {131, 48, 1100},
                          {256, 40, 768}};
  for (const Shape& sh : shapes) {
    const int M = sh.M, N = sh.N, K = sh.K;
    auto A = random_matrix(rng, M, K);
    auto Bt = random_matrix(rng, N, K);
    auto B = random_matrix(rng, K, N);
    auto bias = random_matrix(rng, 1, N);
    PackedB pb;
    pack_b(K, N, B.data(), N, pb);
    std::vector<float> kp(panels_size(K, N));
    pack_panels(K, N, B.data(), N, kp.data(), size_t(kPanel) * K);
    const int rows[] = {4, 6, 3};  // 4 × 8, 6 × 8, 3 × 12
    std::vector<float> c[3][4];
    for (int t = 0; t < 3; ++t) {
      set_tile_rows(rows[t]);
      KT_CHECK(tile_rows() == rows[t], "set_tile_rows(%d) left tile_rows() = %d", rows[t], tile_rows());
      for (auto& x : c[t]) x.assign(static_cast<size_t>(M) * N, 0.5f);
      gemm_packed(M, A.data(), K, pb, bias.data(), c[t][0].data(), N);
      gemm_abt(M, N, K, 0.37f, A.data(), K, Bt.data(), K, c[t][1].data(), N);
      gemm_ab(M, N, K, A.data(), K, B.data(), N, c[t][2].data(), N, true);
      gemm_panels(M, N, K, 0.61f, A.data(), K, kp.data(), size_t(kPanel) * K, c[t][3].data(), N, (M & 1) != 0);
    }
    set_tile_rows(4);
    const char* names[] = {"gemm_packed", "gemm_abt", "gemm_ab+=", "gemm_panels"};
    for (int t = 1; t < 3; ++t)
      for (int f = 0; f < 4; ++f) {
        size_t bad = 0;
        for (size_t i = 0; i < c[0][f].size(); ++i) bad += !same_bits(c[0][f][i], c[t][f][i]);
        KT_CHECK(bad == 0, "%s %dx%dx%d: the %s tile differs from 4x8 in %zu of %zu elements", names[f], M, N, K,
                 t == 1 ? "6x8" : "3x12", bad, c[0][f].size());
      }
  }
  set_tile_rows(5);
  KT_CHECK(tile_rows() == 4, "set_tile_rows(5) must select 4, got %d", tile_rows());
}
#endif

}  // namespace

#ifdef __EMSCRIPTEN__
extern "C" int host_arg_equals(int i, const char* s);  // cpp/tests/bench_host.js
#endif

#ifdef __EMSCRIPTEN__
// Arguments come from the host: the relaxed build's link does not see a main(argc, argv).
int main() {
  const bool quick = host_arg_equals(0, "--quick") != 0;
#else
int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
#endif
  Rng rng(20240607);

  // Every small shape: M 1..9 × N 1..35 × K 1..40, alternating strides, bias and accumulate.
  int variant = 0;
  for (int M = 1; M <= 9; ++M)
    for (int N = 1; N <= 35; ++N)
      for (int K = 1; K <= 40; ++K) {
        if (quick && (M + N + K) % 7) continue;
        const bool strided = (variant & 1) != 0;
        const bool flag = (variant & 2) != 0;
        ++variant;
        test_gemm_packed(rng, M, N, K, strided, flag);
        test_gemm_abt(rng, M, N, K, !strided);
        test_gemm_ab(rng, M, N, K, strided, flag);
      }
  // The rows below the last 4-row tile run over groups of 2–4 panels (and rows_ab takes B in
  // 16-column chunks): 5–13 panels, remainders of 1–3 rows, short and long K.
  for (int M : {1, 2, 3, 5, 6, 9})
    for (int N : {40, 48, 56, 64, 72, 104})
      for (int K : {5, 16, 24, 33}) {
        test_gemm_packed(rng, M, N, K, (M + K) & 1, (N + K) & 1);
        test_gemm_ab(rng, M, N, K, (M + N) & 1, K & 1);
      }
  const long small_checks = g_checks;

  // Panelled operands (pack once, multiply sub-blocks): every small M × N × K, both packings.
  for (int M = 1; M <= 9; ++M)
    for (int N = 1; N <= 27; N += (quick ? 5 : 1))
      for (int K = 1; K <= 20; K += (quick ? 3 : 1)) {
        test_gemm_panels(rng, M, N, K, (M + N + K) & 1, (M + N) & 1);
        if (K <= 9) test_gemm_packed_cols(rng, M, N + 4, K, (N + K) & 1);
      }
  for (int rows = 1; rows <= 5; ++rows)
    for (int cols = 0; cols <= 13; ++cols) test_scale_rows(rng, rows, cols);
  for (int n1 = 1; n1 <= 17; n1 += 2)
    for (int n3 = 1; n3 <= 13; n3 += 3) test_pack_b_blocks(rng, 1 + n1 % 6, 1 + (n1 + n3) % 7, n1, n1 % 5 + 3, n3);
  for (int K : {1, 3, 4, 7, 8, 13, 64})
    for (int N : {1, 5, 8, 9, 16, 23, 61}) test_pack_b_t(rng, K, N);

  // Larger shapes: past the SIMD kernels' cache blocks (128 rows, 1024 deep: 2100 = 1024 + 1024 +
  // 52 exercises the depth split, which must add the bias once and keep accumulating), odd edges,
  // and the model shapes.
  struct Shape { int M, N, K; };
  const Shape big[] = {{65, 67, 257}, {130, 33, 600}, {71, 260, 513}, {17, 1001, 300}, {1, 768, 768},
                       {37, 45, 2100}, {260, 19, 1025}};
  for (const auto& s : big) {
    test_gemm_packed(rng, s.M, s.N, s.K, true, true);
    test_gemm_packed(rng, s.M, s.N, s.K, false, false);
    test_gemm_abt(rng, s.M, s.N, s.K % 130, true);
    test_gemm_ab(rng, s.M, s.N, s.K, true, true);
    test_gemm_ab(rng, s.M, s.N, s.K, false, false);
    test_gemm_panels(rng, s.M, s.N, s.K % 300 + 1, true, false);
    test_gemm_panels(rng, s.M, s.N, s.K, false, true);
  }
  if (!quick) {
    test_gemm_packed(rng, 128, 768, 768, false, true);   // [128×768]·[768×768] + b
    test_gemm_abt(rng, 512, 512, 64, true);              // Q·Kᵀ, T = 512, d_k = 64, per-head slice
    test_gemm_ab(rng, 512, 64, 512, true, false);        // A·V
    test_gemm_ab(rng, 512, 64, 512, true, true);
    test_gemm_abt(rng, 100, 77, 128, true);              // d_k = 128
    test_gemm_abt(rng, 33, 45, 2, true);                 // d_k = 2
    test_gemm_abt(rng, 21, 13, 1500, true);              // depth split with alpha
    test_gemm_panels(rng, 64, 512, 64, true, false);     // S = Q·Kᵀ of a key block, d_k = 64
    test_gemm_panels(rng, 64, 64, 512, false, true);     // O += P·V of a key block
    test_gemm_panels(rng, 67, 61, 1100, false, true);    // depth split, edges
    test_gemm_packed_cols(rng, 70, 2304, 768, true);     // Q / K / V columns of fused W_QKV
  }
  degenerate_suite(rng);
  softmax_suite(rng);
#ifdef MHA_SIMD128
  scratch_failure_suite(rng);
  tile_rows_suite(rng);
  // The float64 references once more with the 6 × 8 and 3 × 12 tiles.
  for (int rows : {6, 3}) {
    set_tile_rows(rows);
    for (const auto& s : big) {
      test_gemm_packed(rng, s.M, s.N, s.K, true, true);
      test_gemm_abt(rng, s.M, s.N, s.K % 130, true);
      test_gemm_ab(rng, s.M, s.N, s.K, false, false);
      test_gemm_panels(rng, s.M, s.N, s.K, false, true);
    }
  }
  set_tile_rows(4);
#endif

  std::printf("kernels_test (%s): %ld checks (%ld small GEMM shapes), %ld failures, %ld elements compared\n",
#if defined(MHA_RELAXED_SIMD)
              "wasm relaxed-SIMD kernels",
#elif defined(MHA_SIMD128)
              "wasm SIMD kernels",
#else
              "portable Eigen kernels",
#endif
              g_checks, small_checks, g_failures, g_elements);
  return g_failures == 0 ? 0 : 1;
}

// Kernel tests of the GEMMs and packings against float64 references (part of the kernels_test
// program: cpp/tests/kernels_test.cpp lists what it covers): gemm_packed, gemm_abt, gemm_ab,
// gemm_panels on sub-ranges of packed panels, pack_b_slices, pack_b_t / packed_column,
// gemm_packed_cols and scale_rows, each with strides, bias, alpha and accumulate as it takes them.
#include "support/kernel_check.hpp"

namespace kt {

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
/// packed once (pack_panels, or pack_panels_t from Bᵀ) with a padded panel stride, then the sub-range
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

/// gemm_panels_scaled: bit for bit gemm_panels of a copy of A whose row i was multiplied by
/// scale[i] (factors of 1, 0 and random ones), over a panelled B as in test_gemm_panels.
void test_gemm_panels_scaled(Rng& rng, int M, int N, int K) {
  const size_t stride = size_t(K) * kPanel;
  const int lda = K + rng.range(0, 4), ldc = N + rng.range(0, 4);
  auto A = random_matrix(rng, M, lda);
  auto B = random_matrix(rng, K, N);
  std::vector<float> packed(stride * ((N + kPanel - 1) / kPanel));
  pack_panels(K, N, B.data(), N, packed.data(), stride);
  std::vector<float> f(M);
  for (int i = 0; i < M; ++i) f[i] = i % 5 == 1 ? 1.f : i % 7 == 3 ? 0.f : static_cast<float>(rng.uniform(0, 1));
  auto As = A;
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) As[size_t(i) * lda + k] = A[size_t(i) * lda + k] * f[i];
  std::vector<float> want(static_cast<size_t>(M) * ldc, 0.f), got(want.size(), 0.f);
  gemm_panels(M, N, K, 1.f, As.data(), lda, packed.data(), stride, want.data(), ldc, false);
  gemm_panels_scaled(M, N, K, f.data(), A.data(), lda, packed.data(), stride, got.data(), ldc, false);
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) bad += !same_bits(got[size_t(i) * ldc + j], want[size_t(i) * ldc + j]);
  ++g_checks;
  KT_CHECK(bad == 0, "gemm_panels_scaled M=%d N=%d K=%d: %d elements differ from gemm_panels of the scaled copy", M, N, K, bad);
}

/// pack_b_slices of three column slices (each starting on a panel, zero columns between them: the
/// fused W_Q | W_K | W_V layout): gemm_packed with it equals the reference product with the
/// assembled matrix (so the check does not go through pack_b, which shares pack_b_slices' code).
void test_pack_b_slices(Rng& rng, int M, int K, int n1, int n2, int n3) {
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
  pack_b_slices(K, N, {{b1.data(), n1, 0, n1}, {b2.data(), n2, o2, n2}, {b3.data(), n3, o3, n3}}, pb);
  auto A = random_matrix(rng, M, K);
  std::vector<float> C(static_cast<size_t>(M) * N + 1, kSentinel);
  const auto orig = C;
  gemm_packed(M, A.data(), K, pb, nullptr, C.data(), N);
  std::vector<double> ref, bound;
  reference_gemm(M, N, K, 1.0, A, K, whole, [](int, int) { return 0.0; }, ref, bound);
  compare("pack_b_slices + gemm_packed", M, N, K, C, N, orig, ref, bound);
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

}  // namespace kt

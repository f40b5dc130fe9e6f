// Kernel tests of the edge cases (part of the kernels_test program: cpp/tests/kernels_test.cpp):
// K = 0 and M or N = 0 for every GEMM; on the SIMD builds, the GEMMs without packing scratch (an
// allocation that fails) and the 6 × 8 register tile against the 4 × 8 tile's bits.
#include "support/kernel_check.hpp"

namespace kt {


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
/// cache tiles past the cache tile size (126 / 128 rows), depth splits, bias, alpha and accumulate.
void tile_rows_suite(Rng& rng) {
  struct Shape { int M, N, K; };
  // 128 and 137 rows: a tail of under two register tiles joins the cache tile before it (2 and 5
  // rows below the 6-row tiles).
  const Shape shapes[] = {{31, 24, 20}, {32, 40, 33}, {33, 45, 7}, {34, 64, 64}, {35, 72, 90}, {36, 17, 300},
                          {37, 104, 16}, {41, 33, 64}, {64, 512, 64}, {64, 64, 512}, {127, 96, 200}, {128, 56, 96}, {131, 48, 1100},
                          {137, 40, 70}, {256, 40, 768}};
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

}  // namespace kt

// Correctness harness of the compute kernels (cpp/src/kernels.hpp) against naive float64 loops: the
// program's main (the order of the runs and the summary). The tests are in kernels_test_gemm.cpp,
// kernels_test_softmax.cpp and kernels_test_edges.cpp; the shared checks in support/kernel_check.hpp.
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
// plus large shapes (128×768·768×768, head sizes T = 512, d_k = 64, shapes past the cache tile
// sizes); gemm_panels on row/column sub-ranges of panels packed by pack_panels / pack_panels_t
// (with the packed layout checked element by element), gemm_packed_cols on column ranges,
// scale_rows; pack_b_slices (three slices, through gemm_packed); pack_b_t against pack_b of the
// transpose and packed_column against the rows it was packed from (bitwise); 16-bit (float16,
// bfloat16) packs against the decoded matrix (kernels_test_half.cpp); softmax_rows on rows with -inf entries, all -inf, huge (1e3..1e30), tiny and mixed
// logits. GEMM tolerance: |c - ref| ≤ 1e-5·Σ_k|a_ik·b_kj| (·|alpha|, + |C_old|·1e-6 when
// accumulating) + 1e-6. Softmax tolerance: |w - ref| ≤ 1e-6 + 1e-5·ref, masked entries exactly 0.
// Padding between rows of C (ld > width) must be left untouched (checked bitwise). SIMD builds:
// the 6 × 8 register tile (set_tile_rows) gives the 4 × 8 tile's bits, and the large shapes pass
// the references with it too.
#include <string>

#include "support/kernel_check.hpp"

using namespace kt;

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

  // Panelled operands (pack once, multiply sub-ranges): every small M × N × K, both packings.
  for (int M = 1; M <= 9; ++M)
    for (int N = 1; N <= 27; N += (quick ? 5 : 1))
      for (int K = 1; K <= 20; K += (quick ? 3 : 1)) {
        test_gemm_panels(rng, M, N, K, (M + N + K) & 1, (M + N) & 1);
        if (K <= 9) test_gemm_packed_cols(rng, M, N + 4, K, (N + K) & 1);
      }
  for (int rows = 1; rows <= 5; ++rows)
    for (int cols = 0; cols <= 13; ++cols) test_scale_rows(rng, rows, cols);
  for (int M : {1, 2, 5, 31, 32, 38, 64, 67, 140})
    for (int K : {1, 4, 7, 64, 130}) test_gemm_panels_scaled(rng, M, 3 + (M * K) % 70, K);
  test_gemm_panels_scaled(rng, 64, 64, 512);  // P·V of the attention tile
  test_gemm_panels_scaled(rng, 67, 61, 1100);  // depth split
  for (int n1 = 1; n1 <= 17; n1 += 2)
    for (int n3 = 1; n3 <= 13; n3 += 3) test_pack_b_slices(rng, 1 + n1 % 6, 1 + (n1 + n3) % 7, n1, n1 % 5 + 3, n3);
  for (int K : {1, 3, 4, 7, 8, 13, 64})
    for (int N : {1, 5, 8, 9, 16, 23, 61}) test_pack_b_t(rng, K, N);

  // Larger shapes: past the SIMD kernels' cache tiles (128 rows, 1024 deep: 2100 = 1024 + 1024 +
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
    test_gemm_panels(rng, 64, 512, 64, true, false);     // S = Q·Kᵀ of a key tile, d_k = 64
    test_gemm_panels(rng, 64, 64, 512, false, true);     // O += P·V of a key tile
    test_gemm_panels(rng, 67, 61, 1100, false, true);    // depth split, edges
    test_gemm_packed_cols(rng, 70, 2304, 768, true);     // Q / K / V columns of fused W_QKV
  }
  half_suite(rng, quick);
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
      test_gemm_panels_scaled(rng, s.M, s.N, s.K);
    }
  }
  set_tile_rows(4);
  // Without the packing scratch every row of A is scaled in place (the same bits).
  set_scratch_limit(1);
  test_gemm_panels_scaled(rng, 64, 64, 512);
  test_gemm_panels_scaled(rng, 37, 45, 2100);
  set_scratch_limit(0);
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

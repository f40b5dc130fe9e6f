// Kernel tests of 16-bit weights (part of the kernels_test program: cpp/tests/kernels_test.cpp
// lists what it covers): pack_b16 / pack_b_slices16 / pack_b_t16 of float16 and bfloat16 bit
// patterns, packed_column16 against values decoded here from the bits by their definition (IEEE
// 754 binary16; bfloat16 = the upper half of a float32), and gemm_packed / gemm_packed_cols on the
// 16-bit pack against the float64 reference of the decoded matrix and, in the SIMD builds, bit for
// bit against the same product with the decoded matrix packed as float32 (every tile, one row and
// many, the depth split, and with the widening scratch refused).
#include <cmath>

#include "support/kernel_check.hpp"

namespace kt {
namespace {

/// The float32 value of a 16-bit pattern by definition (type 1 float16, 2 bfloat16).
float decode16(uint16_t h, int type) {
  if (type == 2) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(1.0 + m / 1024.0, e - 15);
  return float(s ? -v : v);
}

/// A random finite 16-bit pattern: every exponent below the top one (subnormals and zeros
/// included) for float16; bfloat16 over 2^-20 .. 2^8, with zeros and subnormals now and then.
uint16_t random16(Rng& rng, int type) {
  const uint16_t sign = uint16_t(rng.range(0, 1) << 15);
  if (type == 1) return uint16_t(sign | (rng.range(0, 30) << 10) | rng.range(0, 1023));
  const int e = rng.range(0, 9) == 0 ? 0 : rng.range(127 - 20, 127 + 8);
  return uint16_t(sign | (e << 7) | rng.range(0, 127));
}

std::vector<uint16_t> random16s(Rng& rng, size_t n, int type) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = random16(rng, type);
  return v;
}

/// C = A·B16[:, n0 .. n0+n) (+ bias) against the float64 reference of the decoded B and (SIMD) the
/// bits of the float32 pack of the decoded B. Built by pack_b16, or from three column slices, or
/// transposed (pack_b_t16), by `how` = 0, 1, 2.
void test_gemm_half(Rng& rng, int type, int M, int N, int K, int how, bool with_bias, float a_scale = 1.f) {
  const int ldb = N + (how == 0 ? 3 : 0), lda = K + 1, ldc = N + 2;
  const auto B16 = random16s(rng, static_cast<size_t>(K) * ldb, type);
  std::vector<float> B(static_cast<size_t>(K) * N);
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) B[static_cast<size_t>(k) * N + j] = decode16(B16[static_cast<size_t>(k) * ldb + j], type);
  PackedB ph, pf;
  if (how == 2) {  // B16 read as Bt [N, K]: B = Bt^T
    std::vector<uint16_t> Bt(static_cast<size_t>(N) * K);
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) Bt[static_cast<size_t>(j) * K + k] = B16[static_cast<size_t>(k) * ldb + j];
    pack_b_t16(K, N, type, Bt.data(), K, ph);
  } else if (how == 1 && N >= 3 * kPanel) {  // three slices at panel boundaries, the last to N
    const int c1 = kPanel, c2 = 2 * kPanel;
    pack_b_slices16(K, N, type, {{B16.data(), ldb, 0, c1}, {B16.data() + c1, ldb, c1, c2 - c1}, {B16.data() + c2, ldb, c2, N - c2}}, ph);
  } else {
    pack_b16(K, N, type, B16.data(), ldb, ph);
  }
  pack_b(K, N, B.data(), N, pf);
  KT_CHECK(ph.half == type && ph.data.empty() && ph.bits.size() == panels_size(K, N), "pack16 %dx%d: half %d, %zu floats, %zu bits",
           K, N, ph.half, ph.data.size(), ph.bits.size());
  // packed_column16: the decoded column, exactly
  std::vector<float> col(static_cast<size_t>(K));
  size_t badc = 0;
  for (int j = 0; j < N; j += 1 + N / 7) {
    packed_column(ph, j, col.data());
    for (int k = 0; k < K; ++k) badc += !same_bits(col[k], B[static_cast<size_t>(k) * N + j]);
  }
  KT_CHECK(badc == 0, "packed_column of a 16-bit (type %d) %dx%d pack: %zu values differ from the decoded bits", type, K, N, badc);
  const int n0 = kPanel * rng.range(0, (N - 1) / kPanel), n = N - n0;
  auto A = random_matrix(rng, M, lda);
  for (auto& x : A) x *= a_scale;
  auto bias = random_matrix(rng, 1, N);
  std::vector<float> C(static_cast<size_t>(M) * ldc + 1, kSentinel), Cf = C;
  const auto orig = C;
  gemm_packed_cols(M, A.data(), lda, ph, n0, n, with_bias ? bias.data() : nullptr, C.data(), ldc);
  std::vector<double> ref, bound;
  reference_gemm(M, n, K, 1.0, A, lda, [&](int k, int j) { return double(B[static_cast<size_t>(k) * N + n0 + j]); },
                 [&](int, int j) { return with_bias ? double(bias[n0 + j]) : 0.0; }, ref, bound);
  compare(type == 1 ? "gemm_packed_cols float16" : "gemm_packed_cols bfloat16", M, n, K, C, ldc, orig, ref, bound);
#ifdef MHA_SIMD128
  gemm_packed_cols(M, A.data(), lda, pf, n0, n, with_bias ? bias.data() : nullptr, Cf.data(), ldc);
  size_t bad = 0;
  for (size_t i = 0; i < C.size(); ++i) bad += !same_bits(C[i], Cf[i]);
  KT_CHECK(bad == 0, "gemm_packed_cols type %d M=%d N=%d K=%d n0=%d (tile rows %d): %zu elements differ from the float32 pack's bits",
           type, M, N, K, n0, tile_rows(), bad);
#endif
}

}  // namespace

void half_suite(Rng& rng, bool quick) {
  struct S { int M, N, K; };
  const S shapes[] = {{1, 1, 1}, {1, 9, 5}, {1, 40, 33}, {1, 200, 70}, {2, 17, 16}, {3, 23, 9}, {5, 64, 40}, {7, 100, 3},
                      {33, 57, 65}, {40, 104, 17}, {130, 30, 50}, {1, 50, 1100}, {37, 45, 1030},
                      // one row: the runs of panels read side by side, then adjacent groups and the last panel
                      {1, 47, 20}, {1, 203, 1030}};
  for (int type : {1, 2})
    for (const S& s : shapes)
      for (int how = 0; how < 3; ++how) test_gemm_half(rng, type, s.M, s.N, s.K, how, (s.M + how) & 1);
  // one row with |a| ≥ 2^15 (float16 then widens with its multiply instead of scaling A), and rows
  // of tiny values (float32 subnormal products)
  for (int type : {1, 2}) {
    test_gemm_half(rng, type, 1, 40, 70, 0, true, 0x1p17f);
    test_gemm_half(rng, type, 1, 40, 70, 0, false, 0x1p-120f);
    test_gemm_half(rng, type, 3, 40, 70, 0, false, 0x1p-120f);
  }
  if (!quick)
    for (int type : {1, 2}) {
      test_gemm_half(rng, type, 1, 2304, 768, 0, true);  // a generation step's fused W_QKV
      test_gemm_half(rng, type, 128, 300, 768, 2, true); // a prompt's rows through a tied head
    }
#ifdef MHA_SIMD128
  for (int rows : {6, 3}) {  // the other register tiles
    set_tile_rows(rows);
    for (int type : {1, 2})
      for (const S& s : shapes) test_gemm_half(rng, type, s.M, s.N, s.K, 0, true);
  }
  set_tile_rows(4);
  set_scratch_limit(1);  // no widening scratch: row by row, the same bits
  for (int type : {1, 2}) test_gemm_half(rng, type, 40, 104, 17, 0, true);
  set_scratch_limit(0);
#endif
}

}  // namespace kt

// Kernel tests of softmax_rows against a float64 softmax (part of the kernels_test program:
// cpp/tests/kernels_test.cpp): rows with -inf entries, all -inf, huge, tiny, mixed and wide-range
// logits, ±3e38 extremes, a dense accuracy sweep and zero-size calls; masked entries exactly 0.
// gelu_tanh against the float64 formula over a dense range, every tail length, ±inf.
#include "support/kernel_check.hpp"

namespace kt {

/// softmax_rows_unnormalized on the same rows: every element times its row's factor has the bits
/// softmax_rows gives (S holds softmax_rows' result), padding untouched.
void test_softmax_unnormalized(const char* what, int n, int R, int lds, const std::vector<float>& orig,
                               const std::vector<float>& S) {
  auto U = orig;
  std::vector<float> inv(R + 1, kSentinel);
  softmax_rows_unnormalized(R, n, U.data(), lds, inv.data());
  int bad = 0;
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < lds; ++j) {
      const size_t idx = static_cast<size_t>(r) * lds + j;
      bad += j < n ? !same_bits(U[idx] * inv[r], S[idx]) : !same_bits(U[idx], orig[idx]);
    }
  bad += !same_bits(inv[R], kSentinel);
  for (size_t idx = static_cast<size_t>(R) * lds; idx < U.size(); ++idx) bad += !same_bits(U[idx], orig[idx]);
  KT_CHECK(bad == 0, "softmax_rows_unnormalized %s n=%d lds=%d: %d elements differ from softmax_rows", what, n, lds, bad);
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
  test_softmax_unnormalized(what, n, R, lds, orig, S);
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
    // A set of rows with an all-masked row between normal rows.
    std::vector<std::vector<float>> rows = {normal[0], allmasked[0], masked[0], allmasked[1]};
    test_softmax("normal", n, normal, pad);
    test_softmax("masked", n, masked, pad);
    test_softmax("all -inf", n, allmasked, pad);
    test_softmax("huge", n, huge, pad);
    test_softmax("tiny", n, tiny, pad);
    test_softmax("mixed", n, mixed, pad);
    test_softmax("wide range", n, wide, pad);
    test_softmax("rows with all -inf", n, rows, pad);
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

  // gelu_tanh: x in [-12, 12] by 1/1024 (and 1–3 value tails) against the float64 formula. Error
  // bound: 1e-6 relative plus, in the SIMD builds, the float rounding of 2u carried by e^(-2|u|)
  // (|2u|·3e-7 relative: u takes up to five roundings) and 1e-30 absolute (e^(-2|u|) is 0 below e^-88),
  // in the portable build 4e-8·|x| (its float 1 + tanh(u) cancels for x < 0: half an ulp of 1
  // times |x|/2); ±inf and large values by the formula's limits.
  for (int tail : {0, 1, 2, 3}) {
    std::vector<float> x;
    for (int i = -12 * 1024; i <= 12 * 1024; ++i) x.push_back(static_cast<float>(i) / 1024.f);
    for (int t = 0; t < tail; ++t) x.push_back(0.37f * static_cast<float>(t + 1));
    std::vector<float> y = x;
    gelu_tanh(y.size(), y.data());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      // 0.5·v·(1 + tanh(u)) = v / (1 + e^(-2u)), the form that does not cancel in float64 either
      const double u2 = 2.0 * 0.7978845608028654 * (v + 0.044715 * v * v * v);
      const double want = v / (1.0 + std::exp(-u2));
#ifdef MHA_SIMD128
      const double tol = (1e-6 + 3e-7 * std::fabs(u2)) * std::fabs(want) + 1e-30;
#else
      const double tol = 1e-6 * std::fabs(want) + 4e-8 * std::fabs(v);
#endif
      if (!(std::fabs(y[i] - want) <= tol) && bad++ == 0) first = i;
    }
    KT_CHECK(bad == 0, "gelu_tanh (tail %d): %zu of %zu values off (first x=%.9g: got %.9g)", tail, bad, x.size(),
             static_cast<double>(x[first]), static_cast<double>(y[first]));
  }
  float ext[5] = {std::numeric_limits<float>::infinity(), 1e30f, 50.f, -50.f, -1e30f};
  gelu_tanh(5, ext);
  KT_CHECK(std::isinf(ext[0]) && ext[0] > 0 && ext[1] == 1e30f && ext[2] == 50.f && ext[3] <= 0.f && ext[3] > -1e-30f &&
               ext[4] <= 0.f && ext[4] > -1e-30f,
           "gelu_tanh extremes: %g %g %g %g %g", static_cast<double>(ext[0]), static_cast<double>(ext[1]),
           static_cast<double>(ext[2]), static_cast<double>(ext[3]), static_cast<double>(ext[4]));
}

}  // namespace kt

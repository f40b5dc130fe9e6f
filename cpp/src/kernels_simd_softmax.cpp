// wasm SIMD kernels of the MHA core, exp and softmax (wasm_simd128.h, em++ -msimd128): compiled when
// MHA_SIMD128 is defined; kernels_simd_gemm.cpp has the GEMM and packing kernels, and
// kernels_eigen.cpp is the portable implementation of the same interface (kernels.hpp).
//
// Softmax: vector max pass, vector exp (Cephes expf: x = n·ln2 + r with ln2 in two parts, degree-5
// polynomial for e^r by Estrin's scheme, 2^n built in the exponent bits; four vectors in lock step
// in the rows of a softmax), vector sum and scale passes (the scale pass can be left to the
// packing of P for P·V: softmax_rows_unnormalized); rows of up to 8 go four at a time with one
// horizontal reduction per pass. After max subtraction, inputs below about -87.7 (including -inf)
// give exactly 0.
#ifdef MHA_SIMD128

#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels.hpp"
#include "simd128.hpp"

namespace mha {
namespace kernels {
namespace {

/// The first cnt (≤ 4; < 1 gives none) floats at p in lanes 0..cnt-1, -inf in the other lanes.
inline v128_t load_or_ninf(const float* p, int cnt) {
  const v128_t ninf = wasm_f32x4_splat(-std::numeric_limits<float>::infinity());
  if (cnt >= 4) return wasm_v128_load(p);
  if (cnt <= 0) return ninf;
  const v128_t lanes = wasm_i32x4_gt(wasm_i32x4_splat(cnt), wasm_i32x4_make(0, 1, 2, 3));
  return wasm_v128_bitselect(load_partial(p, cnt), ninf, lanes);
}

/// The exp's constants (exp_nonpositive), as vectors held in variables. V8 13.6 (Node 24) rebuilds
/// every v128.const at each use inside a loop (three instructions: a 64-bit immediate, a move into
/// xmm, a shuffle), which made the exp twice as slow as under V8 11; values loaded from memory
/// before the loop stay in registers or are re-read as memory operands.
struct ExpConsts {
  v128_t lo, log2e, magic, ln2_hi, ln2_lo, q0, q1, q2, q3, q4, q5, one, bias;
};

/// The constants in memory: read through an opaque pointer (load_exp_consts), so that clang
/// cannot turn the loads back into v128.const.
const int kExpBias = 127;  // the float exponent bias
alignas(16) const float kExpTable[12] = {
    -88.f, 1.44269504088896341f, 12582912.f, -0.693359375f, 2.12194440e-4f,
    5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f, 8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f,
    1.f};

/// ExpConsts from kExpTable, once per kernel call (not per vector).
inline ExpConsts load_exp_consts() {
  const float* volatile opaque = kExpTable;  // a volatile read: its value is unknown to the optimizer
  const float* t = opaque;
  const int* volatile bias = &kExpBias;
  auto at = [t](int i) { return wasm_v128_load32_splat(t + i); };
  return {at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8), at(9), at(10), at(11), wasm_i32x4_splat(*bias)};
}

/// e^x for lanes x ≤ 0 (Cephes expf: x = n·ln2 + r with ln2 in two parts, |r| ≤ ln2/2, degree-5
/// polynomial for e^r, 2^n built in the exponent bits). Relative error ≲ 2e-7 for x ≥ -87.3.
/// x is first clamped to ≥ -88 (so -inf → -88); there n = -127 makes the exponent field 0 and the
/// result exactly 0, which also covers every x whose e^x is below the normal range (< 1.2e-38).
inline v128_t exp_nonpositive(v128_t x, const ExpConsts& k) {
  x = wasm_f32x4_pmax(x, k.lo);
  // n = round(x·log2 e) via the 1.5·2^23 magic number; the low bits of t hold n as an integer.
  const v128_t t = madd(x, k.log2e, k.magic);
  const v128_t n = wasm_f32x4_sub(t, k.magic);
  // r = x - n·ln2 in two parts (0.693359375 has few mantissa bits, so n·C1 is exact).
  const v128_t r = madd(n, k.ln2_lo, madd(n, k.ln2_hi, x));
  // e^r ≈ 1 + r + r²·q(r), q of degree 5 (Cephes coefficients) evaluated by Estrin's scheme: the
  // dependency chain is ~half of Horner's, which matters because V8 emits each exp as one chain
  // and the out-of-order window holds only a few of them. Each step is one madd (an FMA in the
  // relaxed-SIMD build).
  const v128_t r2 = wasm_f32x4_mul(r, r);
  const v128_t q01 = madd(r, k.q1, k.q0);
  const v128_t q23 = madd(r, k.q3, k.q2);
  const v128_t q45 = madd(r, k.q5, k.q4);
  const v128_t q = madd(r2, madd(r2, q45, q23), q01);
  const v128_t p = wasm_f32x4_add(madd(q, r2, r), k.one);
  // 2^n = bits((bits(t) + 127) << 23): the magic number's bits vanish in the shift; n ≥ -127.
  const v128_t pow2n = wasm_i32x4_shl(wasm_i32x4_add(t, k.bias), 23);
  return wasm_f32x4_mul(p, pow2n);
}

/// exp_nonpositive of V vectors in lock step: each step of the exp for all V vectors before the
/// next step, so that the wasm code (and V8's machine code, which keeps that order) interleaves V
/// independent chains. One exp is a chain of about a dozen dependent steps; emitted one after
/// another, the exps of consecutive vectors overlap only as far as the CPU's out-of-order window
/// reaches, and the exp is bound by its latency instead of the FMA ports. The same operations on
/// each vector as exp_nonpositive, so the same bits.
template <int V>
inline void exp_nonpositive_n(v128_t (&x)[V], const ExpConsts& k) {
  v128_t t[V], n[V], r[V], r2[V], q01[V], q23[V], q45[V], q[V];
  for (int v = 0; v < V; ++v) x[v] = wasm_f32x4_pmax(x[v], k.lo);
  for (int v = 0; v < V; ++v) t[v] = madd(x[v], k.log2e, k.magic);
  for (int v = 0; v < V; ++v) n[v] = wasm_f32x4_sub(t[v], k.magic);
  for (int v = 0; v < V; ++v) r[v] = madd(n[v], k.ln2_hi, x[v]);
  for (int v = 0; v < V; ++v) r[v] = madd(n[v], k.ln2_lo, r[v]);
  for (int v = 0; v < V; ++v) r2[v] = wasm_f32x4_mul(r[v], r[v]);
  for (int v = 0; v < V; ++v) q01[v] = madd(r[v], k.q1, k.q0);
  for (int v = 0; v < V; ++v) q23[v] = madd(r[v], k.q3, k.q2);
  for (int v = 0; v < V; ++v) q45[v] = madd(r[v], k.q5, k.q4);
  for (int v = 0; v < V; ++v) q[v] = madd(r2[v], q45[v], q23[v]);
  for (int v = 0; v < V; ++v) q[v] = madd(r2[v], q[v], q01[v]);
  for (int v = 0; v < V; ++v) q[v] = madd(q[v], r2[v], r[v]);
  for (int v = 0; v < V; ++v) q[v] = wasm_f32x4_add(q[v], k.one);
  // 2^n as in exp_nonpositive, with 127 << 23 added after the shift: the bits of 1.f, a
  // constant already held (one register fewer; the same integer modulo 2^32).
  for (int v = 0; v < V; ++v) x[v] = wasm_f32x4_mul(q[v], wasm_i32x4_add(wasm_i32x4_shl(t[v], 23), k.one));
}

/// GELU (tanh approximation) of 4 lanes as x·σ(2u): e = e^(-2|u|) ≤ 1, then x / (1 + e) where
/// u ≥ 0 and x·e / (1 + e) where u < 0 (no overflow, no cancellation).
/// c = (√(2/π), 0.044715, -2, 0) splatted.
inline v128_t gelu_tanh4(v128_t x, const ExpConsts& k, const v128_t (&c)[4]) {
  const v128_t u = wasm_f32x4_mul(c[0], madd(wasm_f32x4_mul(x, x), wasm_f32x4_mul(c[1], x), x));
  const v128_t e = exp_nonpositive(wasm_f32x4_mul(wasm_f32x4_abs(u), c[2]), k);
  const v128_t num = wasm_v128_bitselect(wasm_f32x4_mul(x, e), x, wasm_f32x4_lt(u, c[3]));
  return wasm_f32x4_div(num, wasm_f32x4_add(k.one, e));
}

/// Maxima of each of 4 vectors, as one vector (the pmax analogue of hsum4).
inline v128_t hmax4(v128_t s0, v128_t s1, v128_t s2, v128_t s3) {
  const v128_t t0 = wasm_f32x4_pmax(wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7));
  const v128_t t1 = wasm_f32x4_pmax(wasm_i32x4_shuffle(s2, s3, 0, 4, 1, 5), wasm_i32x4_shuffle(s2, s3, 2, 6, 3, 7));
  return wasm_f32x4_pmax(wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5), wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7));
}

/// Softmax of short rows (n ≤ 4·NV ≤ 8) four rows at a time: each row is NV vectors (-inf padded),
/// the four row maxima and the four sums come out of one hmax4 / hsum4 each, and one vector
/// division gives the four reciprocals. Per-row passes would spend most of a short row on
/// horizontal reductions and scalar work; this is the lesson-sized case (T of a few tokens).
template <int NV>
void softmax_short_rows(int rows, int n, float* S, int lds) {
  const ExpConsts k = load_exp_consts();
  for (int r = 0; r < rows; r += 4) {
    const int nr = std::min(4, rows - r);
    v128_t x[4][NV], mx[4];
    for (int i = 0; i < 4; ++i) {
      const float* row = S + static_cast<size_t>(r + std::min(i, nr - 1)) * lds;  // missing rows: repeat the last
      for (int v = 0; v < NV; ++v) x[i][v] = load_or_ninf(row + 4 * v, n - 4 * v);
      mx[i] = NV == 1 ? x[i][0] : wasm_f32x4_pmax(x[i][0], x[i][NV - 1]);
    }
    const v128_t m = hmax4(mx[0], mx[1], mx[2], mx[3]);
    // A row of only -inf has m = -inf: subtract 0 instead (its exps are 0) and give it weights 0.
    const v128_t live = wasm_f32x4_gt(m, wasm_f32x4_splat(-std::numeric_limits<float>::infinity()));
    alignas(16) float ms[4];
    wasm_v128_store(ms, wasm_v128_and(m, live));
    v128_t sum[4];
    for (int i = 0; i < 4; ++i) {
      sum[i] = wasm_f32x4_splat(1.f);
      if (i >= nr) continue;  // a repeated row: no exps
      const v128_t mi = wasm_v128_load32_splat(ms + i);
      sum[i] = wasm_f32x4_splat(0.f);
      for (int v = 0; v < NV; ++v) {
        x[i][v] = exp_nonpositive(wasm_f32x4_sub(x[i][v], mi), k);
        sum[i] = wasm_f32x4_add(sum[i], x[i][v]);
      }
    }
    alignas(16) float inv[4];
    wasm_v128_store(inv, wasm_v128_and(wasm_f32x4_div(wasm_f32x4_splat(1.f), hsum4(sum[0], sum[1], sum[2], sum[3])), live));
    for (int i = 0; i < nr; ++i) {
      float* row = S + static_cast<size_t>(r + i) * lds;
      const v128_t f = wasm_v128_load32_splat(inv + i);
      for (int v = 0; v < NV; ++v) {
        const int cols = n - 4 * v;
        const v128_t y = wasm_f32x4_mul(x[i][v], f);
        if (cols >= 4) wasm_v128_store(row + 4 * v, y);
        else if (cols > 0) store_partial(row + 4 * v, y, cols);
      }
    }
  }
}

/// Maximum of x[0..n) and of `init` (vector passes; n mod 4 tail lanes scalar).
float row_max(int n, const float* x, float init) {
  const int n4 = n & ~3;
  v128_t m0 = wasm_f32x4_splat(init), m1 = m0;
  int j = 0;
  for (; j + 8 <= n4; j += 8) {
    m0 = wasm_f32x4_pmax(m0, wasm_v128_load(x + j));
    m1 = wasm_f32x4_pmax(m1, wasm_v128_load(x + j + 4));
  }
  if (j < n4) m0 = wasm_f32x4_pmax(m0, wasm_v128_load(x + j));
  m0 = wasm_f32x4_pmax(m0, m1);
  m0 = wasm_f32x4_pmax(m0, wasm_i32x4_shuffle(m0, m0, 2, 3, 0, 1));
  m0 = wasm_f32x4_pmax(m0, wasm_i32x4_shuffle(m0, m0, 1, 0, 3, 2));
  float m = wasm_f32x4_extract_lane(m0, 0);
  for (j = n4; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

/// x[j] <- e^(x[j] - m) for j < n (m ≥ every x[j], finite); returns Σ x[j].
float exp_sum(int n, float* x, float m) {
  const ExpConsts k = load_exp_consts();
  const int n4 = n & ~3;
  const v128_t mv = wasm_f32x4_splat(m);
  v128_t s0 = wasm_f32x4_splat(0.f);
  int j = 0;
  // Two vectors per iteration: their exps are independent chains side by side (one exp is a chain
  // of about ten dependent steps); the sum still adds the vectors in order, so the bits are those of
  // one vector at a time.
  for (; j + 8 <= n4; j += 8) {
    const v128_t e0 = exp_nonpositive(wasm_f32x4_sub(wasm_v128_load(x + j), mv), k);
    const v128_t e1 = exp_nonpositive(wasm_f32x4_sub(wasm_v128_load(x + j + 4), mv), k);
    wasm_v128_store(x + j, e0);
    wasm_v128_store(x + j + 4, e1);
    s0 = wasm_f32x4_add(wasm_f32x4_add(s0, e0), e1);
  }
  for (; j < n4; j += 4) {
    const v128_t e = exp_nonpositive(wasm_f32x4_sub(wasm_v128_load(x + j), mv), k);
    wasm_v128_store(x + j, e);
    s0 = wasm_f32x4_add(s0, e);
  }
  if (n4 < n) {
    const v128_t e = exp_nonpositive(wasm_f32x4_sub(load_or_ninf(x + n4, n - n4), mv), k);  // padding → 0
    store_partial(x + n4, e, n - n4);
    s0 = wasm_f32x4_add(s0, e);
  }
  s0 = wasm_f32x4_add(s0, wasm_i32x4_shuffle(s0, s0, 2, 3, 0, 1));
  s0 = wasm_f32x4_add(s0, wasm_i32x4_shuffle(s0, s0, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(s0, 0);
}

/// x[j] <- e^(x[j] - m) for j < n (m ≥ every x[j], finite), the exps of exp_sum without their sum:
/// with no chain from one iteration to the next, the exps of a row overlap freely. (exp_sum's sum
/// is such a chain, and under V8 11 it lives in a stack slot, so each iteration waits for a store
/// and a reload.)
void exp_row(int n, float* x, float m) {
  const ExpConsts k = load_exp_consts();
  const int n4 = n & ~3;
  const v128_t mv = wasm_f32x4_splat(m);
  int j = 0;
  constexpr int V = 4;  // vectors per iteration, in lock step (exp_nonpositive_n)
  for (; j + 4 * V <= n4; j += 4 * V) {
    v128_t e[V];
    for (int v = 0; v < V; ++v) e[v] = wasm_f32x4_sub(wasm_v128_load(x + j + 4 * v), mv);
    exp_nonpositive_n<V>(e, k);
    for (int v = 0; v < V; ++v) wasm_v128_store(x + j + 4 * v, e[v]);
  }
  for (; j < n4; j += 4) wasm_v128_store(x + j, exp_nonpositive(wasm_f32x4_sub(wasm_v128_load(x + j), mv), k));
  if (n4 < n) store_partial(x + n4, exp_nonpositive(wasm_f32x4_sub(load_or_ninf(x + n4, n - n4), mv), k), n - n4);
}

/// The sums of 4 rows x[0..3][0..n) side by side, as one vector: each row's vectors added in order,
/// then its lanes as (0 + 2) + (1 + 3) (hsum4): the bits of exp_sum's sum, in four independent
/// chains (one add latency per 4 vectors instead of per vector).
v128_t row_sums4(int n, float* const* x) {
  const int n4 = n & ~3;
  v128_t s[4];
  for (int i = 0; i < 4; ++i) s[i] = wasm_f32x4_splat(0.f);
  for (int j = 0; j < n4; j += 4)
    for (int i = 0; i < 4; ++i) s[i] = wasm_f32x4_add(s[i], wasm_v128_load(x[i] + j));
  if (n4 < n)  // the tail's missing lanes add +0, as exp_sum's padding does
    for (int i = 0; i < 4; ++i) s[i] = wasm_f32x4_add(s[i], load_partial(x[i] + n4, n - n4));
  return hsum4(s[0], s[1], s[2], s[3]);
}

/// Softmax of rows r .. r + nr (nr ≤ 4) of S, each of n > 8 entries, in place: per row a max pass
/// (row_max) and an exp pass (exp_row), then the four sums at once (row_sums4; the rows, 4·n
/// floats, are still in L1), then a scale pass per row by 1/sum, or, with inv_out, no scale pass:
/// inv_out[i] = 1/sum (0 for a row of only -inf). A row of only -inf becomes zeros. The same
/// operations per element as a row at a time, so the same bits.
void softmax_rows4(int nr, int n, float* S, int lds, float* inv_out) {
  const float ninf = -std::numeric_limits<float>::infinity();
  float* x[4];
  bool live[4] = {false, false, false, false};
  int first = -1;
  for (int i = 0; i < nr; ++i) {
    x[i] = S + static_cast<size_t>(i) * lds;
    const float m = row_max(n, x[i], ninf);
    if (!(m > ninf)) {  // all -inf: zeros by convention
      std::memset(x[i], 0, sizeof(float) * n);
      continue;
    }
    exp_row(n, x[i], m);
    live[i] = true;
    if (first < 0) first = i;
  }
  if (inv_out)
    for (int i = 0; i < nr; ++i) inv_out[i] = 0.f;  // rows of only -inf: zeros times 0
  if (first < 0) return;
  for (int i = 0; i < 4; ++i)
    if (i >= nr || !live[i]) x[i] = x[first];  // a missing or all -inf row: sum another, unused
  alignas(16) float sums[4];
  wasm_v128_store(sums, row_sums4(n, x));
  const int n4 = n & ~3;
  for (int i = 0; i < nr; ++i) {
    if (!live[i]) continue;
    // The maximum contributes e^0 = 1, so the sum is ≥ 1.
    if (inv_out) {
      inv_out[i] = 1.f / sums[i];
      continue;
    }
    const v128_t inv = wasm_f32x4_splat(1.f / sums[i]);
    for (int j = 0; j < n4; j += 4) wasm_v128_store(x[i] + j, wasm_f32x4_mul(wasm_v128_load(x[i] + j), inv));
    if (n4 < n) store_partial(x[i] + n4, wasm_f32x4_mul(load_partial(x[i] + n4, n - n4), inv), n - n4);
  }
}

}  // namespace

/// Online-softmax step over a tile of scores (see kernels.hpp): vector max and exp-sum passes
/// per row, the running max m, sum l and the rescale factor alpha per row.
void softmax_online_tile(int rows, int n, float* S, int lds, float* m, float* l, float* alpha) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int r = 0; r < rows; ++r) {
    float* x = S + static_cast<size_t>(r) * lds;
    const float mb = row_max(n, x, m[r]);
    if (!(mb > ninf)) {  // only -inf so far: nothing to add
      std::memset(x, 0, sizeof(float) * n);
      alpha[r] = 1.f;
      continue;
    }
    alpha[r] = m[r] > ninf ? std::exp(m[r] - mb) : 0.f;
    l[r] = l[r] * alpha[r] + exp_sum(n, x, mb);
    m[r] = mb;
  }
}

/// Vector rescale of rows (see kernels.hpp).
void scale_rows(int rows, int cols, float* X, int ldx, const float* f) {
  const int c4 = cols & ~3;
  for (int r = 0; r < rows; ++r) {
    if (f[r] == 1.f) continue;
    float* x = X + static_cast<size_t>(r) * ldx;
    const v128_t fv = wasm_f32x4_splat(f[r]);
    int c = 0;
    for (; c < c4; c += 4) wasm_v128_store(x + c, wasm_f32x4_mul(wasm_v128_load(x + c), fv));
    for (; c < cols; ++c) x[c] *= f[r];
  }
}

void gelu_tanh(size_t n, float* x) {
  const ExpConsts k = load_exp_consts();
  alignas(16) static const float kGelu[4] = {0.79788456080286536f, 0.044715f, -2.f, 0.f};
  const float* volatile opaque = kGelu;  // loaded once, not rebuilt as v128.const in the loop
  const float* t = opaque;
  const v128_t c[4] = {wasm_v128_load32_splat(t), wasm_v128_load32_splat(t + 1), wasm_v128_load32_splat(t + 2),
                       wasm_v128_load32_splat(t + 3)};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, gelu_tanh4(wasm_v128_load(x + i), k, c));
  if (i < n) {  // the last 1–3 values through a zero-padded vector
    alignas(16) float tail[4] = {0.f, 0.f, 0.f, 0.f};
    std::memcpy(tail, x + i, sizeof(float) * (n - i));
    wasm_v128_store(tail, gelu_tanh4(wasm_v128_load(tail), k, c));
    std::memcpy(x + i, tail, sizeof(float) * (n - i));
  }
}

/// Row-wise stable softmax of S[rows, n] (leading dimension lds) in place: rows of up to 8 four at
/// a time (softmax_short_rows), longer ones four rows at a time (softmax_rows4). See kernels.hpp.
void softmax_rows(int rows, int n, float* S, int lds) {
  if (n <= 0) return;
  if (n <= 4) return softmax_short_rows<1>(rows, n, S, lds);
  if (n <= 8) return softmax_short_rows<2>(rows, n, S, lds);
  for (int r = 0; r < rows; r += 4) softmax_rows4(std::min(4, rows - r), n, S + static_cast<size_t>(r) * lds, lds, nullptr);
}

/// softmax_rows without its scale pass (see kernels.hpp): rows of up to 8 are normalized as
/// softmax_rows does them (inv = 1), longer ones keep their exps and give 1/sum.
void softmax_rows_unnormalized(int rows, int n, float* S, int lds, float* inv) {
  if (n <= 8) {
    softmax_rows(rows, n, S, lds);
    std::fill(inv, inv + rows, 1.f);
    return;
  }
  for (int r = 0; r < rows; r += 4)
    softmax_rows4(std::min(4, rows - r), n, S + static_cast<size_t>(r) * lds, lds, inv + r);
}

}  // namespace kernels
}  // namespace mha

#endif  // MHA_SIMD128

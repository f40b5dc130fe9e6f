// Float64 reference of one multi-head attention forward, written from the formula with plain
// loops and no code shared with the core (cpp/src): the oracle of the native unit tests
// (cpp/tests/core_test.cpp) and of the fuzzer's contract checks (cpp/fuzz/fuzz_mha.cpp).
// Header-only; test support, not part of the library.
//
// Source: Vaswani et al., "Attention Is All You Need" (2017), eq. 1 and §3.2.2:
//   head_i     = softmax(Q_i·K_gᵀ·scale_i + M)·V_g,   Q_i = x_q·W_Q^(i) + b_Q^(i), etc.
//   MultiHead  = Concat(head_1, ..., head_h)·W_O + b_O
// with grouped-query heads (Ainslie et al. 2023, "GQA"): query head i reads key/value head
// g = i / (h / kv_heads) (mha::Resolved::kv_of), multi-query being kv_heads = 1.
// Masks as torch.nn.MultiheadAttention: the additive attn_mask and an additive (float)
// key_padding_add are added to the scaled score, a nonzero key_padding_mask entry or causal (key
// j > query t) sets the score to -inf. Softmax
// subtracts the row maximum; a row whose keys are all masked gets weights 0 (and contributes 0 to
// the head's output), never NaN.
//
// The layer options of mha::Config, read from the resolved configuration, each written from its
// paper (query t at position t, key j at j; a forward has no position offset):
//   RoPE (Su et al. 2021, RoFormer §3.4): Q of head i and K of kv head g rotated after the bias,
//     pair p < r/2 of the first r = rope_width dims by the angle pos·θ^(−2p/r); the pair is
//     (x[2p], x[2p+1]) interleaved, (x[p], x[p + r/2]) in halves.
//   on the scaled score S, in this order, before the masks:
//     soft-cap  S ← cap·tanh(S / cap)   (Gemma 2);   ALiBi  S ← S − slope_i·|t − j|  (Press et al. 2022);
//     window    S ← −∞ unless t − left ≤ j ≤ t + right (−1 = unbounded; Longformer, Mistral).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "mha/attention.hpp"
#include "mha/config.hpp"

namespace mha_test {

/// One forward's inputs, row-major (the same layouts as mha::ForwardArgs, but no defaults: for
/// self-attention pass the query as key and value and tk = tq).
struct ReferenceInput {
  int batch = 0, tq = 0, tk = 0;                  ///< B, Tq, Tk
  const float* query = nullptr;                   ///< [B, Tq, d_model]
  const float* key = nullptr;                     ///< [B, Tk, k_dim]
  const float* value = nullptr;                   ///< [B, Tk, v_dim]
  bool causal = false;                            ///< query t may not attend key j > t
  const uint8_t* key_padding_mask = nullptr;      ///< [B, Tk], nonzero = masked; or null
  const float* key_padding_add = nullptr;         ///< [B, Tk], added to the scores of key j; or null
  const float* attn_mask = nullptr;               ///< additive, layout by attn_mask_kind
  mha::MaskKind attn_mask_kind = mha::MaskKind::kNone;  ///< kShared [Tq, Tk], kPerHead [B·h, Tq, Tk]
};

struct ReferenceResult {
  std::vector<double> output;   ///< [B, Tq, d_model]
  std::vector<double> weights;  ///< [B, h, Tq, Tk], per head
  std::vector<double> q, k;     ///< [B, Tq, Σd_k], [B, Tk, Σ_kv d_k]: after the bias and RoPE
  std::vector<double> scores;   ///< [B, h, Tq, Tk]: scaled, soft-capped, ALiBi-biased; before window and masks
  double max_score = 0;         ///< max |score| (as `scores`, and before soft-capping) over every score
};

/// The forward of the layer with resolved configuration `r` and packed weights `w` ([in, out]
/// row-major: W_Q [d_model, q_width], W_K [k_dim, k_width], W_V [v_dim, v_width],
/// W_O [o_width, d_model]; biases [out] or null = no bias) on `in`, in float64.
inline ReferenceResult reference_mha(const mha::Resolved& r, const mha::WeightsView& w, const ReferenceInput& in) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  // y[M, out] = x[M, in]·W[in, out] + b
  auto proj = [](const float* x, int M, int n_in, const float* W, int n_out, const float* b) {
    std::vector<double> y(size_t(M) * n_out);
    for (int m = 0; m < M; ++m)
      for (int o = 0; o < n_out; ++o) {
        double s = b ? double(b[o]) : 0.0;
        for (int i = 0; i < n_in; ++i) s += double(x[size_t(m) * n_in + i]) * W[size_t(i) * n_out + o];
        y[size_t(m) * n_out + o] = s;
      }
    return y;
  };
  const int B = in.batch, Tq = in.tq, Tk = in.tk, h = r.num_heads;
  std::vector<double> Q = proj(in.query, B * Tq, r.d_model, w.wq, r.q_width, w.bq);
  std::vector<double> K = proj(in.key, B * Tk, r.k_dim, w.wk, r.k_width, w.bk);
  // RoPE: rotate `width` dims of the head at column `off` of each row of X [B·T, ld], row m at m % T.
  auto rope = [&](std::vector<double>& X, int T, int ld, int off, int width) {
    const int half = width / 2;
    for (size_t m = 0; m < X.size() / size_t(ld); ++m) {
      const double pos = double(m % size_t(T));
      double* x = &X[m * ld + off];
      for (int p = 0; p < half; ++p) {
        const double a = pos * std::pow(double(r.rope_base), -2.0 * p / width);
        const int i0 = r.rope_interleaved ? 2 * p : p, i1 = r.rope_interleaved ? 2 * p + 1 : p + half;
        const double x0 = x[i0], x1 = x[i1];
        x[i0] = x0 * std::cos(a) - x1 * std::sin(a);
        x[i1] = x0 * std::sin(a) + x1 * std::cos(a);
      }
    }
  };
  if (r.has_rope()) {
    for (int i = 0; i < h; ++i) rope(Q, Tq, r.q_width, r.q_off[i], r.rope_width(i));
    for (int g = 0; g < r.kv_heads; ++g) rope(K, Tk, r.k_width, r.k_off[g], r.rope_width(g * (h / r.kv_heads)));
  }
  const std::vector<double> V = proj(in.value, B * Tk, r.v_dim, w.wv, r.v_width, w.bv);
  std::vector<double> concat(size_t(B) * Tq * r.o_width, 0.0);  // [B, Tq, o_width]
  ReferenceResult ref;
  ref.weights.assign(size_t(B) * h * Tq * Tk, 0.0);
  ref.scores.assign(ref.weights.size(), 0.0);
  std::vector<double> s(Tk);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < h; ++i) {
      const int g = r.kv_of(i);
      for (int t = 0; t < Tq; ++t) {
        double mx = kNegInf;
        for (int j = 0; j < Tk; ++j) {
          double d = 0;
          for (int c = 0; c < r.dk[i]; ++c)
            d += Q[(size_t(b) * Tq + t) * r.q_width + r.q_off[i] + c] * K[(size_t(b) * Tk + j) * r.k_width + r.k_off[g] + c];
          d *= r.scale[i];
          ref.max_score = std::max(ref.max_score, std::fabs(d));
          if (r.softcap > 0.f) d = double(r.softcap) * std::tanh(d / double(r.softcap));
          if (!r.alibi_slopes.empty()) d -= double(r.alibi_slopes[i]) * std::fabs(double(t) - double(j));
          ref.max_score = std::max(ref.max_score, std::fabs(d));
          ref.scores[((size_t(b) * h + i) * Tq + t) * Tk + j] = d;
          if ((r.window_left >= 0 && j < int64_t(t) - r.window_left) || (r.window_right >= 0 && j > int64_t(t) + r.window_right)) d = kNegInf;
          if (in.attn_mask_kind == mha::MaskKind::kShared) d += in.attn_mask[size_t(t) * Tk + j];
          if (in.attn_mask_kind == mha::MaskKind::kPerHead) d += in.attn_mask[((size_t(b) * h + i) * Tq + t) * Tk + j];
          if (in.key_padding_add) d += in.key_padding_add[size_t(b) * Tk + j];
          if (in.key_padding_mask && in.key_padding_mask[size_t(b) * Tk + j]) d = kNegInf;
          if (in.causal && j > t) d = kNegInf;
          s[j] = d;
          mx = std::max(mx, d);
        }
        double sum = 0;
        for (int j = 0; j < Tk; ++j) sum += (s[j] = mx == kNegInf ? 0.0 : std::exp(s[j] - mx));
        for (int j = 0; j < Tk; ++j) {
          const double a = sum > 0 ? s[j] / sum : 0.0;
          ref.weights[((size_t(b) * h + i) * Tq + t) * Tk + j] = a;
          for (int c = 0; c < r.dv[i]; ++c)
            concat[(size_t(b) * Tq + t) * r.o_width + r.o_off[i] + c] += a * V[(size_t(b) * Tk + j) * r.v_width + r.v_off[g] + c];
        }
      }
    }
  ref.q = std::move(Q);
  ref.k = std::move(K);
  ref.output.assign(size_t(B) * Tq * r.d_model, 0.0);
  for (size_t m = 0; m < size_t(B) * Tq; ++m)
    for (int o = 0; o < r.d_model; ++o) {
      double acc = w.bo ? double(w.bo[o]) : 0.0;
      for (int c = 0; c < r.o_width; ++c) acc += concat[m * r.o_width + c] * w.wo[size_t(c) * r.d_model + o];
      ref.output[m * r.d_model + o] = acc;
    }
  return ref;
}

}  // namespace mha_test

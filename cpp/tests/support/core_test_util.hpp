// Shared pieces of the core's GoogleTest suites (cpp/tests/core_test*.cpp): a random test case's
// shape, random weights of a resolved configuration, a layer made with them, and the float64
// reference (support/reference_mha.hpp) of a case with its masks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "mha/attention.hpp"
#include "support/reference_mha.hpp"

namespace core_test {

/// A random case: batch, query and key lengths, d_model, heads, K/V heads, key and value widths,
/// per-head widths, and which of bias, causal, key padding mask and attention mask it uses.
struct Case {
  int B, Tq, Tk, d_model, h, g, k_dim, v_dim;
  std::vector<int> dk, dv;
  bool bias, causal, kpm, mask;
};

/// n values uniform in [-a, a].
inline std::vector<float> rnd(std::mt19937& r, size_t n, float a = 1.f) {
  std::uniform_real_distribution<float> u(-a, a);
  std::vector<float> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

/// Random weights (uniform in [-1, 1]) of a layer with the resolved configuration R, biases when R.bias.
struct Weights {
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  mha::WeightsView view() const {
    auto p = [](const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); };
    return {p(wq), p(wk), p(wv), p(wo), p(bq), p(bk), p(bv), p(bo)};
  }
};

/// Random weights of the resolved configuration R (biases when R.bias), drawn from rng.
inline Weights random_weights(std::mt19937& rng, const mha::Resolved& R) {
  Weights W;
  W.wq = rnd(rng, size_t(R.d_model) * R.q_width);
  W.wk = rnd(rng, size_t(R.k_dim) * R.k_width);
  W.wv = rnd(rng, size_t(R.v_dim) * R.v_width);
  W.wo = rnd(rng, size_t(R.o_width) * R.d_model);
  if (R.bias) { W.bq = rnd(rng, R.q_width); W.bk = rnd(rng, R.k_width); W.bv = rnd(rng, R.v_width); W.bo = rnd(rng, R.d_model); }
  return W;
}

/// A layer of a configuration with random weights, and its resolved configuration and weights
/// (for the reference).
struct RandomLayer {
  mha::Resolved R;
  Weights W;
  std::unique_ptr<mha::Layer> layer;
};

/// Resolves cfg and creates L.layer with random_weights (call under ASSERT_NO_FATAL_FAILURE).
inline void make_random_layer(std::mt19937& rng, const mha::Config& cfg, RandomLayer& L) {
  ASSERT_TRUE(mha::resolve(cfg, L.R).ok());
  L.W = random_weights(rng, L.R);
  ASSERT_TRUE(mha::Layer::create(cfg, L.W.view(), L.layer).ok());
}

// The float64 reference (support/reference_mha.hpp) of case c: masks only where c asks for them,
// attn_mask shared [Tq, Tk]; the key padding mask boolean (kpm) or, when kpm_add is given, additive.
inline mha_test::ReferenceResult reference(const Case& c, const mha::Resolved& R, const Weights& W, const std::vector<float>& q,
                                           const std::vector<float>& k, const std::vector<float>& v,
                                           const std::vector<uint8_t>& kpm, const std::vector<float>& mask,
                                           const float* kpm_add = nullptr) {
  mha_test::ReferenceInput in;
  in.batch = c.B; in.tq = c.Tq; in.tk = c.Tk;
  in.query = q.data(); in.key = k.data(); in.value = v.data();
  in.causal = c.causal;
  in.key_padding_mask = c.kpm && !kpm_add ? kpm.data() : nullptr;
  in.key_padding_add = c.kpm ? kpm_add : nullptr;
  in.attn_mask = c.mask ? mask.data() : nullptr;
  in.attn_mask_kind = c.mask ? mha::MaskKind::kShared : mha::MaskKind::kNone;
  return mha_test::reference_mha(R, W.view(), in);
}

}  // namespace core_test

// Native unit tests of the core (GoogleTest): the Layer against a plain float64 loop over the
// formula (support/reference_mha.hpp, shared with the fuzzer), on random configurations (GQA,
// uneven per-head widths, masks, cross-attention), the streaming path, the KV cache against a
// causal forward, and configuration errors. The score modifiers, RoPE and the passport:
// core_test_mods.cpp (the same program, core_test).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "mha/attention.hpp"
#include "mha/kv_cache.hpp"
#include "support/core_test_util.hpp"

namespace {

using namespace core_test;

TEST(Layer, MatchesFloat64ReferenceOnRandomConfigs) {
  std::mt19937 rng(1234);
  for (int it = 0; it < 150; ++it) {
    Case c;
    std::uniform_int_distribution<int> U(1, 6);
    c.h = U(rng);
    const int reps[] = {1, 2, 3};
    c.g = c.h % reps[it % 3] == 0 ? c.h / reps[it % 3] : c.h;
    const bool per_head = it % 5 == 4;
    if (per_head) c.g = c.h;
    c.d_model = U(rng) * 4;
    c.k_dim = it % 4 == 1 ? U(rng) * 3 : c.d_model;
    c.v_dim = it % 4 == 1 ? U(rng) * 2 : c.d_model;
    c.B = U(rng) % 3 + 1;
    c.Tq = std::uniform_int_distribution<int>(1, 70)(rng);
    c.Tk = c.k_dim == c.d_model && it % 2 ? c.Tq : std::uniform_int_distribution<int>(1, 70)(rng);
    c.bias = it % 2 == 0;
    c.causal = it % 3 == 0;
    c.kpm = it % 4 == 2;
    c.mask = it % 7 == 3;
    mha::Config cfg;
    cfg.d_model = c.d_model; cfg.num_heads = c.h; cfg.kv_heads = c.g; cfg.k_dim = c.k_dim; cfg.v_dim = c.v_dim; cfg.bias = c.bias;
    cfg.d_k = U(rng); cfg.d_v = U(rng);
    if (per_head) for (int i = 0; i < c.h; ++i) { cfg.head_dk.push_back(U(rng)); cfg.head_dv.push_back(U(rng)); }
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    auto& [R, W, layer] = L;
    const bool self = c.k_dim == c.d_model && c.v_dim == c.d_model && c.Tk == c.Tq && it % 2;
    auto q = rnd(rng, size_t(c.B) * c.Tq * c.d_model, 2.f);
    auto k = self ? q : rnd(rng, size_t(c.B) * c.Tk * c.k_dim, 2.f);
    auto v = self ? q : rnd(rng, size_t(c.B) * c.Tk * c.v_dim, 2.f);
    std::vector<uint8_t> kpm(size_t(c.B) * c.Tk);
    for (auto& m : kpm) m = rng() % 4 == 0;
    // Every other key padding case passes the additive form: random offsets, -inf where padded.
    const bool kpm_additive = c.kpm && it % 8 == 6;
    std::vector<float> kpm_add = rnd(rng, kpm.size(), 2.f);
    for (size_t j = 0; j < kpm.size(); ++j) if (kpm[j]) kpm_add[j] = -std::numeric_limits<float>::infinity();
    std::vector<float> mask = rnd(rng, size_t(c.Tq) * c.Tk, 3.f);
    if (c.mask) mask[0] = -std::numeric_limits<float>::infinity();
    const mha_test::ReferenceResult ref = reference(c, R, W, q, k, v, kpm, mask, kpm_additive ? kpm_add.data() : nullptr);
    std::vector<float> out(ref.output.size()), weights(ref.weights.size());
    mha::ForwardArgs a;
    a.batch = c.B; a.tq = c.Tq; a.tk = c.Tk;
    a.query = q.data(); a.key = self ? nullptr : k.data(); a.value = self ? nullptr : v.data();
    a.causal = c.causal;
    a.key_padding_mask = c.kpm && !kpm_additive ? kpm.data() : nullptr;
    a.key_padding_add = kpm_additive ? kpm_add.data() : nullptr;
    a.attn_mask = c.mask ? mask.data() : nullptr;
    a.attn_mask_kind = c.mask ? mha::MaskKind::kShared : mha::MaskKind::kNone;
    a.output = out.data();
    a.weights = weights.data();
    mha::Status s = layer->forward(a);
    ASSERT_TRUE(s.ok()) << s.message;
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref.output[i], 2e-4 * (1 + std::abs(ref.output[i]))) << "it " << it << " out " << i;
    for (size_t i = 0; i < weights.size(); ++i) ASSERT_NEAR(weights[i], ref.weights[i], 2e-5) << "it " << it << " w " << i;
    // Without weights (the whole-row path) the output is the same.
    a.weights = nullptr;
    std::vector<float> out2(out.size());
    a.output = out2.data();
    ASSERT_TRUE(layer->forward(a).ok());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out2[i], out[i], 1e-5 * (1 + std::abs(out[i])));
  }
}

TEST(Layer, StreamingPathEqualsWholeRowPathForLongKeys) {
  // needWeights = false with more than one key tile (512 keys) takes the online-softmax path.
  // (The causal iterations attend to at most Tq < 512 keys, one tile: they check the causal cut.)
  std::mt19937 rng(99);
  for (int it = 0; it < 12; ++it) {
    mha::Config cfg;
    cfg.d_model = 24; cfg.num_heads = 3; cfg.kv_heads = it % 2 ? 1 : 3; cfg.bias = true;
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    auto& [R, W, layer] = L;
    const int B = 2, Tq = it % 3 == 0 ? 1 + it : 70 + it * 13, Tk = 513 + it * 97;  // Tq < 64: a short scores tile
    auto q = rnd(rng, size_t(B) * Tq * 24, 3.f), k = rnd(rng, size_t(B) * Tk * 24, 3.f), v = rnd(rng, size_t(B) * Tk * 24);
    std::vector<uint8_t> kpm(size_t(B) * Tk, 0);
    for (int j = 0; j < Tk; ++j) kpm[Tk + j] = j % 3 == 0 || j > Tk - 40;  // second sequence padded
    if (it % 3 == 2) for (int j = 0; j < Tk; ++j) kpm[j] = 1;            // first sequence fully masked
    std::vector<float> mask = rnd(rng, size_t(Tq) * Tk, 2.f);
    const int lossy = std::min(5, Tq - 1);                                   // a row that loses its later keys
    for (int j = 556; j < Tk; ++j) mask[size_t(lossy) * Tk + j] = -INFINITY;  // from inside the 2nd tile
    mha::ForwardArgs a;
    a.batch = B; a.tq = Tq; a.tk = Tk; a.query = q.data(); a.key = k.data(); a.value = v.data();
    a.causal = it % 4 == 1;
    a.key_padding_mask = it % 4 != 3 ? kpm.data() : nullptr;
    a.attn_mask = it % 2 ? mask.data() : nullptr;
    a.attn_mask_kind = it % 2 ? mha::MaskKind::kShared : mha::MaskKind::kNone;
    std::vector<float> w(size_t(B) * 3 * Tq * Tk), o1(size_t(B) * Tq * 24), o2(o1.size());
    a.output = o1.data(); a.weights = w.data();
    ASSERT_TRUE(layer->forward(a).ok());
    a.output = o2.data(); a.weights = nullptr;
    ASSERT_TRUE(layer->forward(a).ok());
    for (size_t i = 0; i < o1.size(); ++i) {
      ASSERT_TRUE(std::isfinite(o2[i]));
      ASSERT_NEAR(o2[i], o1[i], 2e-5 * (1 + std::abs(o1[i]))) << "it " << it << " i " << i;
    }
  }
}

TEST(Layer, LongSelfAttentionMatchesReference) {
  // Self-attention past the fused small-input path: K/V projected and packed in several runs
  // of rows, queries in several tiles, odd head widths (panel padding in the fused W_Q|W_K|W_V),
  // batch > 1, causal and padding masks; with and without weights (streaming path for T > 512).
  std::mt19937 rng(2024);
  const int Ts[] = {129, 600, 1100};
  for (int it = 0; it < 6; ++it) {
    Case c{};
    c.B = 1 + it % 2; c.Tq = c.Tk = Ts[it % 3]; c.d_model = 20; c.h = it % 2 ? 2 : 4; c.g = c.h;
    c.k_dim = c.v_dim = c.d_model;
    c.bias = it != 3; c.causal = it % 3 != 1; c.kpm = it % 2 == 1; c.mask = false;
    mha::Config cfg;
    cfg.d_model = c.d_model; cfg.num_heads = c.h; cfg.bias = c.bias;
    if (it % 2) { cfg.head_dk = {5, 3}; cfg.head_dv = {7, 2}; }
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    auto& [R, W, layer] = L;
    auto q = rnd(rng, size_t(c.B) * c.Tq * c.d_model, 2.f);
    std::vector<uint8_t> kpm(size_t(c.B) * c.Tk);
    for (auto& m : kpm) m = rng() % 5 == 0;
    std::vector<float> mask;
    const bool kpm_additive = it == 5;  // the additive form over several key tiles
    std::vector<float> kpm_add = rnd(rng, kpm.size(), 2.f);
    for (size_t j = 0; j < kpm.size(); ++j) if (kpm[j]) kpm_add[j] = -std::numeric_limits<float>::infinity();
    const mha_test::ReferenceResult ref = reference(c, R, W, q, q, q, kpm, mask, kpm_additive ? kpm_add.data() : nullptr);
    for (int nw = 0; nw < 2; ++nw) {
      std::vector<float> out(ref.output.size()), weights(nw ? ref.weights.size() : 0);
      mha::ForwardArgs a;
      a.batch = c.B; a.tq = c.Tq; a.query = q.data(); a.causal = c.causal;
      a.key_padding_mask = c.kpm && !kpm_additive ? kpm.data() : nullptr;
      a.key_padding_add = kpm_additive ? kpm_add.data() : nullptr;
      a.output = out.data(); a.weights = nw ? weights.data() : nullptr;
      mha::Status s = layer->forward(a);
      ASSERT_TRUE(s.ok()) << s.message;
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_NEAR(out[i], ref.output[i], 2e-4 * (1 + std::abs(ref.output[i]))) << "it " << it << " nw " << nw << " out " << i;
      for (size_t i = 0; i < weights.size(); ++i) ASSERT_NEAR(weights[i], ref.weights[i], 2e-5) << "it " << it << " w " << i;
    }
  }
}

TEST(Layer, OutputOverTheQueryGivesTheSameBits) {
  // ForwardArgs::output may be the query buffer (the JS API writes the output over its staged
  // query): the fused small path, K/V and queries in several tiles over two batch elements,
  // cross-attention, RoPE on the queries, with and without weights. Same bits as separate buffers.
  std::mt19937 rng(7);
  const int Ts[] = {40, 300, 700};
  for (int it = 0; it < 6; ++it) {
    mha::Config cfg;
    cfg.d_model = 16; cfg.num_heads = 4; cfg.kv_heads = it % 2 ? 2 : 4; cfg.bias = true;
    cfg.rope = it >= 3;
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    const bool cross = it % 3 == 2;
    const int B = 2, Tq = Ts[it % 3], Tk = cross ? 150 : Tq;
    const auto q = rnd(rng, size_t(B) * Tq * 16, 2.f), k = rnd(rng, size_t(B) * Tk * 16, 2.f);
    for (int nw = 0; nw < 2; ++nw) {
      std::vector<float> sep(q.size()), over = q, w1(nw ? size_t(B) * 4 * Tq * Tk : 0), w2(w1.size());
      mha::ForwardArgs a;
      a.batch = B; a.tq = Tq; a.tk = Tk; a.causal = !cross;
      if (cross) { a.key = k.data(); a.value = k.data(); }
      a.query = q.data(); a.output = sep.data(); a.weights = nw ? w1.data() : nullptr;
      ASSERT_TRUE(L.layer->forward(a).ok());
      a.query = over.data(); a.output = over.data(); a.weights = nw ? w2.data() : nullptr;
      ASSERT_TRUE(L.layer->forward(a).ok());
      for (size_t i = 0; i < sep.size(); ++i) ASSERT_EQ(over[i], sep[i]) << "it " << it << " nw " << nw << " i " << i;
      ASSERT_EQ(w1, w2) << "it " << it;
    }
  }
}

TEST(KVCache, StepsEqualCausalForward) {
  std::mt19937 rng(7);
  mha::Config cfg;
  cfg.d_model = 16; cfg.num_heads = 4; cfg.kv_heads = 2;
  RandomLayer L;
  ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
  auto& [R, W, layer] = L;
  const int B = 2, T = 11;
  auto x = rnd(rng, size_t(B) * T * 16);
  std::vector<float> full(x.size());
  mha::ForwardArgs a;
  a.batch = B; a.tq = T; a.query = x.data(); a.causal = true; a.output = full.data();
  ASSERT_TRUE(layer->forward(a).ok());
  std::unique_ptr<mha::KVCache> cache;
  ASSERT_TRUE(mha::KVCache::create(layer.get(), T, B, cache).ok());
  // Steps of 1, 3, 2, 5 tokens.
  int t = 0;
  for (int n : {1, 3, 2, 5}) {
    std::vector<float> xs(size_t(B) * n * 16), out(xs.size());
    for (int b = 0; b < B; ++b)
      std::copy(x.begin() + (size_t(b) * T + t) * 16, x.begin() + (size_t(b) * T + t + n) * 16, xs.begin() + size_t(b) * n * 16);
    ASSERT_TRUE(cache->step(xs.data(), n, out.data(), nullptr).ok());
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < n * 16; ++i) ASSERT_NEAR(out[size_t(b) * n * 16 + i], full[(size_t(b) * T + t) * 16 + i], 1e-5);
    t += n;
  }
  EXPECT_EQ(cache->length(), T);
  std::vector<float> one(size_t(B) * 16), o(one.size());
  mha::Status s = cache->step(one.data(), 1, o.data(), nullptr);
  EXPECT_EQ(s.code, mha::Code::kInvalidArgument);
  EXPECT_EQ(s.argument, "max_len");
  EXPECT_NE(s.render().find("max_len = 11"), std::string::npos) << s.render();
}

TEST(Layer, NonFiniteAdditiveKeyPaddingMaskIsNamed) {
  std::mt19937 rng(3);
  mha::Config cfg;
  cfg.d_model = 8; cfg.num_heads = 2;
  RandomLayer L;
  ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
  auto& [R, W, layer] = L;
  const int B = 2, T = 3;
  auto q = rnd(rng, size_t(B) * T * 8);
  std::vector<float> kpm_add(size_t(B) * T, 0.f), out(q.size());
  kpm_add[0] = -std::numeric_limits<float>::infinity();  // allowed: masks key 0 of sequence 0
  mha::ForwardArgs a;
  a.batch = B; a.tq = T; a.query = q.data(); a.output = out.data(); a.key_padding_add = kpm_add.data();
  ASSERT_TRUE(layer->forward(a).ok());
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
  for (float x : bad) {
    kpm_add[4] = x;  // [1, 1]
    const mha::Status s = layer->forward(a);
    EXPECT_EQ(s.code, mha::Code::kNonFinite);
    EXPECT_EQ(s.argument, "key_padding_mask");
    EXPECT_EQ(s.index, (std::vector<int64_t>{1, 1}));
    EXPECT_TRUE(s.batch_first);
    EXPECT_NE(s.render().find("key_padding_mask[1, 1] is "), std::string::npos) << s.render();
  }
}

TEST(Config, Errors) {
  mha::Config c;
  c.d_model = 24; c.num_heads = 5;
  mha::Resolved r;
  mha::Status s = mha::resolve(c, r);
  EXPECT_EQ(s.code, mha::Code::kInvalidConfig);
  EXPECT_EQ(s.argument, "num_heads");
  EXPECT_EQ(s.message, "{num_heads} must divide {d_model} when {d_k} is not given: {d_model} = 24 is not divisible by {num_heads} = 5");
  EXPECT_EQ(s.render(), "num_heads must divide d_model when d_k is not given: d_model = 24 is not divisible by num_heads = 5");
  c.num_heads = 4; c.kv_heads = 3;
  s = mha::resolve(c, r);
  EXPECT_EQ(s.code, mha::Code::kInvalidConfig);
  EXPECT_EQ(s.argument, "kv_heads");
  EXPECT_TRUE(s.index.empty());
  EXPECT_EQ(s.bytes, 0);
}

}  // namespace

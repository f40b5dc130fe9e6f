// Native unit tests of the core (GoogleTest): the Layer against a plain float64 loop over the
// formula (support/reference_mha.hpp, shared with the fuzzer), on random configurations (GQA,
// uneven per-head widths, masks, cross-attention), and the KV cache against a causal forward.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "mha/attention.hpp"
#include "mha/kv_cache.hpp"
#include "support/reference_mha.hpp"

namespace {

struct Case {
  int B, Tq, Tk, d_model, h, g, k_dim, v_dim;
  std::vector<int> dk, dv;
  bool bias, causal, kpm, mask;
};

std::vector<float> rnd(std::mt19937& r, size_t n, float a = 1.f) {
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

Weights random_weights(std::mt19937& rng, const mha::Resolved& R) {
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
void make_random_layer(std::mt19937& rng, const mha::Config& cfg, RandomLayer& L) {
  ASSERT_TRUE(mha::resolve(cfg, L.R).ok());
  L.W = random_weights(rng, L.R);
  ASSERT_TRUE(mha::Layer::create(cfg, L.W.view(), L.layer).ok());
}

// The float64 reference (support/reference_mha.hpp) of case c: masks only where c asks for them,
// attn_mask shared [Tq, Tk]; the key padding mask boolean (kpm) or, when kpm_add is given, additive.
mha_test::ReferenceResult reference(const Case& c, const mha::Resolved& R, const Weights& W, const std::vector<float>& q,
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
    // Without weights (the block path) the output is the same.
    a.weights = nullptr;
    std::vector<float> out2(out.size());
    a.output = out2.data();
    ASSERT_TRUE(layer->forward(a).ok());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out2[i], out[i], 1e-5 * (1 + std::abs(out[i])));
  }
}

TEST(Layer, StreamingPathEqualsBlockPathForLongKeys) {
  // needWeights = false with more than one key block (512 keys) takes the online-softmax path.
  // (The causal iterations attend to at most Tq < 512 keys, one block: they check the causal cut.)
  std::mt19937 rng(99);
  for (int it = 0; it < 12; ++it) {
    mha::Config cfg;
    cfg.d_model = 24; cfg.num_heads = 3; cfg.kv_heads = it % 2 ? 1 : 3; cfg.bias = true;
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    auto& [R, W, layer] = L;
    const int B = 2, Tq = it % 3 == 0 ? 1 + it : 70 + it * 13, Tk = 513 + it * 97;  // Tq < 64: a short scores block
    auto q = rnd(rng, size_t(B) * Tq * 24, 3.f), k = rnd(rng, size_t(B) * Tk * 24, 3.f), v = rnd(rng, size_t(B) * Tk * 24);
    std::vector<uint8_t> kpm(size_t(B) * Tk, 0);
    for (int j = 0; j < Tk; ++j) kpm[Tk + j] = j % 3 == 0 || j > Tk - 40;  // second sequence padded
    if (it % 3 == 2) for (int j = 0; j < Tk; ++j) kpm[j] = 1;            // first sequence fully masked
    std::vector<float> mask = rnd(rng, size_t(Tq) * Tk, 2.f);
    const int lossy = std::min(5, Tq - 1);                                   // a row that loses its later keys
    for (int j = 556; j < Tk; ++j) mask[size_t(lossy) * Tk + j] = -INFINITY;  // from inside the 2nd block
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
  // Self-attention past the fused small-input path: K/V projected and packed in several row
  // blocks, queries in several blocks, odd head widths (panel padding in the fused W_Q|W_K|W_V),
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
    const bool kpm_additive = it == 5;  // the additive form over several key blocks
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
  // query): the fused small path, K/V and queries in several row blocks over two batch elements,
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

// ---- Score modifiers: soft-cap, ALiBi, sliding window ------------------------------------------

TEST(ScoreMods, DefaultAlibiSlopesFollowThePaper) {
  // Press et al. 2022: 2^(-8/h)·k for powers of two; else those of the closest power of two, then
  // every other slope of twice as many heads (get_slopes of the reference implementation).
  const std::vector<float> s8 = mha::alibi_default_slopes(8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(s8[i], std::ldexp(1.f, -(i + 1)));
  const std::vector<float> s6 = mha::alibi_default_slopes(6);
  const float want6[] = {1 / 4.f, 1 / 16.f, 1 / 64.f, 1 / 256.f, 1 / 2.f, 1 / 8.f};
  ASSERT_EQ(s6.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s6[i], want6[i]) << i;
  EXPECT_EQ(mha::alibi_default_slopes(1), std::vector<float>{1 / 256.f});
}

TEST(ScoreMods, BadValuesAreInvalidConfigNamingTheField) {
  mha::Config c;
  c.d_model = 8; c.num_heads = 2;
  mha::Resolved r;
  mha::Config bad = c;
  bad.softcap_on = true; bad.softcap = 0.f;
  mha::Status s = mha::resolve(bad, r);
  EXPECT_EQ(s.code, mha::Code::kInvalidConfig);
  EXPECT_EQ(s.argument, "softcap");
  bad = c; bad.alibi = true; bad.alibi_given = true; bad.alibi_slopes = {1.f, 2.f, 3.f};
  s = mha::resolve(bad, r);
  EXPECT_EQ(s.argument, "alibi_slopes");
  EXPECT_NE(s.render().find("expected num_heads = 2 slopes, got 3"), std::string::npos) << s.render();
  bad = c; bad.window_left = -2;
  s = mha::resolve(bad, r);
  EXPECT_EQ(s.argument, "window");
  bad = c; bad.softcap_on = true; bad.softcap = 30.f; bad.alibi = true; bad.window_left = 3; bad.window_right = 0;
  ASSERT_TRUE(mha::resolve(bad, r).ok());
  EXPECT_EQ(r.softcap, 30.f);
  EXPECT_EQ(r.alibi_slopes, mha::alibi_default_slopes(2));
}

// A cap so small that 1/cap overflows float32 (subnormal caps, found by the fuzzer) is valid and
// caps every score to ≈ 0: a score of exactly 0 must stay 0 (0·(1/cap) was 0·∞ = NaN, which gave
// wrong, finite outputs), and the forward must equal the reference.
TEST(ScoreMods, SoftcapWhoseReciprocalOverflowsGivesTheReference) {
  std::mt19937 rng(11);
  for (float cap : {std::numeric_limits<float>::denorm_min(), 1e-39f, 1e-38f}) {
    mha::Config cfg;
    cfg.d_model = 4; cfg.num_heads = 2; cfg.bias = false;
    cfg.softcap_on = true; cfg.softcap = cap;
    cfg.alibi = true; cfg.alibi_given = true; cfg.alibi_slopes = {-0.5f, 0.25f};
    RandomLayer L;
    ASSERT_TRUE(mha::resolve(cfg, L.R).ok());
    L.W = random_weights(rng, L.R);
    std::fill(L.W.wq.begin(), L.W.wq.end(), 0.f);  // every score exactly 0
    ASSERT_TRUE(mha::Layer::create(cfg, L.W.view(), L.layer).ok());
    const int T = 5;
    auto x = rnd(rng, size_t(T) * 4);
    std::vector<float> out(size_t(T) * 4), w(size_t(2) * T * T);
    mha::ForwardArgs a;
    a.tq = T; a.query = x.data(); a.output = out.data(); a.weights = w.data();
    ASSERT_TRUE(L.layer->forward(a).ok());
    mha_test::ReferenceInput in;
    in.batch = 1; in.tq = T; in.tk = T; in.query = in.key = in.value = x.data();
    const mha_test::ReferenceResult ref = mha_test::reference_mha(L.R, L.W.view(), in);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref.output[i], 1e-5) << "cap " << cap << ", i " << i;
    for (size_t i = 0; i < w.size(); ++i) ASSERT_NEAR(w[i], ref.weights[i], 1e-6) << "cap " << cap << ", i " << i;
  }
}

// One long input through a layer three ways: the block path with weights (written to w [h, T, T]),
// the streaming path without weights (> 512 keys), and, when causal, the KV cache in steps of 1 to 7
// tokens; the outputs must agree.
static void expect_paths_agree(mha::Layer* layer, const std::vector<float>& x, int T, int d, int h, bool causal,
                               std::vector<float>& w) {
  w.assign(size_t(h) * T * T, 0.f);
  std::vector<float> o1(size_t(T) * d), o2(o1.size());
  mha::ForwardArgs a;
  a.batch = 1; a.tq = T; a.query = x.data(); a.causal = causal;
  a.output = o1.data(); a.weights = w.data();
  ASSERT_TRUE(layer->forward(a).ok());
  a.output = o2.data(); a.weights = nullptr;
  ASSERT_TRUE(layer->forward(a).ok());
  for (size_t i = 0; i < o1.size(); ++i) ASSERT_NEAR(o2[i], o1[i], 2e-5 * (1 + std::abs(o1[i]))) << "streaming, i " << i;
  if (!causal) return;
  std::unique_ptr<mha::KVCache> cache;
  ASSERT_TRUE(mha::KVCache::create(layer, T, 1, cache).ok());
  for (int t = 0, n = 1; t < T; t += n, n = n % 7 + 1) {
    n = std::min(n, T - t);
    std::vector<float> out(size_t(n) * d);
    ASSERT_TRUE(cache->step(x.data() + size_t(t) * d, n, out.data(), nullptr).ok());
    for (int i = 0; i < n * d; ++i) ASSERT_NEAR(out[i], o1[size_t(t) * d + i], 2e-5 * (1 + std::abs(o1[size_t(t) * d + i]))) << "KV step at " << t;
  }
}

// With every modifier: the streaming path (no weights, > 512 keys, key blocks skipped by the window)
// equals the block path with weights; the KV cache's steps equal the causal forward.
TEST(ScoreMods, StreamingAndKVCacheEqualTheBlockPath) {
  std::mt19937 rng(5);
  for (int it = 0; it < 6; ++it) {
    mha::Config cfg;
    cfg.d_model = 12; cfg.num_heads = 3; cfg.kv_heads = it % 2 ? 1 : 3;
    cfg.softcap_on = it % 3 != 0; cfg.softcap = 2.5f;
    cfg.alibi = it % 3 != 1;
    cfg.window_left = it < 3 ? 200 : 37; cfg.window_right = it % 2 ? -1 : 9;
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    auto& layer = L.layer;
    const int T = 700 + 61 * it;
    auto x = rnd(rng, size_t(T) * 12, 2.f);
    const bool causal = it >= 3;
    std::vector<float> w;
    ASSERT_NO_FATAL_FAILURE(expect_paths_agree(layer.get(), x, T, 12, 3, causal, w)) << "it " << it;
    // weights outside the window are exactly 0
    for (int q = 0; q < T; q += 97)
      for (int j = 0; j < T; ++j)
        if ((cfg.window_left >= 0 && j < q - cfg.window_left) || (cfg.window_right >= 0 && j > q + cfg.window_right) || (causal && j > q))
          ASSERT_EQ(w[size_t(q) * T + j], 0.f) << q << ", " << j;
  }
}

TEST(Rope, BadValuesAreInvalidConfigNamingTheField) {
  mha::Config c;
  c.d_model = 8; c.num_heads = 2;  // d_k = 4
  mha::Resolved r;
  for (int dim : {1, 3, 6, -2}) {
    mha::Config bad = c;
    bad.rope = true; bad.rope_dim = dim;
    mha::Status s = mha::resolve(bad, r);
    EXPECT_EQ(s.code, mha::Code::kInvalidConfig) << dim;
    EXPECT_EQ(s.argument, "rope.dim") << dim;
  }
  for (float base : {1.f, 0.f, -3.f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
    mha::Config bad = c;
    bad.rope = true; bad.rope_base = base;
    mha::Status s = mha::resolve(bad, r);
    EXPECT_EQ(s.argument, "rope.base") << base;
  }
  mha::Config odd = c;
  odd.d_model = 6; odd.rope = true;  // d_k = 3 with the default dim
  EXPECT_EQ(mha::resolve(odd, r).argument, "rope.dim");
  odd.rope_dim = 2;
  ASSERT_TRUE(mha::resolve(odd, r).ok());
  EXPECT_EQ(r.rope_width(0), 2);
  mha::Config ok = c;
  ok.rope = true;
  ASSERT_TRUE(mha::resolve(ok, r).ok());
  EXPECT_EQ(r.rope_width(1), 4);
  ASSERT_TRUE(mha::resolve(c, r).ok());
  EXPECT_FALSE(r.has_rope());
}

// With RoPE (both layouts, GQA, with the score modifiers): the streaming path equals the block path
// with weights, and the KV cache's steps (keys cached rotated, queries at cache.length + i) equal
// the causal forward.
TEST(Rope, StreamingAndKVCacheEqualTheBlockPath) {
  std::mt19937 rng(7);
  for (int it = 0; it < 4; ++it) {
    mha::Config cfg;
    cfg.d_model = 12; cfg.num_heads = 3; cfg.kv_heads = it % 2 ? 1 : 3;  // d_k = 4
    cfg.rope = true; cfg.rope_interleaved = it % 2 == 0; cfg.rope_dim = it < 2 ? -1 : 2;
    cfg.rope_base = it == 3 ? 100.f : 10000.f;
    cfg.alibi = it == 2; cfg.window_left = it == 3 ? 90 : -1;
    RandomLayer L;
    ASSERT_NO_FATAL_FAILURE(make_random_layer(rng, cfg, L));
    auto& layer = L.layer;
    const int T = 600 + 37 * it;
    auto x = rnd(rng, size_t(T) * 12, 2.f);
    std::vector<float> w;
    ASSERT_NO_FATAL_FAILURE(expect_paths_agree(layer.get(), x, T, 12, 3, true, w)) << "it " << it;
  }
}

// The passport's softmax FLOPs (6 per score + 1 per row) and memory, by hand: the lesson widget
// (T = 5, d_model = 24, no bias) at h = 1 and h = 8, and grouped-query K/V of LLaMA-2 70B's layer.
TEST(Passport, SoftmaxFlopsAndMemoryByHand) {
  for (int h : {1, 8}) {
    mha::Config c;
    c.d_model = 24;
    c.num_heads = h;
    c.bias = false;
    mha::Passport p;
    ASSERT_TRUE(mha::passport(c, 5, 0, 0, p).ok());
    EXPECT_EQ(p.flops.matmul, 25440.0);                   // the same at every h
    EXPECT_EQ(p.flops.softmax, h * 5.0 * (6 * 5 + 1));    // 155 at h = 1, 1240 at h = 8
    EXPECT_EQ(p.flops.total, 25440.0 + h * 155.0);
    EXPECT_EQ(p.memory.scores, h * 25.0);
    EXPECT_EQ(p.memory.score_bytes, h * 100.0);
    EXPECT_EQ(p.memory.kv_cache, 2 * 5 * 24.0);           // 2·T·h·d_k = 2·T·d_model
    EXPECT_EQ(p.memory.kv_cache_bytes, 4 * 240.0);
  }
  mha::Config c;
  c.d_model = 8192;
  c.num_heads = 64;
  c.kv_heads = 8;
  c.bias = false;
  mha::Passport p;
  ASSERT_TRUE(mha::passport(c, 4096, 0, 1, p).ok());
  EXPECT_EQ(p.memory.kv_cache, 2.0 * 4096 * 8 * 128);
  EXPECT_EQ(p.memory.scores, 64.0 * 4096 * 4096);
  EXPECT_EQ(p.flops.softmax, 64.0 * 4096 * (6.0 * 4096 + 1));
}

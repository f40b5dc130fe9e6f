// Native unit tests of the core (GoogleTest), part of the program core_test: the score modifiers
// (soft-cap, ALiBi, sliding window: defaults, refusals, the streaming path and the KV cache against
// the whole-row path), RoPE (refusals, both layouts with GQA and the modifiers), and the passport's
// softmax FLOPs and memory by hand. The Layer, the KV cache and configuration errors: core_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/kv_cache.hpp"
#include "support/core_test_util.hpp"

using namespace core_test;

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

// One long input through a layer three ways: the whole-row path with weights (written to w [h, T, T]),
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

// With every modifier: the streaming path (no weights, > 512 keys, key tiles skipped by the window)
// equals the whole-row path with weights; the KV cache's steps equal the causal forward.
TEST(ScoreMods, StreamingAndKVCacheEqualTheWholeRowPath) {
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

// With RoPE (both layouts, GQA, with the score modifiers): the streaming path equals the whole-row path
// with weights, and the KV cache's steps (keys cached rotated, queries at cache.length + i) equal
// the causal forward.
TEST(Rope, StreamingAndKVCacheEqualTheWholeRowPath) {
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

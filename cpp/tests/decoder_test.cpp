// Native unit tests of the decoder (mha/decoder.hpp) and of head_mask: what the golden suites
// (tests/golden-decoder, tests/golden-stories260k: one sequence at a time through the JS runner)
// do not reach: batches, KV-cache steps of several tokens over a batch, the errors, and head_mask
// against its definition (the head's W_O rows zeroed).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "mha/attention.hpp"
#include "mha/decoder.hpp"

namespace {

std::vector<float> rnd(std::mt19937& r, size_t n, float a = 0.5f) {
  std::uniform_real_distribution<float> u(-a, a);
  std::vector<float> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

/// A small decoder with random weights, owning them.
struct Model {
  mha::DecoderConfig cfg;
  std::vector<std::vector<float>> store;
  mha::DecoderWeights w;
  std::unique_ptr<mha::Decoder> dec;

  const float* add(std::vector<float> v) {
    store.push_back(std::move(v));
    return store.back().data();
  }
  /// Fills w for cfg (d_model 16, 4 heads over kv_heads, as cfg.attention says).
  void build(std::mt19937& r) {
    store.reserve(256);
    const int d = cfg.attention.d_model, V = cfg.vocab_size, F = cfg.d_ff, h = cfg.attention.num_heads;
    const int kv = cfg.attention.kv_heads ? cfg.attention.kv_heads : h, dk = d / h;
    const bool ln = cfg.norm == mha::NormKind::kLayerNorm, sw = cfg.mlp == mha::MlpKind::kSwiGLU;
    auto ones = [&](int n) { auto v = rnd(r, n, 0.1f); for (auto& x : v) x += 1.f; return v; };
    w.tok_emb = add(rnd(r, size_t(V) * d));
    if (cfg.context) w.pos_emb = add(rnd(r, size_t(cfg.context) * d, 0.2f));
    for (int l = 0; l < cfg.num_layers; ++l) {
      mha::DecoderLayerWeights lw;
      lw.norm1.weight = add(ones(d));
      lw.norm2.weight = add(ones(d));
      if (ln) { lw.norm1.bias = add(rnd(r, d, 0.1f)); lw.norm2.bias = add(rnd(r, d, 0.1f)); }
      lw.attention.wq = add(rnd(r, size_t(d) * d)); lw.attention.wk = add(rnd(r, size_t(d) * kv * dk));
      lw.attention.wv = add(rnd(r, size_t(d) * kv * dk)); lw.attention.wo = add(rnd(r, size_t(d) * d));
      if (cfg.attention.bias) {
        lw.attention.bq = add(rnd(r, d)); lw.attention.bk = add(rnd(r, kv * dk));
        lw.attention.bv = add(rnd(r, kv * dk)); lw.attention.bo = add(rnd(r, d));
      }
      lw.w_fc = add(rnd(r, size_t(d) * F));
      if (sw) lw.w_up = add(rnd(r, size_t(d) * F));
      lw.w_proj = add(rnd(r, size_t(F) * d));
      if (cfg.bias) { lw.b_fc = add(rnd(r, F)); lw.b_proj = add(rnd(r, d)); if (sw) lw.b_up = add(rnd(r, F)); }
      w.layers.push_back(lw);
    }
    w.norm_f.weight = add(ones(d));
    if (ln) w.norm_f.bias = add(rnd(r, d, 0.1f));
    if (!cfg.tied) w.head = add(rnd(r, size_t(d) * V));
    if (cfg.bias) w.head_bias = add(rnd(r, V));
  }
  mha::Status create() { return mha::Decoder::create(cfg, w, dec); }
};

/// Llama-like (RMSNorm, SwiGLU, RoPE, 2 K/V heads, tied, no bias) when llama, else GPT-2-like
/// (LayerNorm, GELU, learned positions, biases).
void configure(Model& m, bool llama) {
  m.cfg.vocab_size = 11; m.cfg.num_layers = 2; m.cfg.d_ff = 24;
  m.cfg.attention.d_model = 16; m.cfg.attention.num_heads = 4;
  if (llama) {
    m.cfg.norm = mha::NormKind::kRMSNorm; m.cfg.mlp = mha::MlpKind::kSwiGLU; m.cfg.bias = false; m.cfg.tied = true;
    m.cfg.attention.kv_heads = 2; m.cfg.attention.bias = false;
    m.cfg.attention.rope = true; m.cfg.attention.rope_interleaved = true;
  } else {
    m.cfg.context = 12; m.cfg.mlp = mha::MlpKind::kGELU;
  }
}

std::vector<int32_t> ids_of(std::mt19937& r, size_t n, int V) {
  std::uniform_int_distribution<int> u(0, V - 1);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = u(r);
  return v;
}

class DecoderBoth : public ::testing::TestWithParam<bool> {};

TEST_P(DecoderBoth, BatchEqualsOneSequenceAtATime) {
  std::mt19937 r(3);
  Model m;
  configure(m, GetParam());
  m.build(r);
  ASSERT_TRUE(m.create().ok());
  const int B = 3, T = 9, V = 11, L = 2, h = 4;
  auto ids = ids_of(r, size_t(B) * T, V);
  std::vector<float> lp(size_t(B) * T * V), wts(size_t(L) * B * h * T * T);
  mha::DecoderForwardArgs a;
  a.batch = B; a.seq_len = T; a.ids = ids.data(); a.log_probs = lp.data(); a.weights = wts.data();
  ASSERT_TRUE(m.dec->forward(a).ok());
  for (int b = 0; b < B; ++b) {
    std::vector<float> one(size_t(T) * V), w1(size_t(L) * h * T * T);
    mha::DecoderForwardArgs s;
    s.seq_len = T; s.ids = ids.data() + size_t(b) * T; s.log_probs = one.data(); s.weights = w1.data();
    ASSERT_TRUE(m.dec->forward(s).ok());
    for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(lp[size_t(b) * T * V + i], one[i], 1e-5);
    for (int l = 0; l < L; ++l)
      for (size_t i = 0; i < size_t(h) * T * T; ++i)
        ASSERT_NEAR(wts[(size_t(l) * B + b) * h * T * T + i], w1[size_t(l) * h * T * T + i], 1e-6);
    double total = 0;  // every row is a distribution
    for (int v = 0; v < V; ++v) total += std::exp(double(one[v]));
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

TEST_P(DecoderBoth, CacheStepsOverABatchEqualTheForward) {
  std::mt19937 r(5);
  Model m;
  configure(m, GetParam());
  m.build(r);
  ASSERT_TRUE(m.create().ok());
  const int B = 2, T = 12, V = 11, L = 2, h = 4;
  auto ids = ids_of(r, size_t(B) * T, V);
  std::vector<float> lp(size_t(B) * T * V);
  mha::DecoderForwardArgs a;
  a.batch = B; a.seq_len = T; a.ids = ids.data(); a.log_probs = lp.data();
  std::vector<float> head_mask = {1, 0, 1, 1, 1, 1, 0.5f, 1};
  a.head_mask = head_mask.data();
  ASSERT_TRUE(m.dec->forward(a).ok());
  std::unique_ptr<mha::DecoderCache> cache;
  ASSERT_TRUE(mha::DecoderCache::create(m.dec.get(), T, B, cache).ok());
  int t = 0;
  for (int n : {4, 1, 3, 1, 3}) {
    std::vector<int32_t> step(size_t(B) * n);
    for (int b = 0; b < B; ++b)
      std::copy(ids.begin() + size_t(b) * T + t, ids.begin() + size_t(b) * T + t + n, step.begin() + size_t(b) * n);
    std::vector<float> out(size_t(B) * n * V), last(size_t(B) * V), w(size_t(L) * B * h * n * (t + n));
    ASSERT_TRUE(cache->step(step.data(), n, head_mask.data(), out.data(), false, w.data()).ok());
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < n * V; ++i) ASSERT_NEAR(out[size_t(b) * n * V + i], lp[(size_t(b) * T + t) * V + i], 2e-5);
    t += n;
  }
  EXPECT_EQ(cache->length(), T);
  std::vector<int32_t> more(B, 0);
  std::vector<float> o(size_t(B) * V);
  EXPECT_EQ(cache->step(more.data(), 1, nullptr, o.data(), true, nullptr).code, mha::Code::kInvalidArgument);
  EXPECT_EQ(cache->length(), T);
}

INSTANTIATE_TEST_SUITE_P(LlamaAndGPT2, DecoderBoth, ::testing::Values(true, false));

TEST(Decoder, ErrorsNameTheArgumentTheExpectedAndTheActualValue) {
  std::mt19937 r(9);
  Model m;
  configure(m, false);
  m.build(r);
  ASSERT_TRUE(m.create().ok());
  std::vector<float> lp(13 * 11);
  std::vector<int32_t> ids(13, 1);
  mha::DecoderForwardArgs a;
  a.seq_len = 13; a.ids = ids.data(); a.log_probs = lp.data();
  mha::Status s = m.dec->forward(a);  // 13 > 12 learned positions
  EXPECT_EQ(s.code, mha::Code::kShapeMismatch);
  EXPECT_NE(s.render().find("13 tokens"), std::string::npos) << s.render();
  EXPECT_NE(s.render().find("12 positions"), std::string::npos) << s.render();
  a.seq_len = 5; ids[3] = 11;
  s = m.dec->forward(a);
  EXPECT_EQ(s.code, mha::Code::kInvalidArgument);
  EXPECT_EQ(s.argument, "ids");
  EXPECT_EQ(s.index, (std::vector<int64_t>{0, 3}));
  EXPECT_NE(s.render().find("[0, 11)"), std::string::npos) << s.render();
  ids[3] = 1;
  std::vector<float> bad_mask(8, 1.f);
  bad_mask[5] = std::numeric_limits<float>::quiet_NaN();
  a.head_mask = bad_mask.data();
  s = m.dec->forward(a);
  EXPECT_EQ(s.code, mha::Code::kNonFinite);
  EXPECT_EQ(s.index, (std::vector<int64_t>{1, 1}));
  std::unique_ptr<mha::DecoderCache> cache;
  s = mha::DecoderCache::create(m.dec.get(), 13, 1, cache);
  EXPECT_EQ(s.code, mha::Code::kInvalidArgument);
  EXPECT_EQ(s.argument, "max_len");

  // weights: a NaN in block 1's W_fc is named with the block as its first index; a missing W_up of a SwiGLU model names it
  Model n;
  configure(n, false);
  n.build(r);
  const_cast<float*>(n.w.layers[1].w_fc)[2 * 24 + 5] = std::numeric_limits<float>::infinity();
  s = n.create();
  EXPECT_EQ(s.code, mha::Code::kNonFinite);
  EXPECT_EQ(s.argument, "layers.w_fc");
  EXPECT_EQ(s.index, (std::vector<int64_t>{1, 2, 5}));
  Model q;
  configure(q, true);
  q.build(r);
  q.w.layers[0].w_up = nullptr;
  s = q.create();
  EXPECT_EQ(s.code, mha::Code::kInvalidArgument);
  EXPECT_NE(s.render().find("layers.w_up of block 0"), std::string::npos) << s.render();
  Model e;
  configure(e, true);
  e.build(r);
  e.cfg.norm_eps = 0.f;
  EXPECT_EQ(e.create().argument, "norm_eps");
  e.cfg.norm_eps = 1e-5f;
  e.cfg.mlp = static_cast<mha::MlpKind>(7);
  s = e.create();
  EXPECT_EQ(s.argument, "mlp");
  EXPECT_NE(s.render().find("got 7"), std::string::npos) << s.render();
}

TEST(HeadMask, ZeroEqualsTheHeadsWORowsZeroedAndKeepsItsWeights) {
  std::mt19937 r(11);
  mha::Config cfg;
  cfg.d_model = 16; cfg.num_heads = 4; cfg.kv_heads = 2;
  const int d = 16, T = 7, h = 4;
  auto wq = rnd(r, d * d), wk = rnd(r, d * 8), wv = rnd(r, d * 8), wo = rnd(r, d * d);
  auto bq = rnd(r, d), bk = rnd(r, 8), bv = rnd(r, 8), bo = rnd(r, d);
  auto wo0 = wo;
  std::fill(wo0.begin() + 2 * 4 * d, wo0.begin() + 3 * 4 * d, 0.f);  // rows of head 2 (d_v = 4)
  std::unique_ptr<mha::Layer> a, b;
  ASSERT_TRUE(mha::Layer::create(cfg, {wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()}, a).ok());
  ASSERT_TRUE(mha::Layer::create(cfg, {wq.data(), wk.data(), wv.data(), wo0.data(), bq.data(), bk.data(), bv.data(), bo.data()}, b).ok());
  auto x = rnd(r, T * d, 1.f);
  std::vector<float> ya(T * d), yb(T * d), wa(h * T * T), wb(h * T * T);
  const float mask[4] = {1, 1, 0, 1};
  mha::ForwardArgs f;
  f.tq = T; f.query = x.data(); f.causal = true; f.output = ya.data(); f.weights = wa.data(); f.head_mask = mask;
  ASSERT_TRUE(a->forward(f).ok());
  f.output = yb.data(); f.weights = wb.data(); f.head_mask = nullptr;
  ASSERT_TRUE(b->forward(f).ok());
  for (int i = 0; i < T * d; ++i) ASSERT_NEAR(ya[i], yb[i], 1e-6);
  for (int i = 0; i < h * T * T; ++i) ASSERT_EQ(wa[i], wb[i]);
}

}  // namespace

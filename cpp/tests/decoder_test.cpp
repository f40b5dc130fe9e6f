// Native unit tests of the decoder (mha/decoder.hpp) and of head_mask: what the golden suites
// (tests/golden-decoder, tests/golden-stories260k: one sequence at a time through the JS runner)
// do not reach: batches, KV-cache steps of several tokens over a batch, the errors, and head_mask
// against its definition (the head's W_O rows zeroed).
#include <gtest/gtest.h>

#include <algorithm>
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
      (sw ? lw.w_gate : lw.w_fc) = add(rnd(r, size_t(d) * F));
      if (sw) lw.w_up = add(rnd(r, size_t(d) * F));
      lw.w_proj = add(rnd(r, size_t(F) * d));
      if (cfg.bias) { (sw ? lw.b_gate : lw.b_fc) = add(rnd(r, F)); lw.b_proj = add(rnd(r, d)); if (sw) lw.b_up = add(rnd(r, F)); }
      w.layers.push_back(lw);
    }
    w.norm_f.weight = add(ones(d));
    if (ln) w.norm_f.bias = add(rnd(r, d, 0.1f));
    if (!cfg.tied) w.lm_head = add(rnd(r, size_t(d) * V));
    if (cfg.bias) w.lm_head_bias = add(rnd(r, V));
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

  // weights: a NaN in block 1's W_fc is named with the block as its first index; a missing W_up or W_gate of a SwiGLU model names it
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
  // a SwiGLU block's gate is w_gate (w_fc is the input map of a ReLU or GELU MLP only)
  Model gq;
  configure(gq, true);
  gq.build(r);
  gq.w.layers[1].w_fc = gq.w.layers[1].w_gate;
  gq.w.layers[1].w_gate = nullptr;
  s = gq.create();
  EXPECT_EQ(s.code, mha::Code::kInvalidArgument);
  EXPECT_NE(s.render().find("layers.w_gate of block 1"), std::string::npos) << s.render();
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

/// Forward log-probs and attention weights of `dec` on fixed ids (T = 9 tokens, B = 2).
void run(mha::Decoder& dec, std::vector<float>& lp, std::vector<float>& w) {
  const int B = 2, T = 9, V = dec.config().vocab_size, L = dec.num_layers(), h = dec.attention().num_heads;
  std::vector<int32_t> ids(size_t(B) * T);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 7 + 3) % V);
  lp.assign(size_t(B) * T * V, 0.f);
  w.assign(size_t(L) * B * h * T * T, 0.f);
  mha::DecoderForwardArgs a;
  a.batch = B; a.seq_len = T; a.ids = ids.data(); a.log_probs = lp.data(); a.weights = w.data();
  ASSERT_TRUE(dec.forward(a).ok());
}

TEST_P(DecoderBoth, StagedConstructionEqualsCreateBitForBit) {
  std::mt19937 r(13);
  Model m;
  configure(m, GetParam());
  m.cfg.num_layers = 3;
  m.build(r);
  ASSERT_TRUE(m.create().ok());
  std::unique_ptr<mha::Decoder> s;
  mha::DecoderWeights globals = m.w;
  globals.layers.clear();  // begin() does not read them
  ASSERT_TRUE(mha::Decoder::begin(m.cfg, globals, s).ok());
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(s->blocks_added(), l);
    EXPECT_FALSE(s->complete());
    ASSERT_TRUE(s->add_block(m.w.layers[l]).ok());
  }
  EXPECT_TRUE(s->complete());
  std::vector<float> lp1, w1, lp2, w2;
  run(*m.dec, lp1, w1);
  run(*s, lp2, w2);
  ASSERT_EQ(lp1.size(), lp2.size());
  for (size_t i = 0; i < lp1.size(); ++i) ASSERT_EQ(lp1[i], lp2[i]) << i;
  for (size_t i = 0; i < w1.size(); ++i) ASSERT_EQ(w1[i], w2[i]) << i;
  // a fourth block is refused and changes nothing
  mha::Status e = s->add_block(m.w.layers[0]);
  EXPECT_EQ(e.code, mha::Code::kInvalidArgument);
  EXPECT_NE(e.render().find("all 3 blocks"), std::string::npos) << e.render();
  EXPECT_EQ(s->blocks_added(), 3);
}

TEST(Decoder, AStagedDecoderRefusesToRunUntilEveryBlockIsAddedAndAFailedBlockCanBeRetried) {
  std::mt19937 r(17);
  Model m;
  configure(m, false);
  m.build(r);
  std::unique_ptr<mha::Decoder> s;
  ASSERT_TRUE(mha::Decoder::begin(m.cfg, m.w, s).ok());
  ASSERT_TRUE(s->add_block(m.w.layers[0]).ok());
  std::vector<float> lp(5 * 11);
  std::vector<int32_t> ids(5, 1);
  mha::DecoderForwardArgs a;
  a.seq_len = 5; a.ids = ids.data(); a.log_probs = lp.data();
  mha::Status e = s->forward(a);
  EXPECT_EQ(e.code, mha::Code::kInvalidArgument);
  EXPECT_NE(e.render().find("1 of its 2 blocks"), std::string::npos) << e.render();
  std::unique_ptr<mha::DecoderCache> cache;
  e = mha::DecoderCache::create(s.get(), 4, 1, cache);
  EXPECT_EQ(e.code, mha::Code::kInvalidArgument);
  EXPECT_NE(e.render().find("1 of its 2 blocks"), std::string::npos) << e.render();
  EXPECT_FALSE(cache);

  // a block with a NaN in W_proj, then one without W_O: refused, named, nothing kept; the good block then goes in
  mha::DecoderLayerWeights bad = m.w.layers[1];
  std::vector<float> proj(m.w.layers[1].w_proj, m.w.layers[1].w_proj + 24 * 16);
  proj[3 * 16 + 2] = std::numeric_limits<float>::quiet_NaN();
  bad.w_proj = proj.data();
  e = s->add_block(bad);
  EXPECT_EQ(e.code, mha::Code::kNonFinite);
  EXPECT_EQ(e.argument, "layers.w_proj");
  EXPECT_EQ(e.index, (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(s->blocks_added(), 1);
  bad = m.w.layers[1];
  bad.attention.wo = nullptr;
  e = s->add_block(bad);
  EXPECT_EQ(e.code, mha::Code::kInvalidArgument);
  EXPECT_NE(e.render().find("block 1"), std::string::npos) << e.render();
  EXPECT_EQ(s->blocks_added(), 1);
  ASSERT_TRUE(s->add_block(m.w.layers[1]).ok());
  ASSERT_TRUE(s->forward(a).ok());
  ASSERT_TRUE(m.create().ok());
  std::vector<float> ref(5 * 11);
  a.log_probs = ref.data();
  ASSERT_TRUE(m.dec->forward(a).ok());
  for (int i = 0; i < 5 * 11; ++i) ASSERT_EQ(lp[i], ref[i]);

  // begin() checks the weights outside the blocks
  Model n;
  configure(n, true);
  n.build(r);
  n.w.tok_emb = nullptr;
  EXPECT_NE(mha::Decoder::begin(n.cfg, n.w, s).render().find("tok_emb"), std::string::npos);
}

TEST(Decoder, TheTiedEmbeddingIsReadFromThePackedHead) {
  // Tied: the decoder keeps tok_emb only as the packed head W_head = tok_embᵀ. With one block whose
  // attention and MLP outputs are zero (W_O, b_O, W_proj, b_proj = 0), a one-token sequence gives
  // log_softmax(LayerNorm_f(tok_emb[id] + pos_emb[0])·tok_embᵀ + b_head), which the test computes
  // in float64 from the original rows (V = 13 and d = 12 leave a partial last panel).
  std::mt19937 r(19);
  Model m;
  configure(m, false);
  m.cfg.vocab_size = 13; m.cfg.num_layers = 1; m.cfg.tied = true;
  m.cfg.attention.d_model = 12; m.cfg.attention.num_heads = 3;
  m.build(r);
  const int V = 13, d = 12;
  std::vector<float> zeros(size_t(d) * 24, 0.f);
  mha::DecoderLayerWeights& lw = m.w.layers[0];
  lw.attention.wo = zeros.data(); lw.attention.bo = zeros.data();
  lw.w_proj = zeros.data(); lw.b_proj = zeros.data();
  ASSERT_TRUE(m.create().ok());
  const float *E = m.w.tok_emb, *P = m.w.pos_emb, *g = m.w.norm_f.weight, *b = m.w.norm_f.bias, *hb = m.w.lm_head_bias;
  for (int id = 0; id < V; ++id) {
    std::vector<float> lp(V);
    mha::DecoderForwardArgs a;
    a.seq_len = 1; a.ids = &id; a.log_probs = lp.data();
    ASSERT_TRUE(m.dec->forward(a).ok());
    std::vector<double> x(d), z(V);
    double mean = 0, var = 0, mx = -1e300, sum = 0;
    for (int i = 0; i < d; ++i) mean += (x[i] = double(E[id * d + i]) + P[i]) / d;
    for (int i = 0; i < d; ++i) var += (x[i] - mean) * (x[i] - mean) / d;
    for (int i = 0; i < d; ++i) x[i] = (x[i] - mean) / std::sqrt(var + m.cfg.norm_eps) * g[i] + b[i];
    for (int v = 0; v < V; ++v) {
      z[v] = hb[v];
      for (int i = 0; i < d; ++i) z[v] += x[i] * E[v * d + i];
      mx = std::max(mx, z[v]);
    }
    for (int v = 0; v < V; ++v) sum += std::exp(z[v] - mx);
    for (int v = 0; v < V; ++v) ASSERT_NEAR(lp[v], z[v] - mx - std::log(sum), 2e-5) << id << " " << v;
  }
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

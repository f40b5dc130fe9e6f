// The decoder-only language model of mha/decoder.hpp: embeddings, pre-norm blocks, lm_head, KV cache.
#include "mha/decoder.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "block_ops.hpp"
#include "finite.hpp"
#include "half.hpp"
#include "kernels.hpp"

namespace mha {

/// One block's non-attention parameters, packed for the GEMM kernels.
struct Decoder::Block {
  std::vector<float> n1w, n1b, n2w, n2b;
  kernels::PackedB in;               // the MLP's input map: W_fc, or SwiGLU's gate W_gate
  kernels::PackedB up, proj;         // W_up (SwiGLU), W_proj
  std::vector<float> bin, bup, bproj;
};

Decoder::Decoder() = default;
Decoder::~Decoder() = default;

namespace {

Status config_error(const std::string& msg, const std::string& field) {
  return Status::Error(Code::kInvalidConfig, msg, field);
}

/// Checks a parameter: present and finite. Block parameters are named "layers.<name>" with the block
/// index as the first index of a bad element.
Status check_param(const char* name, int layer, const float* p, Shape shape) {
  if (!p) {
    std::string where = layer >= 0 ? " of block " + std::to_string(layer) : "";
    return Status::Error(Code::kInvalidArgument, "{weights}: {" + std::string(name) + "}" + where + " is required", "weights");
  }
  Status s = check_finite(name, p, shape);
  if (!s.ok() && layer >= 0) s.index.insert(s.index.begin(), layer);
  return s;
}

/// Copies a checked parameter.
Status take(const char* name, int layer, const float* p, Shape shape, std::vector<float>& out) {
  Status s = check_param(name, layer, p, shape);
  if (s.ok()) out.assign(p, p + shape_size(shape));
  return s;
}

/// Checks a matrix [rows, cols] of storage `half` (0 float32; 1, 2: 16-bit values behind p).
Status check_matrix(const char* name, int layer, const float* p, int rows, int cols, int half) {
  if (!half || !p) return check_param(name, layer, p, {rows, cols});
  Status s = check_finite_half(name, reinterpret_cast<const uint16_t*>(p), {rows, cols}, half);
  if (!s.ok() && layer >= 0) s.index.insert(s.index.begin(), layer);
  return s;
}

/// Packs a checked matrix [rows, cols] of storage `half` for gemm_packed (16-bit stays 16-bit).
Status take_packed(const char* name, int layer, const float* p, int rows, int cols, kernels::PackedB& out, int half = 0) {
  Status s = check_matrix(name, layer, p, rows, cols, half);
  if (!s.ok()) return s;
  if (half) kernels::pack_b16(rows, cols, half, reinterpret_cast<const uint16_t*>(p), cols, out);
  else kernels::pack_b(rows, cols, p, cols, out);
  return s;
}

/// Checks a decoder's configuration and resolves its attention's.
Status check_config(const DecoderConfig& c, Resolved& r) {
  const int V = c.vocab_size, L = c.num_layers, F = c.d_ff, C = c.context;
  if (V < 1) return config_error("{vocab_size} must be ≥ 1, got " + std::to_string(V), "vocab_size");
  if (L < 1) return config_error("{num_layers} must be ≥ 1, got " + std::to_string(L), "num_layers");
  if (F < 1) return config_error("{d_ff} must be ≥ 1, got " + std::to_string(F), "d_ff");
  if (C < 0) return config_error("{context} must be ≥ 0 (0: no learned position table), got " + std::to_string(C), "context");
  if (!(std::isfinite(c.norm_eps) && c.norm_eps > 0.f))
    return config_error("{norm_eps} must be a finite number > 0, got " + std::to_string(c.norm_eps), "norm_eps");
  if (c.norm != NormKind::kLayerNorm && c.norm != NormKind::kRMSNorm)
    return config_error("{norm} must be 0 (LayerNorm) or 1 (RMSNorm), got " + std::to_string(int(c.norm)), "norm");
  const int mk = int(c.mlp);
  if (mk < 0 || mk > 3)
    return config_error("{mlp} must be 0 (ReLU), 1 (GELU), 2 (GELU tanh) or 3 (SwiGLU), got " + std::to_string(mk), "mlp");
  const int wt = int(c.weight_type);
  if (wt < 0 || wt > 2)
    return config_error("{weight_type} must be 0 (float32), 1 (float16) or 2 (bfloat16), got " + std::to_string(wt), "weight_type");
  Status s = resolve(c.attention, r);
  if (!s.ok()) return s;
  const int d = r.d_model;
  if (r.k_dim != d || r.v_dim != d)
    return config_error("a decoder's attention is self-attention: {k_dim} = {v_dim} = {d_model} = " + std::to_string(d) +
                            ", got {k_dim} = " + std::to_string(r.k_dim) + ", {v_dim} = " + std::to_string(r.v_dim), "k_dim");
  const int64_t kMax = int64_t(1) << 31;
  if (int64_t(V) * d >= kMax || int64_t(C) * d >= kMax || int64_t(F) * d >= kMax)
    return config_error("{vocab_size}, {context} or {d_ff} times {d_model} exceeds 2^31 elements", "vocab_size");
  return Status::Ok();
}

/// Floats a decoder keeps outside its blocks: the token embedding (untied only: the tied lm_head is
/// its only copy), the position table, the final norm, the packed lm_head and its bias.
size_t global_floats(const DecoderConfig& c, int d) {
  const size_t V = size_t(c.vocab_size), per = c.weight_type == WeightType::kFloat32 ? 1 : 2;  // 16-bit: 2 per float
  return ((c.tied ? 0 : V * d) + kernels::panels_size(d, c.vocab_size)) / per + size_t(c.context) * d + 2 * size_t(d) + (c.bias ? V : 0);
}

/// Floats one block keeps outside its attention layer (which probes its own): norms, MLP, biases.
size_t block_floats(const DecoderConfig& c, int d) {
  const int F = c.d_ff;
  const bool swiglu = c.mlp == MlpKind::kSwiGLU;
  const size_t per = c.weight_type == WeightType::kFloat32 ? 1 : 2;  // 16-bit: 2 per float
  return 4 * size_t(d) + (kernels::panels_size(d, F) * (swiglu ? 2 : 1) + kernels::panels_size(F, d)) / per + 2 * size_t(F) + d;
}

/// Under -fno-exceptions a failed std::vector allocation aborts the wasm instance: probe the heap
/// with malloc for `floats` before allocating them, and refuse cleanly.
Status probe(size_t floats, const char* what) {
  // volatile: clang removes an unused malloc/free pair (assuming success) otherwise.
  void* volatile p = std::malloc(floats * sizeof(float));
  if (!p) return Status::OutOfMemory(what, double(floats * sizeof(float)), "");
  std::free(p);
  return Status::Ok();
}

}  // namespace

Status Decoder::create(const DecoderConfig& c, const DecoderWeights& w, std::unique_ptr<Decoder>& out) {
  Resolved r;
  Status s = check_config(c, r);
  if (!s.ok()) return s;
  const int L = c.num_layers;
  if (int(w.layers.size()) != L)
    return Status::Error(Code::kInvalidArgument, "{weights}: " + std::to_string(L) + " blocks expected ({num_layers}), got " +
                                                     std::to_string(w.layers.size()), "weights");
  s = probe(global_floats(c, r.d_model) + size_t(L) * block_floats(c, r.d_model), "the decoder's weights");
  if (!s.ok()) return s;
  std::unique_ptr<Decoder> D;
  s = begin(c, w, D);
  for (int l = 0; l < L && s.ok(); ++l) s = D->add_block(w.layers[l]);
  if (s.ok()) out = std::move(D);
  return s;
}

Status Decoder::begin(const DecoderConfig& c, const DecoderWeights& w, std::unique_ptr<Decoder>& out) {
  Resolved r;
  Status s = check_config(c, r);
  if (!s.ok()) return s;
  const int V = c.vocab_size, C = c.context, d = r.d_model;
  s = probe(global_floats(c, d), "the decoder's embeddings and lm_head");
  if (!s.ok()) return s;
  std::unique_ptr<Decoder> D(new Decoder());
  D->cfg_ = c;
  D->attn_ = std::move(r);
  const bool ln = c.norm == NormKind::kLayerNorm;
  const int half = int(c.weight_type);
  const uint16_t* tok16 = reinterpret_cast<const uint16_t*>(w.tok_emb);
  if (c.tied || half) s = check_matrix("tok_emb", -1, w.tok_emb, V, d, half);
  else s = take("tok_emb", -1, w.tok_emb, {V, d}, D->tok_emb_);
  if (s.ok() && half && !c.tied) D->tok_emb16_.assign(tok16, tok16 + size_t(V) * d);
  if (s.ok() && C > 0) s = take("pos_emb", -1, w.pos_emb, {C, d}, D->pos_emb_);
  if (s.ok()) s = take("norm_f.weight", -1, w.norm_f.weight, {d}, D->normf_w_);
  if (s.ok() && ln && w.norm_f.bias) s = take("norm_f.bias", -1, w.norm_f.bias, {d}, D->normf_b_);
  if (s.ok() && c.bias) s = take("lm_head_bias", -1, w.lm_head_bias, {V}, D->lm_head_b_);
  if (!s.ok()) return s;
  D->lm_head_.reset(new kernels::PackedB());
  if (c.tied) {  // W_lm_head = tok_embᵀ [d, V], packed straight from tok_emb [V, d]
    if (half) kernels::pack_b_t16(d, V, half, tok16, d, *D->lm_head_);
    else kernels::pack_b_t(d, V, w.tok_emb, d, *D->lm_head_);
  } else {
    s = take_packed("lm_head", -1, w.lm_head, d, V, *D->lm_head_, half);
    if (!s.ok()) return s;
  }
  D->blocks_.resize(c.num_layers);
  D->layers_.resize(c.num_layers);
  out = std::move(D);
  return Status::Ok();
}

Status Decoder::add_block(const DecoderLayerWeights& lw) {
  const int L = cfg_.num_layers, l = added_, d = attn_.d_model, F = cfg_.d_ff;
  if (l >= L)
    return Status::Error(Code::kInvalidArgument, "{weights}: all " + std::to_string(L) + " blocks ({num_layers}) are already added", "weights");
  std::unique_ptr<Layer> layer;  // probes the heap for its own copies first
  WeightsView aw = lw.attention;
  aw.type = cfg_.weight_type;
  const int half = int(cfg_.weight_type);
  Status s = Layer::create(cfg_.attention, aw, layer);
  if (!s.ok()) {
    s.message = "block " + std::to_string(l) + ": " + s.message;
    return s;
  }
  s = probe(block_floats(cfg_, d), "a decoder block's weights");  // with the layer's copies allocated
  if (!s.ok()) return s;
  const bool ln = cfg_.norm == NormKind::kLayerNorm, swiglu = cfg_.mlp == MlpKind::kSwiGLU;
  Block b;
  s = take("layers.norm1.weight", l, lw.norm1.weight, {d}, b.n1w);
  if (s.ok() && ln && lw.norm1.bias) s = take("layers.norm1.bias", l, lw.norm1.bias, {d}, b.n1b);
  if (s.ok()) s = take("layers.norm2.weight", l, lw.norm2.weight, {d}, b.n2w);
  if (s.ok() && ln && lw.norm2.bias) s = take("layers.norm2.bias", l, lw.norm2.bias, {d}, b.n2b);
  if (s.ok()) s = swiglu ? take_packed("layers.w_gate", l, lw.w_gate, d, F, b.in, half) : take_packed("layers.w_fc", l, lw.w_fc, d, F, b.in, half);
  if (s.ok() && swiglu) s = take_packed("layers.w_up", l, lw.w_up, d, F, b.up, half);
  if (s.ok()) s = take_packed("layers.w_proj", l, lw.w_proj, F, d, b.proj, half);
  if (s.ok() && cfg_.bias) s = swiglu ? take("layers.b_gate", l, lw.b_gate, {F}, b.bin) : take("layers.b_fc", l, lw.b_fc, {F}, b.bin);
  if (s.ok() && cfg_.bias && swiglu) s = take("layers.b_up", l, lw.b_up, {F}, b.bup);
  if (s.ok() && cfg_.bias) s = take("layers.b_proj", l, lw.b_proj, {d}, b.bproj);
  if (!s.ok()) return s;
  blocks_[l] = std::move(b);
  layers_[l] = std::move(layer);
  ++added_;
  return Status::Ok();
}

Status Decoder::check_complete(const char* what) const {
  if (complete()) return Status::Ok();
  return Status::Error(Code::kInvalidArgument, std::string(what) + ": the decoder has " + std::to_string(added_) + " of its " +
                                                   std::to_string(cfg_.num_layers) + " blocks; add_block the rest first", "weights");
}

size_t Decoder::workspace_floats(size_t rows) const {
  const size_t d = size_t(attention().d_model);
  return rows * (3 * d + size_t(cfg_.d_ff) * (cfg_.mlp == MlpKind::kSwiGLU ? 2 : 1));
}

Status Decoder::embed(const int32_t* ids, int batch, int n, int pos0, float* x) const {
  const int d = attention().d_model, V = cfg_.vocab_size;
  const size_t rows = size_t(batch) * n;
  for (size_t i = 0; i < rows; ++i) {
    if (ids[i] >= 0 && ids[i] < V) continue;
    Status s = Status::Error(Code::kInvalidArgument, "{ids}{index} is " + std::to_string(ids[i]) +
                                                         "; expected a token id in [0, " + std::to_string(V) + ")", "ids");
    s.index = {int64_t(i / n), int64_t(i % n)};
    s.batch_first = true;
    return s;
  }
  for (size_t i = 0; i < rows; ++i) {
    float* xr = x + i * d;
    if (cfg_.tied) {
      kernels::packed_column(*lm_head_, ids[i], xr);
    } else if (!tok_emb16_.empty()) {
      const uint16_t* e = tok_emb16_.data() + size_t(ids[i]) * d;
      for (int j = 0; j < d; ++j) xr[j] = half_to_float(e[j], int(cfg_.weight_type));
    } else {
      std::memcpy(xr, tok_emb_.data() + size_t(ids[i]) * d, sizeof(float) * d);
    }
    if (!pos_emb_.empty()) ops::add(d, xr, pos_emb_.data() + size_t(pos0 + int(i % n)) * d);
  }
  return Status::Ok();
}

void Decoder::norm(const std::vector<float>& w, const std::vector<float>& b, int rows, const float* x, float* y) const {
  const int d = attention().d_model;
  if (cfg_.norm == NormKind::kRMSNorm)
    ops::rms_norm(rows, d, x, w.data(), cfg_.norm_eps, y);
  else
    ops::layer_norm(rows, d, x, w.data(), b.empty() ? nullptr : b.data(), cfg_.norm_eps, y);
}

void Decoder::mlp(int l, int rows, float* x, float* h, float* f) const {
  const Block& b = blocks_[l];
  const int d = attention().d_model, F = cfg_.d_ff;
  const size_t n = size_t(rows) * F;
  norm(b.n2w, b.n2b, rows, x, h);
  kernels::gemm_packed_mt(rows, h, d, b.in, b.bin.empty() ? nullptr : b.bin.data(), f, F);  // W_fc·x, or W_gate·x
  switch (cfg_.mlp) {
    case MlpKind::kReLU: ops::relu(n, f); break;
    case MlpKind::kGELU: ops::gelu_erf(n, f); break;
    case MlpKind::kGELUTanh: ops::gelu_tanh(n, f); break;
    case MlpKind::kSwiGLU:
      kernels::gemm_packed_mt(rows, h, d, b.up, b.bup.empty() ? nullptr : b.bup.data(), f + n, F);
      ops::silu_mul(n, f, f + n);
      break;
  }
  kernels::gemm_packed_mt(rows, f, F, b.proj, b.bproj.empty() ? nullptr : b.bproj.data(), h, d);
  ops::add(size_t(rows) * d, x, h);
}

void Decoder::lm_head(int rows, const float* x, size_t stride, float* h, float* out) const {
  const int d = attention().d_model, V = cfg_.vocab_size;
  for (int r = 0; r < rows; ++r) norm(normf_w_, normf_b_, 1, x + size_t(r) * stride * d, h + size_t(r) * d);
  kernels::gemm_packed_mt(rows, h, d, *lm_head_, lm_head_b_.empty() ? nullptr : lm_head_b_.data(), out, V);
  ops::log_softmax(rows, V, out);
}

namespace {

/// A block's attention (its forward: argument "query"; its KV-cache step: "x") refused its input:
/// finite ids and weights gave NaN/Inf in the residual stream, i.e. float32 overflow inside the
/// model. Any other error is returned naming the block.
Status block_overflow(int l, const Status& s) {
  if (s.code != Code::kNonFinite || (s.argument != "query" && s.argument != "x")) {
    Status t = s;
    t.message = "block " + std::to_string(l) + ": " + s.message;
    return t;
  }
  return Status::Error(Code::kNonFinite, "float32 overflow: the residual stream entering block " + std::to_string(l) +
                                             " holds NaN or Inf although every id and weight is finite", "log_probs");
}

}  // namespace

Status Decoder::forward(const DecoderForwardArgs& a) {
  const Resolved& r = attention();
  const int B = a.batch, T = a.seq_len, d = r.d_model, h = r.num_heads, L = cfg_.num_layers, V = cfg_.vocab_size;
  Status s = check_complete("forward");
  if (!s.ok()) return s;
  if (B < 1 || T < 1)
    return Status::Error(Code::kShapeMismatch, "batch and sequence length must be ≥ 1, got B = " + std::to_string(B) +
                                                   ", T = " + std::to_string(T), "ids");
  if (!pos_emb_.empty() && T > cfg_.context)
    return Status::Error(Code::kShapeMismatch, "{ids} holds " + std::to_string(T) + " tokens per sequence, more than the " +
                                                   std::to_string(cfg_.context) + " positions of the learned position table ({context})", "ids");
  if (!a.ids) return Status::Error(Code::kInvalidArgument, "{ids} are required", "ids");
  if (!a.log_probs) return Status::Error(Code::kInvalidArgument, "{log_probs} buffer is required", "log_probs");
  if (a.head_mask) {
    s = check_finite("head_mask", a.head_mask, {L, h});
    if (!s.ok()) return s;
  }
  const size_t rows = size_t(B) * T;
  if (!ws_.reserve(workspace_floats(rows)))
    return Status::OutOfMemory("forward", double(workspace_floats(rows) * sizeof(float)), "the residual stream and the MLP");
  float* x = ws_.data();
  float* hb = x + rows * d;
  float* att = hb + rows * d;
  float* f = att + rows * d;
  s = embed(a.ids, B, T, 0, x);
  if (!s.ok()) return s;
  for (int l = 0; l < L; ++l) {
    // x = x + MHA(Norm1(x)), causal self-attention
    norm(blocks_[l].n1w, blocks_[l].n1b, int(rows), x, hb);
    ForwardArgs fa;
    fa.batch = B; fa.tq = T; fa.query = hb; fa.causal = true; fa.output = att;
    fa.weights = a.weights ? a.weights + size_t(l) * B * h * T * T : nullptr;
    fa.head_mask = a.head_mask ? a.head_mask + size_t(l) * h : nullptr;
    s = layers_[l]->forward(fa);
    if (!s.ok()) return block_overflow(l, s);
    ops::add(rows * d, x, att);
    // x = x + MLP(Norm2(x))
    mlp(l, int(rows), x, hb, f);
  }
  if (a.last_only)
    lm_head(B, x + size_t(T - 1) * d, T, hb, a.log_probs);
  else
    lm_head(int(rows), x, 1, hb, a.log_probs);
  return check_output_finite("log_probs", a.log_probs, {B, a.last_only ? 1 : T, V});
}

// ---- KV cache ------------------------------------------------------------------------------------

Status DecoderCache::create(Decoder* dec, int max_len, int batch, std::unique_ptr<DecoderCache>& out) {
  if (max_len < 1) return Status::Error(Code::kInvalidArgument, "{max_len} must be a positive integer, got " + std::to_string(max_len), "max_len");
  if (batch < 1) return Status::Error(Code::kInvalidArgument, "{batch} must be a positive integer, got " + std::to_string(batch), "batch");
  Status s = dec->check_complete("a KV cache");
  if (!s.ok()) return s;
  if (!dec->pos_emb_.empty() && max_len > dec->cfg_.context)
    return Status::Error(Code::kInvalidArgument, "{max_len} = " + std::to_string(max_len) + " exceeds the " +
                                                     std::to_string(dec->cfg_.context) + " positions of the learned position table ({context})", "max_len");
  std::unique_ptr<DecoderCache> c(new DecoderCache());
  c->dec_ = dec;
  c->max_len_ = max_len;
  c->batch_ = batch;
  c->caches_.resize(dec->num_layers());
  for (int l = 0; l < dec->num_layers(); ++l) {
    s = KVCache::create(dec->layers_[l].get(), max_len, batch, c->caches_[l]);
    if (!s.ok()) return s;
  }
  out = std::move(c);
  return Status::Ok();
}

Status DecoderCache::check_step(int n) const { return caches_[0]->check_step(n); }

void DecoderCache::reset() {
  for (auto& c : caches_) c->reset();
}

Status DecoderCache::step(const int32_t* ids, int n, const float* head_mask, float* log_probs, bool last_only, float* weights) {
  Status s = check_step(n);
  if (!s.ok()) return s;
  const Decoder& D = *dec_;
  const Resolved& r = D.attention();
  const int B = batch_, d = r.d_model, h = r.num_heads, L = D.num_layers(), len = length(), V = D.cfg_.vocab_size;
  if (!ids) return Status::Error(Code::kInvalidArgument, "{ids} are required", "ids");
  if (!log_probs) return Status::Error(Code::kInvalidArgument, "{log_probs} buffer is required", "log_probs");
  if (head_mask) {
    s = check_finite("head_mask", head_mask, {L, h});
    if (!s.ok()) return s;
  }
  const size_t rows = size_t(B) * n;
  if (!ws_.reserve(D.workspace_floats(rows)))
    return Status::OutOfMemory("step", double(D.workspace_floats(rows) * sizeof(float)), "the residual stream and the MLP");
  float* x = ws_.data();
  float* hb = x + rows * d;
  float* att = hb + rows * d;
  float* f = att + rows * d;
  s = D.embed(ids, B, n, len, x);
  if (!s.ok()) return s;
  for (int l = 0; l < L; ++l) {
    D.norm(D.blocks_[l].n1w, D.blocks_[l].n1b, int(rows), x, hb);
    s = caches_[l]->step(hb, n, att, weights ? weights + size_t(l) * B * h * n * (len + n) : nullptr,
                         head_mask ? head_mask + size_t(l) * h : nullptr);
    if (!s.ok()) {
      for (int k = 0; k < l; ++k) caches_[k]->truncate(len);  // all blocks keep the same length
      return block_overflow(l, s);
    }
    ops::add(rows * d, x, att);
    D.mlp(l, int(rows), x, hb, f);
  }
  if (last_only)
    D.lm_head(B, x + size_t(n - 1) * d, n, hb, log_probs);
  else
    D.lm_head(int(rows), x, 1, hb, log_probs);
  s = check_output_finite("log_probs", log_probs, {B, last_only ? 1 : n, V});
  if (!s.ok()) {
    for (auto& c : caches_) c->truncate(len);
  }
  return s;
}

}  // namespace mha

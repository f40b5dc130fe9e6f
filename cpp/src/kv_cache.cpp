// KV cache: incremental causal attention over the tokens seen so far.
#include "mha/kv_cache.hpp"

#include "attention_internal.hpp"

#include <cstring>
#include <string>

namespace mha {

Status KVCache::create(Layer* layer, int max_len, int batch, std::unique_ptr<KVCache>& out) {
  if (max_len < 1) return Status::Error(Code::kInvalidArgument, "{max_len} must be a positive integer, got " + std::to_string(max_len), "max_len");
  if (batch < 1) return Status::Error(Code::kInvalidArgument, "{batch} must be a positive integer, got " + std::to_string(batch), "batch");
  const Resolved& r = layer->config();
  if (r.k_dim != r.d_model || r.v_dim != r.d_model)
    return Status::Error(Code::kInvalidConfig, "a KV cache needs a self-attention layer ({k_dim} = {v_dim} = {d_model} = " +
                                                   std::to_string(r.d_model) + ")", "k_dim");
  std::unique_ptr<KVCache> c(new KVCache());
  c->layer_ = layer;
  c->max_len_ = max_len;
  c->batch_ = batch;
  const size_t nk = size_t(batch) * max_len * r.k_width, nv = size_t(batch) * max_len * r.v_width;
  if (!c->k_.reserve(nk) || !c->v_.reserve(nv))
    return Status::OutOfMemory("KV cache", double((nk + nv) * sizeof(float)), "");
  out = std::move(c);
  return Status::Ok();
}

Status KVCache::check_step(int n) const {
  if (n < 1) return Status::Error(Code::kShapeMismatch, "{x} must hold at least one token, got " + std::to_string(n), "x");
  if (int64_t(len_) + n > max_len_)
    return Status::Error(Code::kInvalidArgument, "the cache holds " + std::to_string(len_) + " of {max_len} = " +
                                                     std::to_string(max_len_) + " tokens; " + std::to_string(n) +
                                                     " more would exceed it (reset() or a larger {max_len})", "max_len");
  return Status::Ok();
}

Status KVCache::step(const float* x, int n, float* output, float* weights, const float* head_mask) {
  const Resolved& r = layer_->config();
  Status s = check_step(n);
  if (!s.ok()) return s;
  const int B = batch_;
  s = check_finite("x", x, {B, n, r.d_model}, FiniteCheck::batched());
  if (s.ok() && head_mask) s = check_finite("head_mask", head_mask, {r.num_heads});
  if (!s.ok()) return s;
  const size_t nq = size_t(B) * n * r.q_width, nk = size_t(B) * n * r.k_width, nv = size_t(B) * n * r.v_width,
               no = size_t(B) * n * r.o_width;
  if (!work_.reserve(nq + nk + nv + no))
    return Status::OutOfMemory("step", double((nq + nk + nv + no) * sizeof(float)), "workspace");
  float* Q = work_.data();
  float* K = Q + nq;
  float* V = K + nk;
  float* C = V + nv;
  layer_->project(Projection::kQuery, B * n, x, Q);
  layer_->project(Projection::kKey, B * n, x, K);
  layer_->project(Projection::kValue, B * n, x, V);
  // RoPE: the new tokens at positions len_ … len_ + n − 1; K is stored rotated.
  for (int b = 0; b < B && r.has_rope(); ++b) {
    s = layer_->rotate(false, Q + size_t(b) * n * r.q_width, r.q_width, n, len_);
    if (s.ok()) s = layer_->rotate(true, K + size_t(b) * n * r.k_width, r.k_width, n, len_);
    if (!s.ok()) return s;
  }
  for (int b = 0; b < B; ++b) {
    std::memcpy(k_.data() + (size_t(b) * max_len_ + len_) * r.k_width, K + size_t(b) * n * r.k_width,
                sizeof(float) * n * r.k_width);
    std::memcpy(v_.data() + (size_t(b) * max_len_ + len_) * r.v_width, V + size_t(b) * n * r.v_width,
                sizeof(float) * n * r.v_width);
  }
  AttendArgs t;
  t.batch = B; t.tq = n; t.tk = len_ + n;
  t.q = Q; t.ldq = r.q_width; t.q_bs = size_t(n) * r.q_width;
  t.k = k_.data(); t.ldk = r.k_width; t.k_bs = size_t(max_len_) * r.k_width;
  t.v = v_.data(); t.ldv = r.v_width; t.v_bs = size_t(max_len_) * r.v_width;
  t.causal = true; t.causal_offset = len_;
  t.concat = C;
  t.weights = weights;
  t.head_mask = head_mask;
  s = layer_->attend(t);
  if (!s.ok()) return s;
  layer_->project(Projection::kOutput, B * n, C, output);
  // Refuse an output that overflowed float32 (see Layer::forward); the cache keeps its length, so
  // the next step overwrites the rows appended above.
  s = check_output_finite("output", output, {B, n, r.d_model});
  if (!s.ok()) return s;
  len_ += n;
  return Status::Ok();
}

}  // namespace mha

// The forward pass of a multi-head attention layer (see mha/attention.hpp for the equations):
// creation (the packed weights), the projections and the plan of a forward. The attention of the
// heads is in attention_heads.cpp, RoPE in rope.cpp.
#include "mha/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attention_internal.hpp"
#include "kernels.hpp"
#include "mha/threads.hpp"
#include "parallel.hpp"

namespace mha {
namespace {

bool copy_vec(const float* src, size_t n, std::vector<float>& dst) {
  if (!src) { dst.clear(); return true; }
  dst.assign(src, src + n);
  return true;
}

}  // namespace

Layer::Layer() = default;
Layer::~Layer() = default;

// ---- K/V packs ---------------------------------------------------------------------------------
// For one batch element, every kv head g gets (kernels.hpp, "panelled operands"):
//   Kᵀ [d_k, Tk] in panels of 8 keys (panel stride 8·d_k): the B operand of S = Q_i·K_gᵀ, a key
//      tile k0.. (k0 a multiple of 8) is the panels from k0 / 8 on;
//   V [Tk, d_v] in panels of 8 value columns with panel stride 8·round8(Tk): the B operand of
//      O += P·V, a key tile is rows k0.. of every panel.
// They are packed once per (batch element, kv head) and read by every query tile and key tile
// (and by the h/g query heads that share the kv head), so no GEMM repacks B in the attention loop.
// Their size is Tk·(Σ_kv d_k + Σ_kv d_v) floats plus padding to multiples of 8: the only O(T·d)
// working memory of a forward besides its input and output.

namespace {

/// Checks the weights' storage type and every weight for NaN/Inf (16-bit matrices by their bits),
/// naming the first bad one.
Status check_weights(const Resolved& r, const WeightsView& w) {
  const int half = int(w.type);
  if (half < 0 || half > 2)
    return Status::Error(Code::kInvalidArgument, "{weights}: type must be 0 (float32), 1 (float16) or 2 (bfloat16), got " +
                                                     std::to_string(half), "weights");
  struct M { const char* name; const float* p; int64_t rows, cols; };
  const M mats[] = {{"w_q", w.wq, r.d_model, r.q_width}, {"w_k", w.wk, r.k_dim, r.k_width},
                    {"w_v", w.wv, r.v_dim, r.v_width},   {"w_o", w.wo, r.o_width, r.d_model},
                    {"b_q", r.bias ? w.bq : nullptr, 1, r.q_width}, {"b_k", r.bias ? w.bk : nullptr, 1, r.k_width},
                    {"b_v", r.bias ? w.bv : nullptr, 1, r.v_width}, {"b_o", r.bias ? w.bo : nullptr, 1, r.d_model}};
  for (const M& m : mats) {
    if (!m.p) continue;
    const std::string what = std::string("weights.") + m.name;
    Status s = m.name[0] == 'b' ? check_finite(what.c_str(), m.p, {m.cols})
               : half           ? check_finite_half(what.c_str(), reinterpret_cast<const uint16_t*>(m.p), {m.rows, m.cols}, half)
                                : check_finite(what.c_str(), m.p, {m.rows, m.cols});
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status Layer::create(const Config& config, const WeightsView& w, std::unique_ptr<Layer>& out) {
  std::unique_ptr<Layer> L(new Layer());
  Status s = resolve(config, L->cfg_);
  if (!s.ok()) return s;
  const Resolved& r = L->cfg_;
  if (!w.wq || !w.wk || !w.wv || !w.wo)
    return Status::Error(Code::kInvalidArgument, "{weights}: W_Q, W_K, W_V and W_O are all required", "weights");
  if (r.bias && (!w.bq || !w.bk || !w.bv || !w.bo))
    return Status::Error(Code::kInvalidArgument, "{weights}: {bias} is on, so b_Q, b_K, b_V and b_O are all required", "weights");
  if (!(s = check_weights(r, w)).ok()) return s;
  const int half = int(w.type);  // 0: float32 matrices; 1, 2: 16-bit (half.hpp)
  auto bits = [](const float* p) { return reinterpret_cast<const uint16_t*>(p); };
  {
    // Under -fno-exceptions a failed std::vector allocation aborts the wasm instance: probe the
    // heap with malloc for everything create() allocates (the packed W_Q | W_K | W_V and W_O,
    // padded to panels of 8 columns, and the biases) and refuse cleanly.
    // W_K and W_V have k_dim and v_dim rows (d_model when they are fused with W_Q).
    const size_t qkv = kernels::panels_size(r.d_model, r.q_width) + kernels::panels_size(r.k_dim, r.k_width) +
                       kernels::panels_size(r.v_dim, r.v_width);
    const size_t mats_floats = (qkv + kernels::panels_size(r.o_width, r.d_model)) / (half ? 2 : 1);  // 16-bit: half the bytes
    const size_t floats = mats_floats + size_t(r.d_model) +
                          round8(r.q_width) + round8(r.k_width) + r.v_width;
    // volatile: clang removes an unused malloc/free pair (assuming success) otherwise.
    void* volatile probe = std::malloc(floats * sizeof(float));
    if (!probe)
      return Status::OutOfMemory("packing the weights", double(floats * sizeof(float)), "");
    std::free(probe);
  }
  if (r.k_dim == r.d_model && r.v_dim == r.d_model) {
    // One [d_model, N] matrix W_Q | W_K | W_V, each group starting on a panel boundary (zero columns
    // between), so that Q, K and V are panel-aligned column ranges of one packed B.
    L->qkv_k0_ = round8(r.q_width);
    L->qkv_v0_ = L->qkv_k0_ + round8(r.k_width);
    L->qkv_n_ = L->qkv_v0_ + r.v_width;
    // Packed straight from the three matrices: no assembled copy (0.75× the weights of peak heap).
    L->wqkv_.reset(new kernels::PackedB());
    if (half)
      kernels::pack_b_slices16(r.d_model, L->qkv_n_, half,
                               {{bits(w.wq), r.q_width, 0, r.q_width}, {bits(w.wk), r.k_width, L->qkv_k0_, r.k_width},
                                {bits(w.wv), r.v_width, L->qkv_v0_, r.v_width}},
                               *L->wqkv_);
    else
      kernels::pack_b_slices(r.d_model, L->qkv_n_,
                             {{w.wq, r.q_width, 0, r.q_width}, {w.wk, r.k_width, L->qkv_k0_, r.k_width},
                              {w.wv, r.v_width, L->qkv_v0_, r.v_width}},
                             *L->wqkv_);
    if (r.bias) {
      L->bqkv_.assign(L->qkv_n_, 0.f);
      std::memcpy(&L->bqkv_[0], w.bq, sizeof(float) * r.q_width);
      std::memcpy(&L->bqkv_[L->qkv_k0_], w.bk, sizeof(float) * r.k_width);
      std::memcpy(&L->bqkv_[L->qkv_v0_], w.bv, sizeof(float) * r.v_width);
    }
  } else {
    L->wq_.reset(new kernels::PackedB());
    L->wk_.reset(new kernels::PackedB());
    L->wv_.reset(new kernels::PackedB());
    if (half) {
      kernels::pack_b16(r.d_model, r.q_width, half, bits(w.wq), r.q_width, *L->wq_);
      kernels::pack_b16(r.k_dim, r.k_width, half, bits(w.wk), r.k_width, *L->wk_);
      kernels::pack_b16(r.v_dim, r.v_width, half, bits(w.wv), r.v_width, *L->wv_);
    } else {
      kernels::pack_b(r.d_model, r.q_width, w.wq, r.q_width, *L->wq_);
      kernels::pack_b(r.k_dim, r.k_width, w.wk, r.k_width, *L->wk_);
      kernels::pack_b(r.v_dim, r.v_width, w.wv, r.v_width, *L->wv_);
    }
    if (r.bias) {
      copy_vec(w.bq, r.q_width, L->bq_);
      copy_vec(w.bk, r.k_width, L->bk_);
      copy_vec(w.bv, r.v_width, L->bv_);
    }
  }
  L->wo_.reset(new kernels::PackedB());
  if (half) kernels::pack_b16(r.o_width, r.d_model, half, bits(w.wo), r.d_model, *L->wo_);
  else kernels::pack_b(r.o_width, r.d_model, w.wo, r.d_model, *L->wo_);
  if (r.bias) copy_vec(w.bo, r.d_model, L->bo_);
  L->kp_off_.resize(r.kv_heads);
  L->vp_off_.resize(r.kv_heads);
  out = std::move(L);
  return Status::Ok();
}

bool Layer::fuses(int batch, int tq, bool self) const {
  return wqkv_ && self && size_t(batch) * tq <= size_t(kFuseRows);
}

size_t Layer::workspace_bytes(int batch, int tq, int tk, bool self_attention) const {
  const Resolved& r = cfg_;
  if (self_attention) tk = tq;
  // Upper bound over needWeights / averageWeights / trace: the larger of the non-streaming scores
  // tile and the streaming one (when that path can be taken).
  // One tile per thread of the pool.
  const size_t scores = size_t(num_threads()) *
                        std::max(scores_floats(tq, tk, false, false), tk > kKeyTile ? scores_floats(tq, tk, true, false) : 0);
  // A trace never fuses; counting the fused layout for it only over-estimates.
  const bool fused = fuses(batch, tq, self_attention);
  return sizeof(float) * (ws_floats(r, fused, qkv_n_, batch, tq, tk) +
                          packs_floats(r, tk) + scores);
}

void Layer::project_rows(Projection which, int M, const float* x, float* y, int ldy) const {
  const Resolved& r = cfg_;
  if (which == Projection::kOutput)
    return kernels::gemm_packed_mt(M, x, r.o_width, *wo_, bo_.empty() ? nullptr : bo_.data(), y, ldy);
  const int w = static_cast<int>(which);
  if (wqkv_) {
    const int n0[] = {0, qkv_k0_, qkv_v0_}, n[] = {r.q_width, r.k_width, r.v_width};
    return kernels::gemm_packed_cols_mt(M, x, r.d_model, *wqkv_, n0[w], n[w], bqkv_.empty() ? nullptr : bqkv_.data(), y, ldy);
  }
  const kernels::PackedB* W[] = {wq_.get(), wk_.get(), wv_.get()};
  const std::vector<float>* b[] = {&bq_, &bk_, &bv_};
  kernels::gemm_packed_mt(M, x, W[w]->k, *W[w], b[w]->empty() ? nullptr : b[w]->data(), y, ldy);
}

void Layer::project(Projection which, int M, const float* x, float* y) const {
  const Resolved& r = cfg_;
  const int width[] = {r.q_width, r.k_width, r.v_width, r.d_model};
  project_rows(which, M, x, y, width[static_cast<int>(which)]);
}

void Layer::pack_kv(const float* K, int ldk, const float* V, int ldv, int t0, int n, int tk) {
  const Resolved& r = cfg_;
  const size_t vstride = size_t(kernels::kPanel) * round8(tk);
  for (int g = 0; g < r.kv_heads; ++g) {
    const int dk = r.kv_dk[g], dv = r.kv_dv[g];
    const size_t kstride = size_t(kernels::kPanel) * dk;
    kernels::pack_panels_t(dk, n, K + r.k_off[g], ldk, packs_.data() + kp_off_[g] + size_t(t0 / 8) * kstride, kstride);
    kernels::pack_panels(n, dv, V + r.v_off[g], ldv, packs_.data() + vp_off_[g] + size_t(t0) * kernels::kPanel, vstride);
  }
}

/// How one forward runs, chosen from its sizes and the outputs it asks for.
struct Layer::ForwardPlan {
  int batch = 1, tq = 0, tk = 0;
  bool self = true;       // key = value = query
  bool fused = false;     // Q | K | V of every row in one GEMM, kept in ws_ for the whole call
  bool kv_fused = false;  // K | V of a run of rows in one GEMM over their column range
  AttendArgs attend;      // sizes, masks and weight outputs (Q/K/V are set tile by tile)
};

Layer::ForwardPlan Layer::plan_forward(const ForwardArgs& a) const {
  const TraceOut& tr = a.trace;
  const bool tracing = tr.q || tr.k || tr.v || tr.scores || tr.concat;
  ForwardPlan p;
  p.self = a.key == nullptr && a.value == nullptr;
  p.batch = a.batch; p.tq = a.tq; p.tk = p.self ? a.tq : a.tk;
  p.fused = !tracing && fuses(p.batch, p.tq, p.self);
  p.kv_fused = !p.fused && wqkv_ && p.self && !tr.k && !tr.v;
  AttendArgs& t = p.attend;
  t.batch = p.batch; t.tq = p.tq; t.tk = p.tk;
  t.causal = a.causal;
  t.key_padding_mask = a.key_padding_mask;
  t.key_padding_add = a.key_padding_add;
  t.attn_mask = a.attn_mask; t.attn_mask_kind = a.attn_mask_kind;
  t.weights = a.weights; t.average_weights = a.average_weights;
  t.trace_scores = tr.scores;
  t.head_mask = a.head_mask;
  return p;
}

Status Layer::check_forward(const ForwardArgs& a) const {
  const Resolved& r = cfg_;
  const bool self = a.key == nullptr && a.value == nullptr;
  if (a.batch < 1 || a.tq < 1 || (!self && a.tk < 1))
    return Status::Error(Code::kShapeMismatch, "batch, query length and key length must be ≥ 1, got B = " +
                                                   std::to_string(a.batch) + ", Tq = " + std::to_string(a.tq) +
                                                   ", Tk = " + std::to_string(a.tk));
  if (!self && (a.key == nullptr || a.value == nullptr))
    return Status::Error(Code::kInvalidArgument, "{key} and {value} must be given together", "value");
  if (self && (r.k_dim != r.d_model || r.v_dim != r.d_model))
    return Status::Error(Code::kShapeMismatch, "self-attention needs {k_dim} = {v_dim} = {d_model}, and this layer has {k_dim} = " +
                                                   std::to_string(r.k_dim) + ", {v_dim} = " + std::to_string(r.v_dim) +
                                                   ", {d_model} = " + std::to_string(r.d_model) + ": pass {key} and {value}", "key");
  if (!a.output) return Status::Error(Code::kInvalidArgument, "{output} buffer is required", "output");
  const int B = a.batch, Tq = a.tq, Tk = self ? a.tq : a.tk;
  const FiniteCheck batched = FiniteCheck::batched();
  Status s = check_finite("query", a.query, {B, Tq, r.d_model}, batched);
  if (s.ok() && !self) s = check_finite("key", a.key, {B, Tk, r.k_dim}, batched);
  if (s.ok() && !self) s = check_finite("value", a.value, {B, Tk, r.v_dim}, batched);
  if (s.ok() && a.key_padding_add)
    s = check_finite("key_padding_mask", a.key_padding_add, {B, Tk}, FiniteCheck::mask(true));
  if (s.ok() && a.attn_mask_kind == MaskKind::kShared)
    s = check_finite("attn_mask", a.attn_mask, {Tq, Tk}, FiniteCheck::mask(false));
  if (s.ok() && a.attn_mask_kind == MaskKind::kPerHead)  // index b·h + head first, not the batch
    s = check_finite("attn_mask", a.attn_mask, {int64_t(B) * r.num_heads, Tq, Tk}, FiniteCheck::mask(false));
  if (s.ok() && a.head_mask) s = check_finite("head_mask", a.head_mask, {r.num_heads});
  return s;
}

void Layer::project_keys_values(const ForwardArgs& a, const ForwardPlan& p, int b, AttentionPlan& att) {
  const Resolved& r = cfg_;
  float* F = ws_.data();
  if (p.fused) {  // already projected: rows of b in the fused Q|K|V rows, read in place or packed from there
    const float* f = F + size_t(b) * p.tq * qkv_n_;
    att.k = f + qkv_k0_; att.v = f + qkv_v0_; att.ldk = att.ldv = qkv_n_;
    if (!att.direct) pack_kv(att.k, att.ldk, att.v, att.ldv, 0, p.tk, p.tk);
    return;
  }
  const TraceOut& tr = a.trace;
  const float* xk = p.self ? a.query : a.key;
  const float* xv = p.self ? a.query : a.value;
  const int kdim = p.self ? r.d_model : r.k_dim, vdim = p.self ? r.d_model : r.v_dim;
  for (int t0 = 0; t0 < p.tk; t0 += kProjRows) {
    const int n = std::min(kProjRows, p.tk - t0);
    const size_t row = size_t(b) * p.tk + t0;
    if (p.kv_fused) {  // K | V in one GEMM over their column range
      const int ld = qkv_n_ - qkv_k0_;
      kernels::gemm_packed_cols_mt(n, xk + row * kdim, kdim, *wqkv_, qkv_k0_, ld, bqkv_.empty() ? nullptr : bqkv_.data(), F, ld);
      if (r.has_rope()) rotate(true, F, ld, n, t0);  // RoPE on K before it is packed (table sized by forward)
      pack_kv(F, ld, F + (qkv_v0_ - qkv_k0_), ld, t0, n, p.tk);
    } else {  // into the trace when it asks for K or V, else into ws_
      float* K = tr.k ? tr.k + row * r.k_width : F;
      float* V = tr.v ? tr.v + row * r.v_width : F + size_t(n) * r.k_width;
      project_rows(Projection::kKey, n, xk + row * kdim, K, r.k_width);
      if (r.has_rope()) rotate(true, K, r.k_width, n, t0);  // RoPE on K (so the trace holds K after rotation)
      project_rows(Projection::kValue, n, xv + row * vdim, V, r.v_width);
      pack_kv(K, r.k_width, V, r.v_width, t0, n, p.tk);
    }
  }
}

const float* Layer::project_queries(const ForwardArgs& a, const ForwardPlan& p, size_t row, int rows, int pos0, int& ldq) {
  const Resolved& r = cfg_;
  if (p.fused) {  // already projected in the fused Q|K|V rows
    ldq = qkv_n_;
    return ws_.data() + row * qkv_n_;
  }
  float* q = a.trace.q ? a.trace.q + row * r.q_width : ws_.data();
  project_rows(Projection::kQuery, rows, a.query + row * r.d_model, q, r.q_width);
  if (r.has_rope()) rotate(false, q, r.q_width, rows, pos0);  // RoPE on Q (the trace holds Q after rotation)
  ldq = r.q_width;
  return q;
}

float* Layer::concat_rows(const ForwardArgs& a, const ForwardPlan& p, size_t row) {
  const Resolved& r = cfg_;
  if (a.trace.concat) return a.trace.concat + row * r.o_width;
  // after the fused Q|K|V rows, or after the Q rows (which reuse the K/V rows' space)
  return ws_.data() + (p.fused ? size_t(p.batch) * p.tq * qkv_n_ : size_t(std::min(kQRows, p.tq)) * r.q_width);
}

// Each step names the equation of mha/attention.hpp it computes and the shape it produces; Σd_k
// sums over query heads, Σ_kv over the key/value heads.
Status Layer::forward(const ForwardArgs& a) {
  Status s = check_forward(a);
  if (!s.ok()) return s;
  const Resolved& r = cfg_;
  const ForwardPlan p = plan_forward(a);
  AttentionPlan att;
  // The fused layout keeps every row's K and V in ws_ for the whole call: attention can read them there.
  s = prepare_attention(p.attend, ws_floats(r, p.fused, qkv_n_, p.batch, p.tq, p.tk), p.fused, "forward", att);
  if (!s.ok()) return s;
  if (r.has_rope()) {  // RoPE: cos/sin of positions 0 … max(Tq, Tk) − 1
    s = ensure_rope_table(std::max(p.tq, p.tk));
    if (!s.ok()) return s;
  }
  // Q | K | V = X·[W_Q | W_K | W_V] + b, for every row at once         [B·Tq, Σd_k + Σ_kv d_k + Σ_kv d_v]
  if (p.fused) {
    kernels::gemm_packed_mt(p.batch * p.tq, a.query, r.d_model, *wqkv_, bqkv_.empty() ? nullptr : bqkv_.data(),
                         ws_.data(), qkv_n_);
    // Q ← RoPE(Q), K ← RoPE(K) at positions 0 … Tq − 1 of each batch element
    if (r.has_rope())
      for (int b = 0; b < p.batch; ++b) {
        float* f = ws_.data() + size_t(b) * p.tq * qkv_n_;
        rotate(false, f, qkv_n_, p.tq, 0);
        rotate(true, f + qkv_k0_, qkv_n_, p.tq, 0);
      }
  }
  for (int b = 0; b < p.batch; ++b) {
    // K = X_k·W_K + b_K  [Tk, Σ_kv d_k],  V = X_v·W_V + b_V  [Tk, Σ_kv d_v], packed per kv head
    project_keys_values(a, p, b, att);
    for (int r0 = 0; r0 < p.tq; r0 += kQRows) {  // query rows in runs of kQRows: O(kQRows·d) working memory
      const int rows = std::min(kQRows, p.tq - r0);
      const size_t row = size_t(b) * p.tq + r0;
      int ldq;
      // Q = X_q·W_Q + b_Q                                                            [rows, Σd_k]
      const float* Q = project_queries(a, p, row, rows, r0, ldq);
      // head_i = softmax(Q_i·K_gᵀ·scale_i + M)·V_g, side by side: concat           [rows, Σd_v]
      float* concat = concat_rows(a, p, row);
      attend_rows(att, b, r0, rows, Q, ldq, concat, r.o_width);
      // output = concat·W_O + b_O                                                    [rows, d_model]
      project_rows(Projection::kOutput, rows, concat, a.output + row * r.d_model, r.d_model);
    }
  }
  // Finite inputs and weights can still overflow float32 inside the layer (|x|·|W| > 3.4e38 gives
  // ±Inf projections or scores, then NaN weights): refuse the result instead of returning a silent
  // NaN. Regression test: tests/property.test.mjs, "overflow".
  return check_output_finite("output", a.output, {p.batch, p.tq, r.d_model});
}

}  // namespace mha

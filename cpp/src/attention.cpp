// The forward pass of a multi-head attention layer (see mha/attention.hpp for the equations).
#include "mha/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels.hpp"

namespace mha {
namespace {

constexpr int kRowBlock = 64;   // query rows whose scores are held at once: memory O(64·Tk) per head
constexpr int kKeyBlock = 256;  // keys per step of the streaming (online-softmax) path
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string index_string(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? static_cast<int64_t>(flat % shape[d]) : 0;
    flat = shape[d] ? flat / shape[d] : flat;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string value_string(float x) {
  if (std::isnan(x)) return "NaN";
  return x > 0 ? "Infinity" : "-Infinity";
}

bool copy_vec(const float* src, size_t n, std::vector<float>& dst) {
  if (!src) { dst.clear(); return true; }
  dst.assign(src, src + n);
  return true;
}

/// The masks that apply to one (batch element, head).
struct HeadMasks {
  const float* mask = nullptr;     // additive [Tq, Tk] of this head, or null
  const uint8_t* kpm = nullptr;    // [Tk] of this batch element, or null
  bool causal = false;
  int offset = 0;                  // query i sits at absolute position i + offset
  int tk = 0;
  bool any() const { return mask || kpm || causal; }
};

/// Applies the masks to scores S [rows, n] of queries r0.. and keys k0.. (leading dimension lds):
/// adds the additive mask, sets padded and (causal) future keys to -inf.
void apply_masks(const HeadMasks& hm, int r0, int rows, int k0, int n, float* S, int lds) {
  for (int rr = 0; rr < rows; ++rr) {
    float* srow = S + size_t(rr) * lds;
    if (hm.mask) {
      const float* mrow = hm.mask + size_t(r0 + rr) * hm.tk + k0;
      for (int j = 0; j < n; ++j) srow[j] += mrow[j];
    }
    if (hm.kpm)
      for (int j = 0; j < n; ++j)
        if (hm.kpm[k0 + j]) srow[j] = kNegInf;
    if (hm.causal)
      for (int j = std::max(0, r0 + rr + hm.offset + 1 - k0); j < n; ++j) srow[j] = kNegInf;
  }
}

void scale_rows(int rows, int cols, float* X, int ldx, const float* f) {
  for (int r = 0; r < rows; ++r) {
    if (f[r] == 1.f) continue;
    float* x = X + size_t(r) * ldx;
    for (int c = 0; c < cols; ++c) x[c] *= f[r];
  }
}

}  // namespace

Status check_finite(const char* what, const float* data, const std::vector<int64_t>& shape,
                    bool allow_neg_inf) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  for (size_t i = 0; i < n; ++i) {
    const float x = data[i];
    if (std::isfinite(x) || (allow_neg_inf && x == kNegInf)) continue;
    return Status::Error(Code::kNonFinite, std::string(what) + index_string(i, shape) + " is " +
                                               value_string(x) + (allow_neg_inf ? "; expected a finite number or -Infinity"
                                                                                : "; expected a finite number"));
  }
  return Status::Ok();
}

// Issue 6 (robustness): see Layer::forward.
Status check_output_finite(const char* what, const float* data, const std::vector<int64_t>& shape) {
  Status s = check_finite(what, data, shape);
  if (!s.ok())
    s.message = "float32 overflow: " + s.message.substr(0, s.message.find(';')) +
                " although every input and weight is finite; their magnitudes are too large for float32"
                " (max 3.4e38) in the projections or scores: scale them down";
  return s;
}

Layer::Layer() = default;
Layer::~Layer() = default;

Status Layer::create(const Config& config, const WeightsView& w, std::unique_ptr<Layer>& out) {
  std::unique_ptr<Layer> L(new Layer());
  Status s = resolve(config, L->cfg_);
  if (!s.ok()) return s;
  const Resolved& r = L->cfg_;
  if (!w.wq || !w.wk || !w.wv || !w.wo)
    return Status::Error(Code::kInvalidArgument, "weights: W_Q, W_K, W_V and W_O are all required");
  if (r.bias && (!w.bq || !w.bk || !w.bv || !w.bo))
    return Status::Error(Code::kInvalidArgument, "weights: bias is on, so b_Q, b_K, b_V and b_O are all required");
  struct M { const char* name; const float* p; int64_t rows, cols; };
  const M mats[] = {{"wQ", w.wq, r.d_model, r.q_width}, {"wK", w.wk, r.k_dim, r.k_width},
                    {"wV", w.wv, r.v_dim, r.v_width},   {"wO", w.wo, r.o_width, r.d_model},
                    {"bQ", r.bias ? w.bq : nullptr, 1, r.q_width}, {"bK", r.bias ? w.bk : nullptr, 1, r.k_width},
                    {"bV", r.bias ? w.bv : nullptr, 1, r.v_width}, {"bO", r.bias ? w.bo : nullptr, 1, r.d_model}};
  for (const M& m : mats) {
    if (!m.p) continue;
    std::vector<int64_t> shape = m.rows == 1 && m.name[0] == 'b' ? std::vector<int64_t>{m.cols}
                                                                  : std::vector<int64_t>{m.rows, m.cols};
    s = check_finite((std::string("weights.") + m.name).c_str(), m.p, shape);
    if (!s.ok()) return s;
  }
  L->wq_.reset(new kernels::PackedB());
  L->wk_.reset(new kernels::PackedB());
  L->wv_.reset(new kernels::PackedB());
  L->wo_.reset(new kernels::PackedB());
  kernels::pack_b(r.d_model, r.q_width, w.wq, r.q_width, *L->wq_);
  kernels::pack_b(r.k_dim, r.k_width, w.wk, r.k_width, *L->wk_);
  kernels::pack_b(r.v_dim, r.v_width, w.wv, r.v_width, *L->wv_);
  kernels::pack_b(r.o_width, r.d_model, w.wo, r.d_model, *L->wo_);
  if (r.bias) {
    copy_vec(w.bq, r.q_width, L->bq_);
    copy_vec(w.bk, r.k_width, L->bk_);
    copy_vec(w.bv, r.v_width, L->bv_);
    copy_vec(w.bo, r.d_model, L->bo_);
  }
  out = std::move(L);
  return Status::Ok();
}

size_t Layer::workspace_bytes(int batch, int tq, int tk, bool self_attention) const {
  const Resolved& r = cfg_;
  if (self_attention) tk = tq;
  const size_t B = batch, Tq = tq, Tk = tk;
  return sizeof(float) * (B * Tq * (r.q_width + r.o_width) + B * Tk * (r.k_width + r.v_width) +
                          static_cast<size_t>(std::min(kRowBlock, tq)) * Tk);
}

void Layer::project(int which, int M, const float* x, float* y) const {
  const kernels::PackedB* W[] = {wq_.get(), wk_.get(), wv_.get(), wo_.get()};
  const std::vector<float>* b[] = {&bq_, &bk_, &bv_, &bo_};
  const float* bias = b[which]->empty() ? nullptr : b[which]->data();
  kernels::gemm_packed(M, x, W[which]->k, *W[which], bias, y, W[which]->n);
}

Status Layer::forward(const ForwardArgs& a) {
  const Resolved& r = cfg_;
  const bool self = a.key == nullptr && a.value == nullptr;
  if (a.batch < 1 || a.tq < 1 || (!self && a.tk < 1))
    return Status::Error(Code::kShapeMismatch, "batch, query length and key length must be ≥ 1, got B = " +
                                                   std::to_string(a.batch) + ", Tq = " + std::to_string(a.tq) +
                                                   ", Tk = " + std::to_string(a.tk));
  if (!self && (a.key == nullptr || a.value == nullptr))
    return Status::Error(Code::kInvalidArgument, "key and value must be given together");
  if (self && (r.k_dim != r.d_model || r.v_dim != r.d_model))
    return Status::Error(Code::kShapeMismatch, "self-attention needs kDim = vDim = dModel = " +
                                                   std::to_string(r.d_model) + "; pass key and value");
  if (!a.output) return Status::Error(Code::kInvalidArgument, "output buffer is required");
  const int B = a.batch, Tq = a.tq, Tk = self ? a.tq : a.tk;
  Status s = check_finite("query", a.query, {B, Tq, r.d_model});
  if (s.ok() && !self) s = check_finite("key", a.key, {B, Tk, r.k_dim});
  if (s.ok() && !self) s = check_finite("value", a.value, {B, Tk, r.v_dim});
  if (s.ok() && a.attn_mask_kind == MaskKind::kShared) s = check_finite("attnMask", a.attn_mask, {Tq, Tk}, true);
  if (s.ok() && a.attn_mask_kind == MaskKind::kPerHead)
    s = check_finite("attnMask", a.attn_mask, {int64_t(B) * r.num_heads, Tq, Tk}, true);
  if (!s.ok()) return s;

  const size_t nq = size_t(B) * Tq * r.q_width, nk = size_t(B) * Tk * r.k_width,
               nv = size_t(B) * Tk * r.v_width, no = size_t(B) * Tq * r.o_width;
  const size_t need = (a.trace.q ? 0 : nq) + (a.trace.k ? 0 : nk) + (a.trace.v ? 0 : nv) + (a.trace.concat ? 0 : no);
  if (!ws_.reserve(need))
    return Status::Error(Code::kOutOfMemory, "forward needs " + std::to_string(need * sizeof(float)) +
                                                 " bytes of workspace, which the heap cannot give");
  float* p = ws_.data();
  float* Q = a.trace.q ? a.trace.q : p;
  if (!a.trace.q) p += nq;
  float* K = a.trace.k ? a.trace.k : p;
  if (!a.trace.k) p += nk;
  float* V = a.trace.v ? a.trace.v : p;
  if (!a.trace.v) p += nv;
  float* C = a.trace.concat ? a.trace.concat : p;

  project(0, B * Tq, a.query, Q);
  project(1, B * Tk, self ? a.query : a.key, K);
  project(2, B * Tk, self ? a.query : a.value, V);

  AttendArgs t;
  t.batch = B; t.tq = Tq; t.tk = Tk;
  t.q = Q; t.ldq = r.q_width; t.q_bs = size_t(Tq) * r.q_width;
  t.k = K; t.ldk = r.k_width; t.k_bs = size_t(Tk) * r.k_width;
  t.v = V; t.ldv = r.v_width; t.v_bs = size_t(Tk) * r.v_width;
  t.causal = a.causal;
  t.key_padding_mask = a.key_padding_mask;
  t.attn_mask = a.attn_mask; t.attn_mask_kind = a.attn_mask_kind;
  t.concat = C;
  t.weights = a.weights; t.average_weights = a.average_weights;
  t.trace_scores = a.trace.scores;
  s = attend(t);
  if (!s.ok()) return s;
  project(3, B * Tq, C, a.output);
  // Issue 6 (robustness): finite inputs and weights can still overflow float32 inside the layer
  // (|x|·|W| > 3.4e38 gives ±Inf projections or scores, then NaN weights); refuse the result
  // instead of returning a silent NaN. Regression test: tests/property.test.mjs, "overflow".
  return check_output_finite("output", a.output, {B, Tq, r.d_model});
}

Status Layer::attend(const AttendArgs& a) {
  const Resolved& r = cfg_;
  const int B = a.batch, Tq = a.tq, Tk = a.tk, h = r.num_heads, ow = r.o_width;
  const int blk = std::min(kRowBlock, Tq);
  const bool per_head_weights = a.weights && !a.average_weights;
  // Without weights or a trace, long key ranges stream through key blocks with the online
  // softmax: memory O(row block · key block) whatever Tk is.
  const bool streaming = !a.weights && !a.trace_scores && Tk > kKeyBlock;
  const size_t scratch = streaming ? size_t(blk) * (kKeyBlock + 3) : per_head_weights ? 0 : size_t(blk) * Tk;
  if (scratch && !scores_.reserve(scratch))
    return Status::Error(Code::kOutOfMemory, "attention needs " + std::to_string(scratch * 4) +
                                                 " bytes for a block of scores, which the heap cannot give");
  if (a.weights && a.average_weights) std::fill(a.weights, a.weights + size_t(B) * Tq * Tk, 0.f);
  const float inv_h = 1.f / h;
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < h; ++i) {
      const int g = r.kv_of(i), dk = r.dk[i], dv = r.dv[i];
      const float* qb = a.q + b * a.q_bs + r.q_off[i];
      const float* kb = a.k + b * a.k_bs + r.k_off[g];
      const float* vb = a.v + b * a.v_bs + r.v_off[g];
      HeadMasks hm;
      hm.tk = Tk;
      hm.kpm = a.key_padding_mask ? a.key_padding_mask + size_t(b) * Tk : nullptr;
      hm.causal = a.causal;
      hm.offset = a.causal_offset;
      if (a.attn_mask_kind == MaskKind::kShared) hm.mask = a.attn_mask;
      if (a.attn_mask_kind == MaskKind::kPerHead) hm.mask = a.attn_mask + (size_t(b) * h + i) * Tq * Tk;
      float* trace = a.trace_scores ? a.trace_scores + (size_t(b) * h + i) * Tq * Tk : nullptr;
      for (int r0 = 0; r0 < Tq; r0 += blk) {
        const int rows = std::min(blk, Tq - r0);
        const float* qrows = qb + size_t(r0) * a.ldq;
        float* O = a.concat + (size_t(b) * Tq + r0) * ow + r.o_off[i];
        // Keys beyond the causal limit of the block's last row are never attended: skip them
        // (unless the trace wants every unmasked score).
        int kend = Tk;
        if (a.causal && !trace) kend = std::max(0, std::min(Tk, r0 + rows + a.causal_offset));

        if (streaming) {
          float* S = scores_.data();
          float* m = S + size_t(blk) * kKeyBlock;
          float* l = m + blk;
          float* alpha = l + blk;
          std::fill(m, m + rows, kNegInf);
          std::fill(l, l + rows, 0.f);
          for (int rr = 0; rr < rows; ++rr) std::fill(O + size_t(rr) * ow, O + size_t(rr) * ow + dv, 0.f);
          for (int k0 = 0; k0 < kend; k0 += kKeyBlock) {
            const int n = std::min(kKeyBlock, kend - k0);
            kernels::gemm_abt(rows, n, dk, r.scale[i], qrows, a.ldq, kb + size_t(k0) * a.ldk, a.ldk, S, kKeyBlock);
            if (hm.any()) apply_masks(hm, r0, rows, k0, n, S, kKeyBlock);
            kernels::softmax_online_block(rows, n, S, kKeyBlock, m, l, alpha);
            if (k0 > 0) scale_rows(rows, dv, O, ow, alpha);
            kernels::gemm_ab(rows, dv, n, S, kKeyBlock, vb + size_t(k0) * a.ldv, a.ldv, O, ow, true);
          }
          for (int rr = 0; rr < rows; ++rr) alpha[rr] = l[rr] > 0.f ? 1.f / l[rr] : 0.f;  // all masked: 0
          scale_rows(rows, dv, O, ow, alpha);
          continue;
        }

        float* S = per_head_weights ? a.weights + ((size_t(b) * h + i) * Tq + r0) * Tk : scores_.data();
        const int lds = Tk;
        if (kend > 0) kernels::gemm_abt(rows, kend, dk, r.scale[i], qrows, a.ldq, kb, a.ldk, S, lds);
        if (trace)
          for (int rr = 0; rr < rows; ++rr)
            std::memcpy(trace + size_t(r0 + rr) * Tk, S + size_t(rr) * lds, sizeof(float) * Tk);
        if (hm.any()) apply_masks(hm, r0, rows, 0, kend, S, lds);
        kernels::softmax_rows(rows, kend, S, lds);
        if (kend < Tk && per_head_weights)
          for (int rr = 0; rr < rows; ++rr) std::fill(S + size_t(rr) * lds + kend, S + size_t(rr + 1) * lds, 0.f);
        kernels::gemm_ab(rows, dv, kend, S, lds, vb, a.ldv, O, ow, false);
        if (a.weights && a.average_weights) {
          float* W = a.weights + (size_t(b) * Tq + r0) * Tk;
          for (int rr = 0; rr < rows; ++rr)
            for (int j = 0; j < kend; ++j) W[size_t(rr) * Tk + j] += inv_h * S[size_t(rr) * lds + j];
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace mha

// The forward pass of a multi-head attention layer (see mha/attention.hpp for the equations).
#include "mha/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "kernels.hpp"

namespace mha {
namespace {

// Block sizes; overridable at build time only for tuning experiments (em++ -DMHA_ROW_BLOCK=…).
#ifndef MHA_ROW_BLOCK
#define MHA_ROW_BLOCK 64
#endif
#ifndef MHA_KEY_BLOCK
#define MHA_KEY_BLOCK 512
#endif
constexpr int kRowBlock = MHA_ROW_BLOCK;  // query rows whose scores are held at once: O(kRowBlock·Tk) per head
constexpr int kKeyBlock = MHA_KEY_BLOCK;  // keys per step of the streaming (online-softmax) path (multiple of 8)
constexpr int kProjRows = 256;  // rows of K/V projected at once before packing (multiple of 8)
constexpr int kQRows = 128;     // query rows projected, attended and output-projected at once
constexpr int kFuseRows = 128;  // self-attention with ≤ this many rows (B·T): one fused Q|K|V GEMM
// Attention over ≤ kDirectKeys keys, or for ≤ kDirectQueries queries (KV-cache steps), reads K/V in
// place (no packs) where they stay readable for the whole call: the fused self-attention forward
// and attend(). Cross-attention, traced and larger forwards always pack.
constexpr int kDirectKeys = 64;
constexpr int kDirectQueries = 8;
static_assert(kKeyBlock % 8 == 0 && kProjRows % 8 == 0, "K/V packs are addressed in panels of 8 keys");
inline int round8(int n) { return (n + 7) & ~7; }
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string index_string(size_t flat, Shape shape) {
  const int64_t* dims = shape.begin();
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = dims[d] ? static_cast<int64_t>(flat % dims[d]) : 0;
    flat = dims[d] ? flat / dims[d] : flat;
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
  const float* kpm_add = nullptr;  // additive [Tk] of this batch element, or null
  bool causal = false;
  int offset = 0;                  // query i sits at absolute position i + offset
  int tk = 0;
  bool any() const { return mask || kpm || kpm_add || causal; }
};

/// Applies the masks to scores S [rows, n] of queries r0.. and keys k0.. (leading dimension lds):
/// adds the additive attention mask and the additive key padding mask, then sets padded (boolean
/// mask) and (causal) future keys to -inf.
/// Not inlined: it runs once per block of scores, and inlined into attend_rows it makes that
/// function's optimizing compile (V8 tiers it up during the first long forward) about 8 MB larger,
/// which a long forward's peak memory pays (docs/performance.md).
__attribute__((noinline)) void apply_masks(const HeadMasks& hm, int r0, int rows, int k0, int n, float* S, int lds) {
  for (int rr = 0; rr < rows; ++rr) {
    float* srow = S + size_t(rr) * lds;
    if (hm.mask) {
      const float* mrow = hm.mask + size_t(r0 + rr) * hm.tk + k0;
      for (int j = 0; j < n; ++j) srow[j] += mrow[j];
    }
    if (hm.kpm_add)
      for (int j = 0; j < n; ++j) srow[j] += hm.kpm_add[k0 + j];
    if (hm.kpm)
      for (int j = 0; j < n; ++j)
        if (hm.kpm[k0 + j]) srow[j] = kNegInf;
    if (hm.causal)
      for (int j = std::max(0, r0 + rr + hm.offset + 1 - k0); j < n; ++j) srow[j] = kNegInf;
  }
}

}  // namespace

Status non_finite_status(const char* what, const float* data, Shape shape, bool allow_neg_inf, bool overflow) {
  const size_t n = shape_size(shape);
  size_t i = 0;
  while (i < n && (std::isfinite(data[i]) || (allow_neg_inf && data[i] == kNegInf))) ++i;
  if (i == n) return Status::Ok();
  const std::string at = std::string(what) + index_string(i, shape) + " is " + value_string(data[i]);
  if (overflow)
    return Status::Error(Code::kNonFinite, "float32 overflow: " + at +
                                               " although every input and weight is finite; their magnitudes are too"
                                               " large for float32 (max 3.4e38) in the projections or scores: scale them down");
  return Status::Error(Code::kNonFinite, at + (allow_neg_inf ? "; expected a finite number or -Infinity"
                                                             : "; expected a finite number"));
}

Layer::Layer() = default;
Layer::~Layer() = default;

// ---- K/V packs ---------------------------------------------------------------------------------
// For one batch element, every kv head g gets (kernels.hpp, "panelled operands"):
//   Kᵀ [d_k, Tk] in panels of 8 keys (panel stride 8·d_k): the B operand of S = Q_i·K_gᵀ, a key
//      block k0.. (k0 a multiple of 8) is the panels from k0 / 8 on;
//   V [Tk, d_v] in panels of 8 value columns with panel stride 8·round8(Tk): the B operand of
//      O += P·V, a key block is rows k0.. of every panel.
// They are packed once per (batch element, kv head) and read by every query block and key block
// (and by the h/g query heads that share the kv head), so no GEMM repacks B in the attention loop.
// Their size is Tk·(Σ_kv d_k + Σ_kv d_v) floats plus padding to multiples of 8: the only O(T·d)
// working memory of a forward besides its input and output.

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
    const std::string what = std::string("weights.") + m.name;
    s = m.name[0] == 'b' ? check_finite(what.c_str(), m.p, {m.cols}) : check_finite(what.c_str(), m.p, {m.rows, m.cols});
    if (!s.ok()) return s;
  }
  {
    // Under -fno-exceptions a failed std::vector allocation aborts the wasm instance: probe the
    // heap with malloc for everything create() allocates (the packed W_Q | W_K | W_V and W_O,
    // padded to panels of 8 columns, and the biases) and refuse cleanly.
    // W_K and W_V have k_dim and v_dim rows (d_model when they are fused with W_Q).
    const size_t qkv = kernels::panels_size(r.d_model, r.q_width) + kernels::panels_size(r.k_dim, r.k_width) +
                       kernels::panels_size(r.v_dim, r.v_width);
    const size_t floats = qkv + kernels::panels_size(r.o_width, r.d_model) + size_t(r.d_model) +
                          round8(r.q_width) + round8(r.k_width) + r.v_width;
    // volatile: clang removes an unused malloc/free pair (assuming success) otherwise.
    void* volatile probe = std::malloc(floats * sizeof(float));
    if (!probe)
      return Status::Error(Code::kOutOfMemory, "packing the weights needs " + std::to_string(floats * sizeof(float)) +
                                                   " bytes, which the heap cannot give");
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
    kernels::pack_b_blocks(r.d_model, L->qkv_n_,
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
    kernels::pack_b(r.d_model, r.q_width, w.wq, r.q_width, *L->wq_);
    kernels::pack_b(r.k_dim, r.k_width, w.wk, r.k_width, *L->wk_);
    kernels::pack_b(r.v_dim, r.v_width, w.wv, r.v_width, *L->wv_);
    if (r.bias) {
      copy_vec(w.bq, r.q_width, L->bq_);
      copy_vec(w.bk, r.k_width, L->bk_);
      copy_vec(w.bv, r.v_width, L->bv_);
    }
  }
  L->wo_.reset(new kernels::PackedB());
  kernels::pack_b(r.o_width, r.d_model, w.wo, r.d_model, *L->wo_);
  if (r.bias) copy_vec(w.bo, r.d_model, L->bo_);
  L->kp_off_.resize(r.kv_heads);
  L->vp_off_.resize(r.kv_heads);
  out = std::move(L);
  return Status::Ok();
}

namespace {

/// Floats of the K/V packs of one batch element (see "K/V packs"); when kp and vp are given, also
/// the offsets of every kv head's K and V packs in them.
size_t packs_floats(const Resolved& r, int tk, size_t* kp = nullptr, size_t* vp = nullptr) {
  size_t n = 0;
  for (int g = 0; g < r.kv_heads; ++g) {
    if (kp) kp[g] = n;
    n += kernels::panels_size(r.kv_dk[g], tk);
    if (vp) vp[g] = n;
    n += size_t(round8(r.kv_dv[g])) * round8(tk);
  }
  return n;
}

/// Floats of the scores scratch of attend_rows for these sizes.
size_t scores_floats(int tq, int tk, bool streaming, bool per_head_weights) {
  const size_t blk = std::min(kRowBlock, tq);
  return streaming ? blk * (kKeyBlock + 3) : per_head_weights ? 0 : blk * tk;
}

/// Floats of ws_ for a forward: the fused Q|K|V rows, or the larger of the K/V block (phase 1) and
/// the Q and head-output blocks (phase 2), which share it. Trace buffers only make it smaller.
size_t ws_floats(const Resolved& r, bool fused, int qkv_n, int batch, int tq, int tk) {
  if (fused)
    return size_t(batch) * tq * qkv_n + size_t(std::min(kQRows, tq)) * r.o_width;
  const size_t kv = size_t(std::min(kProjRows, tk)) * (round8(r.k_width) + r.v_width);
  const size_t qo = size_t(std::min(kQRows, tq)) * (r.q_width + r.o_width);
  return std::max(kv, qo);
}

}  // namespace

bool Layer::fuses(int batch, int tq, bool self) const {
  return wqkv_ && self && size_t(batch) * tq <= size_t(kFuseRows);
}

size_t Layer::workspace_bytes(int batch, int tq, int tk, bool self_attention) const {
  const Resolved& r = cfg_;
  if (self_attention) tk = tq;
  // Upper bound over needWeights / averageWeights / trace: the larger of the non-streaming scores
  // block and the streaming one (when that path can be taken).
  const size_t scores = std::max(scores_floats(tq, tk, false, false), tk > kKeyBlock ? scores_floats(tq, tk, true, false) : 0);
  // A trace never fuses; counting the fused layout for it only over-estimates.
  const bool fused = fuses(batch, tq, self_attention);
  return sizeof(float) * (ws_floats(r, fused, qkv_n_, batch, tq, tk) +
                          packs_floats(r, tk) + scores);
}

void Layer::project_rows(int which, int M, const float* x, float* y, int ldy) const {
  const Resolved& r = cfg_;
  if (which == 3) return kernels::gemm_packed(M, x, r.o_width, *wo_, bo_.empty() ? nullptr : bo_.data(), y, ldy);
  if (wqkv_) {
    const int n0[] = {0, qkv_k0_, qkv_v0_}, n[] = {r.q_width, r.k_width, r.v_width};
    return kernels::gemm_packed_cols(M, x, r.d_model, *wqkv_, n0[which], n[which], bqkv_.empty() ? nullptr : bqkv_.data(),
                                     y, ldy);
  }
  const kernels::PackedB* W[] = {wq_.get(), wk_.get(), wv_.get()};
  const std::vector<float>* b[] = {&bq_, &bk_, &bv_};
  kernels::gemm_packed(M, x, W[which]->k, *W[which], b[which]->empty() ? nullptr : b[which]->data(), y, ldy);
}

void Layer::project(int which, int M, const float* x, float* y) const {
  const Resolved& r = cfg_;
  const int width[] = {r.q_width, r.k_width, r.v_width, r.d_model};
  project_rows(which, M, x, y, width[which]);
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

/// Everything attend_rows needs besides the query rows: sizes, masks, weights outputs.
struct Layer::Masks {
  int tq = 0, tk = 0;
  bool causal = false; int causal_offset = 0;
  const uint8_t* key_padding_mask = nullptr;  // [B, Tk]
  const float* key_padding_add = nullptr;     // [B, Tk]
  const float* attn_mask = nullptr; MaskKind attn_mask_kind = MaskKind::kNone;
  float* weights = nullptr; bool average_weights = false;
  float* trace_scores = nullptr;
  bool streaming = false;
  // direct: K/V are read in place (rows of batch element b at k / v, set by the caller before each
  // attend_rows) instead of from the packs: few keys or few queries, where packing costs as much as
  // the products.
  bool direct = false;
  const float* k = nullptr; int ldk = 0;
  const float* v = nullptr; int ldv = 0;
};

void Layer::attend_rows(const Masks& a, int b, int r0q, int nrows, const float* q, int ldq, float* o, int ldo) {
  const Resolved& r = cfg_;
  const int Tq = a.tq, Tk = a.tk, h = r.num_heads;
  const bool per_head_weights = a.weights && !a.average_weights;
  const float inv_h = 1.f / h;
  const size_t vstride = size_t(kernels::kPanel) * round8(Tk);
  for (int i = 0; i < h; ++i) {
    const int g = r.kv_of(i), dk = r.dk[i], dv = r.dv[i];
    const size_t kstride = size_t(kernels::kPanel) * dk;
    const float* kp = a.direct ? nullptr : packs_.data() + kp_off_[g];
    const float* vp = a.direct ? nullptr : packs_.data() + vp_off_[g];
    const float* kd = a.direct ? a.k + r.k_off[g] : nullptr;
    const float* vd = a.direct ? a.v + r.v_off[g] : nullptr;
    // S[rows, n] = Q_i·K_gᵀ·scale over keys k0 .. k0+n, and O (+)= P[rows, n]·V_g over the same keys.
    auto scores = [&](const float* qrows, int rows, int k0, int n, float* S, int lds) {
      if (a.direct) kernels::gemm_abt(rows, n, dk, r.scale[i], qrows, ldq, kd + size_t(k0) * a.ldk, a.ldk, S, lds);
      else kernels::gemm_panels(rows, n, dk, r.scale[i], qrows, ldq, kp + size_t(k0 / 8) * kstride, kstride, S, lds, false);
    };
    auto weigh = [&](int rows, int k0, int n, const float* P, int ldp, float* O, bool accumulate) {
      if (a.direct) kernels::gemm_ab(rows, dv, n, P, ldp, vd + size_t(k0) * a.ldv, a.ldv, O, ldo, accumulate);
      else kernels::gemm_panels(rows, dv, n, 1.f, P, ldp, vp + size_t(k0) * kernels::kPanel, vstride, O, ldo, accumulate);
    };
    HeadMasks hm;
    hm.tk = Tk;
    hm.kpm = a.key_padding_mask ? a.key_padding_mask + size_t(b) * Tk : nullptr;
    hm.kpm_add = a.key_padding_add ? a.key_padding_add + size_t(b) * Tk : nullptr;
    hm.causal = a.causal;
    hm.offset = a.causal_offset;
    if (a.attn_mask_kind == MaskKind::kShared) hm.mask = a.attn_mask;
    if (a.attn_mask_kind == MaskKind::kPerHead) hm.mask = a.attn_mask + (size_t(b) * h + i) * Tq * Tk;
    float* trace = a.trace_scores ? a.trace_scores + (size_t(b) * h + i) * Tq * Tk : nullptr;
    for (int rb = 0; rb < nrows; rb += kRowBlock) {
      const int rows = std::min(kRowBlock, nrows - rb), r0 = r0q + rb;
      const float* qrows = q + size_t(rb) * ldq + r.q_off[i];
      float* O = o + size_t(rb) * ldo + r.o_off[i];
      // Keys beyond the causal limit of the block's last row are never attended: skip them
      // (unless the trace wants every unmasked score). Only the key block on the diagonal is
      // partly masked; the ones above it are never computed.
      int kend = Tk;
      if (a.causal && !trace) kend = std::max(0, std::min(Tk, r0 + rows + a.causal_offset));
      if (kend == 0) {
        for (int rr = 0; rr < rows; ++rr) std::fill(O + size_t(rr) * ldo, O + size_t(rr) * ldo + dv, 0.f);
        if (per_head_weights)
          for (int rr = 0; rr < rows; ++rr) {
            float* W = a.weights + ((size_t(b) * h + i) * Tq + r0 + rr) * Tk;
            std::fill(W, W + Tk, 0.f);
          }
        continue;
      }

      if (a.streaming) {
        // Layout of scores_ (scores_floats): S [blk, kKeyBlock], then m, l, alpha [blk] each.
        const int blk = std::min(kRowBlock, Tq);
        float* S = scores_.data();
        float* m = S + size_t(blk) * kKeyBlock;
        float* l = m + blk;
        float* alpha = l + blk;
        std::fill(m, m + rows, kNegInf);
        std::fill(l, l + rows, 0.f);
        for (int k0 = 0; k0 < kend; k0 += kKeyBlock) {
          const int n = std::min(kKeyBlock, kend - k0);
          scores(qrows, rows, k0, n, S, kKeyBlock);
          if (hm.any()) apply_masks(hm, r0, rows, k0, n, S, kKeyBlock);
          kernels::softmax_online_block(rows, n, S, kKeyBlock, m, l, alpha);
          if (k0 > 0) kernels::scale_rows(rows, dv, O, ldo, alpha);
          weigh(rows, k0, n, S, kKeyBlock, O, k0 > 0);
        }
        for (int rr = 0; rr < rows; ++rr) alpha[rr] = l[rr] > 0.f ? 1.f / l[rr] : 0.f;  // all masked: 0
        kernels::scale_rows(rows, dv, O, ldo, alpha);
        continue;
      }

      float* S = per_head_weights ? a.weights + ((size_t(b) * h + i) * Tq + r0) * Tk : scores_.data();
      const int lds = Tk;
      scores(qrows, rows, 0, kend, S, lds);
      if (trace)
        for (int rr = 0; rr < rows; ++rr)
          std::memcpy(trace + size_t(r0 + rr) * Tk, S + size_t(rr) * lds, sizeof(float) * Tk);
      if (hm.any()) apply_masks(hm, r0, rows, 0, kend, S, lds);
      kernels::softmax_rows(rows, kend, S, lds);
      if (kend < Tk && per_head_weights)
        for (int rr = 0; rr < rows; ++rr) std::fill(S + size_t(rr) * lds + kend, S + size_t(rr + 1) * lds, 0.f);
      weigh(rows, 0, kend, S, lds, O, false);
      if (a.weights && a.average_weights) {
        float* W = a.weights + (size_t(b) * Tq + r0) * Tk;
        for (int rr = 0; rr < rows; ++rr)
          for (int j = 0; j < kend; ++j) W[size_t(rr) * Tk + j] += inv_h * S[size_t(rr) * lds + j];
      }
    }
  }
}

Status Layer::prepare_attention(const AttendArgs& a, size_t nws, bool kv_in_place, const char* who, Masks& m) {
  const Resolved& r = cfg_;
  m.tq = a.tq; m.tk = a.tk;
  m.causal = a.causal; m.causal_offset = a.causal_offset;
  m.key_padding_mask = a.key_padding_mask;
  m.key_padding_add = a.key_padding_add;
  m.attn_mask = a.attn_mask; m.attn_mask_kind = a.attn_mask_kind;
  m.weights = a.weights; m.average_weights = a.average_weights;
  m.trace_scores = a.trace_scores;
  m.streaming = !a.weights && !a.trace_scores && a.tk > kKeyBlock;
  m.direct = kv_in_place && (a.tk <= kDirectKeys || a.tq <= kDirectQueries);
  const size_t npk = m.direct ? 0 : packs_floats(r, a.tk, kp_off_.data(), vp_off_.data());
  const size_t nsc = scores_floats(a.tq, a.tk, m.streaming, a.weights && !a.average_weights);
  if ((nws && !ws_.reserve(nws)) || (npk && !packs_.reserve(npk)) || (nsc && !scores_.reserve(nsc)))
    return Status::Error(Code::kOutOfMemory, std::string(who) + " needs " + std::to_string((nws + npk + nsc) * sizeof(float)) +
                                                 " bytes of workspace (projections, packed keys and values, scores),"
                                                 " which the heap cannot give");
  if (a.weights && a.average_weights) std::fill(a.weights, a.weights + size_t(a.batch) * a.tq * a.tk, 0.f);
  return Status::Ok();
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
  if (s.ok() && a.key_padding_add) s = check_finite("keyPaddingMask", a.key_padding_add, {B, Tk}, true);
  if (s.ok() && a.attn_mask_kind == MaskKind::kShared) s = check_finite("attnMask", a.attn_mask, {Tq, Tk}, true);
  if (s.ok() && a.attn_mask_kind == MaskKind::kPerHead)
    s = check_finite("attnMask", a.attn_mask, {int64_t(B) * r.num_heads, Tq, Tk}, true);
  if (!s.ok()) return s;

  const TraceOut& tr = a.trace;
  const bool tracing = tr.q || tr.k || tr.v || tr.scores || tr.concat;
  const bool fused = !tracing && fuses(B, Tq, self);
  AttendArgs t;  // the sizes, masks and weight outputs (Q/K/V are projected block by block below)
  t.batch = B; t.tq = Tq; t.tk = Tk;
  t.causal = a.causal;
  t.key_padding_mask = a.key_padding_mask;
  t.key_padding_add = a.key_padding_add;
  t.attn_mask = a.attn_mask; t.attn_mask_kind = a.attn_mask_kind;
  t.weights = a.weights; t.average_weights = a.average_weights;
  t.trace_scores = tr.scores;
  Masks m;
  // The fused layout keeps every row's K and V in ws_ for the whole call: attention can read them there.
  s = prepare_attention(t, ws_floats(r, fused, qkv_n_, B, Tq, Tk), fused, "forward", m);
  if (!s.ok()) return s;
  float* F = ws_.data();
  // Fused: Q | K | V of every row in one GEMM (small inputs: one call instead of three).
  if (fused) kernels::gemm_packed(B * Tq, a.query, r.d_model, *wqkv_, bqkv_.empty() ? nullptr : bqkv_.data(), F, qkv_n_);
  const float* xk = self ? a.query : a.key;
  const float* xv = self ? a.query : a.value;
  const int kdim = self ? r.d_model : r.k_dim, vdim = self ? r.d_model : r.v_dim;
  for (int b = 0; b < B; ++b) {
    // Phase 1: K and V of batch element b, projected in row blocks and packed per kv head.
    if (fused) {
      const float* f = F + size_t(b) * Tq * qkv_n_;
      m.k = f + qkv_k0_; m.v = f + qkv_v0_; m.ldk = m.ldv = qkv_n_;
      if (!m.direct) pack_kv(m.k, m.ldk, m.v, m.ldv, 0, Tk, Tk);
    } else {
      for (int t0 = 0; t0 < Tk; t0 += kProjRows) {
        const int n = std::min(kProjRows, Tk - t0);
        const size_t row = size_t(b) * Tk + t0;
        float *K, *V;
        int ldk, ldv;
        if (wqkv_ && self && !tr.k && !tr.v) {  // K | V in one GEMM over their column range
          ldk = ldv = qkv_n_ - qkv_k0_;
          K = F;
          V = F + (qkv_v0_ - qkv_k0_);
          kernels::gemm_packed_cols(n, xk + row * kdim, kdim, *wqkv_, qkv_k0_, ldk,
                                    bqkv_.empty() ? nullptr : bqkv_.data(), K, ldk);
        } else {
          K = tr.k ? tr.k + row * r.k_width : F;
          V = tr.v ? tr.v + row * r.v_width : F + size_t(n) * r.k_width;
          ldk = r.k_width;
          ldv = r.v_width;
          project_rows(1, n, xk + row * kdim, K, ldk);
          project_rows(2, n, xv + row * vdim, V, ldv);
        }
        pack_kv(K, ldk, V, ldv, t0, n, Tk);
      }
    }
    // Phase 2: query blocks: Q rows, attention of every head, the output rows.
    for (int r0 = 0; r0 < Tq; r0 += kQRows) {
      const int rows = std::min(kQRows, Tq - r0);
      const size_t row = size_t(b) * Tq + r0;
      const float* Q;
      int ldq;
      if (fused) {
        Q = F + row * qkv_n_;
        ldq = qkv_n_;
      } else {
        float* q = tr.q ? tr.q + row * r.q_width : F;
        project_rows(0, rows, a.query + row * r.d_model, q, r.q_width);
        Q = q;
        ldq = r.q_width;
      }
      float* O = tr.concat ? tr.concat + row * r.o_width
                           : fused ? F + size_t(B) * Tq * qkv_n_ : F + size_t(std::min(kQRows, Tq)) * r.q_width;
      attend_rows(m, b, r0, rows, Q, ldq, O, r.o_width);
      project_rows(3, rows, O, a.output + row * r.d_model, r.d_model);
    }
  }
  // Finite inputs and weights can still overflow float32 inside the layer (|x|·|W| > 3.4e38 gives
  // ±Inf projections or scores, then NaN weights): refuse the result instead of returning a silent
  // NaN. Regression test: tests/property.test.mjs, "overflow".
  return check_output_finite("output", a.output, {B, Tq, r.d_model});
}

Status Layer::attend(const AttendArgs& a) {
  const Resolved& r = cfg_;
  const int B = a.batch, Tq = a.tq, Tk = a.tk;
  Masks m;
  Status s = prepare_attention(a, 0, true, "attention", m);
  if (!s.ok()) return s;
  for (int b = 0; b < B; ++b) {
    m.k = a.k + b * a.k_bs; m.ldk = a.ldk;
    m.v = a.v + b * a.v_bs; m.ldv = a.ldv;
    if (!m.direct) pack_kv(m.k, m.ldk, m.v, m.ldv, 0, Tk, Tk);
    attend_rows(m, b, 0, Tq, a.q + b * a.q_bs, a.ldq, a.concat + size_t(b) * Tq * r.o_width, r.o_width);
  }
  return Status::Ok();
}

}  // namespace mha

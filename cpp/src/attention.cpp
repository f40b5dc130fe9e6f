// The forward pass of a multi-head attention layer (see mha/attention.hpp for the equations).
#include "mha/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "kernels.hpp"
#include "mha/threads.hpp"
#include "parallel.hpp"

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

/// The multi-index of element `flat` of a row-major tensor of this shape.
std::vector<int64_t> multi_index(size_t flat, Shape shape) {
  const int64_t* dims = shape.begin();
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = dims[d] ? static_cast<int64_t>(flat % dims[d]) : 0;
    flat = dims[d] ? flat / dims[d] : flat;
  }
  return idx;
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
  // Score modifiers of the layer (Config): soft-cap (0 = off), this head's ALiBi slope, the window.
  float softcap = 0.f;
  bool alibi = false;
  float slope = 0.f;
  int window_left = -1, window_right = -1;
  bool window() const { return window_left >= 0 || window_right >= 0; }
  bool any() const { return mask || kpm || kpm_add || causal || window(); }
  bool mods() const { return softcap > 0.f || alibi; }
};

/// tanh(a) as a rational function (Eigen 3.4's generic_fast_tanh_float: odd degree-13 over even
/// degree-6 polynomial on a clamped to ±7.905, |error| below 3e-7 there, a itself for |a| < 4e-4).
/// Compares and selects instead of calls, so the loops below vectorize (std::tanh is a libm call per score).
inline float tanh_rational(float a) {
  constexpr float c = 7.90531110763549805f;
  const float x = a > c ? c : (a < -c ? -c : a);
  const float x2 = x * x;
  float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  p = x * p;
  float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  q = x2 * q + 4.89352518554385e-03f;
  const float r = p / q;
  return (a < 4e-4f && a > -4e-4f) ? x : r;
}

/// The score modifiers on scaled scores S [rows, n] of queries r0.. and keys k0..: soft-capping
/// S ← cap·tanh(S / cap) (Gemma 2), then ALiBi S ← S − slope·|pos_i − j| (Press et al. 2022), in one
/// pass per row. Runs only when a layer has them, where the scores are computed (no extra pass over
/// a [Tq, Tk] matrix).
__attribute__((noinline)) void apply_mods(const HeadMasks& hm, int r0, int rows, int k0, int n, float* S, int lds) {
  // 1/cap is clamped to FLT_MAX: for a cap below 1/FLT_MAX (a subnormal one) it would be +inf and a
  // score of 0 would become 0·inf = NaN. Clamped, the result stays within cap (< 1.2e-38) of cap·tanh(S / cap).
  const float cap = hm.softcap, slope = hm.slope;
  const float inv_cap = cap > 0.f ? std::min(1.f / cap, std::numeric_limits<float>::max()) : 0.f;
  for (int rr = 0; rr < rows; ++rr) {
    float* srow = S + size_t(rr) * lds;
    const float d0 = float(r0 + rr + hm.offset - k0);  // pos_i − key k0
    if (cap > 0.f && hm.alibi)
      for (int j = 0; j < n; ++j) srow[j] = cap * tanh_rational(srow[j] * inv_cap) - slope * std::fabs(d0 - float(j));
    else if (cap > 0.f)
      for (int j = 0; j < n; ++j) srow[j] = cap * tanh_rational(srow[j] * inv_cap);
    else
      for (int j = 0; j < n; ++j) srow[j] -= slope * std::fabs(d0 - float(j));
  }
}

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
    if (hm.window()) {  // keys j outside pos − left ≤ j ≤ pos + right
      const int64_t pos = int64_t(r0) + rr + hm.offset;
      const int64_t lo = hm.window_left >= 0 ? pos - hm.window_left - k0 : 0;
      const int64_t hi = hm.window_right >= 0 ? pos + hm.window_right + 1 - k0 : n;
      for (int j = 0; j < n && j < lo; ++j) srow[j] = kNegInf;
      for (int64_t j = std::max<int64_t>(0, hi); j < n; ++j) srow[j] = kNegInf;
    }
  }
}

}  // namespace

Status non_finite_status(const char* what, const float* data, Shape shape, FiniteCheck how) {
  const bool allow_neg_inf = how.allow_neg_inf;
  const size_t n = shape_size(shape);
  size_t i = 0;
  while (i < n && (std::isfinite(data[i]) || (allow_neg_inf && data[i] == kNegInf))) ++i;
  if (i == n) return Status::Ok();
  const std::string at = "{" + std::string(what) + "}{index} is " + value_string(data[i]);
  Status s = how.overflow
                 ? Status::Error(Code::kNonFinite, "float32 overflow: " + at +
                                                       " although every input and weight is finite; their magnitudes are too"
                                                       " large for float32 (max 3.4e38) in the projections or scores: scale them down",
                                 what)
                 : Status::Error(Code::kNonFinite, at + (allow_neg_inf ? "; expected a finite number or -Infinity"
                                                                       : "; expected a finite number"),
                                 what);
  s.index = multi_index(i, shape);
  s.batch_first = how.batch_first;
  return s;
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
    return Status::Error(Code::kInvalidArgument, "{weights}: W_Q, W_K, W_V and W_O are all required", "weights");
  if (r.bias && (!w.bq || !w.bk || !w.bv || !w.bo))
    return Status::Error(Code::kInvalidArgument, "{weights}: {bias} is on, so b_Q, b_K, b_V and b_O are all required", "weights");
  struct M { const char* name; const float* p; int64_t rows, cols; };
  const M mats[] = {{"w_q", w.wq, r.d_model, r.q_width}, {"w_k", w.wk, r.k_dim, r.k_width},
                    {"w_v", w.wv, r.v_dim, r.v_width},   {"w_o", w.wo, r.o_width, r.d_model},
                    {"b_q", r.bias ? w.bq : nullptr, 1, r.q_width}, {"b_k", r.bias ? w.bk : nullptr, 1, r.k_width},
                    {"b_v", r.bias ? w.bv : nullptr, 1, r.v_width}, {"b_o", r.bias ? w.bo : nullptr, 1, r.d_model}};
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

Status Layer::ensure_rope_table(int npos) {
  const Resolved& r = cfg_;
  if (!r.has_rope() || npos <= rope_npos_) return Status::Ok();
  if (rope_col_.empty()) {  // columns of the distinct widths
    std::vector<int> widths;
    rope_col_.resize(r.num_heads);
    for (int i = 0; i < r.num_heads; ++i) {
      const int w = r.rope_width(i);
      size_t k = 0, col = 0;
      while (k < widths.size() && widths[k] != w) col += widths[k++];
      if (k == widths.size()) widths.push_back(w);
      rope_col_[i] = int(col);
    }
    rope_stride_ = 0;
    for (int w : widths) rope_stride_ += w;
  }
  const int n = std::max(npos, std::min(2 * rope_npos_, npos + 4096));  // grow geometrically, boundedly
  if (rope_stride_ > 0 && !rope_tab_.reserve(size_t(n) * rope_stride_))
    return Status::OutOfMemory("rope", double(size_t(n) * rope_stride_ * sizeof(float)), "RoPE cos/sin table");
  float* t = rope_tab_.data();
  for (int i = 0; i < r.num_heads; ++i) {
    const int w = r.rope_width(i), col = rope_col_[i];
    if (std::find(rope_col_.begin(), rope_col_.begin() + i, col) != rope_col_.begin() + i) continue;  // filled already
    for (int p = 0; p < w / 2; ++p) {
      const double f = std::pow(double(r.rope_base), -2.0 * p / w);  // θ^(−2p/w)
      for (int pos = 0; pos < n; ++pos) {
        const double ang = double(pos) * f;
        t[size_t(pos) * rope_stride_ + col + p] = float(std::cos(ang));
        t[size_t(pos) * rope_stride_ + col + w / 2 + p] = float(std::sin(ang));
      }
    }
  }
  rope_npos_ = n;
  return Status::Ok();
}

Status Layer::rotate(bool keys, float* x, int ld, int rows, int pos0) {
  const Resolved& r = cfg_;
  if (!r.has_rope() || rows <= 0) return Status::Ok();
  Status s = ensure_rope_table(pos0 + rows);
  if (!s.ok()) return s;
  const int nh = keys ? r.kv_heads : r.num_heads, group = r.num_heads / r.kv_heads;
  const bool inter = r.rope_interleaved;
  for (int rr = 0; rr < rows; ++rr) {
    float* row = x + size_t(rr) * ld;
    const float* tab = rope_tab_.data() + size_t(pos0 + rr) * rope_stride_;
    for (int hh = 0; hh < nh; ++hh) {
      const int head = keys ? hh * group : hh, w = r.rope_width(head), half = w / 2;
      float* v = row + (keys ? r.k_off[hh] : r.q_off[hh]);
      const float* cs = tab + rope_col_[head];  // cos of the half pairs, then their sin
      const float* sns = cs + half;
      if (inter) {
        for (int p = 0; p < half; ++p) {
          const float c = cs[p], sn = sns[p], a = v[2 * p], b = v[2 * p + 1];
          v[2 * p] = a * c - b * sn;
          v[2 * p + 1] = a * sn + b * c;
        }
      } else {
        for (int p = 0; p < half; ++p) {  // contiguous: vectorizes
          const float c = cs[p], sn = sns[p], a = v[p], b = v[p + half];
          v[p] = a * c - b * sn;
          v[p + half] = a * sn + b * c;
        }
      }
    }
  }
  return Status::Ok();
}

bool Layer::fuses(int batch, int tq, bool self) const {
  return wqkv_ && self && size_t(batch) * tq <= size_t(kFuseRows);
}

size_t Layer::workspace_bytes(int batch, int tq, int tk, bool self_attention) const {
  const Resolved& r = cfg_;
  if (self_attention) tk = tq;
  // Upper bound over needWeights / averageWeights / trace: the larger of the non-streaming scores
  // block and the streaming one (when that path can be taken).
  // One block per thread of the pool.
  const size_t scores = size_t(num_threads()) *
                        std::max(scores_floats(tq, tk, false, false), tk > kKeyBlock ? scores_floats(tq, tk, true, false) : 0);
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

/// How the attention of one call runs, fixed before any work: its arguments (sizes, masks, weight
/// and trace outputs; k/v, ldk/ldv: see `direct`) and the choices below.
struct Layer::AttentionPlan : AttendArgs {
  // streaming: keys in blocks of kKeyBlock with an online softmax (long key sequences whose
  // weights are not returned), so scores never need O(Tq·Tk) memory.
  bool streaming = false;
  // direct: K/V are read in place (rows of batch element b at k / v, set by the caller before each
  // attend_rows) instead of from the packs: few keys or few queries, where packing costs as much as
  // the products.
  bool direct = false;
  // Floats of one thread's scores scratch (scores_ holds one per thread of the pool).
  size_t scratch_floats = 0;
};

namespace {

/// Query head i of batch element b: its K_g and V_g (packed, or rows in place), scale and masks,
/// and where its weights and traced scores go.
struct Head {
  int dk = 0, dv = 0;
  float scale = 1.f;
  bool direct = false;
  const float* kp = nullptr; size_t kstride = 0;  // packed Kᵀ (panels of 8 keys)
  const float* vp = nullptr; size_t vstride = 0;  // packed V (panels of 8 columns)
  const float* kd = nullptr; int ldk = 0;         // K rows in place (direct)
  const float* vd = nullptr; int ldv = 0;         // V rows in place (direct)
  HeadMasks masks;
  float* weights = nullptr;  // [Tq, Tk] of (b, i) when per-head weights are returned, else null
  float* trace = nullptr;    // [Tq, Tk] traced scores of (b, i), or null

  /// S[rows, n] = Q_i·K_gᵀ·scale over keys k0 .. k0+n.
  void scores(const float* q, int ldq, int rows, int k0, int n, float* S, int lds) const {
    if (direct) kernels::gemm_abt(rows, n, dk, scale, q, ldq, kd + size_t(k0) * ldk, ldk, S, lds);
    else kernels::gemm_panels(rows, n, dk, scale, q, ldq, kp + size_t(k0 / 8) * kstride, kstride, S, lds, false);
  }
  /// O[rows, d_v] (+)= P[rows, n]·V_g over keys k0 .. k0+n.
  void weigh(int rows, int k0, int n, const float* P, int ldp, float* O, int ldo, bool accumulate) const {
    if (direct) kernels::gemm_ab(rows, dv, n, P, ldp, vd + size_t(k0) * ldv, ldv, O, ldo, accumulate);
    else kernels::gemm_panels(rows, dv, n, 1.f, P, ldp, vp + size_t(k0) * kernels::kPanel, vstride, O, ldo, accumulate);
  }
};

/// One block of query rows r0 .. r0+rows of a head: Q_i rows at q (leading dimension ldq), head
/// output rows at o (leading dimension ldo), keys kbeg .. kend attended (causal rows and windows
/// skip the rest; kbeg is a multiple of 8 unless K/V are read in place).
struct RowBlock {
  int r0 = 0, rows = 0, kbeg = 0, kend = 0;
  const float* q = nullptr; int ldq = 0;
  float* o = nullptr; int ldo = 0;
};

/// head_i rows = softmax(Q_i·K_gᵀ·scale + M)·V_g with every score row held at once ([rows, Tk] in
/// S, or straight in the returned weights). Averaged weights are added to avg ([rows, Tk]).
void attend_block(const Head& hd, const RowBlock& blk, int tk, float* S, float* avg, float inv_h) {
  const int rows = blk.rows, kbeg = blk.kbeg, kend = blk.kend, lds = tk, n = kend - kbeg;
  float* Sb = S + kbeg;                                                       // keys kbeg .. kend
  hd.scores(blk.q, blk.ldq, rows, kbeg, n, Sb, lds);                         // S = Q_i·K_gᵀ·scale [rows, n]
  if (hd.masks.mods()) apply_mods(hd.masks, blk.r0, rows, kbeg, n, Sb, lds);  // soft-cap, ALiBi
  if (hd.trace)  // a trace attends every key (kbeg = 0, kend = tk)
    for (int rr = 0; rr < rows; ++rr)
      std::memcpy(hd.trace + size_t(blk.r0 + rr) * tk, S + size_t(rr) * lds, sizeof(float) * tk);
  if (hd.masks.any()) apply_masks(hd.masks, blk.r0, rows, kbeg, n, Sb, lds);  // S += M
  kernels::softmax_rows(rows, n, Sb, lds);                                    // P = softmax(S) by row
  if ((kbeg > 0 || kend < tk) && hd.weights)                                  // keys outside the causal limit / window
    for (int rr = 0; rr < rows; ++rr) {
      std::fill(S + size_t(rr) * lds, S + size_t(rr) * lds + kbeg, 0.f);
      std::fill(S + size_t(rr) * lds + kend, S + size_t(rr + 1) * lds, 0.f);
    }
  hd.weigh(rows, kbeg, n, Sb, lds, blk.o, blk.ldo, false);                    // head_i = P·V_g [rows, d_v]
  if (avg)
    for (int rr = 0; rr < rows; ++rr)
      for (int j = kbeg; j < kend; ++j) avg[size_t(rr) * tk + j] += inv_h * S[size_t(rr) * lds + j];
}

/// The same over key blocks of kKeyBlock with an online softmax (Milakov & Gimelshein 2018; the
/// FlashAttention recurrence): running max m and sum l per row, earlier output rescaled by alpha.
/// scratch: S [blk, kKeyBlock], then m, l, alpha [blk] each (scores_floats), blk = min(kRowBlock, Tq).
void attend_block_streaming(const Head& hd, const RowBlock& blk, int blk_rows, float* scratch) {
  const int rows = blk.rows;
  float* S = scratch;
  float* m = S + size_t(blk_rows) * kKeyBlock;
  float* l = m + blk_rows;
  float* alpha = l + blk_rows;
  std::fill(m, m + rows, kNegInf);
  std::fill(l, l + rows, 0.f);
  for (int k0 = blk.kbeg; k0 < blk.kend; k0 += kKeyBlock) {  // key blocks outside a window are skipped
    const int n = std::min(kKeyBlock, blk.kend - k0);
    hd.scores(blk.q, blk.ldq, rows, k0, n, S, kKeyBlock);                                // S = Q_i·K_gᵀ·scale
    if (hd.masks.mods()) apply_mods(hd.masks, blk.r0, rows, k0, n, S, kKeyBlock);       // soft-cap, ALiBi
    if (hd.masks.any()) apply_masks(hd.masks, blk.r0, rows, k0, n, S, kKeyBlock);       // S += M
    kernels::softmax_online_block(rows, n, S, kKeyBlock, m, l, alpha);                  // P = exp(S − m)
    if (k0 > blk.kbeg) kernels::scale_rows(rows, hd.dv, blk.o, blk.ldo, alpha);
    hd.weigh(rows, k0, n, S, kKeyBlock, blk.o, blk.ldo, k0 > blk.kbeg);                      // O += P·V_g
  }
  for (int rr = 0; rr < rows; ++rr) alpha[rr] = l[rr] > 0.f ? 1.f / l[rr] : 0.f;  // all masked: 0
  kernels::scale_rows(rows, hd.dv, blk.o, blk.ldo, alpha);                        // head_i = O / l
}

}  // namespace

void Layer::attend_rows(const AttentionPlan& a, int b, int r0q, int nrows, const float* q, int ldq, float* o, int ldo) {
  const Resolved& r = cfg_;
  const int Tq = a.tq, Tk = a.tk, h = r.num_heads;
  const bool per_head_weights = a.weights && !a.average_weights;
  const bool avg_weights = a.weights && a.average_weights;
  // Query head i of batch element b: its K_g and V_g, scale and masks, where its outputs go.
  auto head = [&](int i) {
    const int g = r.kv_of(i);
    Head hd;
    hd.dk = r.dk[i]; hd.dv = r.dv[i]; hd.scale = r.scale[i];
    hd.direct = a.direct;
    if (a.direct) {
      hd.kd = a.k + r.k_off[g]; hd.ldk = a.ldk;
      hd.vd = a.v + r.v_off[g]; hd.ldv = a.ldv;
    } else {
      hd.kp = packs_.data() + kp_off_[g]; hd.kstride = size_t(kernels::kPanel) * hd.dk;
      hd.vp = packs_.data() + vp_off_[g]; hd.vstride = size_t(kernels::kPanel) * round8(Tk);
    }
    HeadMasks& hm = hd.masks;
    hm.tk = Tk;
    hm.kpm = a.key_padding_mask ? a.key_padding_mask + size_t(b) * Tk : nullptr;
    hm.kpm_add = a.key_padding_add ? a.key_padding_add + size_t(b) * Tk : nullptr;
    hm.causal = a.causal;
    hm.offset = a.causal_offset;
    hm.softcap = r.softcap;
    hm.alibi = !r.alibi_slopes.empty();
    hm.slope = hm.alibi ? r.alibi_slopes[i] : 0.f;
    hm.window_left = r.window_left; hm.window_right = r.window_right;
    if (a.attn_mask_kind == MaskKind::kShared) hm.mask = a.attn_mask;
    if (a.attn_mask_kind == MaskKind::kPerHead) hm.mask = a.attn_mask + (size_t(b) * h + i) * Tq * Tk;
    if (per_head_weights) hd.weights = a.weights + (size_t(b) * h + i) * Tq * Tk;
    if (a.trace_scores) hd.trace = a.trace_scores + (size_t(b) * h + i) * Tq * Tk;
    return hd;
  };
  // Rows rb .. rb + kRowBlock of head i, with this thread's scores scratch.
  auto block = [&](int i, int rb, float* scratch) {
    const Head hd = head(i);
    const HeadMasks& hm = hd.masks;
    RowBlock blk;
    blk.rows = std::min(kRowBlock, nrows - rb);
    blk.r0 = r0q + rb;
    blk.q = q + size_t(rb) * ldq + r.q_off[i]; blk.ldq = ldq;
    blk.o = o + size_t(rb) * ldo + r.o_off[i]; blk.ldo = ldo;
    // Keys beyond the causal limit of the block's last row are never attended: skip them
    // (unless the trace wants every unmasked score). Only the key block on the diagonal is
    // partly masked; the ones above it are never computed.
    blk.kend = Tk;
    if (a.causal && !hd.trace) blk.kend = std::max(0, std::min(Tk, blk.r0 + blk.rows + a.causal_offset));
    // Likewise keys outside the window of every row of the block (Longformer / Mistral sliding window):
    // never computed, and in a KV-cache step never read.
    if (hm.window() && !hd.trace) {
      const int64_t p0 = int64_t(blk.r0) + a.causal_offset, p1 = p0 + blk.rows - 1;  // first and last positions
      if (hm.window_right >= 0) blk.kend = int(std::max<int64_t>(0, std::min<int64_t>(blk.kend, p1 + hm.window_right + 1)));
      if (hm.window_left >= 0) {
        const int64_t k = std::min<int64_t>(Tk, std::max<int64_t>(0, p0 - hm.window_left));
        blk.kbeg = a.direct ? int(k) : int(k) & ~7;  // packed Kᵀ is addressed in panels of 8 keys
      }
    }
    if (blk.kend <= blk.kbeg) {  // every key masked: output and weights 0
      for (int rr = 0; rr < blk.rows; ++rr) std::fill(blk.o + size_t(rr) * ldo, blk.o + size_t(rr) * ldo + hd.dv, 0.f);
      if (hd.weights) std::fill(hd.weights + size_t(blk.r0) * Tk, hd.weights + size_t(blk.r0 + blk.rows) * Tk, 0.f);
    } else if (a.streaming) {
      attend_block_streaming(hd, blk, std::min(kRowBlock, Tq), scratch);
    } else {
      float* S = hd.weights ? hd.weights + size_t(blk.r0) * Tk : scratch;
      float* avg = avg_weights ? a.weights + (size_t(b) * Tq + blk.r0) * Tk : nullptr;
      attend_block(hd, blk, Tk, S, avg, 1.f / h);
    }
    // head_mask: head i's output (its columns of the concat) times head_mask[i]; 0 = ablated.
    if (a.head_mask && a.head_mask[i] != 1.f) {
      const float f = a.head_mask[i];
      for (int rr = 0; rr < blk.rows; ++rr) {
        float* row = blk.o + size_t(rr) * ldo;
        for (int c = 0; c < hd.dv; ++c) row[c] *= f;
      }
    }
  };
  // Tasks: (head, row block), or a row block with every head in order when the averaged weights
  // sum the heads into the same rows. Each task writes only its own rows and columns, and adds
  // the heads to the average in the same order as one thread, so any thread count gives the same
  // bits. Small calls run on this thread (waking the pool costs more than they do).
  const int blocks = (nrows + kRowBlock - 1) / kRowBlock;
  const int tasks = avg_weights ? blocks : h * blocks;
  auto task = [&](int t, int thread) {
    float* scratch = scores_.data() + size_t(thread) * a.scratch_floats;
    if (!avg_weights) return block(t / blocks, (t % blocks) * kRowBlock, scratch);
    for (int i = 0; i < h; ++i) block(i, t * kRowBlock, scratch);
  };
  const long macs = long(nrows) * (a.direct ? Tk : round8(Tk)) * (r.q_width + r.o_width);
  if (macs < kernels::kParallelMacs) {
    for (int t = 0; t < tasks; ++t) task(t, 0);
  } else {
    parallel::for_each(tasks, task);
  }
}

Status Layer::prepare_attention(const AttendArgs& a, size_t nws, bool kv_in_place, const char* who, AttentionPlan& m) {
  const Resolved& r = cfg_;
  static_cast<AttendArgs&>(m) = a;
  m.streaming = !a.weights && !a.trace_scores && a.tk > kKeyBlock;
  m.direct = kv_in_place && (a.tk <= kDirectKeys || a.tq <= kDirectQueries);
  const size_t npk = m.direct ? 0 : packs_floats(r, a.tk, kp_off_.data(), vp_off_.data());
  // One scores block per thread of the pool (attend_rows runs head row-blocks in parallel).
  m.scratch_floats = scores_floats(a.tq, a.tk, m.streaming, a.weights && !a.average_weights);
  const size_t nsc = m.scratch_floats * size_t(num_threads());
  // The K/V packs (the largest) first: malloc places a block in a freed hole that fits before it
  // grows the heap, and a hole left by freed staging (the weights at creation) that can hold the
  // packs then does; the smaller ws_ taken first could leave it too small and push the packs
  // above the heap's top, onto pages never written before (more RSS).
  if ((npk && !packs_.reserve(npk)) || (nws && !ws_.reserve(nws)) || (nsc && !scores_.reserve(nsc)))
    return Status::OutOfMemory(who, double((nws + npk + nsc) * sizeof(float)),
                               "workspace (projections, packed keys and values, scores)");
  if (a.weights && a.average_weights) std::fill(a.weights, a.weights + size_t(a.batch) * a.tq * a.tk, 0.f);
  return Status::Ok();
}

/// How one forward runs, chosen from its sizes and the outputs it asks for.
struct Layer::ForwardPlan {
  int batch = 1, tq = 0, tk = 0;
  bool self = true;       // key = value = query
  bool fused = false;     // Q | K | V of every row in one GEMM, kept in ws_ for the whole call
  bool kv_fused = false;  // K | V of a row block in one GEMM over their column range
  AttendArgs attend;      // sizes, masks and weight outputs (Q/K/V are set block by block)
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
  if (p.fused) {  // already projected: rows of b in the fused block, read in place or packed from there
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
  if (p.fused) {  // already projected in the fused block
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
  // after the fused Q|K|V rows, or after the Q block (which reuses the K/V block's space)
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
    for (int r0 = 0; r0 < p.tq; r0 += kQRows) {  // query rows in blocks: O(kQRows·d) working memory
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

Status Layer::attend(const AttendArgs& a) {
  const Resolved& r = cfg_;
  const int B = a.batch, Tq = a.tq, Tk = a.tk;
  AttentionPlan m;
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

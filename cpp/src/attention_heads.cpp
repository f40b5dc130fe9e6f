// The attention of the heads of a multi-head attention layer: per (batch element, head, tile of
// query rows), scores Q_i·K_gᵀ·scale, score modifiers, masks, a stable softmax (whole rows, or an
// online softmax over key tiles), ·V_g; the K/V packs and the workspace of one attention call.
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
/// Not inlined: it runs once per tile of scores, and inlined into attend_rows it makes that
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
  /// O[rows, d_v] = diag(inv)·E[rows, n]·V_g over keys k0 .. k0+n, from packed V (E's rows may be
  /// overwritten by their scaled values).
  void weigh_scaled(int rows, int k0, int n, const float* inv, float* E, int lde, float* O, int ldo) const {
    kernels::gemm_panels_scaled(rows, dv, n, inv, E, lde, vp + size_t(k0) * kernels::kPanel, vstride, O, ldo, false);
  }
};

/// One tile of query rows r0 .. r0+rows of a head: Q_i rows at q (leading dimension ldq), head
/// output rows at o (leading dimension ldo), keys kbeg .. kend attended (causal rows and windows
/// skip the rest; kbeg is a multiple of 8 unless K/V are read in place).
struct QueryTile {
  int r0 = 0, rows = 0, kbeg = 0, kend = 0;
  const float* q = nullptr; int ldq = 0;
  float* o = nullptr; int ldo = 0;
};

/// head_i rows = softmax(Q_i·K_gᵀ·scale + M)·V_g with every score row held at once ([rows, Tk] in
/// S, or straight in the returned weights). Averaged weights are added to avg ([rows, Tk]).
void attend_tile(const Head& hd, const QueryTile& blk, int tk, float* S, float* avg, float inv_h) {
  const int rows = blk.rows, kbeg = blk.kbeg, kend = blk.kend, lds = tk, n = kend - kbeg;
  float* Sb = S + kbeg;                                                       // keys kbeg .. kend
  hd.scores(blk.q, blk.ldq, rows, kbeg, n, Sb, lds);                         // S = Q_i·K_gᵀ·scale [rows, n]
  if (hd.masks.mods()) apply_mods(hd.masks, blk.r0, rows, kbeg, n, Sb, lds);  // soft-cap, ALiBi
  if (hd.trace)  // a trace attends every key (kbeg = 0, kend = tk)
    for (int rr = 0; rr < rows; ++rr)
      std::memcpy(hd.trace + size_t(blk.r0 + rr) * tk, S + size_t(rr) * lds, sizeof(float) * tk);
  if (hd.masks.any()) apply_masks(hd.masks, blk.r0, rows, kbeg, n, Sb, lds);  // S += M
  if (!hd.weights && !avg && !hd.direct) {
    // P is not returned: the scale of each row by 1/sum happens as P·V packs P (the same products,
    // one pass over the scores fewer).
    float inv[kQueryTile];
    kernels::softmax_rows_unnormalized(rows, n, Sb, lds, inv);                // P = diag(inv)·exp(S − max)
    hd.weigh_scaled(rows, kbeg, n, inv, Sb, lds, blk.o, blk.ldo);            // head_i = P·V_g [rows, d_v]
    return;
  }
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

/// The same over key tiles of kKeyTile with an online softmax (Milakov & Gimelshein 2018; the
/// FlashAttention recurrence): running max m and sum l per row, earlier output rescaled by alpha.
/// scratch: S [blk, kKeyTile], then m, l, alpha [blk] each (scores_floats), blk = min(kQueryTile, Tq).
void attend_tile_streaming(const Head& hd, const QueryTile& blk, int blk_rows, float* scratch) {
  const int rows = blk.rows;
  float* S = scratch;
  float* m = S + size_t(blk_rows) * kKeyTile;
  float* l = m + blk_rows;
  float* alpha = l + blk_rows;
  std::fill(m, m + rows, kNegInf);
  std::fill(l, l + rows, 0.f);
  for (int k0 = blk.kbeg; k0 < blk.kend; k0 += kKeyTile) {  // key tiles outside a window are skipped
    const int n = std::min(kKeyTile, blk.kend - k0);
    hd.scores(blk.q, blk.ldq, rows, k0, n, S, kKeyTile);                                // S = Q_i·K_gᵀ·scale
    if (hd.masks.mods()) apply_mods(hd.masks, blk.r0, rows, k0, n, S, kKeyTile);       // soft-cap, ALiBi
    if (hd.masks.any()) apply_masks(hd.masks, blk.r0, rows, k0, n, S, kKeyTile);       // S += M
    kernels::softmax_online_tile(rows, n, S, kKeyTile, m, l, alpha);                  // P = exp(S − m)
    if (k0 > blk.kbeg) kernels::scale_rows(rows, hd.dv, blk.o, blk.ldo, alpha);
    hd.weigh(rows, k0, n, S, kKeyTile, blk.o, blk.ldo, k0 > blk.kbeg);                      // O += P·V_g
  }
  for (int rr = 0; rr < rows; ++rr) alpha[rr] = l[rr] > 0.f ? 1.f / l[rr] : 0.f;  // all masked: 0
  kernels::scale_rows(rows, hd.dv, blk.o, blk.ldo, alpha);                        // head_i = O / l
}

/// Query head i of batch element b of an attention call: its K_g and V_g (in place when a.direct,
/// else from the packs at `packs`, kp_off / vp_off per kv head), scale and masks, where its outputs go.
Head head_of(const Resolved& r, const AttentionPlan& a, const float* packs, const size_t* kp_off,
             const size_t* vp_off, int b, int i) {
  const int Tq = a.tq, Tk = a.tk, h = r.num_heads, g = r.kv_of(i);
  Head hd;
  hd.dk = r.dk[i]; hd.dv = r.dv[i]; hd.scale = r.scale[i];
  hd.direct = a.direct;
  if (a.direct) {
    hd.kd = a.k + r.k_off[g]; hd.ldk = a.ldk;
    hd.vd = a.v + r.v_off[g]; hd.ldv = a.ldv;
  } else {
    hd.kp = packs + kp_off[g]; hd.kstride = size_t(kernels::kPanel) * hd.dk;
    hd.vp = packs + vp_off[g]; hd.vstride = size_t(kernels::kPanel) * round8(Tk);
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
  if (a.weights && !a.average_weights) hd.weights = a.weights + (size_t(b) * h + i) * Tq * Tk;
  if (a.trace_scores) hd.trace = a.trace_scores + (size_t(b) * h + i) * Tq * Tk;
  return hd;
}

/// The keys rows r0 .. r0+rows of a head attend, [kbeg, kend): keys beyond the causal limit of the
/// tile's last row are never attended (unless the trace wants every unmasked score; only the key
/// tile on the diagonal is partly masked, the ones above it are never computed); likewise keys
/// outside the window of every row of the tile (Longformer / Mistral sliding window): never
/// computed, and in a KV-cache step never read.
void key_range(const AttentionPlan& a, const Head& hd, QueryTile& blk) {
  const HeadMasks& hm = hd.masks;
  const int Tk = a.tk;
  blk.kend = Tk;
  if (a.causal && !hd.trace) blk.kend = std::max(0, std::min(Tk, blk.r0 + blk.rows + a.causal_offset));
  if (hm.window() && !hd.trace) {
    const int64_t p0 = int64_t(blk.r0) + a.causal_offset, p1 = p0 + blk.rows - 1;  // first and last positions
    if (hm.window_right >= 0) blk.kend = int(std::max<int64_t>(0, std::min<int64_t>(blk.kend, p1 + hm.window_right + 1)));
    if (hm.window_left >= 0) {
      const int64_t k = std::min<int64_t>(Tk, std::max<int64_t>(0, p0 - hm.window_left));
      blk.kbeg = a.direct ? int(k) : int(k) & ~7;  // packed Kᵀ is addressed in panels of 8 keys
    }
  }
}

/// Rows rb .. rb + kQueryTile of the `rows` query rows r0q.. of head i of batch element b (Q rows at
/// q, head outputs at o), with this thread's scores scratch; then head_mask[i] on its output.
void attend_head_rows(const Resolved& r, const AttentionPlan& a, const Head& hd, int b, int i, int r0q, int rb,
                      int nrows, const float* q, int ldq, float* o, int ldo, float* scratch) {
  const int Tq = a.tq, Tk = a.tk;
  QueryTile blk;
  blk.rows = std::min(kQueryTile, nrows - rb);
  blk.r0 = r0q + rb;
  blk.q = q + size_t(rb) * ldq + r.q_off[i]; blk.ldq = ldq;
  blk.o = o + size_t(rb) * ldo + r.o_off[i]; blk.ldo = ldo;
  key_range(a, hd, blk);
  if (blk.kend <= blk.kbeg) {  // every key masked: output and weights 0
    for (int rr = 0; rr < blk.rows; ++rr) std::fill(blk.o + size_t(rr) * ldo, blk.o + size_t(rr) * ldo + hd.dv, 0.f);
    if (hd.weights) std::fill(hd.weights + size_t(blk.r0) * Tk, hd.weights + size_t(blk.r0 + blk.rows) * Tk, 0.f);
  } else if (a.streaming) {
    attend_tile_streaming(hd, blk, std::min(kQueryTile, Tq), scratch);
  } else {
    float* S = hd.weights ? hd.weights + size_t(blk.r0) * Tk : scratch;
    const bool avg_weights = a.weights && a.average_weights;
    float* avg = avg_weights ? a.weights + (size_t(b) * Tq + blk.r0) * Tk : nullptr;
    attend_tile(hd, blk, Tk, S, avg, 1.f / r.num_heads);
  }
  // head_mask: head i's output (its columns of the concat) times head_mask[i]; 0 = ablated.
  if (a.head_mask && a.head_mask[i] != 1.f) {
    const float f = a.head_mask[i];
    for (int rr = 0; rr < blk.rows; ++rr) {
      float* row = blk.o + size_t(rr) * ldo;
      for (int c = 0; c < hd.dv; ++c) row[c] *= f;
    }
  }
}

}  // namespace

void Layer::attend_rows(const AttentionPlan& a, int b, int r0q, int nrows, const float* q, int ldq, float* o, int ldo) {
  const Resolved& r = cfg_;
  const int h = r.num_heads;
  const bool avg_weights = a.weights && a.average_weights;
  auto tile = [&](int i, int rb, float* scratch) {
    const Head hd = head_of(r, a, packs_.data(), kp_off_.data(), vp_off_.data(), b, i);
    attend_head_rows(r, a, hd, b, i, r0q, rb, nrows, q, ldq, o, ldo, scratch);
  };
  // Tasks: (head, query tile), or a query tile with every head in order when the averaged weights
  // sum the heads into the same rows. Each task writes only its own rows and columns, and adds
  // the heads to the average in the same order as one thread, so any thread count gives the same
  // bits. Small calls run on this thread (waking the pool costs more than they do).
  const int tiles = (nrows + kQueryTile - 1) / kQueryTile;
  const int tasks = avg_weights ? tiles : h * tiles;
  auto task = [&](int t, int thread) {
    float* scratch = scores_.data() + size_t(thread) * a.scratch_floats;
    if (!avg_weights) return tile(t / tiles, (t % tiles) * kQueryTile, scratch);
    for (int i = 0; i < h; ++i) tile(i, t * kQueryTile, scratch);
  };
  const long macs = long(nrows) * (a.direct ? a.tk : round8(a.tk)) * (r.q_width + r.o_width);
  if (macs < kernels::kParallelMacs) {
    for (int t = 0; t < tasks; ++t) task(t, 0);
  } else {
    parallel::for_each(tasks, task);
  }
}

Status Layer::prepare_attention(const AttendArgs& a, size_t nws, bool kv_in_place, const char* who, AttentionPlan& m) {
  const Resolved& r = cfg_;
  static_cast<AttendArgs&>(m) = a;
  m.streaming = !a.weights && !a.trace_scores && a.tk > kKeyTile;
  m.direct = kv_in_place && (a.tk <= kDirectKeys || a.tq <= kDirectQueries);
  const size_t npk = m.direct ? 0 : packs_floats(r, a.tk, kp_off_.data(), vp_off_.data());
  // One scores tile per thread of the pool (attend_rows runs the heads' query tiles in parallel).
  m.scratch_floats = scores_floats(a.tq, a.tk, m.streaming, a.weights && !a.average_weights);
  const size_t nsc = m.scratch_floats * size_t(num_threads());
  // The K/V packs (the largest) first: malloc places an allocation in a freed hole that fits before it
  // grows the heap, and a hole left by freed staging (the weights at creation) that can hold the
  // packs then does; the smaller ws_ taken first could leave it too small and push the packs
  // above the heap's top, onto pages never written before (more RSS).
  if ((npk && !packs_.reserve(npk)) || (nws && !ws_.reserve(nws)) || (nsc && !scores_.reserve(nsc)))
    return Status::OutOfMemory(who, double((nws + npk + nsc) * sizeof(float)),
                               "workspace (projections, packed keys and values, scores)");
  if (a.weights && a.average_weights) std::fill(a.weights, a.weights + size_t(a.batch) * a.tq * a.tk, 0.f);
  return Status::Ok();
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

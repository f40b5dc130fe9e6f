// Multi-head attention layer: projections, scaled dot-product attention per head, concat, W_O.
//
//   Q = X_q·W_Q + b_Q,  K = X_k·W_K + b_K,  V = X_v·W_V + b_V            (y = x·W + b, W [in, out])
//   head_i = softmax(Q_i·K_{g(i)}ᵀ · scale_i + M) · V_{g(i)}             scale_i = 1/√d_k by default
//   MultiHead = concat(head_0, …, head_{h-1})·W_O + b_O
//
// Source: Vaswani et al., "Attention Is All You Need" (2017), eq. 1 and §3.2.2; g(i) = i / (h/g),
// grouped-query attention as in Ainslie et al. (2023) and LLaMA-2's repeat_kv. Masks follow
// torch.nn.MultiheadAttention; a query row whose keys are all masked gets weights 0 and a zero
// attention output (PyTorch scaled_dot_product_attention since 2024, ONNX Attention), never NaN.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "mha/buffer.hpp"
#include "mha/config.hpp"
#include "mha/status.hpp"

namespace mha {

namespace kernels { struct PackedB; }
// Defined in cpp/src/attention_internal.hpp (the core's internals).
enum class Projection : int;
struct AttendArgs;
struct AttentionPlan;

/// How weight matrices are held: float32, or 16-bit IEEE binary16 (float16) or bfloat16, which the
/// core keeps 16-bit in memory (half the bytes) and widens exactly to float32 as the kernels read them.
enum class WeightType : int {
  kFloat32 = 0,
  kFloat16 = 1,   ///< IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits
  kBFloat16 = 2,  ///< bfloat16: the upper 16 bits of a float32
};

/// Weights in the packed form, all row-major [in, out]; biases may be null when Config::bias is
/// false (and must be non-null when it is true).
///   wq [d_model, Σd_k]   wk [k_dim, Σ_kv d_k]   wv [v_dim, Σ_kv d_v]   wo [Σd_v, d_model]
///   bq [Σd_k]  bk [Σ_kv d_k]  bv [Σ_kv d_v]  bo [d_model]
/// (Σ over the h query heads or the g key/value heads; in the per-head form the columns of head i
/// are its own W_Q^(i), W_K^(i), W_V^(i) side by side, and the rows of W_O likewise.)
struct WeightsView {
  const float *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
  const float *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
  /// The storage of wq, wk, wv and wo (biases are float32 always): with kFloat16 or kBFloat16 each
  /// of them points at 16-bit values (uint16_t bit patterns, cast to const float*), which the layer
  /// keeps 16-bit and widens to float32 in the kernels (results equal those of the widened
  /// float32 matrices, bit for bit).
  WeightType type = WeightType::kFloat32;
};

/// Additive attention mask layout. A boolean mask is passed as additive with -inf where masked.
enum class MaskKind : int {
  kNone = 0,
  kShared = 1,   ///< [Tq, Tk], the same for every batch element and head
  kPerHead = 2,  ///< [B·h, Tq, Tk], index b·h + head
};

/// Optional outputs of a forward for teaching: every intermediate, each row-major.
struct TraceOut {
  float* q = nullptr;       ///< [B, Tq, Σd_k]   Q after bias (and after RoPE when the layer has it), heads side by side
  float* k = nullptr;       ///< [B, Tk, Σ_kv d_k]  K likewise (rotated with RoPE)
  float* v = nullptr;       ///< [B, Tk, Σ_kv d_v]
  float* scores = nullptr;  ///< [B, h, Tq, Tk]  scaled scores Q_i·K_iᵀ·scale (then soft-capped and ALiBi-biased when the layer has those), before any mask or window
  float* concat = nullptr;  ///< [B, Tq, Σd_v]   head outputs side by side, before W_O
};

/// One forward call. B ≥ 1 (an unbatched call is B = 1). key/value null means self-attention
/// (key = value = query, then Tk = Tq).
struct ForwardArgs {
  int batch = 1, tq = 0, tk = 0;
  const float* query = nullptr;  ///< [B, Tq, d_model]
  const float* key = nullptr;    ///< [B, Tk, k_dim] or null
  const float* value = nullptr;  ///< [B, Tk, v_dim] or null
  bool causal = false;           ///< key j may be attended by query i only if j ≤ i
  const uint8_t* key_padding_mask = nullptr;  ///< [B, Tk], nonzero = padded key (masked)
  /// [B, Tk] additive key padding mask (torch's float key_padding_mask: added to every query's
  /// score of key j; -inf masks it), or null. May be given together with key_padding_mask.
  const float* key_padding_add = nullptr;
  const float* attn_mask = nullptr;           ///< additive, layout by attn_mask_kind
  MaskKind attn_mask_kind = MaskKind::kNone;
  /// [B, Tq, d_model] (required). May be `query` itself (same shape): a forward reads every query
  /// row of batch element b before it writes that row's output, so the JS API saves a copy of the
  /// largest activation. It must not overlap key, value, the masks, weights or the trace.
  float* output = nullptr;
  float* weights = nullptr;      ///< [B, h, Tq, Tk], or [B, Tq, Tk] when average_weights; or null
  bool average_weights = false;  ///< mean of the attention weights over heads
  /// [h] multiplier of each head's output before W_O, or null (all 1). 0 switches a head off
  /// (ablation: Michel et al. 2019, "Are Sixteen Heads Really Better than One?"; the head_mask of
  /// Hugging Face models); its attention weights are still computed and returned. Must be finite.
  const float* head_mask = nullptr;
  TraceOut trace;                ///< all null unless a trace is requested
};

/// A multi-head attention layer: owns its weights (repacked for the GEMM kernels) and a workspace
/// reused across calls (no allocation on the steady-state path).
class Layer {
 public:
  /// Validates the configuration and copies the weights in. Errors: resolve()'s
  /// (kInvalidConfig), missing biases (kInvalidArgument), non-finite weights (kNonFinite, naming
  /// the matrix and the [row, col] index), allocation failure (kOutOfMemory).
  static Status create(const Config& config, const WeightsView& w, std::unique_ptr<Layer>& out);
  ~Layer();

  /// Runs attention (see the file comment). The causal mask is the [Tq, Tk] upper triangle
  /// (key j > query i is masked), as torch's is_causal. Errors: B, Tq or Tk < 1
  /// (kShapeMismatch), NaN/Inf in query/key/value or head_mask (kNonFinite, with the index), NaN or +Inf in
  /// attn_mask or key_padding_add (kNonFinite), workspace allocation failure (kOutOfMemory, with
  /// the bytes).
  Status forward(const ForwardArgs& a);

  /// Bytes of workspace a forward with these sizes allocates (besides its inputs and outputs).
  size_t workspace_bytes(int batch, int tq, int tk, bool self_attention) const;

  const Resolved& config() const { return cfg_; }

 private:
  Layer();
  friend class KVCache;  // steps through project, rotate and attend below
  /// Y[M, out] = X[M, in]·W + b for W = W_Q, W_K, W_V or W_O; out = Σd_k, Σ_kv d_k, Σ_kv d_v or d_model.
  void project(Projection which, int M, const float* x, float* y) const;
  /// Attention of the queries of `a` over its keys and values (AttendArgs: cpp/src/attention_internal.hpp).
  Status attend(const AttendArgs& a);
  /// RoPE (mha::Config) in place on `rows` rows of Q (keys = false: every query head) or K (keys =
  /// true: every kv head), leading dimension ld, row r at position pos0 + r. No-op without RoPE.
  /// Errors: kOutOfMemory when the cos/sin table for positions < pos0 + rows cannot grow.
  Status rotate(bool keys, float* x, int ld, int rows, int pos0);
  /// Grows the cos/sin table to cover positions [0, npos) (computed in double, once per layer and
  /// length: a longer call recomputes it). Errors: kOutOfMemory.
  Status ensure_rope_table(int npos);
  struct ForwardPlan;
  /// The argument checks of forward(): sizes, the self-attention rule, finite inputs and masks.
  Status check_forward(const ForwardArgs& a) const;
  /// Chooses how a (checked) forward runs: fused, K|V-fused or separate projections; the
  /// attention's sizes, masks and outputs.
  ForwardPlan plan_forward(const ForwardArgs& a) const;
  /// K and V of batch element b, projected in runs of rows and packed per kv head (or, fused, located
  /// in the fused Q|K|V rows); sets att.k / att.v for direct attention.
  void project_keys_values(const ForwardArgs& a, const ForwardPlan& p, int b, AttentionPlan& att);
  /// Q rows `row` .. +rows (row = b·Tq + r0): projected into ws_ (or the trace), or located in the
  /// fused Q|K|V rows; returns them and their leading dimension in ldq.
  const float* project_queries(const ForwardArgs& a, const ForwardPlan& p, size_t row, int rows, int pos0, int& ldq);
  /// Where the head outputs (the concat) of query rows `row`.. go: the trace, or ws_.
  float* concat_rows(const ForwardArgs& a, const ForwardPlan& p, size_t row);
  /// Packs rows t0 .. t0+n of one batch element's K (ldk) and V (ldv) into packs_ (layout: see
  /// attention.cpp, "K/V packs"); t0 is a multiple of 8.
  void pack_kv(const float* K, int ldk, const float* V, int ldv, int t0, int n, int tk);
  /// Fills m from a's sizes, masks and outputs, reserves the workspace (nws floats of ws_, the K/V
  /// packs, the scores tile), lays out the packs and zeroes averaged weights. kv_in_place: the
  /// caller's K/V rows stay readable during attention, so few keys or few queries skip the packs
  /// (m.direct). Errors: kOutOfMemory naming `who` and the bytes.
  Status prepare_attention(const AttendArgs& a, size_t nws, bool kv_in_place, const char* who, AttentionPlan& m);
  /// Attention of `rows` queries (rows r0.. of batch element b; Q rows at q, leading dimension ldq,
  /// heads side by side) over the K/V of b (packed, or in place when m.direct), every head; head
  /// outputs to o (leading dimension ldo).
  void attend_rows(const AttentionPlan& m, int b, int r0, int rows, const float* q, int ldq, float* o, int ldo);
  /// Whether a self-attention forward of batch·tq rows runs the fused Q|K|V GEMM (traces never do).
  bool fuses(int batch, int tq, bool self) const;
  /// Y[M, width] = X·W + b for one projection, Y with leading dimension ldy.
  void project_rows(Projection which, int M, const float* x, float* y, int ldy) const;
  Resolved cfg_;
  // W_Q, W_K, W_V packed side by side as one [d_model, qkv_n_] matrix when k_dim = v_dim = d_model
  // (each group starting on a panel: columns [0, q_width), [qkv_k0_, +k_width), [qkv_v0_, +v_width)),
  // else separately in wq_, wk_, wv_.
  std::unique_ptr<kernels::PackedB> wqkv_, wq_, wk_, wv_, wo_;
  std::vector<float> bqkv_, bq_, bk_, bv_, bo_;
  int qkv_k0_ = 0, qkv_v0_ = 0, qkv_n_ = 0;
  std::vector<size_t> kp_off_, vp_off_;  // per kv head: offsets of its K and V packs in packs_
  Buffer ws_;      // projected rows (K/V rows, Q rows, head outputs)
  Buffer packs_;   // packed Kᵀ and V of every kv head of one batch element
  Buffer scores_;  // one tile of scores rows
  // RoPE: cos/sin table [rope_npos_][rope_stride_]: for each distinct rotated width w (one unless
  // per-head widths differ), cos of pos·θ^(−2p/w) for p < w/2, then their sin; rope_col_[head]: its column.
  Buffer rope_tab_;
  int rope_npos_ = 0, rope_stride_ = 0;
  std::vector<int> rope_col_;
};

}  // namespace mha

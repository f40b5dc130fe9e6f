// Configuration of a multi-head attention layer, its validation, and the shape passport
// (every tensor's shape, parameter and FLOP counts) computed from the configuration alone.
//
// Source: Vaswani et al., "Attention Is All You Need" (2017), §3.2.2, eq. for MultiHead(Q, K, V);
// grouped-query attention: Ainslie et al. (2023), "GQA"; multi-query: Shazeer (2019).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mha/status.hpp"

namespace mha {

/// Hyper-parameters of one attention layer. Widths are per head; heads may differ in d_k / d_v
/// only in the per-head form (head_dk / head_dv non-empty, then kv_heads == num_heads).
struct Config {
  int d_model = 0;    ///< width of the query input and of the output
  int num_heads = 0;  ///< h, number of query heads
  int kv_heads = 0;   ///< g, number of key/value heads; g divides h (g = 1: multi-query); 0 -> h
  int d_k = 0;        ///< per-head query/key width; 0 -> d_model / h (h must divide d_model)
  int d_v = 0;        ///< per-head value width; 0 -> d_k
  int k_dim = 0;      ///< width of the key input; 0 -> d_model
  int v_dim = 0;      ///< width of the value input; 0 -> d_model
  bool bias = true;   ///< b_Q, b_K, b_V, b_O present
  float scale = 0.f;  ///< score scale; 0 -> 1/sqrt(d_k) (per head in the per-head form)
  std::vector<int> head_dk;  ///< per-head form: d_k of head i (size h), else empty
  std::vector<int> head_dv;  ///< per-head form: d_v of head i (size h), else empty

  // Score modifiers: layer properties (a KV cache of the layer inherits them). Query i sits at
  // position i + offset (offset 0 in a forward, the cache length in a KV-cache step), key j at j.
  // On the scaled scores S = Q_i·K_gᵀ·scale, in this order, before the masks and the softmax:
  //   soft-cap  S ← cap·tanh(S / cap)              (Gemma 2, Gemma Team 2024, §2 "logit soft-capping")
  //   ALiBi     S ← S − slope_i·|pos_i − j|        (Press et al. 2022, "Train Short, Test Long", §3;
  //             |·| as FlashAttention's alibi_slopes for non-causal attention; under a causal mask it
  //             is the paper's −slope·(i − j))
  //   window    key j masked unless pos_i − left ≤ j ≤ pos_i + right  (Beltagy et al. 2020, Longformer;
  //             Mistral 7B; FlashAttention's window_size, −1 = unbounded on that side)
  bool softcap_on = false;   ///< soft-capping on; then softcap must be finite and > 0
  float softcap = 0.f;       ///< the cap
  bool alibi = false;        ///< ALiBi on: alibi_slopes when alibi_given, else the paper's geometric slopes
  bool alibi_given = false;  ///< alibi_slopes are given (then they must hold one slope per query head)
  std::vector<float> alibi_slopes;  ///< the given slopes, one per query head (size h)
  int window_left = -1;      ///< keys at most this far before the query; −1 = unbounded
  int window_right = -1;     ///< keys at most this far after the query; −1 = unbounded

  // Rotary position embedding (RoPE; Su et al. 2021, RoFormer, §3.4), a layer property (a KV cache
  // of the layer inherits it): Q and K of every head (K per kv head) are rotated right after their
  // projection, before the scores, at their positions (query i at i + offset, offset 0 in a forward
  // and the cache length in a KV-cache step; key j at j; cross-attention: both from 0). Pair p of
  // the first rotary_dim dims of a head, p = 0 … rotary_dim/2 − 1, is rotated by the angle
  // pos·θ^(−2p/rotary_dim):
  //   interleaved  (x[2p], x[2p+1])          RoFormer, GPT-J, llama2.c
  //   halves       (x[p], x[p + rotary_dim/2])  GPT-NeoX, HF Llama (rotate_half)
  //   (a, b) ← (a·cos − b·sin, a·sin + b·cos); dims ≥ rotary_dim pass through.
  bool rope = false;             ///< RoPE on
  int rope_dim = -1;             ///< rotary_dim: even, ≤ every head's d_k; −1 = each head's d_k; 0 = no rotation
  float rope_base = 10000.f;     ///< θ: finite and > 1
  bool rope_interleaved = false; ///< interleaved pairs (true) or halves (false, the default)
};

/// The ALiBi slopes of Press et al. (2022) for h heads: for h a power of two, the geometric sequence
/// 2^(−8/h), 2^(−16/h), …, 2^(−8); otherwise those of the closest smaller power of two n, followed by
/// every other slope of 2n heads (the paper's reference implementation, get_slopes).
std::vector<float> alibi_default_slopes(int h);

/// A configuration with every default filled in and the column offsets of each head inside the
/// packed weights: head i reads columns [q_off[i], q_off[i] + dk[i]) of W_Q and rows
/// [o_off[i], o_off[i] + dv[i]) of W_O; kv head j reads K columns [k_off[j], +dk) and
/// V columns [v_off[j], +dv). Query head i uses kv head i / (h / g) (LLaMA-2's repeat_kv).
struct Resolved {
  int d_model = 0, num_heads = 0, kv_heads = 0, k_dim = 0, v_dim = 0;
  bool bias = true;
  std::vector<int> dk, dv;   ///< per query head
  std::vector<float> scale;  ///< per query head
  std::vector<int> q_off, o_off;   ///< per query head
  std::vector<int> k_off, v_off;   ///< per kv head
  std::vector<int> kv_dk, kv_dv;   ///< per kv head
  int q_width = 0;   ///< Σ d_k over query heads (columns of W_Q)
  int k_width = 0;   ///< Σ d_k over kv heads (columns of W_K)
  int v_width = 0;   ///< Σ d_v over kv heads (columns of W_V)
  int o_width = 0;   ///< Σ d_v over query heads (rows of W_O, width of the concat)
  int kv_of(int head) const { return head / (num_heads / kv_heads); }
  // Score modifiers (see Config): softcap 0 = off; alibi_slopes empty = off, else one per query
  // head; window_left / window_right −1 = unbounded.
  float softcap = 0.f;
  std::vector<float> alibi_slopes;
  int window_left = -1, window_right = -1;
  bool has_window() const { return window_left >= 0 || window_right >= 0; }
  // RoPE (see Config): rope_dim −1 = off, else the rotated width of every head (≤ each d_k, even;
  // 0 = on but nothing rotated); rope_full: it was not given (each head rotates its whole d_k).
  int rope_dim = -1;
  bool rope_full = false;
  float rope_base = 10000.f;
  bool rope_interleaved = false;
  bool has_rope() const { return rope_dim >= 0; }
  /// Rotated width of query head i (kv head g uses the width of its first query head).
  int rope_width(int head) const { return rope_dim < 0 ? 0 : rope_full ? dk[head] : rope_dim; }
};

/// Largest number of heads resolve() accepts (bounds the per-head tables it allocates).
constexpr int kMaxHeads = 65536;

/// Validates `c` and fills defaults into `out`.
/// Errors (Code::kInvalidConfig, message names the field, expected and actual value):
/// d_model < 1, num_heads < 1 or > kMaxHeads, kv_heads not dividing num_heads, num_heads not dividing d_model
/// when d_k is not given, negative widths, non-finite or non-positive scale, per-head widths of
/// the wrong count or < 1, sizes whose products overflow 2^31 elements; softcap not finite or ≤ 0,
/// alibi_slopes not of size h or not finite, window_left / window_right < −1; rope_dim odd, < −1 or
/// > a head's d_k (or −1 with an odd d_k), rope_base not finite or ≤ 1.
Status resolve(const Config& c, Resolved& out);

/// Parameter counts (weights and biases of W_Q, W_K, W_V, W_O).
struct Params {
  int64_t wq_per_head = 0;     ///< d_model · d_k (head 0 in the per-head form)
  int64_t wq = 0, wk = 0, wv = 0, wo = 0;  ///< total weights of each projection
  int64_t bias = 0;            ///< Σ bias lengths (0 without bias)
  int64_t total = 0;           ///< wq + wk + wv + wo + bias
  int64_t single_head_wq = 0;  ///< d_model · (h·d_k): W_Q of one head as wide as all heads together
};

/// FLOP counts, one multiply-add = 2 FLOPs (bias adds not counted).
/// score_mods counts the score modifiers of dense attention: soft-capping 3 per score (a multiply, a
/// tanh counted as one, a multiply), ALiBi 2 per score (one multiply-add); a window only masks (the
/// other counts stay those of dense attention, an upper bound when a window skips key tiles).
///
/// softmax counts the scaling and the numerically stable softmax of the B·h·Tq·Tk scores, by this
/// convention: per score 6 FLOPs — 1 multiply by the scale 1/√d_k, 1 compare for the row maximum,
/// 1 subtract of that maximum, 1 exp (counted as ONE FLOP, although a library exp costs tens of
/// instructions), 1 add to the row sum, 1 multiply by the reciprocal of the sum — plus 1 FLOP per
/// score row (B·h·Tq rows) for that reciprocal: softmax = B·h·Tq·(6·Tk + 1). It grows with h at a
/// fixed d_model, while the matrix products (matmul) do not.
struct Flops {
  double projections = 0;  ///< 2·B·(Tq·d_model·Σd_k + Tk·k_dim·Σ_kv d_k + Tk·v_dim·Σ_kv d_v)
  double scores = 0;       ///< 2·B·Tq·Tk·Σ d_k      (Q·Kᵀ over all heads)
  double weighted = 0;     ///< 2·B·Tq·Tk·Σ d_v      (A·V over all heads)
  double output = 0;       ///< 2·B·Tq·Σd_v·d_model  (concat·W_O)
  double matmul = 0;       ///< projections + scores + weighted + output: the matrix products only
  double softmax = 0;      ///< B·h·Tq·(6·Tk + 1): scaling + softmax (convention above)
  double score_mods = 0;   ///< B·h·Tq·Tk·(3 if soft-capping + 2 if ALiBi)
  double rope = 0;         ///< RoPE: 3 per rotated element (2 multiplies, 1 add) of Q and K: 3·B·(Tq·Σ r_i + Tk·Σ_kv r_g)
  double total = 0;        ///< matmul + softmax + score_mods + rope
};

/// Memory one forward of one layer touches, from the configuration alone (elements, and bytes at
/// the engine's float32). These are what FlashAttention (Dao et al. 2022, "FlashAttention: Fast and
/// Memory-Efficient Exact Attention with IO-Awareness") avoids writing to slow memory: the scores and
/// attention weights, B·h·Tq·Tk per layer, grow with h and with T²; the KV cache does not grow with h
/// at a fixed number g of K/V heads.
struct Memory {
  double scores = 0;          ///< B·h·Tq·Tk: elements of the score matrix S (and, same shape, of the weights A)
  double score_bytes = 0;     ///< 4·scores (float32)
  double kv_cache = 0;        ///< B·Tk·(Σ_kv d_k + Σ_kv d_v): elements of K and V of one layer (= 2·B·Tk·g·d_k when d_v = d_k)
  double kv_cache_bytes = 0;  ///< 4·kv_cache (float32)
};

/// One row of the shape passport.
struct Step {
  std::string name;              ///< e.g. "per-head scores"
  std::vector<int64_t> shape;    ///< full shape, e.g. {B, h, Tq, Tk} (B omitted when batch is 0)
  std::string formula;           ///< e.g. "Q_i · K_iᵀ / √d_k"
};

/// Shape passport of one forward: steps, parameters, FLOPs and memory, from the configuration alone.
struct Passport {
  int d_k = 0, d_v = 0;
  std::vector<Step> steps;
  Params params;
  Flops flops;
  Memory memory;
};

/// Computes the passport for a forward of `batch` sequences (0 = unbatched, counted as 1) of
/// seq_len query tokens and key_len key tokens (0 -> seq_len). Errors as resolve(), plus
/// seq_len < 1 or key_len < 0 (Code::kInvalidConfig).
Status passport(const Config& c, int seq_len, int key_len, int batch, Passport& out);

}  // namespace mha

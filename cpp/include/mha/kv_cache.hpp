// Key/value cache for incremental (autoregressive) decoding with a multi-head attention layer.
//
// step(x) projects the n new tokens to Q, K, V, appends K and V to the cache, and lets each new
// token attend causally over everything cached (token t sees keys 0..t). The result equals the
// rows of full causal self-attention over the whole sequence (Vaswani et al. 2017, §3.2.3
// decoder masking; the cache itself as in GPT-2/LLaMA inference). With grouped-query attention
// only the g key/value heads are stored: memory 2·B·max_len·(Σ_kv d_k + Σ_kv d_v)·4 bytes.
// The layer's score modifiers apply (soft-cap, ALiBi, sliding window: mha::Config), with the new
// tokens' queries at positions length() … length()+n−1; keys that fell out of the window are not read.
// With RoPE the new tokens' Q and K are rotated at those positions, and K is stored rotated.
#pragma once
#include <memory>

#include "mha/attention.hpp"

namespace mha {

class KVCache {
 public:
  /// Creates an empty cache for `layer` (which must outlive it) holding up to max_len tokens for
  /// each of `batch` sequences. Errors: max_len or batch < 1 (kInvalidArgument), self-attention
  /// impossible (kDim or vDim ≠ dModel: kInvalidConfig), allocation failure (kOutOfMemory).
  static Status create(Layer* layer, int max_len, int batch, std::unique_ptr<KVCache>& out);

  /// Appends n ≥ 1 new tokens x [B, n, d_model]; writes output [B, n, d_model] and, when
  /// weights is non-null, the attention weights [B, h, n, length()+n] (after the append: the
  /// columns are every cached position). head_mask [h] (or null) multiplies each head's output
  /// before W_O, as ForwardArgs::head_mask. Errors: length()+n > max_len (kInvalidArgument, naming
  /// both), NaN/Inf in x or head_mask (kNonFinite), allocation failure (kOutOfMemory).
  Status step(const float* x, int n, float* output, float* weights, const float* head_mask = nullptr);

  /// The size checks of step(n) alone (n ≥ 1, length()+n ≤ max_len), so that a binding can refuse
  /// a step before it sizes the step's buffers. Errors as step().
  Status check_step(int n) const;

  int length() const { return len_; }
  int max_len() const { return max_len_; }
  int batch() const { return batch_; }
  /// Forgets every cached token (keeps the memory).
  void reset() { len_ = 0; }
  /// Forgets the tokens after the first `len` (no-op when len ≥ length()): undoes the appends of
  /// a multi-layer step that failed part-way (mha::DecoderCache).
  void truncate(int len) { if (len >= 0 && len < len_) len_ = len; }

 private:
  KVCache() = default;
  Layer* layer_ = nullptr;
  int max_len_ = 0, batch_ = 1, len_ = 0;
  Buffer k_, v_;    // [B, max_len, Σ_kv d_k], [B, max_len, Σ_kv d_v]
  Buffer work_;     // Q, new K/V rows and concat of one step
};

}  // namespace mha

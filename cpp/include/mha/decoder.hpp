// A decoder-only transformer language model in the core: embeddings, a stack of pre-norm blocks
// (attention and MLP, each with a residual), a final norm and the output projection (lm_head), with a KV cache for
// generation. Every layer's numerics run here, on the same kernels as attention.
//
//   x_t = tok_emb[id_t] (+ pos_emb[t] with learned positions)
//   per block l:  x = x + MHA_l(Norm1_l(x))      causal self-attention (mha::Layer: RoPE, GQA, …)
//                 x = x + MLP_l(Norm2_l(x))
//   log_probs = log_softmax(Norm_f(x)·W_lm_head + b_lm_head)   W_lm_head = tok_embᵀ when tied
//
// MLP: W_proj·act(W_fc·x + b_fc) + b_proj with act = ReLU or GELU (erf or tanh), or SwiGLU
// W_proj·(silu(W_gate·x + b_gate) ⊙ (W_up·x + b_up)) + b_proj. Sources: the pre-LayerNorm GPT-2 block (Radford et al. 2019;
// Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture"); LayerNorm (Ba et
// al. 2016); RMSNorm (Zhang & Sennrich 2019); GELU (Hendrycks & Gimpel 2016); SwiGLU (Shazeer 2020)
// and the Llama block (Touvron et al. 2023); tied embeddings (Press & Wolf 2017).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "mha/attention.hpp"
#include "mha/buffer.hpp"
#include "mha/config.hpp"
#include "mha/kv_cache.hpp"
#include "mha/status.hpp"

namespace mha {

namespace kernels { struct PackedB; }

enum class NormKind : int {
  kLayerNorm = 0,  ///< (x − mean)/sqrt(var + eps)·w + b
  kRMSNorm = 1,    ///< x/sqrt(mean(x²) + eps)·w (no bias)
};

enum class MlpKind : int {
  kReLU = 0,      ///< W_proj·relu(W_fc·x + b_fc) + b_proj
  kGELU = 1,      ///< GELU, exact (erf)
  kGELUTanh = 2,  ///< GELU, tanh approximation
  kSwiGLU = 3,    ///< W_proj·(silu(W_gate·x + b_gate) ⊙ (W_up·x + b_up)) + b_proj
};

/// Hyper-parameters of a decoder. d_model, the heads, biases of attention and RoPE are those of
/// `attention` (every block has the same attention configuration; k_dim = v_dim = d_model).
struct DecoderConfig {
  int vocab_size = 0;   ///< V
  int num_layers = 0;   ///< L ≥ 1
  int d_ff = 0;         ///< hidden width of the MLP
  int context = 0;      ///< rows of the learned position table (0 = none: RoPE or no positions);
                        ///< with a table, sequences are at most `context` tokens
  NormKind norm = NormKind::kLayerNorm;
  float norm_eps = 1e-5f;  ///< > 0, finite
  MlpKind mlp = MlpKind::kReLU;
  bool bias = true;     ///< the MLP's and lm_head's linear maps have biases
  bool tied = false;    ///< lm_head is the token embedding (W_lm_head = tok_embᵀ)
  /// The storage of the matrices (tok_emb, lm_head, every block's W_Q, W_K, W_V, W_O, W_fc or
  /// W_gate, W_up, W_proj): with kFloat16 or kBFloat16 their pointers in DecoderWeights point at 16-bit values
  /// (uint16_t bit patterns cast to const float*), kept 16-bit in the decoder (half the bytes) and
  /// widened exactly in the kernels, so the results equal those of the widened float32 matrices.
  /// pos_emb, the norms and the biases are float32 always.
  WeightType weight_type = WeightType::kFloat32;
  Config attention;     ///< the attention of every block (mha::Config)
};

/// A norm's parameters: weight [d_model], bias [d_model] (LayerNorm only; null for RMSNorm).
struct NormWeights {
  const float* weight = nullptr;
  const float* bias = nullptr;
};

/// One block's weights, matrices row-major [in, out] as everywhere in the core (y = x·W + b).
struct DecoderLayerWeights {
  NormWeights norm1, norm2;
  WeightsView attention;          ///< as mha::Layer::create
  const float* w_fc = nullptr;    ///< [d_model, d_ff]: W_fc of a ReLU or GELU MLP (not read for SwiGLU)
  const float* b_fc = nullptr;    ///< [d_ff] when bias (ReLU, GELU)
  const float* w_gate = nullptr;  ///< [d_model, d_ff]: SwiGLU's gate W_gate only
  const float* b_gate = nullptr;  ///< [d_ff] when bias (SwiGLU)
  const float* w_up = nullptr;    ///< [d_model, d_ff]: SwiGLU's W_up only
  const float* b_up = nullptr;    ///< [d_ff] when bias (SwiGLU)
  const float* w_proj = nullptr;  ///< [d_ff, d_model]
  const float* b_proj = nullptr;  ///< [d_model] when bias
};

struct DecoderWeights {
  const float* tok_emb = nullptr;   ///< [V, d_model]
  const float* pos_emb = nullptr;   ///< [context, d_model] when context > 0
  std::vector<DecoderLayerWeights> layers;  ///< num_layers blocks
  NormWeights norm_f;
  const float* lm_head = nullptr;      ///< the output projection W_lm_head [d_model, V] unless tied
  const float* lm_head_bias = nullptr; ///< [V] when bias
};

/// One forward over B sequences of T token ids.
struct DecoderForwardArgs {
  int batch = 1, seq_len = 0;
  const int32_t* ids = nullptr;     ///< [B, T], each in [0, V)
  const float* head_mask = nullptr; ///< [L, h] or null: multiplies each head's output (mha::ForwardArgs::head_mask)
  float* log_probs = nullptr;       ///< [B, T, V] natural-log next-token probabilities, or [B, V] when last_only (required)
  bool last_only = false;           ///< only the last position's log_probs (generation)
  float* weights = nullptr;         ///< [L, B, h, T, T] causal attention weights, or null
};

class DecoderCache;

class Decoder {
 public:
  /// Validates the configuration, copies and packs the weights. Errors: the attention's (resolve():
  /// kInvalidConfig), vocab_size, num_layers or d_ff < 1, context < 0, norm_eps not finite or ≤ 0,
  /// an unknown norm, mlp kind or weight_type, k_dim or v_dim ≠ d_model (kInvalidConfig); a missing weight
  /// (kInvalidArgument, naming it); NaN/Inf in a weight (kNonFinite, naming it and the index);
  /// allocation failure (kOutOfMemory).
  /// Equals begin(config, w) followed by add_block(w.layers[l]) for every block, after checking
  /// that w.layers holds num_layers blocks and that the heap can hold every copy.
  static Status create(const DecoderConfig& config, const DecoderWeights& w, std::unique_ptr<Decoder>& out);

  /// Staged construction, for a caller that cannot hold every block's weights at once (the JS side
  /// stages a large model in wasm memory one block at a time): validates the configuration and
  /// copies the weights outside the blocks (w.layers is not read). The decoder then takes its
  /// num_layers blocks in order through add_block(); until it has them all, forward() and
  /// DecoderCache::create() refuse (kInvalidArgument). Errors: create()'s, the blocks' excepted.
  static Status begin(const DecoderConfig& config, const DecoderWeights& w, std::unique_ptr<Decoder>& out);

  /// Copies and packs block blocks_added() from w. A failed add_block (a missing weight,
  /// kInvalidArgument; NaN/Inf, kNonFinite, named with the block index; allocation failure,
  /// kOutOfMemory) keeps nothing of that block and leaves the decoder as it was: the call may be
  /// retried with other weights. Refused (kInvalidArgument) once every block is added.
  Status add_block(const DecoderLayerWeights& w);

  /// Blocks added so far (num_layers() once complete).
  int blocks_added() const { return added_; }
  /// Whether every block is added (the decoder can run).
  bool complete() const { return added_ == cfg_.num_layers; }
  ~Decoder();

  /// Runs the model (see the file comment). Errors: B or T < 1, T > context with learned positions
  /// (kShapeMismatch); an id outside [0, V) (kInvalidArgument, with its index); NaN/Inf in head_mask
  /// (kNonFinite); float32 overflow of the result (kNonFinite); allocation failure (kOutOfMemory);
  /// a staged decoder without all its blocks (kInvalidArgument).
  Status forward(const DecoderForwardArgs& a);

  const DecoderConfig& config() const { return cfg_; }
  const Resolved& attention() const { return attn_; }
  int num_layers() const { return cfg_.num_layers; }

 private:
  friend class DecoderCache;
  Decoder();
  struct Block;
  /// x [rows, d] = tok_emb[ids] (+ pos_emb[pos0 + t] for row b·n + t): ids checked first.
  Status embed(const int32_t* ids, int batch, int n, int pos0, float* x) const;
  /// x += MLP_l(Norm2_l(x)) for `rows` rows; h, f: workspace [rows, d], [rows, 2·d_ff].
  void mlp(int l, int rows, float* x, float* h, float* f) const;
  /// out [rows, V] = log_softmax(Norm_f(x_r)·W_lm_head + b) for the rows x_r = x + r·stride·d (stride 1:
  /// consecutive rows; n: the last row of each sequence of n, x pointing at the first one's).
  /// h: workspace [rows, d].
  void lm_head(int rows, const float* x, size_t stride, float* h, float* out) const;
  /// y = Norm(x) with the given parameters, for `rows` rows.
  void norm(const std::vector<float>& w, const std::vector<float>& b, int rows, const float* x, float* y) const;
  /// Floats of workspace a call of `rows` rows needs: x, the norm output, the attention output,
  /// the MLP hidden (2·d_ff for SwiGLU) and one lm_head tile of rows.
  size_t workspace_floats(size_t rows) const;
  /// Ok if complete(), else the kInvalidArgument naming `what` and the blocks missing.
  Status check_complete(const char* what) const;
  DecoderConfig cfg_;
  Resolved attn_;
  int added_ = 0;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<Block> blocks_;
  std::vector<float> tok_emb_, pos_emb_, normf_w_, normf_b_, lm_head_b_;  // tok_emb_ empty when tied or 16-bit
  std::vector<uint16_t> tok_emb16_;  // the untied 16-bit token embedding
  /// W_lm_head [d_model, V] packed for the GEMM kernels; when tied, packed from tok_emb, and the
  /// only copy of it: embed() gathers a token's row as a column of the packed lm_head.
  std::unique_ptr<kernels::PackedB> lm_head_;
  Buffer ws_;
};

/// Incremental generation: one KV cache per block; step(ids) feeds n new tokens at positions
/// length() … length()+n−1 and returns their next-token log-probabilities. Equals the matching rows
/// of Decoder::forward over the whole sequence (with RoPE, each step rotates at the true positions).
class DecoderCache {
 public:
  /// An empty cache of max_len tokens for `batch` sequences; the decoder must outlive it. Errors:
  /// max_len or batch < 1, max_len > context with learned positions, a staged decoder without all
  /// its blocks (kInvalidArgument); allocation failure (kOutOfMemory).
  static Status create(Decoder* decoder, int max_len, int batch, std::unique_ptr<DecoderCache>& out);

  /// Appends n ≥ 1 tokens ids [B, n]. log_probs: [B, n, V], or [B, V] when last_only (the newest
  /// token's); weights (or null): [L, B, h, n, length()+n] after the append; head_mask [L, h] or
  /// null. Errors: length()+n > max_len (kInvalidArgument), an id outside [0, V) (kInvalidArgument,
  /// with its index), NaN/Inf in head_mask (kNonFinite), allocation failure (kOutOfMemory). A failed
  /// step leaves length() unchanged.
  Status step(const int32_t* ids, int n, const float* head_mask, float* log_probs, bool last_only, float* weights);

  /// The size checks of step(n) alone (n ≥ 1, length()+n ≤ max_len).
  Status check_step(int n) const;
  int length() const { return caches_.empty() ? 0 : caches_[0]->length(); }
  int max_len() const { return max_len_; }
  /// Forgets every token (keeps the memory).
  void reset();

 private:
  DecoderCache() = default;
  Decoder* dec_ = nullptr;
  int max_len_ = 0, batch_ = 1;
  std::vector<std::unique_ptr<KVCache>> caches_;
  Buffer ws_;  // the step's rows: x, norm output, attention output, MLP hidden
};

}  // namespace mha

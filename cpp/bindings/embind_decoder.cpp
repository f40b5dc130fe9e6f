// The embind boundary of the decoder (mha/decoder.hpp): a model's configuration and weights cross
// as one DecoderInitArgs (with a LayerArgs for the attention's configuration, and one
// DecoderBlockArgs per transformer block), a forward or a KV-cache step as one DecoderCallArgs, each
// a list of fields in wasm memory whose byte offsets and kinds JS learns from decoderLayout(). The
// core copies and packs the weights during init (or init without blocks, then addBlock per block),
// so the caller frees or reuses its staging right after each call.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "boundary.hpp"
#include "mha/decoder.hpp"

using namespace emscripten;
using mha_boundary::fail;
using mha_boundary::ptr;

namespace {

// Field lists (name, kind) as in boundary.hpp.

/// A decoder's configuration (mha::DecoderConfig; norm and mlp as their enum values), `attention`:
/// a LayerArgs (embind.cpp, layerLayout()) holding the attention's configuration (heads, bias,
/// RoPE; its weight fields are not read), and the weights; `layers`: num_layers DecoderBlockArgs;
/// `weight_type`: mha::WeightType of the matrices (0 float32; 1 float16, 2 bfloat16: their fields
/// point at 16-bit values).
#define MHA_DECODER_FIELDS(X)                                                                          \
  X(vocab_size, i32) X(num_layers, i32) X(d_ff, i32) X(context, i32) X(norm, i32) X(norm_eps, f32)    \
  X(mlp, i32) X(bias, i32) X(tied, i32) X(attention, ptr) X(tok_emb, ptr) X(pos_emb, ptr)              \
  X(norm_f_weight, ptr) X(norm_f_bias, ptr) X(lm_head, ptr) X(lm_head_bias, ptr) X(layers, ptr)        \
  X(weight_type, i32)
/// One transformer block's weights (mha::DecoderLayerWeights), [in, out] matrices: w_fc/b_fc for a
/// ReLU or GELU MLP, w_gate/b_gate and w_up/b_up for SwiGLU (the others 0).
#define MHA_DECODER_BLOCK_FIELDS(X)                                                                    \
  X(norm1_weight, ptr) X(norm1_bias, ptr) X(norm2_weight, ptr) X(norm2_bias, ptr) X(w_q, ptr)          \
  X(w_k, ptr) X(w_v, ptr) X(w_o, ptr) X(b_q, ptr) X(b_k, ptr) X(b_v, ptr) X(b_o, ptr) X(w_fc, ptr)     \
  X(b_fc, ptr) X(w_gate, ptr) X(b_gate, ptr) X(w_up, ptr) X(b_up, ptr) X(w_proj, ptr) X(b_proj, ptr)
/// One forward (batch, seq_len) or KV-cache step (seq_len = n new tokens; batch unused).
#define MHA_DECODER_CALL_FIELDS(X) \
  X(batch, i32) X(seq_len, i32) X(ids, ptr) X(head_mask, ptr) X(log_probs, ptr) X(last_only, i32) X(weights, ptr)

#define MHA_FIELD(name, k) MHA_ARGS_MEMBER(name, k)
struct DecoderInitArgs { MHA_DECODER_FIELDS(MHA_FIELD) };
struct DecoderBlockArgs { MHA_DECODER_BLOCK_FIELDS(MHA_FIELD) };
struct DecoderCallArgs { MHA_DECODER_CALL_FIELDS(MHA_FIELD) };
#undef MHA_FIELD

/// {init, block, call}: each {bytes, fields: {name: byte offset}, kinds: {name: kind}}.
val decoder_layout() {
  using mha_boundary::layout_object;
  val o = val::object();
  {
    val fields = val::object(), kinds = val::object();
#define MHA_X(name, k) MHA_LAYOUT_FIELD(DecoderInitArgs, name, k)
    MHA_DECODER_FIELDS(MHA_X)
#undef MHA_X
    o.set("init", layout_object(sizeof(DecoderInitArgs), fields, kinds));
  }
  {
    val fields = val::object(), kinds = val::object();
#define MHA_X(name, k) MHA_LAYOUT_FIELD(DecoderBlockArgs, name, k)
    MHA_DECODER_BLOCK_FIELDS(MHA_X)
#undef MHA_X
    o.set("block", layout_object(sizeof(DecoderBlockArgs), fields, kinds));
  }
  {
    val fields = val::object(), kinds = val::object();
#define MHA_X(name, k) MHA_LAYOUT_FIELD(DecoderCallArgs, name, k)
    MHA_DECODER_CALL_FIELDS(MHA_X)
#undef MHA_X
    o.set("call", layout_object(sizeof(DecoderCallArgs), fields, kinds));
  }
  return o;
}

/// A DecoderBlockArgs' fields as the core's view of one block's weights.
mha::DecoderLayerWeights block_weights(const DecoderBlockArgs& x) {
  mha::DecoderLayerWeights y;
  y.norm1 = {ptr<const float>(x.norm1_weight), ptr<const float>(x.norm1_bias)};
  y.norm2 = {ptr<const float>(x.norm2_weight), ptr<const float>(x.norm2_bias)};
  y.attention.wq = ptr<const float>(x.w_q); y.attention.wk = ptr<const float>(x.w_k);
  y.attention.wv = ptr<const float>(x.w_v); y.attention.wo = ptr<const float>(x.w_o);
  y.attention.bq = ptr<const float>(x.b_q); y.attention.bk = ptr<const float>(x.b_k);
  y.attention.bv = ptr<const float>(x.b_v); y.attention.bo = ptr<const float>(x.b_o);
  y.w_fc = ptr<const float>(x.w_fc); y.b_fc = ptr<const float>(x.b_fc);
  y.w_gate = ptr<const float>(x.w_gate); y.b_gate = ptr<const float>(x.b_gate);
  y.w_up = ptr<const float>(x.w_up); y.b_up = ptr<const float>(x.b_up);
  y.w_proj = ptr<const float>(x.w_proj); y.b_proj = ptr<const float>(x.b_proj);
  return y;
}

class DecoderHandle {
 public:
  /// Builds the decoder from a DecoderInitArgs at byte offset `args`: with `layers` set, every
  /// block at once (mha::Decoder::create); with `layers` = 0, the weights outside the blocks only
  /// (mha::Decoder::begin), the num_layers blocks then coming one by one through addBlock().
  /// Returns a Code.
  int init(uintptr_t args) {
    const DecoderInitArgs& b = *ptr<const DecoderInitArgs>(args);
    mha::DecoderConfig c;
    c.vocab_size = int(b.vocab_size); c.num_layers = int(b.num_layers); c.d_ff = int(b.d_ff); c.context = int(b.context);
    c.norm = static_cast<mha::NormKind>(b.norm);
    c.norm_eps = b.norm_eps;
    c.mlp = static_cast<mha::MlpKind>(b.mlp);
    c.bias = b.bias != 0; c.tied = b.tied != 0;
    c.weight_type = static_cast<mha::WeightType>(b.weight_type);
    if (b.attention) c.attention = mha_boundary::layer_config(b.attention);
    mha::DecoderWeights w;
    w.tok_emb = ptr<const float>(b.tok_emb); w.pos_emb = ptr<const float>(b.pos_emb);
    w.norm_f.weight = ptr<const float>(b.norm_f_weight); w.norm_f.bias = ptr<const float>(b.norm_f_bias);
    w.lm_head = ptr<const float>(b.lm_head); w.lm_head_bias = ptr<const float>(b.lm_head_bias);
    if (!b.layers) {
      mha::Status s = mha::Decoder::begin(c, w, decoder_);
      return s.ok() ? 0 : fail(s);
    }
    const int L = int(b.num_layers);
    if (L > 0 && L <= 4096) {
      const DecoderBlockArgs* lb = ptr<const DecoderBlockArgs>(b.layers);
      w.layers.resize(L);
      for (int l = 0; l < L; ++l) w.layers[l] = block_weights(lb[l]);
    }
    mha::Status s = mha::Decoder::create(c, w, decoder_);
    return s.ok() ? 0 : fail(s);
  }

  /// Adds the next transformer block of a decoder begun by init() with `layers` = 0, its weights
  /// from a DecoderBlockArgs at byte offset `args`. A refused block leaves the decoder as it was
  /// (the call can be retried; mha::Decoder::add_block). Returns a Code.
  int addBlock(uintptr_t args) {
    if (!decoder_) return fail(mha::Status::Error(mha::Code::kDisposed, "decoder is not initialized"));
    mha::Status s = decoder_->add_block(block_weights(*ptr<const DecoderBlockArgs>(args)));
    return s.ok() ? 0 : fail(s);
  }

  /// Blocks added so far (0 before init).
  int blocksAdded() const { return decoder_ ? decoder_->blocks_added() : 0; }

  /// One forward from a DecoderCallArgs at byte offset `args`. Returns a Code.
  int forward(uintptr_t args) {
    if (!decoder_) return fail(mha::Status::Error(mha::Code::kDisposed, "decoder is not initialized"));
    const DecoderCallArgs& b = *ptr<const DecoderCallArgs>(args);
    mha::DecoderForwardArgs a;
    a.batch = int(b.batch); a.seq_len = int(b.seq_len);
    a.ids = ptr<const int32_t>(b.ids); a.head_mask = ptr<const float>(b.head_mask);
    a.log_probs = ptr<float>(b.log_probs); a.last_only = b.last_only != 0; a.weights = ptr<float>(b.weights);
    mha::Status s = decoder_->forward(a);
    return s.ok() ? 0 : fail(s);
  }

  mha::Decoder* get() { return decoder_.get(); }

 private:
  std::unique_ptr<mha::Decoder> decoder_;
};

class DecoderCacheHandle {
 public:
  /// kDisposed for a call before a successful init().
  static int not_initialized() {
    return fail(mha::Status::Error(mha::Code::kDisposed, "decoder cache is not initialized (its init failed or was never called)"));
  }
  int init(DecoderHandle& d, int max_len, int batch) {
    if (!d.get()) return fail(mha::Status::Error(mha::Code::kDisposed, "decoder is not initialized"));
    mha::Status s = mha::DecoderCache::create(d.get(), max_len, batch, cache_);
    return s.ok() ? 0 : fail(s);
  }
  /// One step from a DecoderCallArgs at byte offset `args` (seq_len = n new tokens). Returns a Code.
  int step(uintptr_t args) {
    if (!cache_) return not_initialized();
    const DecoderCallArgs& b = *ptr<const DecoderCallArgs>(args);
    mha::Status s = cache_->step(ptr<const int32_t>(b.ids), int(b.seq_len), ptr<const float>(b.head_mask),
                                 ptr<float>(b.log_probs), b.last_only != 0, ptr<float>(b.weights));
    return s.ok() ? 0 : fail(s);
  }
  /// 0 if a step of n tokens fits, else a Code with lastError() set.
  int checkStep(int n) {
    if (!cache_) return not_initialized();
    mha::Status s = cache_->check_step(n);
    return s.ok() ? 0 : fail(s);
  }
  int length() const { return cache_ ? cache_->length() : 0; }
  void reset() { if (cache_) cache_->reset(); }

 private:
  std::unique_ptr<mha::DecoderCache> cache_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_decoder) {
  function("decoderLayout", &decoder_layout);
  class_<DecoderHandle>("DecoderHandle")
      .constructor<>()
      .function("init", &DecoderHandle::init)
      .function("addBlock", &DecoderHandle::addBlock)
      .function("blocksAdded", &DecoderHandle::blocksAdded)
      .function("forward", &DecoderHandle::forward);
  class_<DecoderCacheHandle>("DecoderCacheHandle")
      .constructor<>()
      .function("init", &DecoderCacheHandle::init)
      .function("step", &DecoderCacheHandle::step)
      .function("checkStep", &DecoderCacheHandle::checkStep)
      .function("length", &DecoderCacheHandle::length)
      .function("reset", &DecoderCacheHandle::reset);
}

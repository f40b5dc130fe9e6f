// The embind boundary of the decoder (mha/decoder.hpp): a model's configuration and weights cross
// as one DecoderInitBlock (and one DecoderLayerBlock per block), a forward or a KV-cache step as one
// DecoderCallBlock, each a list of uint32 fields in wasm memory (tensors as byte offsets, 0 =
// absent; norm_eps as float32 bits) whose byte offsets JS learns from decoderLayout(). The core
// copies and packs the weights during init, so the caller frees its staging right after.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "boundary.hpp"
#include "mha/decoder.hpp"

using namespace emscripten;
using mha_boundary::fail;
using mha_boundary::ptr;

namespace {

#define MHA_DECODER_FIELDS(X)                                                                       \
  X(vocab_size) X(num_layers) X(d_ff) X(context) X(norm) X(norm_eps) X(mlp) X(bias) X(tied)         \
  X(d_model) X(num_heads) X(kv_heads) X(attn_bias) X(mods) X(tok_emb) X(pos_emb) X(norm_f_weight)   \
  X(norm_f_bias) X(head) X(head_bias) X(layers)
#define MHA_DECODER_LAYER_FIELDS(X)                                                                 \
  X(norm1_weight) X(norm1_bias) X(norm2_weight) X(norm2_bias) X(w_q) X(w_k) X(w_v) X(w_o) X(b_q)    \
  X(b_k) X(b_v) X(b_o) X(w_fc) X(b_fc) X(w_up) X(b_up) X(w_proj) X(b_proj)
#define MHA_DECODER_CALL_FIELDS(X) X(batch) X(seq_len) X(ids) X(head_mask) X(log_probs) X(last_only) X(weights)

#define MHA_FIELD(name) uint32_t name;
/// A decoder's configuration (mha::DecoderConfig; norm and mlp as their enum values; mods: a
/// ScoreModsBlock for the attention's RoPE and score modifiers) and its weights; `layers`: the byte
/// offset of num_layers DecoderLayerBlocks.
struct DecoderInitBlock { MHA_DECODER_FIELDS(MHA_FIELD) };
/// One block's weights (mha::DecoderLayerWeights), [in, out] matrices.
struct DecoderLayerBlock { MHA_DECODER_LAYER_FIELDS(MHA_FIELD) };
/// One forward (batch, seq_len) or KV-cache step (seq_len = n new tokens; batch unused).
struct DecoderCallBlock { MHA_DECODER_CALL_FIELDS(MHA_FIELD) };
#undef MHA_FIELD

/// {init: {bytes, fields}, layer: {bytes, fields}, call: {bytes, fields}, floats: [field names
/// holding float32 bits]}.
val decoder_layout() {
  auto layout = [](int bytes, val fields) {
    val o = val::object();
    o.set("bytes", bytes);
    o.set("fields", fields);
    return o;
  };
  val init = val::object(), layer = val::object(), call = val::object();
#define MHA_INIT(name) init.set(#name, static_cast<int>(offsetof(DecoderInitBlock, name)));
#define MHA_LAYER(name) layer.set(#name, static_cast<int>(offsetof(DecoderLayerBlock, name)));
#define MHA_CALL(name) call.set(#name, static_cast<int>(offsetof(DecoderCallBlock, name)));
  MHA_DECODER_FIELDS(MHA_INIT)
  MHA_DECODER_LAYER_FIELDS(MHA_LAYER)
  MHA_DECODER_CALL_FIELDS(MHA_CALL)
#undef MHA_INIT
#undef MHA_LAYER
#undef MHA_CALL
  val o = val::object();
  o.set("init", layout(sizeof(DecoderInitBlock), init));
  o.set("layer", layout(sizeof(DecoderLayerBlock), layer));
  o.set("call", layout(sizeof(DecoderCallBlock), call));
  val floats = val::array();
  floats.set(0, std::string("norm_eps"));
  o.set("floats", floats);
  return o;
}

class DecoderHandle {
 public:
  /// Builds the decoder from a DecoderInitBlock at byte offset `block`. Returns a Code.
  int init(uintptr_t block) {
    const DecoderInitBlock& b = *ptr<const DecoderInitBlock>(block);
    mha::DecoderConfig c;
    c.vocab_size = int(b.vocab_size); c.num_layers = int(b.num_layers); c.d_ff = int(b.d_ff); c.context = int(b.context);
    c.norm = static_cast<mha::NormKind>(b.norm);
    std::memcpy(&c.norm_eps, &b.norm_eps, sizeof(float));
    c.mlp = static_cast<mha::MlpKind>(b.mlp);
    c.bias = b.bias != 0; c.tied = b.tied != 0;
    c.attention.d_model = int(b.d_model); c.attention.num_heads = int(b.num_heads); c.attention.kv_heads = int(b.kv_heads);
    c.attention.bias = b.attn_bias != 0;
    mha_boundary::apply_mods(b.mods, c.attention);
    mha::DecoderWeights w;
    w.tok_emb = ptr<const float>(b.tok_emb); w.pos_emb = ptr<const float>(b.pos_emb);
    w.norm_f.weight = ptr<const float>(b.norm_f_weight); w.norm_f.bias = ptr<const float>(b.norm_f_bias);
    w.head = ptr<const float>(b.head); w.head_bias = ptr<const float>(b.head_bias);
    const int L = int(b.num_layers);
    if (L > 0 && L <= 4096 && b.layers) {
      const DecoderLayerBlock* lb = ptr<const DecoderLayerBlock>(b.layers);
      w.layers.resize(L);
      for (int l = 0; l < L; ++l) {
        const DecoderLayerBlock& x = lb[l];
        mha::DecoderLayerWeights& y = w.layers[l];
        y.norm1 = {ptr<const float>(x.norm1_weight), ptr<const float>(x.norm1_bias)};
        y.norm2 = {ptr<const float>(x.norm2_weight), ptr<const float>(x.norm2_bias)};
        y.attention.wq = ptr<const float>(x.w_q); y.attention.wk = ptr<const float>(x.w_k);
        y.attention.wv = ptr<const float>(x.w_v); y.attention.wo = ptr<const float>(x.w_o);
        y.attention.bq = ptr<const float>(x.b_q); y.attention.bk = ptr<const float>(x.b_k);
        y.attention.bv = ptr<const float>(x.b_v); y.attention.bo = ptr<const float>(x.b_o);
        y.w_fc = ptr<const float>(x.w_fc); y.b_fc = ptr<const float>(x.b_fc);
        y.w_up = ptr<const float>(x.w_up); y.b_up = ptr<const float>(x.b_up);
        y.w_proj = ptr<const float>(x.w_proj); y.b_proj = ptr<const float>(x.b_proj);
      }
    }
    mha::Status s = mha::Decoder::create(c, w, decoder_);
    return s.ok() ? 0 : fail(s);
  }

  /// One forward from a DecoderCallBlock. Returns a Code.
  int forward(uintptr_t block) {
    if (!decoder_) return fail(mha::Status::Error(mha::Code::kDisposed, "decoder is not initialized"));
    const DecoderCallBlock& b = *ptr<const DecoderCallBlock>(block);
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
  int init(DecoderHandle& d, int max_len, int batch) {
    if (!d.get()) return fail(mha::Status::Error(mha::Code::kDisposed, "decoder is not initialized"));
    mha::Status s = mha::DecoderCache::create(d.get(), max_len, batch, cache_);
    return s.ok() ? 0 : fail(s);
  }
  /// One step from a DecoderCallBlock (seq_len = n new tokens). Returns a Code.
  int step(uintptr_t block) {
    const DecoderCallBlock& b = *ptr<const DecoderCallBlock>(block);
    mha::Status s = cache_->step(ptr<const int32_t>(b.ids), int(b.seq_len), ptr<const float>(b.head_mask),
                                 ptr<float>(b.log_probs), b.last_only != 0, ptr<float>(b.weights));
    return s.ok() ? 0 : fail(s);
  }
  /// 0 if a step of n tokens fits, else a Code with lastError() set.
  int checkStep(int n) {
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
      .function("forward", &DecoderHandle::forward);
  class_<DecoderCacheHandle>("DecoderCacheHandle")
      .constructor<>()
      .function("init", &DecoderCacheHandle::init)
      .function("step", &DecoderCacheHandle::step)
      .function("checkStep", &DecoderCacheHandle::checkStep)
      .function("length", &DecoderCacheHandle::length)
      .function("reset", &DecoderCacheHandle::reset);
}

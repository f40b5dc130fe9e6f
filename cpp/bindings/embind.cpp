// The embind boundary: the only file that includes emscripten headers.
//
// One call per forward. Tensors cross as byte offsets into wasm memory (the JS API writes inputs
// into buffers it malloc'd and reads outputs from them); nothing is marshaled element by element.
// Errors come back as an integer code (mha::Code) with the message in lastError().
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cstdint>
#include <memory>
#include <cstdio>
#include <string>

#include "mha/attention.hpp"
#include "mha/config.hpp"
#include "mha/kv_cache.hpp"

using namespace emscripten;

namespace {

std::string g_error;  // message of the last failed call (single-threaded module)

int fail(const mha::Status& s) {
  g_error = s.message;
  return static_cast<int>(s.code);
}

template <class T> T* ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

mha::Config make_config(int d_model, int num_heads, int kv_heads, int d_k, int d_v, int k_dim, int v_dim,
                        bool bias, float scale, uintptr_t head_dims) {
  mha::Config c;
  c.d_model = d_model; c.num_heads = num_heads; c.kv_heads = kv_heads;
  c.d_k = d_k; c.d_v = d_v; c.k_dim = k_dim; c.v_dim = v_dim; c.bias = bias; c.scale = scale;
  if (head_dims && num_heads > 0) {  // int32 [2·h]: d_k of every head, then d_v of every head
    const int32_t* hd = ptr<const int32_t>(head_dims);
    c.head_dk.assign(hd, hd + num_heads);
    c.head_dv.assign(hd + num_heads, hd + 2 * num_heads);
  }
  return c;
}

std::string json_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string json_shape(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') r += '\\';
    r += ch;
  }
  return r + "\"";
}

/// Shape passport as JSON text (the JS API parses it), or "" with lastError() = "code:message".
std::string passport_json(int d_model, int num_heads, int kv_heads, int d_k, int d_v, int k_dim, int v_dim,
                          bool bias, int seq_len, int key_len, int batch) {
  mha::Passport p;
  mha::Status s = mha::passport(make_config(d_model, num_heads, kv_heads, d_k, d_v, k_dim, v_dim, bias, 0.f, 0),
                                seq_len, key_len, batch, p);
  if (!s.ok()) {
    g_error = std::to_string(static_cast<int>(s.code)) + ":" + s.message;
    return "";
  }
  std::string o = "{\"dK\":" + std::to_string(p.d_k) + ",\"dV\":" + std::to_string(p.d_v) + ",\"steps\":[";
  for (size_t i = 0; i < p.steps.size(); ++i) {
    o += (i ? "," : "");
    o += "{\"name\":" + json_string(p.steps[i].name) + ",\"shape\":" + json_shape(p.steps[i].shape) +
         ",\"formula\":" + json_string(p.steps[i].formula) + "}";
  }
  const mha::Params& q = p.params;
  const mha::Flops& f = p.flops;
  o += "],\"params\":{\"wQPerHead\":" + std::to_string(q.wq_per_head) + ",\"wQ\":" + std::to_string(q.wq) +
       ",\"wK\":" + std::to_string(q.wk) + ",\"wV\":" + std::to_string(q.wv) + ",\"wO\":" + std::to_string(q.wo) +
       ",\"bias\":" + std::to_string(q.bias) + ",\"total\":" + std::to_string(q.total) +
       ",\"singleHeadWQ\":" + std::to_string(q.single_head_wq) + "},\"flops\":{\"projections\":" +
       json_num(f.projections) + ",\"scores\":" + json_num(f.scores) + ",\"weighted\":" + json_num(f.weighted) +
       ",\"output\":" + json_num(f.output) + ",\"total\":" + json_num(f.total) + "}}";
  return o;
}

class LayerHandle {
 public:
  /// Builds the layer from weights at the given byte offsets (0 = absent). Returns a Code.
  int init(int d_model, int num_heads, int kv_heads, int d_k, int d_v, int k_dim, int v_dim, bool bias,
           float scale, uintptr_t head_dims, uintptr_t wq, uintptr_t wk, uintptr_t wv, uintptr_t wo, uintptr_t bq,
           uintptr_t bk, uintptr_t bv, uintptr_t bo) {
    mha::WeightsView w;
    w.wq = ptr<const float>(wq); w.wk = ptr<const float>(wk); w.wv = ptr<const float>(wv); w.wo = ptr<const float>(wo);
    w.bq = ptr<const float>(bq); w.bk = ptr<const float>(bk); w.bv = ptr<const float>(bv); w.bo = ptr<const float>(bo);
    mha::Status s = mha::Layer::create(
        make_config(d_model, num_heads, kv_heads, d_k, d_v, k_dim, v_dim, bias, scale, head_dims), w, layer_);
    return s.ok() ? 0 : fail(s);
  }

  /// One forward, its 19 arguments read from a uint32 block in wasm memory at byte offset args
  /// (every tensor a byte offset, 0 = absent), in this order: batch, tq, tk, query, key, value,
  /// causal, key_padding_mask, attn_mask, attn_mask_kind, output, weights, average_weights, the
  /// trace's q, k, v, scores, concat, and key_padding_add (the additive key padding mask). JS calls
  /// it through the plain export mha_layer_forward below.
  int forwardPacked(uintptr_t args) {
    if (!layer_) return fail(mha::Status::Error(mha::Code::kDisposed, "layer is not initialized"));
    const uint32_t* v = ptr<const uint32_t>(args);
    mha::ForwardArgs a;
    a.batch = int(v[0]); a.tq = int(v[1]); a.tk = int(v[2]);
    a.query = ptr<const float>(v[3]); a.key = ptr<const float>(v[4]); a.value = ptr<const float>(v[5]);
    a.causal = v[6] != 0;
    a.key_padding_mask = ptr<const uint8_t>(v[7]);
    a.attn_mask = ptr<const float>(v[8]);
    a.attn_mask_kind = static_cast<mha::MaskKind>(v[9]);
    a.output = ptr<float>(v[10]);
    a.weights = ptr<float>(v[11]);
    a.average_weights = v[12] != 0;
    a.trace.q = ptr<float>(v[13]); a.trace.k = ptr<float>(v[14]); a.trace.v = ptr<float>(v[15]);
    a.trace.scores = ptr<float>(v[16]); a.trace.concat = ptr<float>(v[17]);
    a.key_padding_add = ptr<const float>(v[18]);
    mha::Status s = layer_->forward(a);
    return s.ok() ? 0 : fail(s);
  }

  /// Workspace bytes a forward of these sizes needs besides its inputs and outputs.
  double workspaceBytes(int batch, int tq, int tk, bool self) const {
    return layer_ ? static_cast<double>(layer_->workspace_bytes(batch, tq, tk, self)) : 0.0;
  }

  mha::Layer* get() { return layer_.get(); }

  /// This handle's address in wasm memory, for mha_layer_forward.
  uintptr_t address() { return reinterpret_cast<uintptr_t>(this); }

 private:
  std::unique_ptr<mha::Layer> layer_;
};

}  // namespace

/// The per-call path of Layer.forward and Layer.trace: LayerHandle::forwardPacked as a plain wasm
/// export (`_mha_layer_forward(handle.address(), args)`), which costs a fraction of an embind
/// method call (argument wire types, handle checks); that difference is a tenth of a small
/// forward. handle: a live LayerHandle's address(); args: byte offset of the 19-word block.
/// Returns 0 or an mha::Code (message in lastError()).
extern "C" EMSCRIPTEN_KEEPALIVE int mha_layer_forward(uintptr_t handle, uintptr_t args) {
  return reinterpret_cast<LayerHandle*>(handle)->forwardPacked(args);
}

namespace {

class KVCacheHandle {
 public:
  int init(LayerHandle& layer, int max_len, int batch) {
    if (!layer.get()) return fail(mha::Status::Error(mha::Code::kDisposed, "layer is not initialized"));
    mha::Status s = mha::KVCache::create(layer.get(), max_len, batch, cache_);
    return s.ok() ? 0 : fail(s);
  }
  int step(uintptr_t x, int n, uintptr_t output, uintptr_t weights) {
    mha::Status s = cache_->step(ptr<const float>(x), n, ptr<float>(output), ptr<float>(weights));
    return s.ok() ? 0 : fail(s);
  }
  int length() const { return cache_ ? cache_->length() : 0; }
  void reset() { if (cache_) cache_->reset(); }

 private:
  std::unique_ptr<mha::KVCache> cache_;
};

std::string last_error() { return g_error; }

/// Bytes currently malloc'd (dlmalloc's in-use count): the leak tests read it.
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }

bool built_with_simd() {
#ifdef __wasm_simd128__
  return true;
#else
  return false;
#endif
}

}  // namespace

EMSCRIPTEN_BINDINGS(mha_core) {
  function("passportJSON", &passport_json);
  function("lastError", &last_error);
  function("heapInUse", &heap_in_use);
  function("simd", &built_with_simd);
  class_<LayerHandle>("LayerHandle")
      .constructor<>()
      .function("init", &LayerHandle::init)
      .function("address", &LayerHandle::address)
      .function("workspaceBytes", &LayerHandle::workspaceBytes);
  class_<KVCacheHandle>("KVCacheHandle")
      .constructor<>()
      .function("init", &KVCacheHandle::init)
      .function("step", &KVCacheHandle::step)
      .function("length", &KVCacheHandle::length)
      .function("reset", &KVCacheHandle::reset);
}

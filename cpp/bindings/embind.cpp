// The embind boundary of the attention layer and its KV cache (the decoder's: embind_decoder.cpp;
// cpp/bindings/ is the only folder that includes emscripten headers).
//
// One call per forward. Tensors cross as byte offsets into wasm memory (the JS API writes inputs
// into buffers it malloc'd and reads outputs from them); nothing is marshaled element by element.
// Errors come back as an integer code (mha::Code); lastError() gives the whole mha::Status as a
// plain object {code, message, argument, index, batchFirst, bytes}, from which the JS API composes
// its message (errors.js). Facts the JS API needs from the core (the forward's argument layout,
// the resolved head geometry, the passport) cross as typed values, not as text.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/config.hpp"
#include "mha/kv_cache.hpp"
#include "boundary.hpp"

using namespace emscripten;
using mha_boundary::fail;
using mha_boundary::ptr;

namespace {

mha::Status g_error;  // the last failed call's status (single-threaded module)

}  // namespace

int mha_boundary::fail(const mha::Status& s) {
  // Move-assigned from a copy, so that g_error holds exactly this message's allocation (a copy
  // assignment would keep the capacity of the longest message so far: heap in use would then
  // depend on the history of errors, and the leak tests could not compare it).
  g_error = mha::Status(s);
  return static_cast<int>(s.code);
}

namespace {

/// The score modifiers of a layer (mha::Config) as the JS API writes them into wasm memory: int32
/// fields and one float32, in this order; byte offset 0 = none. alibi: 0 off, 1 the default slopes,
/// 2 the alibi_count slopes at byte offset `slopes` (float32).
struct ScoreModsBlock {
  int32_t softcap_on;
  float softcap;
  int32_t alibi;
  int32_t window_left, window_right;
  uint32_t slopes;
  int32_t alibi_count;
  // RoPE (mha::Config): rope_on 0/1; rope_dim −1 = d_k; rope_base θ; rope_interleaved 0/1.
  int32_t rope_on;
  int32_t rope_dim;
  float rope_base;
  int32_t rope_interleaved;
};

}  // namespace

void mha_boundary::apply_mods(uintptr_t mods, mha::Config& c) {
  if (!mods) return;
  const ScoreModsBlock& m = *ptr<const ScoreModsBlock>(mods);
  c.softcap_on = m.softcap_on != 0;
  c.softcap = m.softcap;
  c.alibi = m.alibi != 0;
  c.alibi_given = m.alibi == 2;
  if (c.alibi_given && m.slopes && m.alibi_count > 0)
    c.alibi_slopes.assign(ptr<const float>(m.slopes), ptr<const float>(m.slopes) + m.alibi_count);
  c.window_left = m.window_left;
  c.window_right = m.window_right;
  c.rope = m.rope_on != 0;
  c.rope_dim = m.rope_dim;
  c.rope_base = m.rope_base;
  c.rope_interleaved = m.rope_interleaved != 0;
}

namespace {
using mha_boundary::apply_mods;

/// {bytes, fields: {name: byte offset}} of ScoreModsBlock.
val score_mods_layout() {
  val fields = val::object();
  fields.set("softcap_on", static_cast<int>(offsetof(ScoreModsBlock, softcap_on)));
  fields.set("softcap", static_cast<int>(offsetof(ScoreModsBlock, softcap)));
  fields.set("alibi", static_cast<int>(offsetof(ScoreModsBlock, alibi)));
  fields.set("window_left", static_cast<int>(offsetof(ScoreModsBlock, window_left)));
  fields.set("window_right", static_cast<int>(offsetof(ScoreModsBlock, window_right)));
  fields.set("slopes", static_cast<int>(offsetof(ScoreModsBlock, slopes)));
  fields.set("alibi_count", static_cast<int>(offsetof(ScoreModsBlock, alibi_count)));
  fields.set("rope_on", static_cast<int>(offsetof(ScoreModsBlock, rope_on)));
  fields.set("rope_dim", static_cast<int>(offsetof(ScoreModsBlock, rope_dim)));
  fields.set("rope_base", static_cast<int>(offsetof(ScoreModsBlock, rope_base)));
  fields.set("rope_interleaved", static_cast<int>(offsetof(ScoreModsBlock, rope_interleaved)));
  val o = val::object();
  o.set("bytes", static_cast<int>(sizeof(ScoreModsBlock)));
  o.set("fields", fields);
  return o;
}

mha::Config make_config(int d_model, int num_heads, int kv_heads, int d_k, int d_v, int k_dim, int v_dim,
                        bool bias, float scale, uintptr_t head_dims, uintptr_t mods = 0) {
  mha::Config c;
  c.d_model = d_model; c.num_heads = num_heads; c.kv_heads = kv_heads;
  c.d_k = d_k; c.d_v = d_v; c.k_dim = k_dim; c.v_dim = v_dim; c.bias = bias; c.scale = scale;
  if (head_dims && num_heads > 0) {  // int32 [2·h]: d_k of every head, then d_v of every head
    const int32_t* hd = ptr<const int32_t>(head_dims);
    c.head_dk.assign(hd, hd + num_heads);
    c.head_dv.assign(hd + num_heads, hd + 2 * num_heads);
  }
  apply_mods(mods, c);
  return c;
}

template <class Int> val int_array(const std::vector<Int>& v) {
  val a = val::array();
  for (size_t i = 0; i < v.size(); ++i) a.set(i, static_cast<double>(v[i]));
  return a;
}

/// The arguments of one forward as the JS API writes them into wasm memory: one uint32 per field,
/// a tensor as its byte offset (0 = absent), a flag as 0/1, attn_mask_kind an mha::MaskKind. The
/// field list is written once (MHA_FORWARD_FIELDS); JS learns each field's byte offset from
/// forwardLayout(), so the layout exists only here.
#define MHA_FORWARD_FIELDS(X)                                                                            \
  X(batch) X(tq) X(tk) X(query) X(key) X(value) X(causal) X(key_padding_mask) X(key_padding_add)        \
  X(attn_mask) X(attn_mask_kind) X(output) X(weights) X(average_weights) X(trace_q) X(trace_k) X(trace_v) \
  X(trace_scores) X(trace_concat) X(head_mask)
struct ForwardBlock {
#define MHA_FIELD(name) uint32_t name;
  MHA_FORWARD_FIELDS(MHA_FIELD)
#undef MHA_FIELD
};

/// {bytes, fields: {batch: byte offset, tq: …, …}} of ForwardBlock.
val forward_layout() {
  val fields = val::object();
#define MHA_OFFSET(name) fields.set(#name, static_cast<int>(offsetof(ForwardBlock, name)));
  MHA_FORWARD_FIELDS(MHA_OFFSET)
#undef MHA_OFFSET
  val o = val::object();
  o.set("bytes", static_cast<int>(sizeof(ForwardBlock)));
  o.set("fields", fields);
  return o;
}

/// Shape passport as a plain object {dK, dV, steps: [{name, shape, formula}], params, flops}
/// (counts as numbers), or null with lastError() set.
val passport(int d_model, int num_heads, int kv_heads, int d_k, int d_v, int k_dim, int v_dim, bool bias,
             int seq_len, int key_len, int batch, uintptr_t mods) {
  mha::Passport p;
  mha::Status s = mha::passport(make_config(d_model, num_heads, kv_heads, d_k, d_v, k_dim, v_dim, bias, 0.f, 0, mods),
                                seq_len, key_len, batch, p);
  if (!s.ok()) {
    fail(s);
    return val::null();
  }
  val steps = val::array();
  for (size_t i = 0; i < p.steps.size(); ++i) {
    val step = val::object();
    step.set("name", p.steps[i].name);
    step.set("shape", int_array(p.steps[i].shape));
    step.set("formula", p.steps[i].formula);
    steps.set(i, step);
  }
  const mha::Params& q = p.params;
  val params = val::object();
  params.set("wQPerHead", double(q.wq_per_head));
  params.set("wQ", double(q.wq));
  params.set("wK", double(q.wk));
  params.set("wV", double(q.wv));
  params.set("wO", double(q.wo));
  params.set("bias", double(q.bias));
  params.set("total", double(q.total));
  params.set("singleHeadWQ", double(q.single_head_wq));
  const mha::Flops& f = p.flops;
  val flops = val::object();
  flops.set("projections", f.projections);
  flops.set("scores", f.scores);
  flops.set("weighted", f.weighted);
  flops.set("output", f.output);
  flops.set("scoreMods", f.score_mods);
  flops.set("rope", f.rope);
  flops.set("total", f.total);
  val o = val::object();
  o.set("dK", p.d_k);
  o.set("dV", p.d_v);
  o.set("steps", steps);
  o.set("params", params);
  o.set("flops", flops);
  return o;
}

class LayerHandle {
 public:
  /// Builds the layer from weights at the given byte offsets (0 = absent). Returns a Code.
  int init(int d_model, int num_heads, int kv_heads, int d_k, int d_v, int k_dim, int v_dim, bool bias,
           float scale, uintptr_t head_dims, uintptr_t wq, uintptr_t wk, uintptr_t wv, uintptr_t wo, uintptr_t bq,
           uintptr_t bk, uintptr_t bv, uintptr_t bo, uintptr_t mods) {
    mha::WeightsView w;
    w.wq = ptr<const float>(wq); w.wk = ptr<const float>(wk); w.wv = ptr<const float>(wv); w.wo = ptr<const float>(wo);
    w.bq = ptr<const float>(bq); w.bk = ptr<const float>(bk); w.bv = ptr<const float>(bv); w.bo = ptr<const float>(bo);
    mha::Status s = mha::Layer::create(
        make_config(d_model, num_heads, kv_heads, d_k, d_v, k_dim, v_dim, bias, scale, head_dims, mods), w, layer_);
    return s.ok() ? 0 : fail(s);
  }

  /// One forward, its arguments read from a ForwardBlock at byte offset `block` in wasm memory.
  /// JS calls it through the plain export mha_layer_forward below.
  int forward(uintptr_t block) {
    if (!layer_) return fail(mha::Status::Error(mha::Code::kDisposed, "layer is not initialized"));
    const ForwardBlock& f = *ptr<const ForwardBlock>(block);
    mha::ForwardArgs a;
    a.batch = int(f.batch); a.tq = int(f.tq); a.tk = int(f.tk);
    a.query = ptr<const float>(f.query); a.key = ptr<const float>(f.key); a.value = ptr<const float>(f.value);
    a.causal = f.causal != 0;
    a.key_padding_mask = ptr<const uint8_t>(f.key_padding_mask);
    a.key_padding_add = ptr<const float>(f.key_padding_add);
    a.attn_mask = ptr<const float>(f.attn_mask);
    a.attn_mask_kind = static_cast<mha::MaskKind>(f.attn_mask_kind);
    a.output = ptr<float>(f.output);
    a.weights = ptr<float>(f.weights);
    a.average_weights = f.average_weights != 0;
    a.trace.q = ptr<float>(f.trace_q); a.trace.k = ptr<float>(f.trace_k); a.trace.v = ptr<float>(f.trace_v);
    a.trace.scores = ptr<float>(f.trace_scores); a.trace.concat = ptr<float>(f.trace_concat);
    a.head_mask = ptr<const float>(f.head_mask);
    mha::Status s = layer_->forward(a);
    return s.ok() ? 0 : fail(s);
  }

  /// The resolved head geometry (mha::Resolved): {qWidth, kWidth, vWidth, oWidth} (Σd_k, Σ_kv d_k,
  /// Σ_kv d_v, Σd_v), per query head {dK, dV, qOff, oOff, kvHead} and per kv head {kOff, vOff}: the
  /// columns each head occupies in Q | K | V | concat.
  val geometry() const {
    if (!layer_) return val::null();
    const mha::Resolved& r = layer_->config();
    std::vector<int64_t> kv_of(r.num_heads);
    for (int i = 0; i < r.num_heads; ++i) kv_of[i] = r.kv_of(i);
    val g = val::object();
    g.set("qWidth", r.q_width);
    g.set("kWidth", r.k_width);
    g.set("vWidth", r.v_width);
    g.set("oWidth", r.o_width);
    g.set("dK", int_array(r.dk));
    g.set("dV", int_array(r.dv));
    g.set("qOff", int_array(r.q_off));
    g.set("oOff", int_array(r.o_off));
    g.set("kvHead", int_array(kv_of));
    g.set("kOff", int_array(r.k_off));
    g.set("vOff", int_array(r.v_off));
    // The resolved score modifiers (softcap 0 = off; alibiSlopes [] = off; window −1 = unbounded).
    g.set("softcap", r.softcap);
    val slopes = val::array();
    for (size_t i = 0; i < r.alibi_slopes.size(); ++i) slopes.set(i, r.alibi_slopes[i]);
    g.set("alibiSlopes", slopes);
    g.set("window", int_array(std::vector<int>{r.window_left, r.window_right}));
    // RoPE as resolved: null when off, else {dim (−1: each head's d_k, per-head widths), base, interleaved}.
    if (r.has_rope()) {
      val rope = val::object();
      bool equal_dk = true;  // with every d_k equal, "each head's d_k" is one number
      for (int i = 1; i < r.num_heads; ++i) equal_dk = equal_dk && r.dk[i] == r.dk[0];
      rope.set("dim", r.rope_full && !equal_dk ? -1 : r.rope_dim);
      rope.set("base", r.rope_base);
      rope.set("interleaved", r.rope_interleaved);
      g.set("rope", rope);
    } else {
      g.set("rope", val::null());
    }
    return g;
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

/// The per-call path of Layer.forward and Layer.trace: LayerHandle::forward as a plain wasm
/// export (`_mha_layer_forward(handle.address(), args)`), which costs a fraction of an embind
/// method call (argument wire types, handle checks); that difference is a tenth of a small
/// forward. handle: a live LayerHandle's address(); args: byte offset of a ForwardBlock.
/// Returns 0 or an mha::Code (message in lastError()).
extern "C" EMSCRIPTEN_KEEPALIVE int mha_layer_forward(uintptr_t handle, uintptr_t args) {
  return reinterpret_cast<LayerHandle*>(handle)->forward(args);
}

namespace {

class KVCacheHandle {
 public:
  int init(LayerHandle& layer, int max_len, int batch) {
    if (!layer.get()) return fail(mha::Status::Error(mha::Code::kDisposed, "layer is not initialized"));
    mha::Status s = mha::KVCache::create(layer.get(), max_len, batch, cache_);
    return s.ok() ? 0 : fail(s);
  }
  int step(uintptr_t x, int n, uintptr_t output, uintptr_t weights, uintptr_t head_mask) {
    mha::Status s = cache_->step(ptr<const float>(x), n, ptr<float>(output), ptr<float>(weights), ptr<const float>(head_mask));
    return s.ok() ? 0 : fail(s);
  }
  /// 0 if a step of n tokens fits (KVCache::check_step), else a Code with lastError() set.
  int checkStep(int n) {
    mha::Status s = cache_->check_step(n);
    return s.ok() ? 0 : fail(s);
  }
  int length() const { return cache_ ? cache_->length() : 0; }
  void reset() { if (cache_) cache_->reset(); }

 private:
  std::unique_ptr<mha::KVCache> cache_;
};

/// The last failed call's mha::Status: {code, message, argument, index, batchFirst, bytes}
/// (message with {snake_case} argument tokens, see mha/status.hpp).
val last_error() {
  val e = val::object();
  e.set("code", static_cast<int>(g_error.code));
  e.set("message", g_error.message);
  e.set("argument", g_error.argument);
  e.set("index", int_array(g_error.index));
  e.set("batchFirst", g_error.batch_first);
  e.set("bytes", g_error.bytes);
  return e;
}

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
  function("passport", &passport);
  function("forwardLayout", &forward_layout);
  function("scoreModsLayout", &score_mods_layout);
  function("lastError", &last_error);
  function("heapInUse", &heap_in_use);
  function("simd", &built_with_simd);
  class_<LayerHandle>("LayerHandle")
      .constructor<>()
      .function("init", &LayerHandle::init)
      .function("address", &LayerHandle::address)
      .function("geometry", &LayerHandle::geometry)
      .function("workspaceBytes", &LayerHandle::workspaceBytes);
  class_<KVCacheHandle>("KVCacheHandle")
      .constructor<>()
      .function("init", &KVCacheHandle::init)
      .function("step", &KVCacheHandle::step)
      .function("checkStep", &KVCacheHandle::checkStep)
      .function("length", &KVCacheHandle::length)
      .function("reset", &KVCacheHandle::reset);
}

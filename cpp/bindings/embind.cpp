// The embind boundary of the attention layer and its KV cache (the decoder's: embind_decoder.cpp;
// cpp/bindings/ is the only folder that includes emscripten headers).
//
// One call per forward. Tensors cross as byte offsets into wasm memory (the JS API writes inputs
// into buffers it malloc'd and reads outputs from them); nothing is marshaled element by element.
// Errors come back as an integer code (mha::Code); lastError() gives the whole mha::Status as a
// plain object {code, message, argument, index, batchFirst, bytes}, from which the JS API composes
// its message (errors.js). Facts the JS API needs from the core (the layouts of the argument structs
// of init, passport and forward, the resolved head geometry, the passport) cross as typed values,
// not as text.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/threads.hpp"
#include "mha/tile.hpp"
#include "mha/config.hpp"
#include "mha/kv_cache.hpp"
#include "mha/decoder.hpp"
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

// Argument structs (boundary.hpp): LayerArgs (init), PassportArgs (passport), LayerForwardArgs
// (forward) and KVStepArgs (a KV-cache step).

/// The configuration of a layer (mha::Config), shared by LayerArgs and PassportArgs. Widths 0 take
/// the core's defaults; scale 0 = 1/√d_k per head; head_dims: int32 [2·h] (d_k of every head, then
/// d_v of every head) for the per-head form, else 0. Score modifiers and RoPE as mha::Config:
/// softcap_on 0/1 and its cap; alibi 0 off, 1 the default slopes, 2 the alibi_count slopes at
/// alibi_slopes (float32); window_left / window_right −1 = unbounded; rope_on 0/1, rope_dim −1 =
/// d_k, rope_base θ, rope_interleaved 0/1.
#define MHA_CONFIG_FIELDS(X)                                                                           \
  X(d_model, i32) X(num_heads, i32) X(kv_heads, i32) X(d_k, i32) X(d_v, i32) X(k_dim, i32) X(v_dim, i32) \
  X(bias, i32) X(scale, f32) X(head_dims, ptr) X(softcap_on, i32) X(softcap, f32) X(alibi, i32)        \
  X(alibi_slopes, ptr) X(alibi_count, i32) X(window_left, i32) X(window_right, i32) X(rope_on, i32)    \
  X(rope_dim, i32) X(rope_base, f32) X(rope_interleaved, i32)
/// The weights of LayerHandle::init (mha::WeightsView), float32 row-major [in, out]; biases 0 when
/// bias is 0.
/// (Spelled as every argument struct and the core's error messages spell them: w_q … b_o.)
#define MHA_WEIGHT_FIELDS(X) \
  X(w_q, ptr) X(w_k, ptr) X(w_v, ptr) X(w_o, ptr) X(b_q, ptr) X(b_k, ptr) X(b_v, ptr) X(b_o, ptr)
/// The sizes of a passport: seq_len query tokens, key_len key tokens (0 = seq_len), batch (0 =
/// unbatched).
#define MHA_PASSPORT_FIELDS(X) X(seq_len, i32) X(key_len, i32) X(batch, i32)

#define MHA_FIELD(name, k) MHA_ARGS_MEMBER(name, k)
/// The arguments of LayerHandle::init.
struct LayerArgs {
  MHA_CONFIG_FIELDS(MHA_FIELD)
  MHA_WEIGHT_FIELDS(MHA_FIELD)
};
/// The arguments of passport().
struct PassportArgs {
  MHA_CONFIG_FIELDS(MHA_FIELD)
  MHA_PASSPORT_FIELDS(MHA_FIELD)
};
#undef MHA_FIELD

using mha_boundary::layout_object;
val layer_layout() {
  val fields = val::object(), kinds = val::object();
#define MHA_LAYOUT(name, k) MHA_LAYOUT_FIELD(LayerArgs, name, k)
  MHA_CONFIG_FIELDS(MHA_LAYOUT)
  MHA_WEIGHT_FIELDS(MHA_LAYOUT)
#undef MHA_LAYOUT
  return layout_object(sizeof(LayerArgs), fields, kinds);
}
val passport_layout() {
  val fields = val::object(), kinds = val::object();
#define MHA_LAYOUT(name, k) MHA_LAYOUT_FIELD(PassportArgs, name, k)
  MHA_CONFIG_FIELDS(MHA_LAYOUT)
  MHA_PASSPORT_FIELDS(MHA_LAYOUT)
#undef MHA_LAYOUT
  return layout_object(sizeof(PassportArgs), fields, kinds);
}

/// The mha::Config of an argument struct's MHA_CONFIG_FIELDS.
template <class Args> mha::Config make_config(const Args& b) {
  mha::Config c;
  c.d_model = b.d_model; c.num_heads = b.num_heads; c.kv_heads = b.kv_heads;
  c.d_k = b.d_k; c.d_v = b.d_v; c.k_dim = b.k_dim; c.v_dim = b.v_dim; c.bias = b.bias != 0; c.scale = b.scale;
  if (b.head_dims && b.num_heads > 0) {  // int32 [2·h]: d_k of every head, then d_v of every head
    const int32_t* hd = ptr<const int32_t>(b.head_dims);
    c.head_dk.assign(hd, hd + b.num_heads);
    c.head_dv.assign(hd + b.num_heads, hd + 2 * b.num_heads);
  }
  c.softcap_on = b.softcap_on != 0;
  c.softcap = b.softcap;
  c.alibi = b.alibi != 0;
  c.alibi_given = b.alibi == 2;
  if (c.alibi_given && b.alibi_slopes && b.alibi_count > 0)
    c.alibi_slopes.assign(ptr<const float>(b.alibi_slopes), ptr<const float>(b.alibi_slopes) + b.alibi_count);
  c.window_left = b.window_left;
  c.window_right = b.window_right;
  c.rope = b.rope_on != 0;
  c.rope_dim = b.rope_dim;
  c.rope_base = b.rope_base;
  c.rope_interleaved = b.rope_interleaved != 0;
  return c;
}

}  // namespace

mha::Config mha_boundary::layer_config(uintptr_t args) { return make_config(*ptr<const LayerArgs>(args)); }

namespace {

template <class Int> val int_array(const std::vector<Int>& v) {
  val a = val::array();
  for (size_t i = 0; i < v.size(); ++i) a.set(i, static_cast<double>(v[i]));
  return a;
}

val float_array(const std::vector<float>& v) {
  val a = val::array();
  for (size_t i = 0; i < v.size(); ++i) a.set(i, v[i]);
  return a;
}

/// The arguments of one forward (mha::ForwardArgs) as the JS API writes them into wasm memory: a
/// tensor as its byte offset (0 = absent), a flag as 0/1, attn_mask_kind an mha::MaskKind.
#define MHA_FORWARD_FIELDS(X)                                                                           \
  X(batch, i32) X(tq, i32) X(tk, i32) X(query, ptr) X(key, ptr) X(value, ptr) X(causal, i32)            \
  X(key_padding_mask, ptr) X(key_padding_add, ptr) X(attn_mask, ptr) X(attn_mask_kind, i32)             \
  X(output, ptr) X(weights, ptr) X(average_weights, i32) X(trace_q, ptr) X(trace_k, ptr) X(trace_v, ptr) \
  X(trace_scores, ptr) X(trace_concat, ptr) X(head_mask, ptr)
#define MHA_FIELD(name, k) MHA_ARGS_MEMBER(name, k)
struct LayerForwardArgs { MHA_FORWARD_FIELDS(MHA_FIELD) };
#undef MHA_FIELD

/// {bytes, fields, kinds} of LayerForwardArgs.
val forward_layout() {
  val fields = val::object(), kinds = val::object();
#define MHA_LAYOUT(name, k) MHA_LAYOUT_FIELD(LayerForwardArgs, name, k)
  MHA_FORWARD_FIELDS(MHA_LAYOUT)
#undef MHA_LAYOUT
  return layout_object(sizeof(LayerForwardArgs), fields, kinds);
}

/// Shape passport as a plain object {dK, dV, steps: [{name, shape, formula}], params, flops, memory}
/// (counts as numbers), or null with lastError() set. args: byte offset of a PassportArgs.
val passport(uintptr_t args) {
  const PassportArgs& b = *ptr<const PassportArgs>(args);
  mha::Passport p;
  mha::Status s = mha::passport(make_config(b), b.seq_len, b.key_len, b.batch, p);
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
  flops.set("matmul", f.matmul);
  flops.set("softmax", f.softmax);
  flops.set("scoreMods", f.score_mods);
  flops.set("rope", f.rope);
  flops.set("total", f.total);
  val o = val::object();
  o.set("dK", p.d_k);
  o.set("dV", p.d_v);
  o.set("steps", steps);
  o.set("params", params);
  o.set("flops", flops);
  val memory = val::object();
  memory.set("scores", p.memory.scores);
  memory.set("scoreBytes", p.memory.score_bytes);
  memory.set("kvCache", p.memory.kv_cache);
  memory.set("kvCacheBytes", p.memory.kv_cache_bytes);
  o.set("memory", memory);
  return o;
}

class LayerHandle {
 public:
  /// Builds the layer from a LayerArgs at byte offset `args` (its configuration and the byte
  /// offsets of its weights). Returns 0 or a Code (message in lastError()).
  int init(uintptr_t args) {
    const LayerArgs& b = *ptr<const LayerArgs>(args);
    mha::WeightsView w;
    w.wq = ptr<const float>(b.w_q); w.wk = ptr<const float>(b.w_k); w.wv = ptr<const float>(b.w_v); w.wo = ptr<const float>(b.w_o);
    w.bq = ptr<const float>(b.b_q); w.bk = ptr<const float>(b.b_k); w.bv = ptr<const float>(b.b_v); w.bo = ptr<const float>(b.b_o);
    mha::Status s = mha::Layer::create(make_config(b), w, layer_);
    return s.ok() ? 0 : fail(s);
  }

  /// One forward, its arguments read from a LayerForwardArgs at byte offset `args` in wasm memory.
  /// JS calls it through the plain export mha_layer_forward below.
  int forward(uintptr_t args) {
    if (!layer_) return fail(mha::Status::Error(mha::Code::kDisposed, "layer is not initialized (its init failed or was never called)"));
    const LayerForwardArgs& f = *ptr<const LayerForwardArgs>(args);
    mha::ForwardArgs a;
    a.batch = f.batch; a.tq = f.tq; a.tk = f.tk;
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

  /// The resolved configuration (mha::Resolved), from which the JS API builds layer.config:
  /// {dModel, numHeads, kvHeads, kDim, vDim, bias}, the head geometry {qWidth, kWidth, vWidth,
  /// oWidth} (Σd_k, Σ_kv d_k, Σ_kv d_v, Σd_v), per query head {dK, dV, scale, qOff, oOff, kvHead}
  /// (scale: the float32 score scale of that head) and per kv head {kOff, vOff}: the columns each
  /// head occupies in Q | K | V | concat; and the score modifiers and RoPE below.
  val geometry() const {
    if (!layer_) return val::null();
    const mha::Resolved& r = layer_->config();
    std::vector<int64_t> kv_of(r.num_heads);
    for (int i = 0; i < r.num_heads; ++i) kv_of[i] = r.kv_of(i);
    val g = val::object();
    g.set("dModel", r.d_model);
    g.set("numHeads", r.num_heads);
    g.set("kvHeads", r.kv_heads);
    g.set("kDim", r.k_dim);
    g.set("vDim", r.v_dim);
    g.set("bias", r.bias);
    g.set("scale", float_array(r.scale));
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
    g.set("alibiSlopes", float_array(r.alibi_slopes));
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
/// forward. handle: a live LayerHandle's address(); args: byte offset of a LayerForwardArgs.
/// Returns 0 or an mha::Code (message in lastError()).
extern "C" EMSCRIPTEN_KEEPALIVE int mha_layer_forward(uintptr_t handle, uintptr_t args) {
  return reinterpret_cast<LayerHandle*>(handle)->forward(args);
}

namespace {

/// The arguments of one KV-cache step (mha::KVCache::step): n new tokens x [B, n, d_model];
/// output [B, n, d_model]; weights [B, h, n, length + n] or 0; head_mask [h] or 0.
#define MHA_KV_STEP_FIELDS(X) X(x, ptr) X(n, i32) X(output, ptr) X(weights, ptr) X(head_mask, ptr)
#define MHA_FIELD(name, k) MHA_ARGS_MEMBER(name, k)
struct KVStepArgs { MHA_KV_STEP_FIELDS(MHA_FIELD) };
#undef MHA_FIELD

/// {bytes, fields, kinds} of KVStepArgs.
val kv_step_layout() {
  val fields = val::object(), kinds = val::object();
#define MHA_LAYOUT(name, k) MHA_LAYOUT_FIELD(KVStepArgs, name, k)
  MHA_KV_STEP_FIELDS(MHA_LAYOUT)
#undef MHA_LAYOUT
  return mha_boundary::layout_object(sizeof(KVStepArgs), fields, kinds);
}

/// kDisposed for a call on a handle whose object does not exist (never created, or its init failed).
int not_initialized(const char* what) {
  return fail(mha::Status::Error(mha::Code::kDisposed, std::string(what) + " is not initialized (its init failed or was never called)"));
}

class KVCacheHandle {
 public:
  int init(LayerHandle& layer, int max_len, int batch) {
    if (!layer.get()) return not_initialized("layer");
    mha::Status s = mha::KVCache::create(layer.get(), max_len, batch, cache_);
    return s.ok() ? 0 : fail(s);
  }
  /// One step from a KVStepArgs at byte offset `args`. Returns 0 or a Code.
  int step(uintptr_t args) {
    if (!cache_) return not_initialized("KV cache");
    const KVStepArgs& b = *ptr<const KVStepArgs>(args);
    mha::Status s = cache_->step(ptr<const float>(b.x), b.n, ptr<float>(b.output), ptr<float>(b.weights), ptr<const float>(b.head_mask));
    return s.ok() ? 0 : fail(s);
  }
  /// 0 if a step of n tokens fits (KVCache::check_step), else a Code with lastError() set.
  int checkStep(int n) {
    if (!cache_) return not_initialized("KV cache");
    mha::Status s = cache_->check_step(n);
    return s.ok() ? 0 : fail(s);
  }
  int length() const { return cache_ ? cache_->length() : 0; }
  void reset() { if (cache_) cache_->reset(); }

 private:
  std::unique_ptr<mha::KVCache> cache_;
};

/// Every enumeration the JS API needs, as the core defines it: {codes: [name of mha::Code value
/// i], maskKinds: {none, shared, perHead} (mha::MaskKind), normKinds: {layernorm, rmsnorm}
/// (mha::NormKind), mlpKinds: {relu, gelu, gelu_tanh, swiglu} (mha::MlpKind)}: name → value.
val enums() {
  val codes = val::array();
#define MHA_CODE_NAME(e, value, name) codes.set(value, std::string(#name));
  MHA_STATUS_CODES(MHA_CODE_NAME)
#undef MHA_CODE_NAME
  auto table = [](std::initializer_list<std::pair<const char*, int>> entries) {
    val o = val::object();
    for (const auto& e : entries) o.set(e.first, e.second);
    return o;
  };
  using mha::MaskKind;
  using mha::MlpKind;
  using mha::NormKind;
  val o = val::object();
  o.set("codes", codes);
  o.set("maskKinds", table({{"none", int(MaskKind::kNone)}, {"shared", int(MaskKind::kShared)}, {"perHead", int(MaskKind::kPerHead)}}));
  o.set("normKinds", table({{"layernorm", int(NormKind::kLayerNorm)}, {"rmsnorm", int(NormKind::kRMSNorm)}}));
  o.set("mlpKinds", table({{"relu", int(MlpKind::kReLU)}, {"gelu", int(MlpKind::kGELU)},
                           {"gelu_tanh", int(MlpKind::kGELUTanh)}, {"swiglu", int(MlpKind::kSwiGLU)}}));
  return o;
}

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

/// Byte address of the word that holds the allocator's break (sbrk(0)): every allocation lies
/// below it, so JS views at least that long reach all of the heap; the threaded builds' JS reads
/// it to learn whether another thread grew the memory without touching memory.buffer.
double sbrk_word_address() { return static_cast<double>(reinterpret_cast<std::uintptr_t>(emscripten_get_sbrk_ptr())); }

bool built_with_simd() {
#ifdef __wasm_simd128__
  return true;
#else
  return false;
#endif
}

/// mha::set_num_threads: the threads the core uses from now on (1 in a build without threads).
int set_threads(int n) { return mha::set_num_threads(n); }

}  // namespace

EMSCRIPTEN_BINDINGS(mha_core) {
  function("passport", &passport);
  function("forwardLayout", &forward_layout);
  function("layerLayout", &layer_layout);
  function("passportLayout", &passport_layout);
  function("kvStepLayout", &kv_step_layout);
  function("enums", &enums);
  function("lastError", &last_error);
  function("heapInUse", &heap_in_use);
  function("sbrkWordAddress", &sbrk_word_address);
  function("simd", &built_with_simd);
  function("setThreads", &set_threads);
  function("numThreads", &mha::num_threads);
  function("setGemmTileRows", &mha::set_gemm_tile_rows);
  function("gemmTileRows", &mha::gemm_tile_rows);
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

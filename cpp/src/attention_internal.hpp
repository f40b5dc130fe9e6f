// Internal to the core: what the attention layer (attention.cpp, attention_heads.cpp, rope.cpp) and
// the KV cache (kv_cache.cpp) share beyond mha/attention.hpp's public API: the tile sizes, the
// projections, the arguments and plan of one attention call, and the sizes of the workspaces.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "finite.hpp"
#include "kernels.hpp"
#include "mha/attention.hpp"

namespace mha {

// Tile sizes; overridable at build time only for tuning experiments (em++ -DMHA_QUERY_TILE=…).
#ifndef MHA_QUERY_TILE
#define MHA_QUERY_TILE 64
#endif
#ifndef MHA_KEY_TILE
#define MHA_KEY_TILE 512
#endif
constexpr int kQueryTile = MHA_QUERY_TILE;  // query rows whose scores are held at once: O(kQueryTile·Tk) per head
constexpr int kKeyTile = MHA_KEY_TILE;  // keys per step of the streaming (online-softmax) path (multiple of 8)
constexpr int kProjRows = 256;  // rows of K/V projected at once before packing (multiple of 8)
constexpr int kQRows = 128;     // query rows projected, attended and output-projected at once
constexpr int kFuseRows = 128;  // self-attention with ≤ this many rows (B·T): one fused Q|K|V GEMM
// Attention over ≤ kDirectKeys keys, or for ≤ kDirectQueries queries (KV-cache steps), reads K/V in
// place (no packs) where they stay readable for the whole call: the fused self-attention forward
// and attend(). Cross-attention, traced and larger forwards always pack.
constexpr int kDirectKeys = 64;
constexpr int kDirectQueries = 8;
static_assert(kKeyTile % 8 == 0 && kProjRows % 8 == 0, "K/V packs are addressed in panels of 8 keys");
inline int round8(int n) { return (n + 7) & ~7; }
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// One of the four projections of a layer (Layer::project).
enum class Projection : int { kQuery = 0, kKey = 1, kValue = 2, kOutput = 3 };

/// Attention of Tq queries over Tk keys for B batch elements, heads side by side:
/// q rows have stride ldq (batch stride q_bs), k/v likewise, head outputs go to concat
/// [B, Tq, Σd_v]. causal_offset: query i is at absolute position i + causal_offset.
struct AttendArgs {
  int batch = 1, tq = 0, tk = 0;
  const float* q = nullptr; int ldq = 0; size_t q_bs = 0;
  const float* k = nullptr; int ldk = 0; size_t k_bs = 0;
  const float* v = nullptr; int ldv = 0; size_t v_bs = 0;
  bool causal = false; int causal_offset = 0;
  const uint8_t* key_padding_mask = nullptr; const float* key_padding_add = nullptr;  // [B, Tk] each
  const float* attn_mask = nullptr; MaskKind attn_mask_kind = MaskKind::kNone;
  float* concat = nullptr;
  float* weights = nullptr; bool average_weights = false;
  float* trace_scores = nullptr;
  const float* head_mask = nullptr;  ///< [h] or null, as ForwardArgs::head_mask
};

/// How the attention of one call runs, fixed before any work: its arguments (sizes, masks, weight
/// and trace outputs; k/v, ldk/ldv: see `direct`) and the choices below.
struct AttentionPlan : AttendArgs {
  // streaming: keys in tiles of kKeyTile with an online softmax (long key sequences whose
  // weights are not returned), so scores never need O(Tq·Tk) memory.
  bool streaming = false;
  // direct: K/V are read in place (rows of batch element b at k / v, set by the caller before each
  // attend_rows) instead of from the packs: few keys or few queries, where packing costs as much as
  // the products.
  bool direct = false;
  // Floats of one thread's scores scratch (scores_ holds one per thread of the pool).
  size_t scratch_floats = 0;
};

/// Floats of the K/V packs of one batch element (see "K/V packs"); when kp and vp are given, also
/// the offsets of every kv head's K and V packs in them.
inline size_t packs_floats(const Resolved& r, int tk, size_t* kp = nullptr, size_t* vp = nullptr) {
  size_t n = 0;
  for (int g = 0; g < r.kv_heads; ++g) {
    if (kp) kp[g] = n;
    n += kernels::panels_size(r.kv_dk[g], tk);
    if (vp) vp[g] = n;
    n += size_t(round8(r.kv_dv[g])) * round8(tk);
  }
  return n;
}

/// Floats of the scores scratch of attend_rows for these sizes.
inline size_t scores_floats(int tq, int tk, bool streaming, bool per_head_weights) {
  const size_t blk = std::min(kQueryTile, tq);
  return streaming ? blk * (kKeyTile + 3) : per_head_weights ? 0 : blk * tk;
}

/// Floats of ws_ for a forward: the fused Q|K|V rows, or the larger of the K/V rows (phase 1) and
/// the Q and head-output rows (phase 2), which share it. Trace buffers only make it smaller.
inline size_t ws_floats(const Resolved& r, bool fused, int qkv_n, int batch, int tq, int tk) {
  if (fused)
    return size_t(batch) * tq * qkv_n + size_t(std::min(kQRows, tq)) * r.o_width;
  const size_t kv = size_t(std::min(kProjRows, tk)) * (round8(r.k_width) + r.v_width);
  const size_t qo = size_t(std::min(kQRows, tq)) * (r.q_width + r.o_width);
  return std::max(kv, qo);
}

}  // namespace mha

// wasm SIMD kernels of the MHA core, GEMM and packing (wasm_simd128.h, em++ -msimd128): compiled
// when MHA_SIMD128 is defined; kernels_simd_softmax.cpp has the exp and softmax kernels, and
// kernels_eigen.cpp is the portable implementation of the same interface (kernels.hpp).
//
// GEMM: one register-tiled micro-kernel over packed panels, in the style of the BLIS/GotoBLAS
// micro-kernel (Van Zee & van de Geijn, "BLIS", ACM TOMS 2015; Goto & van de Geijn, ACM TOMS 2008)
// and of XNNPACK's f32-gemm "wasmsimd-loadsplat" kernels: a tile of MR = 4 rows × NR = 8 columns
// of C lives in 8 f32x4 accumulators; for every k the B panel row is loaded as 2 vectors, each
// A[i, k] is broadcast (v128.load32_splat → vbroadcastss) and multiplied into its row of
// accumulators through madd(): one f32x4.relaxed_madd (an FMA) in the relaxed-SIMD build, a mul
// then an add in the SIMD build (wasm SIMD128 has no FMA); the 8 chains are independent, which
// hides the latency. Over packed A the tile has 4 rows (8 accumulators, the default) or 6 (12
// accumulators, set_tile_rows: the JS loader picks it per engine). V8 has 15 xmm registers for SIMD
// values (x64 has 16; V8 keeps xmm15 as its scratch register, kScratchDoubleReg in
// src/codegen/x64/register-x64.h). V8 up to 12.x hoists the broadcasts of an iteration ahead of
// the multiply-adds, so a 6×8 tile needs 12 + 2 + 6 registers and spills accumulators there;
// V8 13.6 and later schedule each broadcast next to its multiply-adds, keep 12 + 2 + 1, and run
// the 6×8 tile faster (the 4 extra chains give slack over the FMA latency and each B load feeds
// 6 FMAs instead of 4). For V8 up to 12.x a third tile, 3 × 12 (micro_kernel_3x12: 9
// accumulators + 3 B vectors + 3 hoisted broadcasts = 15 registers), reads half of a 6-row pack
// and 12 columns from two adjacent 8-column panels (three panels make two tiles, so B keeps its
// one layout); it issues 6 loads per 9 FMAs against 6 per 8 in 4 × 8, and V8 ≤ 12 runs it
// faster than 4 × 8. The k loop is not unrolled (it spills on every V8
// measured). All tiles compute each element of C as the same chain, so the bits do not depend on
// the tile (docs/performance.md has the measurements).
//
// Cache tiling (Goto): rows of A in cache tiles of kMC (rounded down to whole register tiles), depth
// in slices of kKC; every B panel's kKC×8 slice stays in L1 across the register tiles of a cache
// tile. A cache tile of 32 rows
// or more is packed once into tiles of 4 or 6 rows (A[i, k] at [k·MR + i]: one sequential stream per tile, no L1 set conflicts between
// rows of a wide A); smaller cache tiles read A in place through one pointer per tile row, as XNNPACK's
// GEMMs do, since there the packing copy costs more than it saves (a tenth of the lesson's
// 5-token forward).
//
// B panel layout (pack_b, the K/V packs of attention and on-the-fly packing for gemm_abt / gemm_ab:
// pack_panels / pack_panels_t of kernels.hpp): columns are grouped into panels of NR = 8; panel p
// stores B[k, 8p .. 8p+8) for k = 0..K-1 contiguously (K×8 floats, row k at offset 8k); columns
// past N in the last panel are zero. Edges: 1 remainder row runs micro_kernel_wide over 2–4 panels at once
// (4 panels from far-apart runs of panels first, so that each stream of B is read front to back), 2
// rows over 2 (4–8 accumulator chains instead of 2), 3 rows and the last panels a micro-kernel
// instantiated with 1..3 rows; N remainders the 1-vector-wide kernel and/or 1..3-lane partial
// loads/stores of C (v128.load32/64_zero, v128.store32/64_lane); K needs no tile edge (one k per
// iteration).
//
// Small attention products (few keys or few queries, where packing costs as much as the product)
// skip B packing: gemm_abt runs dot products against rows of B (dots_abt), gemm_ab reads B's rows in
// place, through rows_ab for K ≤ 16 (the lesson's A·V) and through the same micro-kernels above.
#ifdef MHA_SIMD128

#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels.hpp"
#include "half.hpp"
#include "simd128.hpp"

namespace mha {
namespace kernels {
namespace {

// Register and cache tile sizes; overridable at build time only for tuning experiments (em++ -DMHA_KERNEL_MR=…).
#ifndef MHA_KERNEL_MR
#define MHA_KERNEL_MR 4
#endif
#ifndef MHA_KERNEL_NV
#define MHA_KERNEL_NV 2
#endif
#ifndef MHA_KERNEL_MC
#define MHA_KERNEL_MC 128
#endif
#ifndef MHA_KERNEL_KC
#define MHA_KERNEL_KC 1024
#endif
constexpr int kMR = MHA_KERNEL_MR;  // rows per register tile of A read in place (and default of packed A)
constexpr int kMaxMR = 6;           // largest register tile of packed A (set_tile_rows)
constexpr int kNV = MHA_KERNEL_NV;  // f32x4 vectors per tile row (kMR·kNV accumulators)
constexpr int kNR = 4 * kNV;        // panel width (columns of B per panel)
static_assert(kMR >= 1 && kMR <= 8 && kNV >= 1 && kNV <= 4, "tile of 1..8 rows × 1..4 vectors");
constexpr int kMC = MHA_KERNEL_MC;  // rows of A per cache tile (kMC × kKC floats stay in L2)
constexpr int kKC = MHA_KERNEL_KC;  // depth per cache tile (a kKC × kNR B panel slice stays in L1)
static_assert(kNR == kPanel, "the fixed-width panels of kernels.hpp are one register tile wide");
static_assert(kRowSplit % kMR == 0, "a row split of gemm_packed_cols_mt starts on a register tile");



/// What the micro-kernel does with its result r = A·B (tile of C):
/// C = alpha·r (+ bias) when !accumulate, C += alpha·r when accumulate.
struct Epilogue {
  float alpha = 1.f;
  bool scale = false;           // alpha != 1
  const float* bias = nullptr;  // column bias, already offset to the tile's first column
  bool accumulate = false;
};

/// Stores one accumulator vector (columns 4v.. of the tile, `cols` of them valid, 1..4).
inline void store_vec(float* c, v128_t acc, int cols, const Epilogue& e, int col0) {
  if (e.scale) acc = wasm_f32x4_mul(acc, wasm_f32x4_splat(e.alpha));
  if (cols >= 4) {
    if (e.accumulate) acc = wasm_f32x4_add(acc, wasm_v128_load(c));
    else if (e.bias) acc = wasm_f32x4_add(acc, wasm_v128_load(e.bias + col0));
    wasm_v128_store(c, acc);
  } else {
    if (e.accumulate) acc = wasm_f32x4_add(acc, load_partial(c, cols));
    else if (e.bias) acc = wasm_f32x4_add(acc, load_partial(e.bias + col0, cols));
    store_partial(c, acc, cols);
  }
}

/// Micro-kernel: tile C[MR, nc] (nc ≤ 4·NV valid columns) from MR rows of A read in place (A[i, k]
/// at ap[i·lda + k]) and a B panel slice bp (B[k, j] at bp[k·ldb + j]; ldb is the panel width, or
/// B's leading dimension when its rows are read in place). MR·NV independent f32x4 accumulators;
/// per k: NV vector loads of B, MR broadcast loads of A, MR·NV mul+add.
template <int MR, int NV, bool kPackedA = false, int kAS = MR>
void micro_kernel(int K, const float* __restrict ap, int lda, const float* __restrict bp, int ldb, float* __restrict c,
                  int ldc, int nc, const Epilogue& e) {
  const int W = ldb;
  v128_t acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = wasm_f32x4_splat(0.f);
  // One k per iteration: unrolling makes clang interleave iterations into a schedule that needs
  // more than the 15 xmm registers V8 allocates on x64 (spills); with pointer bumps the loop overhead is
  // a few scalar ops next to the 2·MR·NV vector ops. (Splitting k over two accumulator sets for
  // the narrow remainder tiles measured no faster: V8 spills them.)
  // A[i, k]: at ap + k·kAS + i in a pack_a tile (one pointer, bumped by kAS: MR, or 6 for either
  // half of a 6-row tile), or at a[i] + k in place.
  const float* a[MR];
  for (int i = 0; i < MR; ++i) a[i] = ap + static_cast<size_t>(i) * lda;
#pragma clang loop unroll(disable)
  for (int k = 0; k < K; ++k) {
    v128_t b[NV];
    for (int v = 0; v < NV; ++v) b[v] = wasm_v128_load(bp + 4 * v);
    for (int i = 0; i < MR; ++i) {
      const v128_t av = wasm_v128_load32_splat(kPackedA ? ap + i : a[i] + k);
      for (int v = 0; v < NV; ++v) acc[i][v] = madd(av, b[v], acc[i][v]);
    }
    if (kPackedA) ap += kAS;
    bp += W;
  }
  // Fully unrolled, so that every acc[i][v] is a fixed register: a loop left rolled here makes
  // clang keep the whole accumulator array in the wasm stack (zeroed by a memset per call).
#pragma clang loop unroll(full)
  for (int i = 0; i < MR; ++i) {
    float* cr = c + static_cast<size_t>(i) * ldc;
#pragma clang loop unroll(full)
    for (int v = 0; v < NV; ++v) {
      const int cols = nc - 4 * v;
      if (cols > 0) store_vec(cr + 4 * v, acc[i][v], cols, e, 4 * v);
    }
  }
}

/// Remainder micro-kernel: MR (1 or 2) rows × NP (2..4) full panels (8 columns each, panel q at
/// bp + q·pstride), MR·NP·2 accumulators. The rows left below the last 4-row tile would run
/// through micro_kernel<MR, 2> panel by panel with only 2·MR accumulator chains, bound by the add
/// latency; taking MR·NP = 2..4 panel rows at once gives 4–8 independent chains.
/// With kAS > 0, A is a pack_a tile instead (A[i, k] at ap[k·kAS + i]): the 3 × 12 sweep runs two
/// panels left after its triples as 2 × 16 tiles over a third of a 6-row tile (8 chains; a 3 × 8
/// tile has 6, too few to hide the FMA latency). Panel q's columns go to c + q·cstep (and take the
/// bias at e.bias + q·cstep): kNR for adjacent panels, more for panels far apart (gemm_panelled's
/// one-row sweep).
template <int MR, int NP, int kAS = 0>
void micro_kernel_wide(int K, const float* __restrict ap, int lda, const float* __restrict bp, int ldb, size_t pstride,
                       float* __restrict c, int ldc, const Epilogue& e, size_t cstep = kNR) {
  v128_t acc[MR][NP][2];
  for (int i = 0; i < MR; ++i)
    for (int q = 0; q < NP; ++q) acc[i][q][0] = acc[i][q][1] = wasm_f32x4_splat(0.f);
  const float* a[MR];
  for (int i = 0; i < MR; ++i) a[i] = ap + static_cast<size_t>(i) * lda;
  // One loop over k for A in place and A packed alike: with the body in a lambda called from a
  // pointer loop (packs) and a counter loop (rows in place), the one-row products compiled to
  // much slower code.
#pragma clang loop unroll(disable)
  for (int k = 0; k < K; ++k) {
    for (int q = 0; q < NP; ++q) {
      const v128_t b0 = wasm_v128_load(bp + q * pstride), b1 = wasm_v128_load(bp + q * pstride + 4);
      for (int i = 0; i < MR; ++i) {
        const v128_t av = wasm_v128_load32_splat(kAS ? ap + i : a[i] + k);
        acc[i][q][0] = madd(av, b0, acc[i][q][0]);
        acc[i][q][1] = madd(av, b1, acc[i][q][1]);
      }
    }
    if (kAS) ap += kAS;
    bp += ldb;
  }
#pragma clang loop unroll(full)
  for (int i = 0; i < MR; ++i)
#pragma clang loop unroll(full)
    for (int q = 0; q < NP; ++q)
#pragma clang loop unroll(full)
      for (int v = 0; v < 2; ++v) {
        const size_t col = q * cstep + 4 * v;
        store_vec(c + static_cast<size_t>(i) * ldc + col, acc[i][q][v], 4, e, static_cast<int>(col));
      }
}

/// 3 × 12 micro-kernel for engines that spill the 6 × 8 tile (V8 ≤ 12 hoists every broadcast of an
/// iteration, so a tile needs accumulators + broadcasts + B vectors registers: 9 + 3 + 3 here
/// against 12 + 6 + 2 for 6 × 8). Three rows of a 6-row pack_a tile (A[i, k] at ap[k·6 + i]: rows
/// 0–2 or, from ap + 3, rows 3–5) times 12 columns taken from two 8-column panels whose rows are w
/// floats apart: kHi false takes panel b0 whole and the first half of b1, kHi true the second half of
/// b0 and panel b1 whole, so three panels are two tiles and B needs no packing of its own. Per k: 3
/// vector loads of B, 3 broadcasts, 9 multiply-adds, the same chain per element as every other tile.
template <bool kHi, int kW = 0>
__attribute__((noinline)) void micro_kernel_3x12(int K, const float* __restrict ap, const float* __restrict b0,
                                                 const float* __restrict b1, int ldb, float* __restrict c, int ldc,
                                                 const Epilogue& e) {
  const int w = kW ? kW : ldb;
  v128_t acc[3][3];
  for (int i = 0; i < 3; ++i)
    for (int v = 0; v < 3; ++v) acc[i][v] = wasm_f32x4_splat(0.f);
  if (kHi) b0 += 4;
  // The loop runs on A's pointer against its end, with no counter of its own: under V8 11 each k
  // is 25 x64 instructions around the 9 multiply-adds, where a counter adds one.
  const float* const aend = ap + static_cast<size_t>(K) * 6;
#pragma clang loop unroll(disable)
  while (ap != aend) {
    v128_t b[3];
    if (kHi) {
      b[0] = wasm_v128_load(b0);
      b[1] = wasm_v128_load(b1);
      b[2] = wasm_v128_load(b1 + 4);
    } else {
      b[0] = wasm_v128_load(b0);
      b[1] = wasm_v128_load(b0 + 4);
      b[2] = wasm_v128_load(b1);
    }
    for (int i = 0; i < 3; ++i) {
      const v128_t av = wasm_v128_load32_splat(ap + i);
      for (int v = 0; v < 3; ++v) acc[i][v] = madd(av, b[v], acc[i][v]);
    }
    ap += 6;
    b0 += w;
    b1 += w;
  }
#pragma clang loop unroll(full)
  for (int i = 0; i < 3; ++i)
#pragma clang loop unroll(full)
    for (int v = 0; v < 3; ++v) store_vec(c + static_cast<size_t>(i) * ldc + 4 * v, acc[i][v], 4, e, 4 * v);
}

using MicroKernel = void (*)(int, const float*, int, const float*, int, float*, int, int, const Epilogue&);

/// The micro-kernel for MR rows and nv (1..kNV) vectors of columns.
template <int MR, bool kPackedA = false, int kAS = MR>
MicroKernel pick_width(int nv) {
  switch (nv) {
    case 1: return micro_kernel<MR, 1, kPackedA, kAS>;
    case 2: return micro_kernel<MR, std::min(2, kNV), kPackedA, kAS>;
    case 3: return micro_kernel<MR, std::min(3, kNV), kPackedA, kAS>;
    default: return micro_kernel<MR, kNV, kPackedA, kAS>;
  }
}

/// The micro-kernel for mr rows (1..kMR, or up to kMaxMR − 1 for the rows left below 6-row tiles)
/// and w columns (w ≤ kNR; ceil(w/4) vectors).
inline MicroKernel pick_kernel(int mr, int w) {
  constexpr int kRows = std::max(kMR, kMaxMR - 1);  // the most rows a call asks for
  const int nv = (w + 3) / 4;
  switch (mr) {
    case 1: return pick_width<1>(nv);
    case 2: return pick_width<std::min(2, kRows)>(nv);
    case 3: return pick_width<std::min(3, kRows)>(nv);
    case 4: return pick_width<std::min(4, kRows)>(nv);
    case 5: return pick_width<std::min(5, kRows)>(nv);
    case 6: return pick_width<std::min(6, kRows)>(nv);
    case 7: return pick_width<std::min(7, kRows)>(nv);
    default: return pick_width<std::min(8, kRows)>(nv);
  }
}

/// Transposes the 4×4 tile at s (rows s + r·ld, r = 0..3) into d (rows d + r·dstride).
inline void transpose4x4(const float* s, size_t ld, float* d, size_t dstride) {
  const v128_t r0 = wasm_v128_load(s);
  const v128_t r1 = wasm_v128_load(s + ld);
  const v128_t r2 = wasm_v128_load(s + 2 * ld);
  const v128_t r3 = wasm_v128_load(s + 3 * ld);
  const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5);  // r0[0] r1[0] r0[1] r1[1]
  const v128_t t1 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
  const v128_t t2 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
  const v128_t t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
  wasm_v128_store(d, wasm_i64x2_shuffle(t0, t1, 0, 2));
  wasm_v128_store(d + dstride, wasm_i64x2_shuffle(t0, t1, 1, 3));
  wasm_v128_store(d + 2 * dstride, wasm_i64x2_shuffle(t2, t3, 0, 2));
  wasm_v128_store(d + 3 * dstride, wasm_i64x2_shuffle(t2, t3, 1, 3));
}

/// Loads the 4×4 tile at s (rows s + r·ld), row r times f[r] when kScale, and transposes it into d
/// (rows d + r·dstride), as transpose4x4.
template <bool kScale>
inline void transpose4x4_scaled(const float* s, size_t ld, const float* f, float* d, size_t dstride) {
  v128_t r[4];
  for (int i = 0; i < 4; ++i) {
    r[i] = wasm_v128_load(s + i * ld);
    if (kScale) r[i] = wasm_f32x4_mul(r[i], wasm_v128_load32_splat(f + i));
  }
  const v128_t t0 = wasm_i32x4_shuffle(r[0], r[1], 0, 4, 1, 5);
  const v128_t t1 = wasm_i32x4_shuffle(r[2], r[3], 0, 4, 1, 5);
  const v128_t t2 = wasm_i32x4_shuffle(r[0], r[1], 2, 6, 3, 7);
  const v128_t t3 = wasm_i32x4_shuffle(r[2], r[3], 2, 6, 3, 7);
  wasm_v128_store(d, wasm_i64x2_shuffle(t0, t1, 0, 2));
  wasm_v128_store(d + dstride, wasm_i64x2_shuffle(t0, t1, 1, 3));
  wasm_v128_store(d + 2 * dstride, wasm_i64x2_shuffle(t2, t3, 0, 2));
  wasm_v128_store(d + 3 * dstride, wasm_i64x2_shuffle(t2, t3, 1, 3));
}

/// Packs the full mr-row tiles (mr = 4 or 6) of A[mc, kc] (leading dimension lda): tile t (rows
/// t·mr ..) at out + t·mr·kc holds A[t·mr + i, k] at [k·mr + i], so micro_kernel<mr, …, true>
/// reads it sequentially. Rows past the last full tile are not packed (the remainder kernels read
/// A in place). kScale: row i times f[i] as it is packed (one float multiply per element, the
/// product a scaled copy of A would hold).
template <bool kScale>
void pack_a_rows(int mc, int kc, const float* A, int lda, float* out, int mr, const float* f) {
  for (int ir = 0; ir + mr <= mc; ir += mr) {
    const float* src = A + static_cast<size_t>(ir) * lda;
    const float* fr = kScale ? f + ir : nullptr;
    float* dst = out + static_cast<size_t>(ir) * kc;
    int k = 0;
    if (mr == 4)
      for (; k + 4 <= kc; k += 4) transpose4x4_scaled<kScale>(src + k, lda, fr, dst + 4 * k, 4);
    if (mr == 6)  // rows 0..3 as 4×4 transposes, rows 4..5 interleaved into pairs (one 64-bit store per k)
      for (; k + 4 <= kc; k += 4) {
        transpose4x4_scaled<kScale>(src + k, lda, fr, dst + 6 * k, 6);
        v128_t r4 = wasm_v128_load(src + static_cast<size_t>(4) * lda + k);
        v128_t r5 = wasm_v128_load(src + static_cast<size_t>(5) * lda + k);
        if (kScale) {
          r4 = wasm_f32x4_mul(r4, wasm_v128_load32_splat(fr + 4));
          r5 = wasm_f32x4_mul(r5, wasm_v128_load32_splat(fr + 5));
        }
        const v128_t lo = wasm_i32x4_shuffle(r4, r5, 0, 4, 1, 5);  // A[4, k] A[5, k] A[4, k+1] A[5, k+1]
        const v128_t hi = wasm_i32x4_shuffle(r4, r5, 2, 6, 3, 7);
        wasm_v128_store64_lane(dst + 6 * k + 4, lo, 0);
        wasm_v128_store64_lane(dst + 6 * k + 10, lo, 1);
        wasm_v128_store64_lane(dst + 6 * k + 16, hi, 0);
        wasm_v128_store64_lane(dst + 6 * k + 22, hi, 1);
      }
    for (; k < kc; ++k)
      for (int i = 0; i < mr; ++i) {
        const float a = src[static_cast<size_t>(i) * lda + k];
        dst[k * mr + i] = kScale ? a * fr[i] : a;
      }
  }
}

/// pack_a_rows, row i times f[i] when f is not null.
void pack_a(int mc, int kc, const float* A, int lda, float* out, int mr, const float* f = nullptr) {
  if (f) pack_a_rows<true>(mc, kc, A, lda, out, mr, f);
  else pack_a_rows<false>(mc, kc, A, lda, out, mr, nullptr);
}

int g_tile_rows = kMR;  // rows of the register tile over packed A (set_tile_rows): 4, 6, or 3 (3 × 12 over 6-row packs)

size_t g_scratch_limit = 0;  // set_scratch_limit (tests); 0 = none

/// Scratch buffers for on-the-fly packing, one pair per thread. They grow as a std::vector does
/// (a new allocation of twice the size, or of the request if larger; the old one freed), but a growth
/// that cannot be had returns nullptr instead of aborting the module (the wasm build has no
/// exceptions); callers then compute without packing, with the same bits.
float* scratch(int which, size_t n) {
  struct Buf {
    float* p = nullptr;
    size_t n = 0;
    ~Buf() { std::free(p); }
  };
  thread_local Buf buf[2];
  Buf& b = buf[which];
  if (g_scratch_limit && n > g_scratch_limit) return nullptr;
  if (b.n >= n) return b.p;
  size_t cap = std::max(n, 2 * b.n);
  void* q = std::malloc(cap * sizeof(float));
  if (!q && cap > n) q = std::malloc((cap = n) * sizeof(float));
  if (!q) return nullptr;
  std::free(b.p);
  b.p = static_cast<float*>(q);
  b.n = cap;
  return b.p;
}
enum { kScratchA = 0, kScratchB = 1 };

/// Cache tiles of at least this many rows pack A (pack_a): a tile swept over the panels many
/// times then reads one contiguous buffer, where rows of a wide A (e.g. Q rows 3 KB apart) would
/// fall into a few L1 sets. Smaller tiles read A in place: packing them costs more than it saves
/// (a tenth of a 5-token forward).
constexpr int kPackRows = 32;
constexpr int kRowsMaxK = 16;  // gemm_ab with K ≤ this and ≤ 2·kMR rows runs rows_ab (no panels)

/// Where the panels of a B operand are: kNR-column panels at base + p·stride (the layout of
/// pack_panels, kernels.hpp, also used by pack_b), or (ld > 0) B itself, row-major, panel p being
/// its columns 8p .. 8p+8 read in place.
struct PanelSrc {
  const float* base;
  size_t stride = 0;  // packed: floats (or 16-bit values) from one panel to the next
  int ld = 0;         // > 0: B unpacked, row-major with this leading dimension (N % 4 == 0)
  const uint16_t* half = nullptr;  // 16-bit panels (PackedB::bits) instead of base, widened per cache tile
  int type = 0;                    // their storage: kHalfF16 or kHalfBF16
  const float* panel(int p) const { return ld ? base + p * kNR : base + p * stride; }
  /// Distance between rows k and k+1 of a panel.
  int width() const { return ld ? ld : kNR; }
  /// Distance between consecutive panels.
  size_t panel_step() const { return ld ? kNR : stride; }
};

/// One depth slice of gemm_panelled with the 3 × 12 tile: the mfull rows of a cache tile packed in
/// 6-row tiles (a0, kc floats per row), times every panel of B from depth pc on, into C (the
/// cache tile's first row; bias and epilogue as in gemm_panelled). Each triple of full panels is two
/// 12-column tiles per half of a 6-row tile; two full panels after the last triple run 2 × 16
/// tiles, any other panels after it 3 × 8 tiles.
/// Out of line so that the 4 × 8 and 6 × 8 sweeps keep their own register allocation.
__attribute__((noinline)) void sweep_3x12(int kc, int mfull, const float* a0, const PanelSrc& B, int pc, int N,
                                          float* C, int ldc, const float* bias, Epilogue e) {
  const int w = B.width();
  const int P = (N + kNR - 1) / kNR, triples = N / kNR / 3 * 3;
  // rows ir, ir + 1, … of the pack (ir − ir % 6 starts their 6-row tile)
  auto rows = [&](int ir) { return a0 + static_cast<size_t>(ir - ir % 6) * kc + ir % 6; };
  for (int p = 0; p < triples; p += 3) {
    const float* bp0 = B.panel(p) + static_cast<size_t>(pc) * w;
    const float* bp1 = B.panel(p + 1) + static_cast<size_t>(pc) * w;
    const float* bp2 = B.panel(p + 2) + static_cast<size_t>(pc) * w;
    Epilogue e2 = e;
    e.bias = (bias && !e.accumulate) ? bias + p * kNR : nullptr;
    e2.bias = e.bias ? e.bias + 12 : nullptr;
    for (int ir = 0; ir < mfull; ir += 3) {
      float* ct = C + static_cast<size_t>(ir) * ldc + p * kNR;
      if (w == kNR) {  // packed panels: the row stride a constant
        micro_kernel_3x12<false, kNR>(kc, rows(ir), bp0, bp1, w, ct, ldc, e);
        micro_kernel_3x12<true, kNR>(kc, rows(ir), bp1, bp2, w, ct + 12, ldc, e2);
      } else {
        micro_kernel_3x12<false>(kc, rows(ir), bp0, bp1, w, ct, ldc, e);
        micro_kernel_3x12<true>(kc, rows(ir), bp1, bp2, w, ct + 12, ldc, e2);
      }
    }
  }
  int p = triples;
  if (N / kNR - p == 2) {  // two full panels left: 2 × 16 tiles
    Epilogue e2 = e;
    e2.bias = (bias && !e.accumulate) ? bias + p * kNR : nullptr;
    for (int ir = 0; ir < mfull; ir += 2)
      micro_kernel_wide<2, 2, 6>(kc, rows(ir), 0, B.panel(p) + static_cast<size_t>(pc) * w, w, B.panel_step(),
                                 C + static_cast<size_t>(ir) * ldc + p * kNR, ldc, e2);
    p += 2;
  }
  for (; p < P; ++p) {
    const int n0 = p * kNR;
    const int nc = std::min(kNR, N - n0);
    e.bias = (bias && !e.accumulate) ? bias + n0 : nullptr;
    const MicroKernel half = pick_width<3, true, 6>((nc + 3) / 4);
    for (int ir = 0; ir < mfull; ir += 3)
      half(kc, rows(ir), 0, B.panel(p) + static_cast<size_t>(pc) * w, w, C + static_cast<size_t>(ir) * ldc + n0, ldc, nc, e);
  }
}

/// The constants of widen8_split, as vectors held in variables: read once per kernel call through
/// a volatile pointer (load_split_consts), so that clang cannot turn them back into v128.const,
/// which V8 rebuilds at every use inside a loop ("The exp's constants under V8 13",
/// docs/performance.md). The pmaddwd multipliers that pick the low 16-bit value of each 32-bit
/// lane times 2^13, the float16 mask of sign, exponent and
/// mantissa in float32 position (0x8FFFE000), the bfloat16 mask of the upper half, 2^112.
struct SplitConsts {
  v128_t even, f16mask, bf16mask, scale;
};
alignas(16) const uint32_t kSplitTable[4] = {0x00002000u, 0x8FFFE000u, 0xFFFF0000u, 0x77800000u};

inline SplitConsts load_split_consts() {
  const uint32_t* volatile opaque = kSplitTable;  // a volatile read: its value is unknown to the optimizer
  const uint32_t* t = opaque;
  return {wasm_v128_load32_splat(t), wasm_v128_load32_splat(t + 1), wasm_v128_load32_splat(t + 2),
          wasm_v128_load32_splat(t + 3)};
}

/// Widens one panel row of 16-bit values (8 columns, stored in the order 0, 4, 1, 5, 2, 6, 3, 7:
/// kernels.hpp, half_lane) to float32 without shuffles: columns 0–3 (the low 16-bit half of each
/// 32-bit lane) into lo and columns 4–7 (the high halves) into hi. float16, low halves:
/// i32x4.dot_i16x8_s (one pmaddwd on x64) with the multipliers (2^13, 0) gives the sign-extended
/// value shifted left by 13 (bits 31..28 the sign, 27..13 exponent and mantissa); high halves: an
/// arithmetic shift right by 3 of the lane gives the same layout (bits 12..0 are the low value's,
/// cleared next); the mask 0x8FFFE000 keeps the sign in bit 31 and clears bits 30..28 and 12..0:
/// the float32 w·2^-112, exactly (subnormals included; the caller multiplies A, or the widened
/// vector, by 2^112 = 2^(127 − 15), which rebiases the exponent). The multiply and the shift run on
/// different x64 ports, and neither on the shuffle port. bfloat16: a shift left by 16 (low) and
/// the mask of the upper half (high). Finite values only: the weights are checked when packed.
/// A float16 subnormal widens to a float32 subnormal (w·2^-112): the relaxed tier's FMA takes it at
/// full speed, but the simd tier's f32x4.mul with a subnormal lane can take a slow microcoded path
/// on x64 (AMD Zen 3 among them), so that tier's speed depends on how many weights are float16
/// subnormals. Normalizing them in registers would about double the operations per weight, more
/// than the slow path costs while they are a few per thousand weights (a normal(0, 0.02)
/// initialization rounded to float16: 0.2 %). f16_to_float (half.hpp) is the scalar twin.
template <int T>
inline void widen8_split(v128_t raw, const SplitConsts& k, v128_t& lo, v128_t& hi) {
  if (T == kHalfF16) {
    lo = wasm_v128_and(wasm_i32x4_dot_i16x8(raw, k.even), k.f16mask);
    hi = wasm_v128_and(wasm_i32x4_shr(raw, 3), k.f16mask);
  } else {
    lo = wasm_i32x4_shl(raw, 16);
    hi = wasm_v128_and(raw, k.bf16mask);
  }
}

/// Widens rows 0 .. kc of np 16-bit panels (panel q at src + q·sstride) into float32 panels of
/// natural column order at dst (panel q at dst + q·kc·kNR): widen8_split, float16 times 2^112.
template <int T>
void widen_panels(int kc, int np, const uint16_t* src, size_t sstride, float* dst) {
  const SplitConsts sk = load_split_consts();
  for (int q = 0; q < np; ++q) {
    const uint16_t* s = src + q * sstride;
    float* d = dst + static_cast<size_t>(q) * kc * kNR;
#pragma clang loop unroll_count(2)
    for (int k = 0; k < kc; ++k) {
      v128_t lo, hi;
      widen8_split<T>(wasm_v128_load(s + k * kNR), sk, lo, hi);
      if (T == kHalfF16) {
        lo = wasm_f32x4_mul(lo, sk.scale);
        hi = wasm_f32x4_mul(hi, sk.scale);
      }
      wasm_v128_store(d + k * kNR, lo);
      wasm_v128_store(d + k * kNR + 4, hi);
    }
  }
}

/// One row of C, NP panels: panel q (at bp + q·pstride) gives c[q·cstep .. q·cstep + 8) (+ bias
/// from bias + q·cstep), of which the first ncols − 8q exist, for a[0 .. K)·B with 16-bit panels
/// widened in registers as they are read (the matrix–vector product of a generation step reads each
/// weight once, 2 bytes instead of 4) by widen8_split: columns 0–3 and 4–7 of each panel in two
/// accumulators. 2·NP accumulator chains. Depth slices of kKC, each chain
/// from 0, stored through the epilogue of gemm_panelled (bias on the first slice, added to C on the
/// later ones): every element is the
/// chain the float32 kernels compute for it, so the bits equal those of the widened matrix.
/// Float16 takes A·2^112 (gemv_half_rows makes sure it cannot overflow): (a·2^112)·(w·2^-112) is
/// a·w exactly, so each multiply-add rounds the same value and the bits are the same; kScaleB
/// instead multiplies each widened vector by 2^112 (for rows of A that could overflow).
template <int NP, int T, bool kScaleB = false>
__attribute__((noinline)) void gemv_half(int K, const float* __restrict a, const uint16_t* __restrict bp, size_t pstride,
                                         float* __restrict c, size_t cstep, int ncols, const float* bias) {
  const SplitConsts sk = load_split_consts();
  for (int pc = 0; pc < K; pc += kKC) {
    const int kc = std::min(kKC, K - pc);
    v128_t acc[NP][2];
    for (int q = 0; q < NP; ++q) acc[q][0] = acc[q][1] = wasm_f32x4_splat(0.f);
    const uint16_t* b = bp + static_cast<size_t>(pc) * kNR;
    const float* ak = a + pc;
#pragma clang loop unroll(disable)
    for (int k = 0; k < kc; ++k) {
      const v128_t av = wasm_v128_load32_splat(ak + k);
#pragma clang loop unroll(full)
      for (int q = 0; q < NP; ++q) {
        v128_t lo, hi;
        widen8_split<T>(wasm_v128_load(b + q * pstride), sk, lo, hi);
        if (T == kHalfF16 && kScaleB) {
          lo = wasm_f32x4_mul(lo, sk.scale);
          hi = wasm_f32x4_mul(hi, sk.scale);
        }
        acc[q][0] = madd(av, lo, acc[q][0]);
        acc[q][1] = madd(av, hi, acc[q][1]);
      }
      b += kNR;
    }
    Epilogue e;
    e.accumulate = pc > 0;
    e.bias = (bias && pc == 0) ? bias : nullptr;
#pragma clang loop unroll(full)
    for (int q = 0; q < NP; ++q)
#pragma clang loop unroll(full)
      for (int v = 0; v < 2; ++v) {
        const int n = ncols - 8 * q - 4 * v;
        const size_t col = q * cstep + 4 * v;
        if (n > 0) store_vec(c + col, acc[q][v], std::min(n, 4), e, static_cast<int>(col));
      }
  }
}

/// C[M, N] = A·B (+ bias) for a 16-bit B (PanelSrc::half), row by row through gemv_half, G panels
/// per call read side by side. The full panels are cut into G equal runs of L consecutive panels,
/// and call p takes panel p of every run: each of the G streams of weights is one run read front
/// to back across the calls, which the hardware prefetcher follows (G adjacent panels per call
/// would start G short streams of K·16 bytes at every call, which it does not keep ahead of:
/// docs/performance.md, "Is a generation step at the memory's limit?"). The panels past the G runs
/// (at most G − 1 full and the partial last one) in adjacent groups. The order of the calls changes
/// no element's chain.
template <int T, bool kScaledA = false>
void gemv_half_row(int N, int K, const float* a, const PanelSrc& B, float* c, const float* bias) {
  constexpr bool S = T == kHalfF16 && !kScaledA;  // float16 with A as it is: B times 2^112
  constexpr int G = T == kHalfF16 ? 3 : 4;  // panels per call (float16 widening needs more registers)
  const int P = (N + kNR - 1) / kNR, L = N / kNR / G;
  const size_t run = static_cast<size_t>(L) * kNR;  // columns (and bias entries) from one run to the next
  for (int p = 0; p < L; ++p)
    gemv_half<G, T, S>(K, a, B.half + p * B.stride, L * B.stride, c + p * kNR, run, G * kNR,
                       bias ? bias + p * kNR : nullptr);
  int p = G * L;
  for (; p + G <= P; p += G)
    gemv_half<G, T, S>(K, a, B.half + p * B.stride, B.stride, c + p * kNR, kNR, std::min(G * kNR, N - p * kNR),
                       bias ? bias + p * kNR : nullptr);
  const int left = P - p, n0 = p * kNR;
  const float* b0 = bias ? bias + n0 : nullptr;
  const uint16_t* h = B.half + p * B.stride;
  if (left == 3) gemv_half<3, T, S>(K, a, h, B.stride, c + n0, kNR, N - n0, b0);
  else if (left == 2) gemv_half<2, T, S>(K, a, h, B.stride, c + n0, kNR, N - n0, b0);
  else if (left == 1) gemv_half<1, T, S>(K, a, h, B.stride, c + n0, kNR, N - n0, b0);
}

/// float16 rows whose every |a| < 2^15 run with a·2^112 (gemv_half without kScaleB: no overflow, a
/// float32 holds up to 2^128), copied into the A scratch (unused on this path); the others, and
/// every row when that scratch cannot be had, as they are.
template <int T>
void gemv_half_rows(int M, int N, int K, const float* A, int lda, const PanelSrc& B, float* C, int ldc, const float* bias) {
  for (int i = 0; i < M; ++i) {
    const float* a = A + static_cast<size_t>(i) * lda;
    float* c = C + static_cast<size_t>(i) * ldc;
    if (T == kHalfF16) {
      v128_t m = wasm_f32x4_splat(0.f);
      int k = 0;
      for (; k + 4 <= K; k += 4) m = wasm_f32x4_max(m, wasm_f32x4_abs(wasm_v128_load(a + k)));
      float mx = std::max(std::max(wasm_f32x4_extract_lane(m, 0), wasm_f32x4_extract_lane(m, 1)),
                          std::max(wasm_f32x4_extract_lane(m, 2), wasm_f32x4_extract_lane(m, 3)));
      for (; k < K; ++k) mx = std::max(mx, std::fabs(a[k]));
      float* scaled = mx < 0x1p15f ? scratch(kScratchA, size_t(K)) : nullptr;
      if (scaled) {
        for (k = 0; k < K; ++k) scaled[k] = a[k] * 0x1p112f;
        gemv_half_row<T, true>(N, K, scaled, B, c, bias);
        continue;
      }
    }
    gemv_half_row<T>(N, K, a, B, c, bias);
  }
}

/// Panels of a 16-bit B widened at a time by gemm_panelled (a multiple of 3 for the 3 × 12 sweep):
/// 3 panels of up to kKC rows are 96 KB of float32, reused by every register tile of a cache tile;
/// the packed cache tile of A (kMC rows × kKC) and they stay in a 512 KB L2 together.
constexpr int kHalfPanels = 3;

/// C[M, N] (=|+=) alpha·A[M, K]·B[K, N] (+ bias) with B in panels (PanelSrc).
/// Cache tiling: rows in tiles of kMC (whole register tiles; fewer than two register tiles' rows
/// left after a cache tile join it, so that no cache tile of a few rows reads, or widens, all of B
/// again), depth in slices of kKC; each tile of A (packed when it has kPackRows rows or more, else
/// read in place) is swept over every B panel; the first depth slice applies the caller's epilogue,
/// later ones accumulate.
void gemm_panelled(int M, int N, int K, const float* A, int lda, const PanelSrc& B, float* C, int ldc,
                   float alpha, const float* bias, bool accumulate, const float* ascale = nullptr) {
  const bool t312 = g_tile_rows == 3;  // 3 × 12 tiles over 6-row packs
  const int mr_packed = t312 ? 6 : g_tile_rows;
  const int mcb = kMC / mr_packed * mr_packed;  // a cache tile is whole register tiles
  for (int ic = 0, mc = 0; ic < M; ic += mc) {
    mc = M - ic < mcb + 2 * mr_packed ? M - ic : mcb;
    int scaled = 0;  // with ascale: rows scaled in place (from 0 or from the first row not packed) up to mc
    for (int pc = 0; pc < K; pc += kKC) {
      const int kc = std::min(kKC, K - pc);
      const float* ablk = A + static_cast<size_t>(ic) * lda + pc;
      float* apack = mc >= kPackRows ? scratch(kScratchA, static_cast<size_t>(mc) * kc) : nullptr;
      const bool packed = apack != nullptr;  // no scratch: A read in place (the same operations)
      const int mr = packed ? mr_packed : kMR;
      if (ascale && scaled == 0) {
        // Rows read in place are scaled there once, before their first depth slice: all of them
        // without a pack, else the rows below the last full tile (the tiles are scaled as packed).
        const int r0 = packed ? mc - mc % mr : 0;
        scale_rows(mc - r0, K, const_cast<float*>(A) + static_cast<size_t>(ic + r0) * lda, lda, ascale + ic + r0);
        scaled = packed ? 1 : 2;
      }
      if (packed) pack_a(mc, kc, ablk, lda, apack, mr, scaled == 1 ? ascale + ic : nullptr);
      const float* a0 = packed ? apack : ablk;      // row tile ir at a0 + ir·arow
      const size_t arow = packed ? kc : lda;
      Epilogue e0;
      e0.alpha = alpha;
      e0.scale = alpha != 1.f;
      e0.accumulate = accumulate || pc > 0;
      const int mfull = mc - mc % mr, rem = mc - mfull;
      // The cache tile times the N columns of panels Bs from depth pcs on, into Cb (the tile's first
      // row) with bias bb.
      auto sweep = [&](const PanelSrc& Bs, int pcs, int N, float* Cb, const float* bb) {
        const int P = (N + kNR - 1) / kNR;  // panels
        Epilogue e = e0;
        if (packed && t312) {
          sweep_3x12(kc, mfull, a0, Bs, pcs, N, Cb, ldc, bb, e);
        } else {
          for (int p = 0; p < P; ++p) {
            const int w = Bs.width();
            const int n0 = p * kNR;
            const int nc = std::min(kNR, N - n0);
            const float* bp = Bs.panel(p) + static_cast<size_t>(pcs) * w;
            e.bias = (bb && !e.accumulate) ? bb + n0 : nullptr;
            if (!packed && nc == kNR) {  // the common tile of a short A: a direct call, not through a pointer
              for (int ir = 0; ir < mfull; ir += kMR)
                micro_kernel<kMR, kNV>(kc, a0 + static_cast<size_t>(ir) * arow, lda, bp, w, Cb + static_cast<size_t>(ir) * ldc + n0, ldc, nc, e);
              continue;
            }
            const MicroKernel full = !packed ? pick_kernel(kMR, nc)
                                     : mr == 6 ? pick_width<6, true>((nc + 3) / 4) : pick_width<kMR, true>((nc + 3) / 4);
            for (int ir = 0; ir < mfull; ir += mr)
              full(kc, a0 + static_cast<size_t>(ir) * arow, lda, bp, w, Cb + static_cast<size_t>(ir) * ldc + n0, ldc, nc, e);
          }
        }
        if (rem == 0) return;
        // The rows below the last full tile: 1 row takes 2–4 full panels at once, 2 rows take 2.
        const float* ar = ablk + static_cast<size_t>(mfull) * lda;
        float* cr = Cb + static_cast<size_t>(mfull) * ldc;
        int p = 0;
        // One group of np full panels from panel p on.
        auto wide = [&](int np, void (*kernel)(int, const float*, int, const float*, int, size_t, float*, int, const Epilogue&,
                                               size_t)) {
          e.bias = (bb && !e.accumulate) ? bb + p * kNR : nullptr;
          kernel(kc, ar, lda, Bs.panel(p) + static_cast<size_t>(pcs) * Bs.width(), Bs.width(), Bs.panel_step(), cr + p * kNR,
                 ldc, e, kNR);
          p += np;
        };
        const int full = N / kNR;  // full panels
        if (rem == 1) {
          // Four runs of L consecutive panels read side by side, call r taking panel r of each run:
          // each stream of weights is read front to back across the calls, which the hardware
          // prefetcher follows (as gemv_half_row does). Then groups of 4, 3 and 2 adjacent panels,
          // so that no full panel runs alone (2 chains) unless it is the only one.
          const int L = full / 4 - (full % 4 == 1 && full > 4);
          for (int r = 0; r < L && L > 1; ++r) {
            e.bias = (bb && !e.accumulate) ? bb + r * kNR : nullptr;
            micro_kernel_wide<1, 4>(kc, ar, lda, Bs.panel(r) + static_cast<size_t>(pcs) * Bs.width(), Bs.width(),
                                    L * Bs.panel_step(), cr + r * kNR, ldc, e, static_cast<size_t>(L) * kNR);
          }
          if (L > 1) p = 4 * L;
          while (full - p >= 4 && full - p != 5) wide(4, micro_kernel_wide<1, 4>);
          if (full - p >= 3) wide(3, micro_kernel_wide<1, 3>);
          if (full - p >= 2) wide(2, micro_kernel_wide<1, 2>);
        } else if (rem == 2) {
          while (full - p >= 2) wide(2, micro_kernel_wide<2, 2>);
        }
        for (; p < P; ++p) {
          const int w = Bs.width();
          const int n0 = p * kNR;
          const int nc = std::min(kNR, N - n0);
          e.bias = (bb && !e.accumulate) ? bb + n0 : nullptr;
          pick_kernel(rem, nc)(kc, ar, lda, Bs.panel(p) + static_cast<size_t>(pcs) * w, w, cr + n0, ldc, nc, e);
        }
      };
      float* Cic = C + static_cast<size_t>(ic) * ldc;
      if (!B.half) {
        sweep(B, pc, N, Cic, bias);
        continue;
      }
      // 16-bit B: kHalfPanels panels at a time widened into scratch (gemm_packed_cols made sure it
      // can be had), each swept like float32 panels.
      const int P = (N + kNR - 1) / kNR;
      for (int q0 = 0; q0 < P; q0 += kHalfPanels) {
        const int qn = std::min(kHalfPanels, P - q0);
        float* wb = scratch(kScratchB, static_cast<size_t>(kc) * kNR * qn);
        const uint16_t* src = B.half + q0 * B.stride + static_cast<size_t>(pc) * kNR;
        if (B.type == kHalfBF16) widen_panels<kHalfBF16>(kc, qn, src, B.stride, wb);
        else widen_panels<kHalfF16>(kc, qn, src, B.stride, wb);
        PanelSrc sub{wb, static_cast<size_t>(kc) * kNR};
        sweep(sub, 0, std::min(N - q0 * kNR, qn * kNR), Cic + q0 * kNR, bias ? bias + q0 * kNR : nullptr);
      }
    }
  }
}

/// Fills C[M, N] with zeros, or with the bias row when bias != nullptr (the K == 0 product).
void fill_rows(int M, int N, const float* bias, float* C, int ldc) {
  for (int i = 0; i < M; ++i) {
    float* c = C + static_cast<size_t>(i) * ldc;
    if (bias) std::memcpy(c, bias, sizeof(float) * N);
    else std::memset(c, 0, sizeof(float) * N);
  }
}

/// C[R, N] = alpha·A[R, K]·B[N, K]ᵀ for R (1 or 2) rows of A, by dot products over K (K % 4 == 0):
/// four rows of B at a time, R·4 vector accumulators, reduced with hsum4 into one store of 4
/// scores. No packing: for attention over few keys or few queries, where packing B would cost as
/// much as the product.
template <int R>
void dots_abt(int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float* C, int ldc) {
  const v128_t av = wasm_f32x4_splat(alpha);
  for (int j = 0; j < N; j += 4) {
    const int nj = std::min(4, N - j);
    const float* b[4];
    for (int u = 0; u < 4; ++u) b[u] = B + size_t(j + std::min(u, nj - 1)) * ldb;  // short group: repeat the last row
    v128_t s[R][4];
    for (int i = 0; i < R; ++i)
      for (int u = 0; u < 4; ++u) s[i][u] = wasm_f32x4_splat(0.f);
    for (int k = 0; k < K; k += 4) {
      v128_t bv[4];
      for (int u = 0; u < 4; ++u) bv[u] = wasm_v128_load(b[u] + k);
      for (int i = 0; i < R; ++i) {
        const v128_t x = wasm_v128_load(A + size_t(i) * lda + k);
        for (int u = 0; u < 4; ++u) s[i][u] = madd(x, bv[u], s[i][u]);
      }
    }
    for (int i = 0; i < R; ++i) {
      const v128_t r = wasm_f32x4_mul(hsum4(s[i][0], s[i][1], s[i][2], s[i][3]), av);
      float* c = C + size_t(i) * ldc + j;
      if (nj == 4) wasm_v128_store(c, r);
      else store_partial(c, r, nj);
    }
  }
}

/// C[M, 4·NV columns] (+)= A[M, K]·B[K, 4·NV columns] with B's rows read in place, one row of C at a
/// time: NV accumulators per row, one A element broadcast per k. For products so short (K ≤
/// kRowsMaxK) that the panel path's per-tile setup costs more than the arithmetic; the rows are
/// independent, so their K-long add chains overlap.
template <int NV>
void rows_ab(int M, int K, const float* A, int lda, const float* B, int ldb, float* C, int ldc, bool accumulate) {
  for (int i = 0; i < M; ++i) {
    const float* a = A + size_t(i) * lda;
    float* c = C + size_t(i) * ldc;
    v128_t acc[NV];
    for (int v = 0; v < NV; ++v) acc[v] = accumulate ? wasm_v128_load(c + 4 * v) : wasm_f32x4_splat(0.f);
    for (int k = 0; k < K; ++k) {
      const v128_t x = wasm_v128_load32_splat(a + k);
      const float* b = B + size_t(k) * ldb;
      for (int v = 0; v < NV; ++v) acc[v] = madd(x, wasm_v128_load(b + 4 * v), acc[v]);
    }
    for (int v = 0; v < NV; ++v) wasm_v128_store(c + 4 * v, acc[v]);
  }
}

}  // namespace

/// Packs B[K, N] into the panels described at the top of this file (panels_size(K, N) floats,
/// zero-padded last panel), slice by slice: each slice is pack_panels of its columns from its
/// first panel on. See kernels.hpp.
void pack_b_slices(int K, int N, std::initializer_list<ColumnSlice> slices, PackedB& out) {
  out.k = K;
  out.n = N;
  out.data.assign(panels_size(K, N), 0.f);  // panels no slice touches stay zero
  const size_t stride = size_t(kNR) * K;
  for (const ColumnSlice& blk : slices) pack_panels(K, blk.n, blk.b, blk.ld, out.data.data() + blk.n0 / kNR * stride, stride);
}

/// pack_b of Btᵀ: the panels straight from Bt by pack_panels_t (4×4 transposes). See kernels.hpp.
void pack_b_t(int K, int N, const float* Bt, int ldbt, PackedB& out) {
  out.k = K;
  out.n = N;
  out.data.resize(panels_size(K, N));  // pack_panels_t writes every float, the last panel's padding too
  pack_panels_t(K, N, Bt, ldbt, out.data.data(), size_t(kNR) * K);
}

/// Column n of the panels: panel n / kNR, lane n % kNR of each of its K rows. See kernels.hpp.
void packed_column(const PackedB& B, int n, float* out) {
  if (B.half) return packed_column16(B, n, out);
  const float* p = B.data.data() + static_cast<size_t>(n / kNR) * kNR * B.k + n % kNR;
  for (int k = 0; k < B.k; ++k) out[k] = p[static_cast<size_t>(k) * kNR];
}

/// C[M, n] = A[M, K]·B[K, n0 .. n0+n) (+ bias) with B from pack_b (panels from n0 / kNR on): the
/// cache-tiled 4×8 micro-kernel, bias added in the store. K = 0 gives C = bias (or 0). See kernels.hpp.
void gemm_packed_cols(int M, const float* A, int lda, const PackedB& B, int n0, int n, const float* bias,
                      float* C, int ldc) {
  if (M <= 0 || n <= 0) return;
  if (B.k <= 0) return fill_rows(M, n, bias ? bias + n0 : nullptr, C, ldc);
  const size_t stride = size_t(kNR) * B.k;
  if (B.half) {
    PanelSrc src{nullptr, stride};
    src.half = B.bits.data() + n0 / kNR * stride;
    src.type = B.half;
    // One row (a generation step): widened in registers. More rows: tiles of panels widened once
    // per cache tile into scratch; without that scratch, row by row (the same bits either way).
    if (M == 1 || !scratch(kScratchB, size_t(std::min(B.k, kKC)) * kNR * kHalfPanels)) {
      if (B.half == kHalfBF16) return gemv_half_rows<kHalfBF16>(M, n, B.k, A, lda, src, C, ldc, bias ? bias + n0 : nullptr);
      return gemv_half_rows<kHalfF16>(M, n, B.k, A, lda, src, C, ldc, bias ? bias + n0 : nullptr);
    }
    return gemm_panelled(M, n, B.k, A, lda, src, C, ldc, 1.f, bias ? bias + n0 : nullptr, false);
  }
  PanelSrc src{B.data.data() + n0 / kNR * stride, stride};
  gemm_panelled(M, n, B.k, A, lda, src, C, ldc, 1.f, bias ? bias + n0 : nullptr, false);
}

/// Panels of kNR = 8 columns at out + p·stride (see kernels.hpp); rows copied as two vectors.
void pack_panels(int K, int N, const float* B, int ldb, float* out, size_t stride) {
  for (int p = 0, n0 = 0; n0 < N; ++p, n0 += kNR) {
    const int nc = std::min(kNR, N - n0);
    float* dst = out + p * stride;
    if (nc == kNR) {
      for (int k = 0; k < K; ++k) {
        const float* src = B + static_cast<size_t>(k) * ldb + n0;
        for (int v = 0; v < kNV; ++v) wasm_v128_store(dst + 8 * k + 4 * v, wasm_v128_load(src + 4 * v));
      }
    } else {
      for (int k = 0; k < K; ++k) {
        const float* src = B + static_cast<size_t>(k) * ldb + n0;
        for (int j = 0; j < kNR; ++j) dst[8 * k + j] = j < nc ? src[j] : 0.f;
      }
    }
  }
}

/// Panels of Btᵀ: 8 rows of Bt at a time, transposed in 4×4 tiles (see kernels.hpp).
void pack_panels_t(int K, int N, const float* Bt, int ldbt, float* out, size_t stride) {
  for (int p = 0, n0 = 0; n0 < N; ++p, n0 += kNR) {
    const int nc = std::min(kNR, N - n0);
    float* dst = out + p * stride;
    int k = 0;
    if (nc == kNR)
      for (; k + 4 <= K; k += 4)
        for (int g = 0; g < kNR; g += 4)
          transpose4x4(Bt + static_cast<size_t>(n0 + g) * ldbt + k, ldbt, dst + 8 * k + g, 8);
    for (; k < K; ++k)
      for (int j = 0; j < kNR; ++j) dst[8 * k + j] = j < nc ? Bt[static_cast<size_t>(n0 + j) * ldbt + k] : 0.f;
  }
}

namespace {

/// gemm_panels of diag(ascale)·A when ascale is not null (gemm_panelled scales A as it packs it).
void gemm_panels_of(int M, int N, int K, float alpha, const float* A, int lda, const float* Bp, size_t stride,
                    float* C, int ldc, bool accumulate, const float* ascale) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate) fill_rows(M, N, nullptr, C, ldc);
    return;
  }
  PanelSrc src{Bp, stride};
  gemm_panelled(M, N, K, A, lda, src, C, ldc, alpha, nullptr, accumulate, ascale);
}

}  // namespace

/// C (=|+=) alpha·A·B with B in fixed 8-wide panels (see kernels.hpp).
void gemm_panels(int M, int N, int K, float alpha, const float* A, int lda, const float* Bp, size_t stride,
                 float* C, int ldc, bool accumulate) {
  gemm_panels_of(M, N, K, alpha, A, lda, Bp, stride, C, ldc, accumulate, nullptr);
}

/// gemm_panels of diag(ascale)·A (see kernels.hpp): the scale folded into the packing of A.
void gemm_panels_scaled(int M, int N, int K, const float* ascale, float* A, int lda, const float* Bp, size_t stride,
                        float* C, int ldc, bool accumulate) {
  gemm_panels_of(M, N, K, 1.f, A, lda, Bp, stride, C, ldc, accumulate, ascale);
}

/// C[M, N] (=|+=) alpha·A[M, K]·B[K, N] with B read through b(k, j), one element at a time: what
/// gemm_abt and gemm_ab do when the scratch for B's panels cannot be had. The same operations in
/// the same order as gemm_panelled (per depth slice of kKC a multiply-add chain from 0, times
/// alpha, then added to C after the first slice), so the bits are those of the packed path.
template <class BAt>
void gemm_elementwise(int M, int N, int K, float alpha, const float* A, int lda, BAt b, float* C, int ldc,
                      bool accumulate) {
  for (int i = 0; i < M; ++i) {
    const float* a = A + static_cast<size_t>(i) * lda;
    for (int j = 0; j < N; ++j) {
      float* c = C + static_cast<size_t>(i) * ldc + j;
      for (int pc = 0; pc < K; pc += kKC) {
        const int kend = std::min(K, pc + kKC);
        v128_t acc = wasm_f32x4_splat(0.f);
        for (int k = pc; k < kend; ++k) acc = madd(wasm_f32x4_splat(a[k]), wasm_f32x4_splat(b(k, j)), acc);
        float r = wasm_f32x4_extract_lane(acc, 0);
        if (alpha != 1.f) r *= alpha;
        *c = (accumulate || pc > 0) ? r + *c : r;
      }
    }
  }
}

/// C[M, N] = alpha·A[M, K]·B[N, K]ᵀ. See kernels.hpp. Small products with K % 4 == 0 (attention
/// over a few keys or for a few query rows) run as direct dot products, reading B in place;
/// larger ones transpose B into panels (4×4 shuffles) in a scratch buffer of ~K·N floats first,
/// then run the cache-tiled micro-kernel with alpha applied in the store.
void gemm_abt(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
              float* C, int ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) return fill_rows(M, N, nullptr, C, ldc);
  if (K % 4 == 0 && (M <= 2 * kMR || size_t(N) * K <= 4096)) {
    int i = 0;
    for (; i + 2 <= M; i += 2)
      dots_abt<2>(N, K, alpha, A + size_t(i) * lda, lda, B, ldb, C + size_t(i) * ldc, ldc);
    if (i < M) dots_abt<1>(N, K, alpha, A + size_t(i) * lda, lda, B, ldb, C + size_t(i) * ldc, ldc);
    return;
  }
  float* bp = scratch(kScratchB, panels_size(K, N));
  if (!bp) return gemm_elementwise(M, N, K, alpha, A, lda, [&](int k, int j) { return B[size_t(j) * ldb + k]; }, C, ldc, false);
  pack_panels_t(K, N, B, ldb, bp, size_t(kNR) * K);
  PanelSrc src{bp, size_t(kNR) * K};
  gemm_panelled(M, N, K, A, lda, src, C, ldc, alpha, nullptr, false);
}

/// C[M, N] (+)= A[M, K]·B[K, N] with B unpacked. See kernels.hpp. When N % 4 == 0 and the product
/// is small (a few rows of A, or at most 64 rows of B: a panel's rows then stay in L1 however far
/// apart they are), the micro-kernel reads B's rows in place; otherwise B is first copied into
/// panels in a scratch buffer of ~K·N floats.
void gemm_ab(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate) fill_rows(M, N, nullptr, C, ldc);
    return;
  }
  if (N % 4 == 0 && K <= kRowsMaxK && M <= 2 * kMR) {
    for (int j = 0; j < N; j += 16) {
      const float* b = B + j;
      float* c = C + j;
      switch (std::min(16, N - j) / 4) {
        case 1: rows_ab<1>(M, K, A, lda, b, ldb, c, ldc, accumulate); break;
        case 2: rows_ab<2>(M, K, A, lda, b, ldb, c, ldc, accumulate); break;
        case 3: rows_ab<3>(M, K, A, lda, b, ldb, c, ldc, accumulate); break;
        default: rows_ab<4>(M, K, A, lda, b, ldb, c, ldc, accumulate); break;
      }
    }
    return;
  }
  if (N % 4 == 0 && (M <= 2 * kMR || K <= 64)) {
    PanelSrc src{B};
    src.ld = ldb;
    return gemm_panelled(M, N, K, A, lda, src, C, ldc, 1.f, nullptr, accumulate);
  }
  float* bp = scratch(kScratchB, panels_size(K, N));
  if (!bp) return gemm_elementwise(M, N, K, 1.f, A, lda, [&](int k, int j) { return B[size_t(k) * ldb + j]; }, C, ldc, accumulate);
  pack_panels(K, N, B, ldb, bp, size_t(kNR) * K);
  PanelSrc src{bp, size_t(kNR) * K};
  gemm_panelled(M, N, K, A, lda, src, C, ldc, 1.f, nullptr, accumulate);
}

void set_scratch_limit(size_t floats) { g_scratch_limit = floats; }

void set_tile_rows(int rows) { g_tile_rows = rows == 6 || rows == 3 ? rows : kMR; }
int tile_rows() { return g_tile_rows; }

}  // namespace kernels
}  // namespace mha

#endif  // MHA_SIMD128

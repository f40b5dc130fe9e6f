// Internal compute kernels of the MHA core: the hot loops, behind one small interface.
//
// Every matrix is row-major float32 with an explicit leading dimension (elements between rows).
// Two implementations exist behind this header: a portable one (Eigen products, used natively and
// as the reference in tests) and a wasm SIMD one (wasm_simd128.h register tiles), chosen at build
// time by MHA_SIMD128. Callers never see which.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace mha {
namespace kernels {

/// Position of column j (0 ≤ j < kPanel) within a row of a 16-bit panel: the columns are stored in
/// the order 0, 4, 1, 5, 2, 6, 3, 7, so that the low 16-bit halves of the four 32-bit lanes hold
/// columns 0–3 and the high halves columns 4–7, and the SIMD kernels widen a row into two float32
/// vectors of consecutive columns without a shuffle (kernels_simd_gemm.cpp: widen8_split).
constexpr int half_lane(int j) { return j < 4 ? 2 * j : 2 * (j - 4) + 1; }

/// A right-hand matrix B [K, N] repacked once (at layer creation) into the layout the GEMM
/// micro-kernel streams fastest. Build it with pack_b() / pack_b_slices(), use it with
/// gemm_packed() / gemm_packed_cols(). Its layout is the implementation's, except that column
/// ranges are addressed in panels of kPanel columns (n0 of pack_b_slices and gemm_packed_cols).
/// A PackedB holds float32 (`data`), or 16-bit values (`bits`: half = 1 float16, 2 bfloat16,
/// the values of mha::WeightType) in the SIMD panel layout in every implementation; the kernels
/// widen 16-bit values to float32 as they read them (exactly: the products are those of the
/// widened matrix, bit for bit).
struct PackedB {
  int k = 0, n = 0;
  int half = 0;                 // 0: float32 in data; 1: float16, 2: bfloat16 bit patterns in bits
  std::vector<float> data;      // layout chosen by the implementation
  std::vector<uint16_t> bits;   // 16-bit panels (kPanel columns, row k at [k·kPanel], column j at half_lane(j))
  /// Bytes the weights take.
  size_t bytes() const { return data.size() * sizeof(float) + bits.size() * sizeof(uint16_t); }
};

/// Columns n0 .. n0+n of a 16-bit matrix to pack (ColumnSlice of 16-bit values).
struct ColumnSlice16 {
  const uint16_t* b;
  int ld, n0, n;
};

/// pack_b_slices of a matrix of 16-bit values of storage `half` (1 float16, 2 bfloat16): the
/// PackedB keeps them 16-bit (in panels of kPanel columns, zero-padded, in every implementation).
void pack_b_slices16(int K, int N, int half, std::initializer_list<ColumnSlice16> slices, PackedB& out);

/// pack_b of a 16-bit B [K, N] (leading dimension ldb).
inline void pack_b16(int K, int N, int half, const uint16_t* B, int ldb, PackedB& out) {
  pack_b_slices16(K, N, half, {{B, ldb, 0, N}}, out);
}

/// pack_b_t of a 16-bit Bt [N, K]: the tied output head straight from a 16-bit embedding.
void pack_b_t16(int K, int N, int half, const uint16_t* Bt, int ldbt, PackedB& out);

/// packed_column of a 16-bit PackedB: the widened values.
void packed_column16(const PackedB& B, int n, float* out);

/// Columns n0 .. n0+n of a matrix to pack, given as their own row-major B [K, n] (leading
/// dimension ld).
struct ColumnSlice {
  const float* b;
  int ld, n0, n;
};

/// Packs the K×N matrix made of `slices` side by side (columns no slice covers are zero; every n0
/// a multiple of kPanel) for gemm_packed(), without assembling it first: the fused
/// [W_Q | W_K | W_V] straight from the three matrices.
void pack_b_slices(int K, int N, std::initializer_list<ColumnSlice> slices, PackedB& out);

/// Packs B [K, N] (row-major, leading dimension ldb) for gemm_packed().
inline void pack_b(int K, int N, const float* B, int ldb, PackedB& out) { pack_b_slices(K, N, {{B, ldb, 0, N}}, out); }

/// Packs B = Btᵀ [K, N], given Bt [N, K] (row-major, leading dimension ldbt), for gemm_packed(): the
/// same PackedB as pack_b() of the transposed matrix, without assembling it (the tied output head
/// W_head = tok_embᵀ [d_model, V] straight from the embedding tok_emb [V, d_model]).
void pack_b_t(int K, int N, const float* Bt, int ldbt, PackedB& out);

/// Column n of a packed B [K, N]: out[k] = B[k, n] for k < K, the exact floats given to pack_b() or
/// pack_b_t() (with pack_b_t: row n of Bt, e.g. the embedding of token n from the tied head), or
/// the widened 16-bit values. A strided gather (stride N floats in the portable layout, kPanel in
/// the SIMD panels and 16-bit panels); 0 ≤ n < N.
void packed_column(const PackedB& B, int n, float* out);

/// C[M, n] = A[M, K] · B[K, n0 .. n0+n) (+ bias[n0 .. n0+n) broadcast over rows): the product with a
/// column range of a packed B (e.g. the Q, K or V columns of a fused [W_Q | W_K | W_V]). n0 must be
/// a multiple of kPanel (the range starts on a panel). Overwrites C. A 16-bit B gives the bits of
/// the float32 B holding its widened values (SIMD: one row of A widens B in registers, more rows
/// widen a tile of panels once per tile of rows; portable: slices of columns widened, then Eigen).
void gemm_packed_cols(int M, const float* A, int lda, const PackedB& B, int n0, int n, const float* bias,
                      float* C, int ldc);

/// C[M, N] = A[M, K] · B[K, N] (+ bias[N] broadcast over rows, when bias != nullptr).
/// Overwrites C. Used for the projections X·W_Q, X·W_K, X·W_V and concat·W_O (y = x·W + b).
inline void gemm_packed(int M, const float* A, int lda, const PackedB& B, const float* bias, float* C, int ldc) {
  gemm_packed_cols(M, A, lda, B, 0, B.n, bias, C, ldc);
}

/// gemm_packed_cols split over the threads of the pool (parallel.hpp) when the product is large
/// enough to pay for waking them (M·n·K ≥ kParallelMacs): up to kColSplitRows rows with at least
/// kColGroup panels per thread by groups of kColGroup panels (every thread reads its part of B once;
/// a row split would have each thread read, and widen, all of B for its rows), else by splits of
/// kRowSplit rows when there are at least two, else by groups of column panels. Every micro-kernel computes an element of C
/// as one multiply-add chain over k, depth slice after depth slice, whatever rows and panels it is
/// given, so each element is computed exactly as by gemm_packed_cols on one thread: the result is
/// bit-identical for any thread count. Same arguments and contract as gemm_packed_cols.
void gemm_packed_cols_mt(int M, const float* A, int lda, const PackedB& B, int n0, int n, const float* bias,
                         float* C, int ldc);

/// gemm_packed on the pool's threads: see gemm_packed_cols_mt.
inline void gemm_packed_mt(int M, const float* A, int lda, const PackedB& B, const float* bias, float* C, int ldc) {
  gemm_packed_cols_mt(M, A, lda, B, 0, B.n, bias, C, ldc);
}

/// Rows per row split of gemm_packed_cols_mt past kColSplitRows rows (a multiple of the register
/// tile's rows): no A block packed by more than one thread.
constexpr int kRowSplit = 64;
/// Rows up to which gemm_packed_cols_mt splits by column panels (two cache tiles of rows).
constexpr int kColSplitRows = 256;
/// Panels per column group of gemm_packed_cols_mt: whole panel triples of the 3 × 12 tile and
/// pairs of the 2 × 16 one.
constexpr int kColGroup = 6;
/// Multiply-adds below which a product stays on the calling thread.
constexpr long kParallelMacs = 1L << 18;

// ---- panelled operands (packed once, used many times) ------------------------------------------
// A "panelled" B [K, N] (used for the per-head Kᵀ and V of attention, packed once per (batch, kv
// head) and reused by every query tile and key tile): columns in panels of kPanel = 8; panel p
// (columns 8p .. 8p+8, columns ≥ N zero) starts at Bp + p·stride and holds B[k, 8p + j] at
// [k·8 + j], k = 0..K-1 (stride ≥ 8·K floats; a larger stride leaves room below). Sub-matrices
// need no copy: rows k0.. of B are Bp + 8·k0 (same stride), columns from 8p.. are Bp + p·stride.
// Total size: panels_size(K, N) with stride 8·K.
constexpr int kPanel = 8;

/// Floats of a panelled K×N matrix with the dense stride 8·K: 8·K·ceil(N/8).
inline size_t panels_size(int K, int N) { return size_t(K) * kPanel * ((N + kPanel - 1) / kPanel); }

/// Packs B[K, N] (row-major, leading dimension ldb) into panels at out (panel p at out + p·stride).
void pack_panels(int K, int N, const float* B, int ldb, float* out, size_t stride);

/// Packs B = Btᵀ [K, N], given Bt[N, K] (row-major, leading dimension ldbt), into panels at out
/// (panel p at out + p·stride). For attention: Bt = K [Tk, d_k] of a head gives Kᵀ panels.
void pack_panels_t(int K, int N, const float* Bt, int ldbt, float* out, size_t stride);

/// C[M, N] = alpha·A[M, K]·B[K, N] (accumulate = false) or C += alpha·A·B (true), with B panelled
/// (panel p at Bp + p·stride, row k at [8k]). Used for S = Q_i·K_iᵀ·scale (B = Kᵀ panels of a key
/// tile) and O += P·V (B = rows of a key tile of the V panels).
void gemm_panels(int M, int N, int K, float alpha, const float* A, int lda, const float* Bp, size_t stride,
                 float* C, int ldc, bool accumulate);

/// X[r, 0..cols) *= f[r] for r < rows (leading dimension ldx); rows with f[r] == 1 are skipped.
void scale_rows(int rows, int cols, float* X, int ldx, const float* f);

/// C[M, N] = alpha · A[M, K] · B[N, K]ᵀ. Overwrites C. Used for the scores S = Q·Kᵀ·(1/√d_k)
/// (Vaswani et al. 2017, eq. 1) when attention reads K in place (few keys or few queries: no
/// packing pays off there, and the SIMD version runs small products as direct dot products).
void gemm_abt(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
              float* C, int ldc);

/// C[M, N] = A[M, K] · B[K, N] (B not packed; accumulate = false overwrites C, true adds to it).
/// Used for the weighted sum A·V of attention weights and values when attention reads V in place.
void gemm_ab(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc, bool accumulate);

/// In place, x[i] = GELU(x[i]) with the tanh approximation (Hendrycks & Gimpel 2016; GPT-2's
/// "gelu_new"): 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), for n floats. The SIMD build
/// computes the same function as x·σ(2u) = x / (1 + e^(-2u)) with e^(-2|u|) from the softmax's
/// exp (u < 0 as x·e^(2u) / (1 + e^(2u)); relative error ≲ 1e-6 + |2u|·3e-7, the second term the
/// float rounding of u); the portable build calls tanh.
/// Infinities and NaN follow the formula (+inf → +inf, -inf and NaN → NaN).
void gelu_tanh(size_t n, float* x);

/// In-place softmax of each of the `rows` rows of S [rows, n] (leading dimension lds):
/// subtracts the row maximum first, so logits of any finite size give finite weights.
/// Entries equal to -infinity are masked (weight exactly 0). A row whose entries are all
/// -infinity becomes all zeros (the convention of PyTorch's scaled_dot_product_attention and
/// ONNX Attention), never NaN.
void softmax_rows(int rows, int n, float* S, int lds);

/// softmax_rows without its last step: row r of S is left as e^(S[r, j] − max_j S[r, j]) (or
/// already normalized: inv[r] = 1) and inv[r] is the factor that normalizes it (1 / its sum; 0 for
/// a row of only -infinity, which is left as zeros). P = diag(inv)·S, element by element the
/// floats softmax_rows gives. With gemm_panels_scaled this saves a pass over the scores.
void softmax_rows_unnormalized(int rows, int n, float* S, int lds, float* inv);

/// gemm_panels (alpha = 1) of diag(ascale)·A: row i of A times ascale[i], each product rounded to
/// float as in a scaled copy of A, so C is bit for bit gemm_panels of that copy. The products are
/// formed as A is packed; rows the kernels read in place are scaled in place (A is overwritten
/// there). For O = P·V with P from softmax_rows_unnormalized.
void gemm_panels_scaled(int M, int N, int K, const float* ascale, float* A, int lda, const float* Bp, size_t stride,
                        float* C, int ldc, bool accumulate);

/// One step of the online softmax (Milakov & Gimelshein 2018, "Online normalizer calculation
/// for softmax"; FlashAttention, Dao et al. 2022) over a tile S [rows, n] of one query tile's
/// scores, given the running row maxima m[rows] and sums l[rows] of the tiles before it:
///   m' = max(m, max_j S[r, j]);  alpha[r] = exp(m - m');  S[r, j] = exp(S[r, j] - m');
///   l = l·alpha + Σ_j S[r, j];  m = m'.
/// The caller rescales its output accumulator rows by alpha before adding S·V. -inf entries give
/// 0; a row that has seen only -inf keeps m = -inf, l = 0 and gets alpha = 1.
void softmax_online_tile(int rows, int n, float* S, int lds, float* m, float* l, float* alpha);

#ifdef MHA_SIMD128
/// For tests: requests for packing scratch above `floats` fail as a failed allocation would
/// (0: no limit). The SIMD kernels then read A in place and compute B's products element by
/// element, with the same bits. Not thread-safe; set it before any call.
void set_scratch_limit(size_t floats);

/// Rows of the GEMM register tile over packed A: 4 (the default; 4×8, 8 accumulators), 6 (6×8,
/// 12 accumulators) or 3 (3×12, 9 accumulators, over 6-row packs of A); any other value selects 4.
/// Which is faster depends on the wasm engine's register allocation (docs/performance.md, "The
/// register tile per engine"); all compute every element of C with the same multiply-add chain, so
/// the results are bit-identical. Process-wide; set it before any call, not while another thread
/// runs a kernel.
void set_tile_rows(int rows);
/// The current tile rows (3, 4 or 6).
int tile_rows();
#endif

}  // namespace kernels
}  // namespace mha

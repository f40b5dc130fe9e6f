// Internal compute kernels of the MHA core: the hot loops, behind one small interface.
//
// Every matrix is row-major float32 with an explicit leading dimension (elements between rows).
// Two implementations exist behind this header: a portable one (Eigen products, used natively and
// as the reference in tests) and a wasm SIMD one (wasm_simd128.h register tiles), chosen at build
// time by MHA_SIMD128. Callers never see which.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mha {
namespace kernels {

/// A right-hand matrix B [K, N] repacked once (at layer creation) into the layout the GEMM
/// micro-kernel streams fastest. Opaque to callers: build it with pack_b(), use it with gemm_packed().
struct PackedB {
  int k = 0, n = 0;
  std::vector<float> data;  // layout chosen by the implementation
};

/// Packs B [K, N] (row-major, leading dimension ldb) for gemm_packed().
void pack_b(int K, int N, const float* B, int ldb, PackedB& out);

/// C[M, N] = A[M, K] · B[K, N] (+ bias[N] broadcast over rows, when bias != nullptr).
/// Overwrites C. Used for the projections X·W_Q, X·W_K, X·W_V and concat·W_O (y = x·W + b).
void gemm_packed(int M, const float* A, int lda, const PackedB& B, const float* bias, float* C,
                 int ldc);

/// C[M, N] = alpha · A[M, K] · B[N, K]ᵀ. Overwrites C. Used for the scores S = Q·Kᵀ·(1/√d_k)
/// (Vaswani et al. 2017, eq. 1).
void gemm_abt(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
              float* C, int ldc);

/// C[M, N] = A[M, K] · B[K, N] (B not packed; accumulate = false overwrites C, true adds to it).
/// Used for the weighted sum A·V of attention weights and values.
void gemm_ab(int M, int N, int K, const float* A, int lda, const float* B, int ldb, float* C,
             int ldc, bool accumulate);

/// In-place softmax of each of the `rows` rows of S [rows, n] (leading dimension lds):
/// subtracts the row maximum first, so logits of any finite size give finite weights.
/// Entries equal to -infinity are masked (weight exactly 0). A row whose entries are all
/// -infinity becomes all zeros (the convention of PyTorch's scaled_dot_product_attention and
/// ONNX Attention), never NaN.
void softmax_rows(int rows, int n, float* S, int lds);

/// One step of the online softmax (Milakov & Gimelshein 2018, "Online normalizer calculation
/// for softmax"; FlashAttention, Dao et al. 2022) over a block S [rows, n] of one row-block's
/// scores, given the running row maxima m[rows] and sums l[rows] of the blocks before it:
///   m' = max(m, max_j S[r, j]);  alpha[r] = exp(m - m');  S[r, j] = exp(S[r, j] - m');
///   l = l·alpha + Σ_j S[r, j];  m = m'.
/// The caller rescales its output accumulator rows by alpha before adding S·V. -inf entries give
/// 0; a row that has seen only -inf keeps m = -inf, l = 0 and gets alpha = 1.
void softmax_online_block(int rows, int n, float* S, int lds, float* m, float* l, float* alpha);

}  // namespace kernels
}  // namespace mha

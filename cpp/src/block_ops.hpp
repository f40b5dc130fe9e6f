// Row-wise operations of a transformer block besides attention and the GEMMs: norms, MLP
// activations, residual adds and the log-softmax of the output head. Internal to the core (the
// Decoder uses them); row-major float32, d (or n) floats per row, rows contiguous. Sums run in
// double: a norm or a log-sum-exp over a few hundred floats then rounds once, not per element.
#pragma once
#include <cstddef>

namespace mha {
namespace ops {

/// LayerNorm (Ba et al. 2016): y = (x − mean) / sqrt(var + eps) · w + b over each row of d, biased
/// variance (torch.nn.LayerNorm). b may be null (no bias). y may equal x.
void layer_norm(int rows, int d, const float* x, const float* w, const float* b, float eps, float* y);

/// RMSNorm (Zhang & Sennrich 2019, as in Llama): y = x / sqrt(mean(x²) + eps) · w per row of d.
/// y may equal x.
void rms_norm(int rows, int d, const float* x, const float* w, float eps, float* y);

/// x ← max(x, 0) over n floats.
void relu(size_t n, float* x);

/// x ← GELU(x) = x·Φ(x) = x/2·(1 + erf(x/√2)) over n floats (Hendrycks & Gimpel 2016; torch's
/// approximate='none').
void gelu_erf(size_t n, float* x);

/// x ← x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))) over n floats, GELU's tanh approximation
/// (Hendrycks & Gimpel 2016; GPT-2; torch's approximate='tanh').
/// kernels::gelu_tanh (the SIMD builds: x·σ(2u) with a vector exp).
void gelu_tanh(size_t n, float* x);

/// gate ← silu(gate) ⊙ up over n floats, silu(z) = z·σ(z): the SwiGLU product (Shazeer 2020).
void silu_mul(size_t n, float* gate, const float* up);

/// x ← x + y over n floats (a residual add).
void add(size_t n, float* x, const float* y);

/// In-place log_softmax of each of `rows` rows of n logits: z − log Σ exp z (max subtracted first).
void log_softmax(int rows, int n, float* z);

}  // namespace ops
}  // namespace mha

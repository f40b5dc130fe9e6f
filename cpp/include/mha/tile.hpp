// The register tile of the GEMM micro-kernel (the SIMD tiers): a process-wide choice that changes
// speed only, never results.
//
// The projections, the attention's products and W_O all run one micro-kernel over a tile of C of
// `rows` × 8 columns held in rows·2 f32x4 accumulators. How many accumulators a wasm engine keeps
// in registers depends on its register allocator and scheduler: V8 up to 12.x (Node 20, 22) spills
// beyond 8 accumulators; V8 13.6 (Node 24, Chromium 136) and later keep 12, and with fused
// multiply-adds (the relaxed-SIMD build) run a forward 12–17 % faster with the 6 × 8 tile than
// with 4 × 8 (docs/performance.md, "The register tile per engine"). The JS loader picks the tile
// for the engine and build it runs. Every tile computes each element of C with the same
// multiply-add chain in the same order, so results are bit-identical for either choice.
#pragma once

namespace mha {

/// Sets the rows of the GEMM register tile over packed A: 6 (a 6 × 8 tile) or 4 (4 × 8, the
/// default; any value other than 6 selects it). Returns the rows now in use: 4 or 6 in the SIMD
/// builds, 0 in builds without the SIMD kernels (the portable Eigen kernels have no such tile).
/// Process-wide; not to be called while a forward runs on any thread.
int set_gemm_tile_rows(int rows);

/// The rows of the GEMM register tile now in use (4 or 6; 0 without the SIMD kernels).
int gemm_tile_rows();

}  // namespace mha

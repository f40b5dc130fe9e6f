// The register tile of the GEMM micro-kernel (the SIMD tiers): a process-wide choice that changes
// speed only, never results.
//
// The projections, the attention's products and W_O all run one micro-kernel over a tile of C held
// in f32x4 accumulators: 4 rows × 8 columns (8 accumulators, the default), 6 × 8 (12) or 3 × 12 (9,
// over the same 6-row packs of A and 8-column panels of B). How many accumulators a wasm engine
// keeps in registers depends on its register allocator and scheduler: V8 13.6 (Node 24, Chromium
// 136) and later keep 12 and, with fused multiply-adds (the relaxed-SIMD build), run a forward
// faster with 6 × 8 than with 4 × 8; V8 up to 12.x (Node 20, 22) spills 6 × 8 but keeps 3 × 12,
// faster than 4 × 8 there (the measurements: docs/performance.md, "The register tile per engine").
// The JS loader picks the tile for the engine and build it runs.
// Every tile computes each element of C with the same multiply-add chain in the same order, so
// results are bit-identical for any choice.
#pragma once

namespace mha {

/// Sets the GEMM register tile by its rows: 6 (a 6 × 8 tile), 3 (3 × 12) or 4 (4 × 8, the default;
/// any other value selects it). Returns the rows now in use: 3, 4 or 6 in the SIMD builds, 0 in
/// builds without the SIMD kernels (the portable Eigen kernels have no such tile).
/// Process-wide; not to be called while a forward runs on any thread.
int set_gemm_tile_rows(int rows);

/// The rows of the GEMM register tile now in use (3 for 3 × 12, 4 or 6; 0 without the SIMD kernels).
int gemm_tile_rows();

}  // namespace mha

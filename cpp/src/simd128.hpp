// wasm SIMD128 helpers shared by the SIMD kernels (kernels_simd_gemm.cpp, kernels_simd_softmax.cpp):
// the multiply-add of both SIMD tiers, partial loads and stores of 1..3 lanes, a horizontal sum.
// Internal header, included only where MHA_SIMD128 is defined.
#pragma once
#ifdef MHA_SIMD128

#include <wasm_simd128.h>

namespace mha {
namespace kernels {

/// c + a·b, the update of every GEMM and dot-product loop. In the relaxed-SIMD build it is
/// f32x4.relaxed_madd, which V8 lowers to one fused multiply-add (vfmadd231ps) where the CPU has
/// FMA: half the vector ops of a mul and an add, one rounding instead of two. Elsewhere it is the
/// mul and the add, in this order, so the SIMD build's results do not depend on this helper.
#ifdef MHA_RELAXED_SIMD
inline v128_t madd(v128_t a, v128_t b, v128_t c) { return __builtin_wasm_relaxed_madd_f32x4(a, b, c); }
#else
inline v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(c, wasm_f32x4_mul(a, b)); }
#endif

/// Loads the first r (1..3) floats at p into lanes 0..r-1 (other lanes zero).
inline v128_t load_partial(const float* p, int r) {
  switch (r) {
    case 1: return wasm_v128_load32_zero(p);
    case 2: return wasm_v128_load64_zero(p);
    default: return wasm_v128_load32_lane(p + 2, wasm_v128_load64_zero(p), 2);
  }
}

/// Stores lanes 0..r-1 (r = 1..3) of v to p.
inline void store_partial(float* p, v128_t v, int r) {
  switch (r) {
    case 1: wasm_v128_store32_lane(p, v, 0); break;
    case 2: wasm_v128_store64_lane(p, v, 0); break;
    default:
      wasm_v128_store64_lane(p, v, 0);
      wasm_v128_store32_lane(p + 2, v, 2);
      break;
  }
}

/// Sums of each of 4 vectors, as one vector: [Σs0, Σs1, Σs2, Σs3].
inline v128_t hsum4(v128_t s0, v128_t s1, v128_t s2, v128_t s3) {
  const v128_t t0 = wasm_f32x4_add(wasm_i32x4_shuffle(s0, s1, 0, 4, 1, 5), wasm_i32x4_shuffle(s0, s1, 2, 6, 3, 7));
  const v128_t t1 = wasm_f32x4_add(wasm_i32x4_shuffle(s2, s3, 0, 4, 1, 5), wasm_i32x4_shuffle(s2, s3, 2, 6, 3, 7));
  return wasm_f32x4_add(wasm_i32x4_shuffle(t0, t1, 0, 1, 4, 5), wasm_i32x4_shuffle(t0, t1, 2, 3, 6, 7));
}

}  // namespace kernels
}  // namespace mha

#endif  // MHA_SIMD128

// Internal to the core: 16-bit weights. IEEE 754 binary16 (float16) and bfloat16 bit patterns,
// widened to float32 exactly (every float16 and bfloat16 value is a float32 value), and their
// NaN/Inf test. The SIMD kernels widen eight at a time in registers with the same bit operations
// (kernels_simd_gemm.cpp: widen8_split).
#pragma once
#include <cstdint>
#include <cstring>

namespace mha {

/// The storage of a weight matrix: the values of mha::WeightType.
enum : int { kHalfNone = 0, kHalfF16 = 1, kHalfBF16 = 2 };

/// bfloat16 → float32: the 16 bits are the float32's upper half.
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// float16 → float32. Finite values: sign, then exponent and mantissa shifted by 13 into a float32
/// with the exponent bias of float16, times 2^112 (exact, subnormals included: 2^112 = 2^(127 − 15)).
/// Inf and NaN (exponent 31) keep their class.
inline float f16_to_float(uint16_t h) {
  uint32_t u = (uint32_t(h & 0x8000u) << 16) | (uint32_t(h & 0x7fffu) << 13);
  float f;
  if ((h & 0x7c00u) == 0x7c00u) {
    u |= 0x7f800000u;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  std::memcpy(&f, &u, sizeof f);
  return f * 0x1p112f;
}

/// A 16-bit value of storage `type` (kHalfF16 or kHalfBF16) as float32.
inline float half_to_float(uint16_t h, int type) { return type == kHalfBF16 ? bf16_to_float(h) : f16_to_float(h); }

/// Whether a 16-bit value of storage `type` is finite (its exponent bits are not all ones).
inline bool half_is_finite(uint16_t h, int type) {
  return type == kHalfBF16 ? (h & 0x7f80u) != 0x7f80u : (h & 0x7c00u) != 0x7c00u;
}

}  // namespace mha

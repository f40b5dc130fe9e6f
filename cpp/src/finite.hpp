// Internal to the core: the NaN/Inf scans of inputs, weights and results, and the kNonFinite Status
// that names the argument and the index of the first bad element.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "mha/status.hpp"

namespace mha {

/// A tensor's dimensions, e.g. {B, Tq, d_model}, for naming the index of a bad element (no allocation).
using Shape = std::initializer_list<int64_t>;

/// True when data[0..n) holds no NaN/±Inf (-Inf is accepted with allow_neg_inf): any element whose
/// exponent bits are all ones. Clang vectorizes the scan.
inline bool all_finite(const float* data, size_t n, bool allow_neg_inf = false) {
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, data + i, sizeof u);
    bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u && !(allow_neg_inf && u == 0xff800000u));
  }
  return !bad;
}

/// Number of elements of a shape.
inline size_t shape_size(Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

/// How check_finite judges and reports a tensor: allow_neg_inf accepts -Inf (additive masks);
/// batch_first: its first index is the batch element (Status::batch_first); overflow: it is a
/// result computed from finite inputs, so NaN/±Inf there is float32 overflow inside the layer.
struct FiniteCheck {
  bool allow_neg_inf = false, batch_first = false, overflow = false;
  /// An input whose first index is the batch element (query, key, value, a step's x).
  static FiniteCheck batched() { return {false, true, false}; }
  /// An additive mask (-Inf allowed); batch_first as above.
  static FiniteCheck mask(bool batch_first) { return {true, batch_first, false}; }
  /// A layer's result (first index: the batch element).
  static FiniteCheck output() { return {false, true, true}; }
};

/// The kNonFinite Status for data that all_finite refused: argument `what`, the multi-index of the
/// first NaN/±Inf in `shape` and its value, worded as `how` says.
Status non_finite_status(const char* what, const float* data, Shape shape, FiniteCheck how);

/// Checks data (shape `shape`) for NaN/±Inf: Ok, or kNonFinite naming `what` (a core argument
/// name, e.g. "query", "weights.w_q") and the multi-index of the first bad element. Inline, so that
/// the common case builds no Status in a call (on a lesson-sized forward that is a visible cost).
inline Status check_finite(const char* what, const float* data, Shape shape, FiniteCheck how = {}) {
  if (all_finite(data, shape_size(shape), how.allow_neg_inf)) return Status::Ok();
  return non_finite_status(what, data, shape, how);
}

/// The kNonFinite Status for 16-bit weights (half: 1 float16, 2 bfloat16) with a NaN/±Inf: as
/// non_finite_status; Ok when there is none.
Status non_finite_status_half(const char* what, const uint16_t* data, Shape shape, int half);

/// check_finite of a matrix of 16-bit values (half: 1 float16, 2 bfloat16): NaN/±Inf are the
/// values whose exponent bits are all ones.
inline Status check_finite_half(const char* what, const uint16_t* data, Shape shape, int half) {
  const size_t n = shape_size(shape);
  const uint32_t m = half == 2 ? 0x7f80u : 0x7c00u;
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad |= static_cast<uint32_t>((data[i] & m) == m);
  if (!bad) return Status::Ok();
  return non_finite_status_half(what, data, shape, half);
}

/// check_finite for a result computed from finite inputs: NaN/±Inf there means float32
/// overflow inside the layer; returns kNonFinite saying so, with the index.
inline Status check_output_finite(const char* what, const float* data, Shape shape) {
  if (all_finite(data, shape_size(shape))) return Status::Ok();
  return non_finite_status(what, data, shape, FiniteCheck::output());
}

}  // namespace mha

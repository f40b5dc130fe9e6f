// The kNonFinite Status of mha/finite.hpp: the argument, the multi-index of the first NaN/±Inf, its value.
#include "finite.hpp"

#include "half.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace mha {
namespace {

/// The multi-index of element `flat` of a row-major tensor of this shape.
std::vector<int64_t> multi_index(size_t flat, Shape shape) {
  const int64_t* dims = shape.begin();
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = dims[d] ? static_cast<int64_t>(flat % dims[d]) : 0;
    flat = dims[d] ? flat / dims[d] : flat;
  }
  return idx;
}

std::string value_string(float x) {
  if (std::isnan(x)) return "NaN";
  return x > 0 ? "Infinity" : "-Infinity";
}

}  // namespace

Status non_finite_status(const char* what, const float* data, Shape shape, FiniteCheck how) {
  const bool allow_neg_inf = how.allow_neg_inf;
  const size_t n = shape_size(shape);
  size_t i = 0;
  while (i < n && (std::isfinite(data[i]) || (allow_neg_inf && data[i] == -std::numeric_limits<float>::infinity()))) ++i;
  if (i == n) return Status::Ok();
  const std::string at = "{" + std::string(what) + "}{index} is " + value_string(data[i]);
  Status s = how.overflow
                 ? Status::Error(Code::kNonFinite, "float32 overflow: " + at +
                                                       " although every input and weight is finite; their magnitudes are too"
                                                       " large for float32 (max 3.4e38) in the projections or scores: scale them down",
                                 what)
                 : Status::Error(Code::kNonFinite, at + (allow_neg_inf ? "; expected a finite number or -Infinity"
                                                                       : "; expected a finite number"),
                                 what);
  s.index = multi_index(i, shape);
  s.batch_first = how.batch_first;
  return s;
}

Status non_finite_status_half(const char* what, const uint16_t* data, Shape shape, int half) {
  const size_t n = shape_size(shape);
  size_t i = 0;
  while (i < n && half_is_finite(data[i], half)) ++i;
  if (i == n) return Status::Ok();
  Status s = Status::Error(Code::kNonFinite, "{" + std::string(what) + "}{index} is " + value_string(half_to_float(data[i], half)) +
                                                 "; expected a finite number", what);
  s.index = multi_index(i, shape);
  return s;
}

}  // namespace mha

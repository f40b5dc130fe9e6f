// Error reporting of the MHA core without C++ exceptions (the wasm build has them off).
#pragma once
#include <string>

namespace mha {

/// Error categories; the JS API maps them 1:1 onto MHAError codes of the same name.
enum class Code : int {
  kOk = 0,
  kInvalidConfig = 1,     ///< INVALID_CONFIG: e.g. num_heads does not divide d_model
  kShapeMismatch = 2,     ///< SHAPE_MISMATCH: an input, weight or mask of the wrong shape
  kNonFinite = 3,         ///< NON_FINITE: NaN or Inf in an input or weight
  kOutOfMemory = 4,       ///< OUT_OF_MEMORY: buffers larger than the heap can give
  kDisposed = 5,          ///< DISPOSED: use after dispose (raised by the JS layer)
  kInvalidArgument = 6,   ///< INVALID_ARGUMENT: anything else (e.g. KV cache past max_len)
};

/// Result of a core call: ok() or a code with a message that names the argument, the expected
/// and the actual value.
struct Status {
  Code code = Code::kOk;
  std::string message;
  bool ok() const { return code == Code::kOk; }
  static Status Ok() { return {}; }
  static Status Error(Code c, std::string m) { return {c, std::move(m)}; }
};

}  // namespace mha

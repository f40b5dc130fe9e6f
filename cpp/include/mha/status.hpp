// Error reporting of the MHA core without C++ exceptions (the wasm build has them off).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mha {

/// Error categories as (enumerator, value, name): `name` is the MHAError code of the JS API, which
/// takes the whole table from the core (embind.cpp, enums().codes), so it is written only here.
///   kInvalidConfig    e.g. num_heads does not divide d_model
///   kShapeMismatch    an input, weight or mask of the wrong shape
///   kNonFinite        NaN or Inf in an input or weight
///   kOutOfMemory      buffers larger than the heap can give
///   kDisposed         use of an object after dispose (raised by the bindings and the JS API)
///   kInvalidArgument  anything else (e.g. a KV cache past max_len)
#define MHA_STATUS_CODES(X)                                                                      \
  X(kOk, 0, OK) X(kInvalidConfig, 1, INVALID_CONFIG) X(kShapeMismatch, 2, SHAPE_MISMATCH)        \
  X(kNonFinite, 3, NON_FINITE) X(kOutOfMemory, 4, OUT_OF_MEMORY) X(kDisposed, 5, DISPOSED)        \
  X(kInvalidArgument, 6, INVALID_ARGUMENT)

enum class Code : int {
#define MHA_CODE_ENUMERATOR(e, value, name) e = value,
  MHA_STATUS_CODES(MHA_CODE_ENUMERATOR)
#undef MHA_CODE_ENUMERATOR
};

/// The name of a code ("INVALID_CONFIG"), or "" for a value outside the enumeration.
inline const char* code_name(Code c) {
  switch (c) {
#define MHA_CODE_CASE(e, value, name) \
  case Code::e:                       \
    return #name;
    MHA_STATUS_CODES(MHA_CODE_CASE)
#undef MHA_CODE_CASE
  }
  return "";
}

/// Result of a core call: ok(), or an error that names the argument, the expected and the actual
/// value. The core names arguments in its own vocabulary (snake_case, as in the paper and in
/// PyTorch: d_model, num_heads, key_padding_mask, weights.w_q) and writes each name in `message`
/// as a token "{name}", so that a binding renders it in its language's vocabulary (the JS API:
/// camelCase) without parsing prose; render() gives the C++ text. The fields carry what a caller
/// may act on: the argument, the multi-index of a bad element, the bytes the heap could not give.
struct Status {
  Code code = Code::kOk;
  std::string message;          ///< English; argument names as {snake_case} tokens, "{index}" for `index`
  std::string argument;         ///< the argument at fault, e.g. "query" or "weights.w_q"; "" if none
  std::vector<int64_t> index;   ///< multi-index of the bad element of `argument`; empty if none
  bool batch_first = false;     ///< index[0] is the batch element (an unbatched call has B = 1)
  double bytes = 0;             ///< kOutOfMemory: the bytes asked for; else 0

  bool ok() const { return code == Code::kOk; }
  static Status Ok() { return {}; }
  static Status Error(Code c, std::string m, std::string argument = {}) {
    Status s;
    s.code = c;
    s.message = std::move(m);
    s.argument = std::move(argument);
    return s;
  }
  /// kOutOfMemory: `who` needs `bytes` bytes of `what`, which the heap cannot give.
  static Status OutOfMemory(const std::string& who, double bytes, const std::string& what) {
    Status s = Error(Code::kOutOfMemory, who + " needs " + std::to_string(static_cast<uint64_t>(bytes)) + " bytes" +
                                             (what.empty() ? "" : " of " + what) + ", which the heap cannot give");
    s.bytes = bytes;
    return s;
  }

  /// The message with every {name} token written as the bare name and {index} as "[i, j, …]".
  std::string render() const {
    std::string out;
    for (size_t i = 0; i < message.size(); ++i) {
      const size_t close = message[i] == '{' ? message.find('}', i) : std::string::npos;
      if (close == std::string::npos) { out += message[i]; continue; }
      const std::string name = message.substr(i + 1, close - i - 1);
      if (name == "index") {
        out += '[';
        for (size_t d = 0; d < index.size(); ++d) out += (d ? ", " : "") + std::to_string(index[d]);
        out += ']';
      } else {
        out += name;
      }
      i = close;
    }
    return out;
  }
};

}  // namespace mha

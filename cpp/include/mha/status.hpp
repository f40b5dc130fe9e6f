// Error reporting of the MHA core without C++ exceptions (the wasm build has them off).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// A growable float buffer that reports allocation failure instead of aborting (the wasm build
// has no exceptions; std::vector would abort on a failed allocation).
#pragma once
#include <cstddef>
#include <cstdlib>

namespace mha {

/// Owns a malloc'd array of floats; grows only (reuse across calls), freed with its owner.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { std::free(p_); }
  /// Ensures room for n floats; returns false (and keeps the old contents) if malloc fails.
  bool reserve(size_t n) {
    if (n <= cap_) return true;
    if (n > (static_cast<size_t>(-1) / sizeof(float)) / 2) return false;
    float* q = static_cast<float*>(std::malloc(n * sizeof(float)));
    if (!q) return false;
    std::free(p_);
    p_ = q;
    cap_ = n;
    return true;
  }
  float* data() { return p_; }

 private:
  float* p_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace mha

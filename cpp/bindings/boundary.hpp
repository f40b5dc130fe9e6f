// What the binding files share: the last-error slot and the reader of a layer's configuration block.
#pragma once
#include <cstdint>

#include "mha/config.hpp"
#include "mha/status.hpp"

namespace mha_boundary {

/// Records `s` as the last error (lastError() returns it) and returns its code.
int fail(const mha::Status& s);

/// The mha::Config of the LayerBlock (embind.cpp, layerLayout()) at byte offset `block` (its
/// configuration fields; the weight fields are not read).
mha::Config layer_config(uintptr_t block);

/// The object at byte offset p of wasm memory.
template <class T> T* ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

}  // namespace mha_boundary

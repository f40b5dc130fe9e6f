// What the binding files share: the last-error slot and the layer options block reader.
#pragma once
#include <cstdint>

#include "mha/config.hpp"
#include "mha/status.hpp"

namespace mha_boundary {

/// Records `s` as the last error (lastError() returns it) and returns its code.
int fail(const mha::Status& s);

/// Reads a ScoreModsBlock (embind.cpp, scoreModsLayout()) at byte offset `mods` into c; 0 = none.
void apply_mods(uintptr_t mods, mha::Config& c);

/// The object at byte offset p of wasm memory.
template <class T> T* ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

}  // namespace mha_boundary

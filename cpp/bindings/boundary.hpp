// What the binding files share: the last-error slot, the reader of a layer's configuration
// (LayerArgs), and the vocabulary of argument structs (field kinds, an argument struct's layout object).
#pragma once
#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "mha/config.hpp"
#include "mha/status.hpp"

namespace mha_boundary {

/// Records `s` as the last error (lastError() returns it) and returns its code.
int fail(const mha::Status& s);

/// The mha::Config of the LayerArgs (embind.cpp, layerLayout()) at byte offset `args` (its
/// configuration fields; the weight fields are not read).
mha::Config layer_config(uintptr_t args);

/// The object at byte offset p of wasm memory.
template <class T> T* ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

// Argument structs ("args"): the arguments of a call as the JS API writes them into wasm memory,
// one struct each, declared from an X-macro list of (name, kind) written once; JS learns every
// field's byte offset and kind from the struct's layout ({bytes, fields: {name: byte offset}, kinds: {name:
// kind}}), so the layout exists only in C++. Kinds: i32 an int32 (a flag 0/1, an enum value), f32 a
// float32, ptr a byte offset into wasm memory (0 = absent).
namespace kind {
using i32 = int32_t;
using f32 = float;
using ptr = uint32_t;
}  // namespace kind

/// {bytes, fields, kinds}: the layout object of an argument struct (fields and kinds filled by MHA_LAYOUT_FIELD).
inline emscripten::val layout_object(size_t bytes, emscripten::val fields, emscripten::val kinds) {
  emscripten::val o = emscripten::val::object();
  o.set("bytes", static_cast<int>(bytes));
  o.set("fields", fields);
  o.set("kinds", kinds);
  return o;
}

}  // namespace mha_boundary

/// An argument struct's member from an X-macro entry (name, kind).
#define MHA_ARGS_MEMBER(name, k) mha_boundary::kind::k name;
/// Adds field `name` of the argument struct Args to the val objects `fields` and `kinds` in scope.
#define MHA_LAYOUT_FIELD(Args, name, k)                           \
  fields.set(#name, static_cast<int>(offsetof(Args, name)));      \
  kinds.set(#name, std::string(#k));

namespace mha_boundary {

}  // namespace mha_boundary

// Shared pieces of the fuzz target (cpp/fuzz/fuzz_mha.cpp): the contract check that traps, the
// input reader and value generator (tame values, with NaN / ±Inf / huge / tiny / -0 now and then),
// the status-code check, and the decoder of the layer options (score modifiers, RoPE).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/config.hpp"

namespace fuzz {

/// Reports a contract violation on stderr and traps (libFuzzer and the sanitizers see a crash).
[[noreturn]] inline void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "contract violation: %s %s\n", what, detail.c_str());
  std::fflush(stderr);
  __builtin_trap();
}
/// Checks a contract condition; a violation traps, naming the condition (and the detail, if given).
#define CHECK(cond, ...) \
  do {                   \
    if (!(cond)) ::fuzz::fail(#cond, ##__VA_ARGS__); \
  } while (0)

inline constexpr float kInf = std::numeric_limits<float>::infinity();

/// Reads the fuzz input as a stream of small decisions; past the end every read is 0.
struct Reader {
  const uint8_t* p;
  size_t n, i = 0;
  uint8_t u8() { return i < n ? p[i++] : 0; }
  uint16_t u16() { return uint16_t(u8() | (u8() << 8)); }
  int32_t i32() { return int32_t(uint32_t(u8()) | uint32_t(u8()) << 8 | uint32_t(u8()) << 16 | uint32_t(u8()) << 24); }
  int range(int lo, int hi) { return lo + int(u8() % unsigned(hi - lo + 1)); }  // inclusive, hi - lo < 256
  bool bit() { return u8() & 1; }
};

/// Values: tame ones are k/16 for k in [-16, 16]; with `special` > 0, one byte in 256/special
/// becomes NaN, ±Inf, huge, tiny or -0.
struct ValueGen {
  Reader& r;
  int special = 0;  // 0..255
  bool saw_nonfinite = false, saw_large = false;
  float next() {
    const uint8_t b = r.u8();
    if (special && r.u8() < special) {
      switch (b % 9) {
        case 0: saw_nonfinite = true; return std::numeric_limits<float>::quiet_NaN();
        case 1: saw_nonfinite = true; return kInf;
        case 2: saw_nonfinite = true; return -kInf;
        case 3: saw_large = true; return 3.0e38f;
        case 4: saw_large = true; return -1.0e20f;
        case 5: saw_large = true; return 65536.f;
        case 6: return std::numeric_limits<float>::denorm_min();
        case 7: return -0.f;
        default: return 1e-30f;
      }
    }
    return float(int(b % 33) - 16) / 16.f;
  }
  void fill(std::vector<float>& v) { for (float& x : v) x = next(); }
};

/// Whether every value is finite.
inline bool all_finite(const std::vector<float>& v) {
  for (float x : v) if (!std::isfinite(x)) return false;
  return true;
}

/// Checks that a status code is one of the documented ones.
inline void check_code(const mha::Status& s) {
  const int c = int(s.code);
  CHECK(c >= 0 && c <= 6 && c != int(mha::Code::kDisposed), std::to_string(c) + " " + s.message);
  if (s.ok()) return;
  CHECK(!s.message.empty());
  // The structured fields a binding composes its message from (mha/status.hpp).
  if (s.code == mha::Code::kNonFinite) CHECK(!s.argument.empty() && !s.index.empty(), s.render());
  if (s.code == mha::Code::kOutOfMemory) CHECK(s.bytes > 0, s.render());
  int open = 0;  // every {token} closed
  for (char ch : s.message) {
    open += ch == '{' ? 1 : ch == '}' ? -1 : 0;
    CHECK(open == 0 || open == 1, s.message);
  }
  CHECK(open == 0, s.message);
}

/// The layer options of mha::Config from the input. `wild`: raw 32-bit values; otherwise mostly
/// valid values from tables, with an invalid one now and then. Sets `huge` when a valid value may
/// overflow float32 scores (then a kNonFinite "overflow" is allowed and the reference is skipped).
inline void decode_options(Reader& rd, mha::Config& c, bool wild, bool& huge) {
  const uint8_t opts = rd.u8();  // 0: no option (every input from before the options)
  auto raw_float = [&] { uint32_t bits = uint32_t(rd.i32()); float f; std::memcpy(&f, &bits, 4); return f; };
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  if (opts & 1) {  // soft-capping
    c.softcap_on = true;
    if (wild) { c.softcap = raw_float(); }
    else {
      const uint8_t b = rd.u8();
      static const float special[] = {0.f, -0.f, -1.f, kNaN, kInf, -kInf, std::numeric_limits<float>::denorm_min(), 3.0e38f, 1e-3f, 50.f};
      c.softcap = b < 200 ? float(b % 64 + 1) / 8.f : special[(b - 200) % 10];
    }
  }
  if (opts & 2) {  // ALiBi: the paper's slopes, or given ones (opts & 16)
    c.alibi = true;
    if (opts & 16) {
      c.alibi_given = true;
      int n = c.num_heads;
      if (wild) n = rd.range(0, 9);
      else { const uint8_t b = rd.u8(); if (b >= 224) n = std::max(0, n + int(b % 3) - 1); }
      for (int i = 0; i < n; ++i) {
        if (wild) { c.alibi_slopes.push_back(raw_float()); continue; }
        const uint8_t b = rd.u8();
        static const float special[] = {kNaN, kInf, -kInf, 3.0e38f, -3.0e38f, 1e20f, -1e20f, 0.f};
        if (b >= 240 && (b - 240) % 8 >= 3 && (b - 240) % 8 <= 6) huge = true;
        c.alibi_slopes.push_back(b < 240 ? float(int(b % 65) - 16) / 16.f : special[(b - 240) % 8]);
      }
    }
  }
  if (opts & 4) {  // sliding window [left, right]; −1 unbounded, < −1 invalid
    auto side = [&]() -> int {
      if (wild) return rd.i32();
      const uint8_t b = rd.u8();
      if (b < 32) return -1;
      if (b < 40) return -2 - b % 3;
      if (b < 44) return b % 2 ? std::numeric_limits<int>::max() : std::numeric_limits<int>::min();
      if (b < 48) return 1 << 30;
      return b % 24;
    };
    c.window_left = side();
    c.window_right = side();
  }
  if (opts & 8) {  // RoPE; opts & 32: interleaved pairs
    c.rope = true;
    c.rope_interleaved = opts & 32;
    if (wild) { c.rope_dim = rd.i32(); c.rope_base = raw_float(); return; }
    const uint8_t b = rd.u8();
    c.rope_dim = b < 96 ? -1 : b < 208 ? 2 * (b % 9) : b < 224 ? 2 * (b % 9) + 1 : b < 232 ? -2 - b % 3
               : b < 240 ? std::numeric_limits<int>::max() : 1000;
    const uint8_t t = rd.u8();
    static const float special[] = {1.f, 0.f, -5.f, kNaN, kInf, 1.0000001f, 1e30f, 3.0e38f, 2.f, 0.5f};
    c.rope_base = t < 128 ? 10000.f : t < 192 ? 2.f + float(t % 64) * 16.f : special[(t - 192) % 10];
  }
}

/// The largest magnitude of v (0 when empty).
inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace fuzz

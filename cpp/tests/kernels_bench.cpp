// Micro-benchmark of the compute kernels (cpp/src/kernels.hpp). Built by the
// CMake target kernel_bench three times: kernels_bench.js (wasm SIMD kernels, mul + add),
// kernels_bench_relaxed.js (the same kernels with f32x4.relaxed_madd, clang 16) and
// kernels_bench_eigen.js (the portable Eigen kernels at -O3 -msimd128, the baseline).
// Run with node: node build-wasm/kernel-tests/kernels_bench.js [seconds per measurement, default 0.5] [tsv] [gemv]
// (the relaxed build needs Node ≥ 22 or --experimental-wasm-relaxed-simd); scripts/bench/kernels.mjs
// runs the SIMD and relaxed builds alternately and prints one table.
//
// Prints GFLOP/s (one multiply-add = 2 FLOPs) of
//   gemm_packed [128×768]·[768×768] + b and [512×768]·[768×2304] + b,
//   gemm_abt Q·Kᵀ at T = 512, d_k = 64 (per-head slices of [T, 768] tensors, ld = 768),
//   gemm_ab  A·V  at T = 512, d_v = 64 (V a per-head slice, ld = 768),
// the matrix–vector products of a generation step ([1×768]·W, W float32, float16 and bfloat16, and
// float16 drawn as a model's weights, "f16 std 0.02", subnormals included; the output head's also in GB/s), a streaming-read roof (plain v128 loads over the 16-bit head's 77 MB
// as 1, 2, 4 and 8 streams side by side, GB/s),
// the time of softmax_rows over 512×512 scores, and two measured peaks, each in independent chains:
// f32x4 mul + add (the best any wasm kernel without FMA can do) and, in the relaxed build,
// f32x4.relaxed_madd (one fused multiply-add), with each GEMM's fraction of both.
// With "tsv" as the second argument every line is `name<TAB>GFLOP/s<TAB>ms` (peaks: ms = 0; lines
// named "… (GB/s)": GB/s in place of GFLOP/s); "gemv"
// as the third (e.g. `0.5 - gemv`) times the matrix–vector products of the first tile alone.
// Times are process CPU time (see now()). Each figure is the best of 11 timed runs after warm-up
// calls (V8 tiers wasm up from Liftoff to TurboFan only for later calls, so the first call of a
// long kernel runs baseline code).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#include "kernels.hpp"

namespace {

using namespace mha::kernels;
double g_seconds = 0.5;

#ifdef __EMSCRIPTEN__
extern "C" double bench_cpu_seconds();  // cpp/tests/bench_host.js
extern "C" double bench_arg(int i);     // cpp/tests/bench_host.js
extern "C" int host_arg_equals(int i, const char* s);  // cpp/tests/bench_host.js
#endif

/// Seconds of CPU time of this process (user + system, via Node's process.cpuUsage()) under
/// Emscripten, else of wall time: on a shared machine CPU time is what the kernel actually cost.
double now() {
#ifdef __EMSCRIPTEN__
  return bench_cpu_seconds();
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}
volatile float g_sink = 0;

/// Best seconds per call of fn over 11 runs of at least g_seconds / 11 each, after warm-up runs
/// (the best, not the mean: on a shared machine interference only ever adds time).
template <class F>
double time_call(F&& fn) {
  for (int w = 0; w < 3; ++w) fn();
  int reps = 1;
  for (;;) {  // calibrate
    const double t0 = now();
    for (int r = 0; r < reps; ++r) fn();
    const double dt = now() - t0;
    if (dt > g_seconds / 11 || reps >= (1 << 20)) break;
    reps *= 2;
  }
  double best = 1e30;
  for (int run = 0; run < 11; ++run) {
    const double t0 = now();
    for (int r = 0; r < reps; ++r) fn();
    best = std::min(best, (now() - t0) / reps);
  }
  return best;
}

/// The float16 bits nearest to f (ties to even); |f| below 65504. Subnormals for |f| < 2^-14.
uint16_t float_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a < 0x38800000u)  // below 2^-14: a multiple of 2^-24, rounded by the float rounding of |f|·2^24
    return sign | static_cast<uint16_t>(std::nearbyint(std::fabs(f) * 0x1p24f));
  uint32_t h = ((a >> 23) - 112) << 10 | ((a >> 13) & 0x3FFu);
  const uint32_t rest = a & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;  // a carry out of the mantissa steps the exponent
  return sign | static_cast<uint16_t>(h);
}

/// n float16 bit patterns of normal(0, std) samples (Box–Muller over a seeded LCG): weights as a
/// model's are, about 0.2 % of them float16 subnormals at std 0.02.
std::vector<uint16_t> normal_f16(size_t n, float std_dev, unsigned seed) {
  std::vector<uint16_t> v(n);
  unsigned s = seed * 747796405u + 2891336453u;
  auto uniform = [&s] {  // in (0, 1)
    s = s * 1664525u + 1013904223u;
    return (static_cast<double>(s >> 8) + 0.5) / 16777216.0;
  };
  for (auto& x : v) {
    const double r = std::sqrt(-2.0 * std::log(uniform())), t = 6.283185307179586 * uniform();
    x = float_to_f16(static_cast<float>(std_dev * r * std::cos(t)));
  }
  return v;
}

std::vector<float> random_vec(size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned s = seed * 747796405u + 2891336453u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(s >> 9) - (1 << 22)) / static_cast<float>(1 << 22);
  }
  return v;
}

#ifdef __wasm_simd128__
/// 12 independent chains c = c·m + a of f32x4 mul+add, `iters` times. Kept out of line: V8 swaps in
/// its optimized (TurboFan) code only at the next call of a function, never inside a running loop.
__attribute__((noinline)) float mul_add_chains(int iters, float mf, float af) {
  const v128_t m = wasm_f32x4_splat(mf), a = wasm_f32x4_splat(af);
  v128_t c[12];
  for (int i = 0; i < 12; ++i) c[i] = wasm_f32x4_splat(static_cast<float>(i));
  for (int it = 0; it < iters; ++it) {
#pragma clang loop unroll(full)
    for (int i = 0; i < 12; ++i) c[i] = wasm_f32x4_add(wasm_f32x4_mul(c[i], m), a);
  }
  v128_t s = c[0];
  for (int i = 1; i < 12; ++i) s = wasm_f32x4_add(s, c[i]);
  return wasm_f32x4_extract_lane(s, 0);
}
#endif

#ifdef MHA_RELAXED_SIMD
/// 12 independent chains c = c·m + a of f32x4.relaxed_madd (one FMA each under V8 on x64).
/// m and a are loaded from memory, not splatted constants: V8 may rebuild a constant splat at
/// every use in a loop with this many live vectors.
__attribute__((noinline)) float fma_chains(int iters, const float* ma) {
  const v128_t m = wasm_v128_load32_splat(ma), a = wasm_v128_load32_splat(ma + 1);
  v128_t c[12];
  for (int i = 0; i < 12; ++i) c[i] = wasm_f32x4_splat(static_cast<float>(i));
  for (int it = 0; it < iters; ++it) {
#pragma clang loop unroll(full)
    for (int i = 0; i < 12; ++i) c[i] = __builtin_wasm_relaxed_madd_f32x4(c[i], m, a);
  }
  v128_t s = c[0];
  for (int i = 1; i < 12; ++i) s = wasm_f32x4_add(s, c[i]);
  return wasm_f32x4_extract_lane(s, 0);
}
#endif

#ifdef __wasm_simd128__
/// Reads n bytes (a multiple of S·128) at p with plain v128 loads and one i32x4 add each, as S
/// streams over S equal parts read side by side (the matrix–vector kernels read 3 or 4 panels side
/// by side), 8 loads per iteration into 8 independent sums: a streaming-read roof of one core in
/// this engine for the matrix–vector products of a generation step (every weight read once a token).
template <int S>
__attribute__((noinline)) int stream_read(const uint8_t* p, size_t n) {
  v128_t s[8];
  for (int i = 0; i < 8; ++i) s[i] = wasm_i32x4_splat(0);
  const size_t part = n / S;
  constexpr int L = 8 / S;  // loads per stream and iteration
  for (size_t off = 0; off < part; off += 16 * L) {
#pragma clang loop unroll(full)
    for (int q = 0; q < S; ++q)
#pragma clang loop unroll(full)
      for (int i = 0; i < L; ++i) s[q * L + i] = wasm_i32x4_add(s[q * L + i], wasm_v128_load(p + q * part + off + 16 * i));
  }
  for (int i = 1; i < 8; ++i) s[0] = wasm_i32x4_add(s[0], s[i]);
  return wasm_i32x4_extract_lane(s[0], 0);
}
#endif

/// A short run of the peak loops (warm-up), or 0 without SIMD.
float peak_loops_warmup() {
  float s = 0;
#ifdef __wasm_simd128__
  s += mul_add_chains(1000, 0.999f, 1e-3f);
#endif
#ifdef MHA_RELAXED_SIMD
  static const float ma[2] = {0.999f, 1e-3f};
  s += fma_chains(1000, ma);
#endif
  return s;
}

/// GFLOP/s of f32x4 mul+add in 12 independent dependency chains (8 FLOPs per mul+add pair):
/// the peak of any wasm SIMD kernel without FMA on one core.
double peak_gflops() {
#ifdef __wasm_simd128__
  const int iters = 1 << 16;
  float (*volatile fn)(int, float, float) = mul_add_chains;
  const double t = time_call([&] { g_sink = fn(iters, 0.999999f, 1e-3f); });
  return 12.0 * 8.0 * iters / t * 1e-9;
#else
  return 0;
#endif
}

/// GFLOP/s of f32x4.relaxed_madd in 12 independent chains (8 FLOPs each): the FMA peak on one
/// core, or 0 in a build without relaxed SIMD.
double fma_peak_gflops() {
#ifdef MHA_RELAXED_SIMD
  const int iters = 1 << 16;
  static const float ma[2] = {0.999999f, 1e-3f};
  float (*volatile fn)(int, const float*) = fma_chains;
  const double t = time_call([&] { g_sink = fn(iters, ma); });
  return 12.0 * 8.0 * iters / t * 1e-9;
#else
  return 0;
#endif
}

}  // namespace

int main() {
#ifdef __EMSCRIPTEN__
  if (bench_arg(0) > 0) g_seconds = bench_arg(0);
  const bool tsv = bench_arg(1) == 1;
  const bool gemv_only = host_arg_equals(2, "gemv") == 1;  // third argument "gemv": the first tile's GEMVs alone
#else
  const bool tsv = false, gemv_only = false;
#endif
#if defined(MHA_RELAXED_SIMD)
  const char* impl = "wasm relaxed-SIMD kernels (kernels_simd_*.cpp, f32x4.relaxed_madd)";
#elif defined(MHA_SIMD128)
  const char* impl = "wasm SIMD kernels (kernels_simd_*.cpp, mul + add)";
#else
  const char* impl = "portable Eigen kernels (kernels_eigen.cpp)";
#endif
  if (!tsv) std::printf("kernels_bench: %s\n", impl);
  {
    // Warm-up: every kernel on small shapes, so V8 has tiered them all up (its compiler threads
    // count in the process CPU time) before anything is measured.
    auto a = random_vec(96 * 96, 9), b = random_vec(96 * 96, 10), c = random_vec(96 * 96, 11);
    PackedB pb;
    pack_b(96, 96, b.data(), 96, pb);
    const double t0 = now();
    while (now() - t0 < 0.5) {
      for (int M : {1, 2, 3, 4, 5, 96}) {
        gemm_packed(M, a.data(), 96, pb, b.data(), c.data(), 96);
        gemm_abt(M, 93, 96, 0.5f, a.data(), 96, b.data(), 96, c.data(), 96);
        gemm_ab(M, 93, 96, a.data(), 96, b.data(), 96, c.data(), 96, M & 1);
      }
      softmax_rows(96, 95, c.data(), 96);
      (void)peak_loops_warmup();
    }
  }
  const double peak = peak_gflops(), fma_peak = fma_peak_gflops();
  if (tsv) {
    std::printf("peak mul+add\t%.4f\t0\n", peak);
    if (fma_peak > 0) std::printf("peak fma\t%.4f\t0\n", fma_peak);
  } else {
    if (peak > 0) std::printf("%-44s %8.2f GFLOP/s\n", "peak f32x4 mul+add (12 chains)", peak);
    if (fma_peak > 0) std::printf("%-44s %8.2f GFLOP/s\n", "peak f32x4.relaxed_madd (12 chains)", fma_peak);
  }

  auto report = [&](const std::string& label, double flops, double t) {
    const char* name = label.c_str();
    const double g = flops / t * 1e-9;
    if (tsv)
      std::printf("%s\t%.4f\t%.6f\n", name, g, t * 1e3);
    else if (fma_peak > 0)
      std::printf("%-44s %8.2f GFLOP/s  %6.3f ms  %5.1f%% of mul+add peak  %5.1f%% of FMA peak\n", name, g, t * 1e3,
                  100 * g / peak, 100 * g / fma_peak);
    else if (peak > 0)
      std::printf("%-44s %8.2f GFLOP/s  %6.3f ms  %5.1f%% of mul+add peak\n", name, g, t * 1e3, 100 * g / peak);
    else
      std::printf("%-44s %8.2f GFLOP/s  %6.3f ms\n", name, g, t * 1e3);
  };

  const int T = 512;  // tokens of the attention products and the softmax rows
  // The GEMMs once per register tile over packed A (set_tile_rows; the 6×8 and 3×12 rows are named
  // so); the Eigen kernels have none (tile 0).
#ifdef MHA_SIMD128
  const int tiles[] = {4, 6, 3};
#else
  const int tiles[] = {0};
#endif
  for (const int tile : tiles) {
#ifdef MHA_SIMD128
  set_tile_rows(tile);
  {  // tier up this tile's micro-kernels before timing them
    auto a = random_vec(96 * 96, 9), b = random_vec(96 * 96, 10), c = random_vec(96 * 96, 11);
    PackedB pb;
    pack_b(96, 96, b.data(), 96, pb);
    const double t0 = now();
    while (now() - t0 < 0.3) gemm_packed(96, a.data(), 96, pb, b.data(), c.data(), 96);
  }
#endif
  const std::string suffix = tile == 6 ? " 6x8" : tile == 3 ? " 3x12" : "";
  // Projections: X [M, 768] · W [768, N] + b.
  struct Proj { int M, K, N; const char* name; };
  const Proj projs[] = {{128, 768, 768, "gemm_packed [128x768]·[768x768]+b"},
                        {512, 768, 2304, "gemm_packed [512x768]·[768x2304]+b"}};
  for (const auto& p : projs) {
    if (gemv_only) break;
    auto A = random_vec(static_cast<size_t>(p.M) * p.K, 1);
    auto W = random_vec(static_cast<size_t>(p.K) * p.N, 2);
    auto b = random_vec(p.N, 3);
    std::vector<float> C(static_cast<size_t>(p.M) * p.N);
    PackedB pb;
    pack_b(p.K, p.N, W.data(), p.N, pb);
    const double t = time_call([&] { gemm_packed(p.M, A.data(), p.K, pb, b.data(), C.data(), p.N); });
    g_sink = C[7];
    report(p.name + suffix, 2.0 * p.M * p.N * p.K, t);
  }

  // Matrix-vector products of a generation step, [1x768]·W + b, W float32 and 16-bit (float16,
  // bfloat16 widened in the kernel): an MLP matrix (768x3072) and an output head over a
  // 50,257-token vocabulary (768x50257, past every cache).
  // The head's weights come from memory on every call (77 MB of 16-bit, 154 MB of float32: past
  // every cache): its lines also give GB/s, against the streaming-read roof measured here over
  // the 16-bit head's bytes (stream_read: plain v128 loads and one add each).
  struct Gemv { int K, N; const char* name; };
  const Gemv gemvs[] = {{768, 3072, "gemv [1x768]·[768x3072]+b"}, {768, 50257, "gemv [1x768]·[768x50257]+b"}};
#ifdef __wasm_simd128__
  if (tile == tiles[0]) {
    const size_t bytes = size_t(768) * 50264 * 2;  // the 16-bit head's panels (50,257 columns padded to 8)
    std::vector<uint8_t> buf(bytes);
    for (size_t i = 0; i < bytes; i += 4096) buf[i] = uint8_t(i >> 12);  // every page touched
    using Fn = int (*)(const uint8_t*, size_t);
    const std::pair<int, Fn> streams[] = {{1, stream_read<1>}, {2, stream_read<2>}, {4, stream_read<4>}, {8, stream_read<8>}};
    for (const auto& [S, f] : streams) {
      Fn volatile fn = f;
      const size_t n = bytes / (128 * S) * (128 * S);
      const double t = time_call([&] { g_sink = static_cast<float>(fn(buf.data(), n)); });
      const std::string name = "stream read 77 MB, " + std::to_string(S) + " streams";
      if (tsv) std::printf("%s (GB/s)\t%.4f\t%.6f\n", name.c_str(), n / t * 1e-9, t * 1e3);
      else std::printf("%-44s %8.2f GB/s    %6.3f ms\n", name.c_str(), n / t * 1e-9, t * 1e3);
    }
  }
#endif
  for (const auto& p : gemvs) {
    auto A = random_vec(p.K, 1);
    auto W = random_vec(static_cast<size_t>(p.K) * p.N, 2);
    auto b = random_vec(p.N, 3);
    std::vector<uint16_t> W16(W.size());
    for (size_t i = 0; i < W.size(); ++i) {  // bfloat16 and float16 bits of values in (-1, 1): truncations suffice here
      uint32_t u;
      std::memcpy(&u, &W[i], sizeof u);
      W16[i] = uint16_t(u >> 16);
    }
    std::vector<float> C(p.N);
    for (int type : {0, 1, 2}) {
      PackedB pb;
      if (type == 0) pack_b(p.K, p.N, W.data(), p.N, pb);
      else pack_b16(p.K, p.N, type, W16.data(), p.N, pb);  // float16: any bit pattern of finite values
      const double t = time_call([&] { gemm_packed(1, A.data(), p.K, pb, b.data(), C.data(), p.N); });
      g_sink = C[7];
      const std::string name = std::string(p.name) + (type == 0 ? " f32" : type == 1 ? " f16" : " bf16");
      report(name + suffix, 2.0 * p.N * p.K, t);
      if (p.N > 10000) {  // the head: bytes of its panels per second
        const double bytes = double(p.K) * ((p.N + 7) / 8 * 8) * (type == 0 ? 4 : 2);
        if (tsv) std::printf("%s (GB/s)\t%.4f\t%.6f\n", (name + suffix).c_str(), bytes / t * 1e-9, t * 1e3);
        else std::printf("%-44s %8.2f GB/s\n", (name + suffix).c_str(), bytes / t * 1e-9);
      }
    }
    {
      // float16 weights as a model's (normal, std 0.02: GPT-2's initialization), float16
      // subnormals included: the lines above hold none (the upper halves of floats in (-1, 1)),
      // and in the simd tier an f32x4.mul with a subnormal lane can take a slow path.
      const std::vector<uint16_t> Wn = normal_f16(W.size(), 0.02f, 4);
      PackedB pb;
      pack_b16(p.K, p.N, 1, Wn.data(), p.N, pb);
      const double t = time_call([&] { gemm_packed(1, A.data(), p.K, pb, b.data(), C.data(), p.N); });
      g_sink = C[7];
      const std::string name = std::string(p.name) + " f16 std 0.02" + suffix;
      report(name, 2.0 * p.N * p.K, t);
      if (p.N > 10000) {
        const double bytes = double(p.K) * ((p.N + 7) / 8 * 8) * 2;
        if (tsv) std::printf("%s (GB/s)\t%.4f\t%.6f\n", name.c_str(), bytes / t * 1e-9, t * 1e3);
        else std::printf("%-44s %8.2f GB/s\n", name.c_str(), bytes / t * 1e-9);
      }
    }
  }

  if (gemv_only) return 0;
  // Attention per head: T = 512, d_k = d_v = 64, slices of [T, 768] activations.
  const int dk = 64, ld = 768;
  auto Q = random_vec(static_cast<size_t>(T) * ld, 4);
  auto Kx = random_vec(static_cast<size_t>(T) * ld, 5);
  auto V = random_vec(static_cast<size_t>(T) * ld, 6);
  std::vector<float> S(static_cast<size_t>(T) * T), O(static_cast<size_t>(T) * ld);
  {
    const double t = time_call([&] { gemm_abt(T, T, dk, 0.125f, Q.data() + 64, ld, Kx.data() + 64, ld, S.data(), T); });
    report("gemm_abt Q·Kᵀ T=512 d_k=64 (ld 768)" + suffix, 2.0 * T * T * dk, t);
  }
  {
    auto Wts = random_vec(static_cast<size_t>(T) * T, 7);
    for (auto& x : Wts) x = x * 0.5f + 0.5f;
    const double t = time_call([&] { gemm_ab(T, dk, T, Wts.data(), T, V.data() + 64, ld, O.data() + 64, ld, false); });
    report("gemm_ab A·V T=512 d_v=64 (ld 768)" + suffix, 2.0 * T * T * dk, t);
  }
  }  // tiles
#ifdef MHA_SIMD128
  set_tile_rows(4);
#endif
  {
    // Softmax applied again and again to its own output: every call sees finite rows of the same
    // length, so no copy is needed between calls.
    auto Sm = random_vec(static_cast<size_t>(T) * T, 8);
    for (auto& x : Sm) x *= 8.f;
    const double t = time_call([&] { softmax_rows(T, T, Sm.data(), T); });
    g_sink = Sm[5];
    if (tsv)
      std::printf("softmax_rows 512x512\t0\t%.6f\n", t * 1e3);
    else
      std::printf("%-44s %8.3f ms  (%.2f ns/element)\n", "softmax_rows 512x512", t * 1e3,
                  t * 1e9 / (static_cast<double>(T) * T));
  }
  if (!tsv) std::printf("(sink %g)\n", static_cast<double>(g_sink));
  return 0;
}

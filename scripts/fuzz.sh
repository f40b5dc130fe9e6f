#!/usr/bin/env bash
# Native fuzzing of the C++ core with libFuzzer, AddressSanitizer and UBSan.
#
#   scripts/fuzz.sh [SECONDS]   build build-fuzz/fuzz_mha (-fsanitize=fuzzer,address,undefined) and
#                               fuzz for SECONDS (default 60), starting from cpp/fuzz/corpus/; new
#                               interesting inputs go to build-fuzz/corpus-new/ and crashes to
#                               build-fuzz/ (crash-*). To check new inputs in, minimize them into
#                               the corpus:  scripts/fuzz.sh --merge
#   scripts/fuzz.sh --merge     adds to cpp/fuzz/corpus/ only the inputs of build-fuzz/corpus-new/
#                               that reach new coverage (libFuzzer -merge=1)
#   scripts/fuzz.sh --replay    build build-fuzz/replay_mha (ASan + UBSan, no libFuzzer, a plain
#                               main) and run every file of cpp/fuzz/corpus/ once: deterministic,
#                               fast; exits non-zero on any sanitizer report or contract violation.
#
# Needs clang++ (Debian: clang-14) and the sanitizer/fuzzer runtimes (Debian: libclang-rt-14-dev).
# The binaries are CMake targets (CMakeLists.txt, MHA_FUZZ) of build-fuzz/, configured here by the
# preset fuzz (CMakePresets.json) with the clang++ found; CMake rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

CXX="${CXX_FUZZ:-}"
if [ -z "$CXX" ]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then CXX="$c"; break; fi
  done
fi
if [ -z "$CXX" ]; then
  echo "fuzz.sh: clang++ not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 3
fi
EIGEN="${EIGEN_DIR:-/usr/include/eigen3}"
[ -f "$EIGEN/Eigen/Core" ] || { echo "fuzz.sh: Eigen not found in $EIGEN (Debian: libeigen3-dev)" >&2; exit 3; }

OUT=build-fuzz
# max_allocation_size_mb mirrors the wasm heap (2 GB): a larger request fails as it would in wasm.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=2048}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# build TARGET: configures build-fuzz/ (once, or again when the compiler changed) and builds TARGET.
build() {
  if ! grep -qs "^CMAKE_CXX_COMPILER:[A-Z]*=$(command -v "$CXX")\$" "$OUT/CMakeCache.txt"; then
    rm -rf "$OUT/CMakeCache.txt" "$OUT/CMakeFiles"
    echo "fuzz.sh: configuring $OUT with $CXX" >&2
    cmake --preset fuzz -DCMAKE_CXX_COMPILER="$(command -v "$CXX")" -DEIGEN3_INCLUDE_DIR="$EIGEN" >/dev/null
  fi
  cmake --build "$OUT" --target "$1" -j"$(nproc 2>/dev/null || echo 2)" >&2
}

case "${1:-60}" in
  --replay)
    build replay_mha
    files=$(find cpp/fuzz/corpus -type f | wc -l)
    echo "fuzz.sh: replaying $files corpus files under ASan + UBSan" >&2
    "$OUT/replay_mha" cpp/fuzz/corpus
    ;;
  --merge)
    build fuzz_mha
    mkdir -p "$OUT/corpus-new"
    "$OUT/fuzz_mha" -merge=1 cpp/fuzz/corpus "$OUT/corpus-new"
    echo "fuzz.sh: cpp/fuzz/corpus now has $(find cpp/fuzz/corpus -type f | wc -l) files" >&2
    ;;
  *)
    secs="${1:-60}"
    [[ "$secs" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS] | --merge | --replay" >&2; exit 2; }
    build fuzz_mha
    mkdir -p "$OUT/corpus-new"
    # -max_len: a config, two forwards with masks and a KV cache fit well inside 4 KB.
    "$OUT/fuzz_mha" -max_total_time="$secs" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
      -artifact_prefix="$OUT/" -print_final_stats=1 "$OUT/corpus-new" cpp/fuzz/corpus
    ;;
esac

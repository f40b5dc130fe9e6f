#!/usr/bin/env bash
# Native fuzzing of the C++ core (issue 6) with libFuzzer, AddressSanitizer and UBSan.
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
# Incremental: a binary is rebuilt only when a source or header it uses (cpp/src, cpp/include,
# cpp/fuzz, cpp/tests/support) is newer, or when its compile command changed.
# Sources: every cpp/src/*.cpp (the core; kernels_simd.cpp compiles to nothing natively, so the
# fuzzer drives the Eigen kernels, and the wasm SIMD kernels are tested by the CMake target kernel_tests)
# and cpp/fuzz/fuzz_mha.cpp, with the test-support headers of cpp/tests/.
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
mkdir -p "$OUT"
SRCS=(cpp/src/*.cpp cpp/fuzz/fuzz_mha.cpp)
FLAGS=(-std=c++17 -g -O1 -fno-omit-frame-pointer -Icpp/include -Icpp/src -Icpp/tests -isystem "$EIGEN"
       -DEIGEN_NO_DEBUG -DEIGEN_DONT_PARALLELIZE
       -fno-sanitize-recover=all)
# max_allocation_size_mb mirrors the wasm heap (2 GB): a larger request fails as it would in wasm.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=2048}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# build TARGET SANITIZERS [extra flags...]: compiles when the binary is missing, older than a
# source, or built by another command (compiler, flags or source list: recorded in TARGET.cmd).
build() {
  local bin="$OUT/$1" san="$2"; shift 2
  local cmd="$CXX ${FLAGS[*]} -fsanitize=$san $* ${SRCS[*]}"
  local stale=0
  [ -x "$bin" ] && [ -f "$bin.cmd" ] && [ "$(cat "$bin.cmd")" = "$cmd" ] || stale=1
  if [ $stale -eq 0 ] && [ -n "$(find cpp/src cpp/include cpp/fuzz cpp/tests/support -newer "$bin" \( -name '*.cpp' -o -name '*.hpp' \) -print -quit)" ]; then
    stale=1
  fi
  if [ $stale -eq 1 ]; then
    echo "fuzz.sh: building $bin ($CXX -fsanitize=$san)" >&2
    "$CXX" "${FLAGS[@]}" -fsanitize="$san" "$@" "${SRCS[@]}" -o "$bin.tmp"
    mv "$bin.tmp" "$bin"
    printf '%s\n' "$cmd" > "$bin.cmd"
  fi
}

case "${1:-60}" in
  --replay)
    build replay_mha address,undefined -DMHA_FUZZ_REPLAY_MAIN
    files=$(find cpp/fuzz/corpus -type f | wc -l)
    echo "fuzz.sh: replaying $files corpus files under ASan + UBSan" >&2
    "$OUT/replay_mha" cpp/fuzz/corpus
    ;;
  --merge)
    build fuzz_mha fuzzer,address,undefined
    mkdir -p "$OUT/corpus-new"
    "$OUT/fuzz_mha" -merge=1 cpp/fuzz/corpus "$OUT/corpus-new"
    echo "fuzz.sh: cpp/fuzz/corpus now has $(find cpp/fuzz/corpus -type f | wc -l) files" >&2
    ;;
  *)
    secs="${1:-60}"
    [[ "$secs" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS] | --merge | --replay" >&2; exit 2; }
    build fuzz_mha fuzzer,address,undefined
    mkdir -p "$OUT/corpus-new"
    # -max_len: a config, two forwards with masks and a KV cache fit well inside 4 KB.
    "$OUT/fuzz_mha" -max_total_time="$secs" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
      -artifact_prefix="$OUT/" -print_final_stats=1 "$OUT/corpus-new" cpp/fuzz/corpus
    ;;
esac

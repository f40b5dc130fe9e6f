#!/usr/bin/env bash
# Builds the kernel correctness harness and micro-benchmark into build/kernel-tests/ (gitignored):
#   kernels_test.js        wasm, SIMD kernels (kernels_simd.cpp, -msimd128 -DMHA_SIMD128)
#   kernels_test_relaxed.js  wasm, the same kernels with f32x4.relaxed_madd (-DMHA_RELAXED_SIMD)
#   kernels_bench.js       wasm, SIMD kernels
#   kernels_bench_relaxed.js wasm, SIMD kernels with f32x4.relaxed_madd (clang 16, -DMHA_RELAXED_SIMD;
#                          linked at -O1 without binaryen, as the relaxed tier in CMakeLists.txt)
#   kernels_bench_eigen.js wasm, the portable Eigen kernels at -O3 -msimd128 (the baseline)
#   kernels_test_native    native g++, the portable Eigen kernels (kernels_eigen.cpp)
# Run: node build/kernel-tests/kernels_test.js ; node scripts/bench/kernels.mjs (both benches, interleaved)
# Skips a target whose output is newer than all of its inputs. Usage:
#   scripts/build-kernel-tests.sh [--force] [--no-native] [--no-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"   # Debian's em++ needs acorn from here

force=0 native=1 bench=1
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --no-native) native=0 ;;
    --no-bench) bench=0 ;;
    *) echo "build-kernel-tests: unknown option $arg" >&2; exit 2 ;;
  esac
done

out=build/kernel-tests
mkdir -p "$out"
# The repository's package.json says "type": "module"; emscripten's node output is CommonJS.
echo '{ "type": "commonjs" }' > "$out/package.json"
common=(-std=c++17 -I/usr/include/eigen3 -Icpp/src -DEIGEN_NO_DEBUG -DEIGEN_DONT_PARALLELIZE)
# SINGLE_FILE embeds the wasm in the .js: emscripten 3.1.6's loader otherwise fetch()es the .wasm
# by path, which Node >= 18 rejects ("Failed to parse URL").
wasm_flags=(-O3 -msimd128 -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=node -sSINGLE_FILE=1)
srcs_kernels=(cpp/src/kernels_simd.cpp cpp/src/kernels_eigen.cpp)
headers=(cpp/src/kernels.hpp cpp/src/softmax.hpp cpp/tests/bench_host.js)

# up_to_date OUTPUT INPUT... : true when OUTPUT exists and is newer than every INPUT.
up_to_date() {
  local target=$1; shift
  [ "$force" -eq 0 ] || return 1
  [ -f "$target" ] || return 1
  for f in "$@"; do [ "$target" -nt "$f" ] || return 1; done
}

build() {  # build OUTPUT COMPILER FLAGS... -- SOURCES...
  local target=$1 cxx=$2; shift 2
  local flags=() srcs=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  srcs=("$@")
  if up_to_date "$target" "${srcs[@]}" "${headers[@]}" "$0"; then
    echo "build-kernel-tests: $target is up to date"
    return
  fi
  echo "build-kernel-tests: $target"
  "$cxx" "${flags[@]}" "${srcs[@]}" -o "$target"
}

# build_relaxed OUTPUT SOURCES... : the relaxed-SIMD variant. Compiled at -O3 by clang 16 (the final
# relaxed_madd opcode), linked at -O1 with the Python metadata reader so that no binaryen step runs
# (Debian's binaryen 108 cannot parse the opcode).
build_relaxed() {
  local target=$1; shift
  if up_to_date "$target" "$@" "${headers[@]}" "$0"; then
    echo "build-kernel-tests: $target is up to date"
    return
  fi
  echo "build-kernel-tests: $target"
  local objs=()
  for src in "$@"; do
    local obj="$out/relaxed_$(basename "${src%.cpp}").o"
    EM_CLANG_ADD_VERSION=16 em++ "${common[@]}" -O3 -msimd128 -mrelaxed-simd -DMHA_SIMD128 -DMHA_RELAXED_SIMD \
      -c "$src" -o "$obj"
    objs+=("$obj")
  done
  EMCC_READ_METADATA=python em++ -O1 -mrelaxed-simd -sWASM_BIGINT -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=node \
    -sSINGLE_FILE=1 --js-library cpp/tests/bench_host.js "${objs[@]}" -o "$target"
}

build "$out/kernels_test.js" em++ "${common[@]}" "${wasm_flags[@]}" -DMHA_SIMD128 --js-library cpp/tests/bench_host.js -- \
  cpp/tests/kernels_test.cpp "${srcs_kernels[@]}"
build_relaxed "$out/kernels_test_relaxed.js" cpp/tests/kernels_test.cpp "${srcs_kernels[@]}"
if [ "$bench" -eq 1 ]; then
  build "$out/kernels_bench.js" em++ "${common[@]}" "${wasm_flags[@]}" -DMHA_SIMD128 --js-library cpp/tests/bench_host.js -- \
    cpp/tests/kernels_bench.cpp "${srcs_kernels[@]}"
  build_relaxed "$out/kernels_bench_relaxed.js" cpp/tests/kernels_bench.cpp "${srcs_kernels[@]}"
  build "$out/kernels_bench_eigen.js" em++ "${common[@]}" "${wasm_flags[@]}" --js-library cpp/tests/bench_host.js -- \
    cpp/tests/kernels_bench.cpp "${srcs_kernels[@]}"
fi
if [ "$native" -eq 1 ]; then
  build "$out/kernels_test_native" g++ "${common[@]}" -O2 -Wall -Wextra -- \
    cpp/tests/kernels_test.cpp cpp/src/kernels_eigen.cpp
fi

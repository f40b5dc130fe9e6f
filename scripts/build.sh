#!/usr/bin/env bash
# Builds the wasm module (CMake via emcmake) into web/wasm/, then the web bundles into web/dist/.
# Incremental: CMake rebuilds only what changed. Usage: scripts/build.sh [--native] (also builds
# and runs the native C++ unit tests).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"   # Debian's em++ needs acorn from here
jobs=$(nproc 2>/dev/null || echo 2)

emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j"$jobs"

node scripts/build-web.mjs       # page and component bundles -> web/dist/
node scripts/build-package.mjs   # custom-elements.json, component types, anywidget bundle

if [ "${1:-}" = "--native" ]; then
  cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-native -j"$jobs"
  (cd build-native && ctest --output-on-failure)
fi

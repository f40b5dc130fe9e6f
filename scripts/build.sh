#!/usr/bin/env bash
# Builds the wasm modules (CMake preset wasm: CMakePresets.json) into web/lib/wasm/, then the bundles:
# the library's into web/lib/dist/, the lesson site's into web/site/. Incremental: CMake rebuilds only
# what changed. Usage: scripts/build.sh [--native] (also builds and runs the native C++ tests: preset
# native).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"   # Debian's em++ needs acorn from here
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/cmake-stale.sh . build-wasm   # a clone moved or copied: configure afresh
cmake --preset wasm >/dev/null
cmake --build --preset wasm -j"$jobs"

node scripts/build-web.mjs       # component bundle -> web/lib/dist/; the lesson site -> web/site/
node scripts/build-package.mjs   # custom-elements.json, component types, anywidget bundle

if [ "${1:-}" = "--native" ]; then
  bash scripts/cmake-stale.sh . build-native
  cmake --preset native >/dev/null
  cmake --build --preset native -j"$jobs"
  ctest --preset native
fi

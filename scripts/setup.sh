#!/usr/bin/env bash
# Installs what is missing, idempotently: Debian packages (emscripten, Eigen, clang-16 for the
# relaxed-SIMD build, Chromium for the browser tests, MkDocs + Material for the host test), the npm
# dependencies (npm ci when node_modules is stale) and the Docusaurus host's own pinned tree.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v em++ >/dev/null 2>&1 || need+=(emscripten)
[ -f /usr/include/eigen3/Eigen/Core ] || need+=(libeigen3-dev)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v g++ >/dev/null 2>&1 || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)   # native unit tests of the core
command -v wasm-dis >/dev/null 2>&1 || need+=(binaryen)     # the test that checks for f32x4 instructions
command -v clang++-14 >/dev/null 2>&1 || need+=(clang-14)   # fuzz target replay (ASan + UBSan)
command -v clang++-16 >/dev/null 2>&1 || need+=(clang-16)   # the relaxed-simd tier (f32x4.relaxed_madd)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a >/dev/null 2>&1 || need+=(libclang-rt-14-dev)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v mkdocs >/dev/null 2>&1 || need+=(mkdocs)           # the MkDocs host of tests/browser/hosts-mkdocs.test.mjs
dpkg -s mkdocs-material >/dev/null 2>&1 || need+=(mkdocs-material)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (apt)"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

# The Docusaurus 3 host of tests/browser/hosts-docusaurus.test.mjs: a pinned tree of its own (its
# package.json and lock), outside the project's dependencies; npm ci there when it is missing or stale.
host=tests/hosts/docusaurus
if [ ! -d "$host/node_modules" ] || [ "$host/package-lock.json" -nt "$host/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in $host (Docusaurus 3, for its host test)"
  start=$SECONDS
  if ! npm ci --prefix "$host" --no-audit --no-fund --loglevel=error; then
    echo "setup: failed to install Docusaurus 3 (npm ci in $host, for tests/browser/hosts-docusaurus.test.mjs): see npm's message above" >&2
    exit 1
  fi
  echo "setup: Docusaurus 3 installed in $((SECONDS - start)) s"
fi

#!/usr/bin/env bash
# Clears a CMake build folder that was configured for another source folder (a clone moved or
# copied with its build-* folders), so that the next `cmake --preset …` configures it afresh instead
# of failing on "CMakeCache.txt directory … is different": its CMakeCache.txt and CMakeFiles/ go,
# the rest (objects CMake rebuilds anyway) stays. A folder configured here is left alone.
# Usage: scripts/cmake-stale.sh SOURCE_DIR BUILD_DIR...
set -euo pipefail
src=$(cd "$1" && pwd -P)
shift
for dir in "$@"; do
  cache="$dir/CMakeCache.txt"
  [ -f "$cache" ] || continue
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  here=$(cd "$home" 2>/dev/null && pwd -P || echo "$home")
  if [ "$here" != "$src" ]; then
    echo "build: $dir was configured for $home; configuring it afresh for $src" >&2
    rm -rf "$cache" "$dir/CMakeFiles"
  fi
done

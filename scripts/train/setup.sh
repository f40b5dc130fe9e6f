#!/usr/bin/env bash
# Installs what retraining the lesson's models needs, idempotently: Debian's PyTorch (CPU) and the
# fortune files that serve as the corpus. Not part of `npm test` (the trained files are shipped).
set -euo pipefail
need=()
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || need+=(python3-torch)
[ -f /usr/share/games/fortunes/science ] || need+=(fortunes)
# Debian's torch links the generic libblas.so.3; OpenBLAS (chosen by update-alternatives) is ~10x faster.
[ -d /usr/lib/x86_64-linux-gnu/openblas-pthread ] || need+=(libopenblas0-pthread)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "train setup: /usr/bin/python3 with torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), fortunes in /usr/share/games/fortunes"

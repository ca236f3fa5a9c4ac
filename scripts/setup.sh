#!/usr/bin/env bash
# setup.sh - installs what is missing (Debian 12, as root), then configures and builds kiln in ./build.
# Usage: bash scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  # Node.js and npm may come from elsewhere (e.g. NodeSource, which bundles npm): a working command counts.
  case "$pkg" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done < scripts/deps-apt.txt

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

shared="${KILN_SHARED_DIR:-$(cd .. && pwd)/shared}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKILN_SHARED_DIR="$shared" "$@" >/dev/null
cmake --build build -j"$(nproc)"

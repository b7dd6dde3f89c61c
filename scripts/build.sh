#!/usr/bin/env bash
# build.sh [DIR] [cmake args...] - configure and build (default build/, release with debug info).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}; shift || true
cmake -S . -B "$dir" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"

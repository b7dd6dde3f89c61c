#!/usr/bin/env bash
# fuzz.sh [SECONDS] - build every libFuzzer target (fuzz/fuzz_*.c) with clang in
# build-fuzz/ (ALLOT_FUZZ=ON: ASan + UBSan + coverage) and run each for SECONDS
# (default 20) on a scratch copy of its seed corpus fuzz/corpus/<name>/.
# Fails when a fuzzer finds a crash, a leak, a timeout or an out-of-memory;
# reproducers are left in build-fuzz/fuzz-artifacts/. ALLOT_FUZZ_CC names
# another clang, ALLOT_FUZZ_DIR another build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-${ALLOT_FUZZ_SECONDS:-20}}
dir=${ALLOT_FUZZ_DIR:-build-fuzz}
CC=${ALLOT_FUZZ_CC:-clang} cmake -S . -B "$dir" -DALLOT_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
    -DALLOT_FUZZ_SECONDS="$secs" >/dev/null
cmake --build "$dir" --target fuzz -j"$(nproc)"
cd "$dir"
ctest -R '^fuzz/' --output-on-failure

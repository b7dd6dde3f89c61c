#!/usr/bin/env bash
# test.sh - install dependencies, build with AddressSanitizer and UBSan, and run
# every test: cmocka unit tests and end-to-end tests against a real allotd
# (kubectl and python3-kubernetes). Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build-asan -DALLOT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-asan
ctest --output-on-failure -j2 --timeout 600

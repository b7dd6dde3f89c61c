#!/usr/bin/env bash
# test.sh - install dependencies; run the end-to-end tests against the release
# build and the libFuzzer targets for a bounded time, then build with
# AddressSanitizer and UBSan and run every test: cmocka unit tests, the alert
# rules' promtool tests and end-to-end tests against a real allotd (kubectl,
# python3-kubernetes, Prometheus). Upstream Kubernetes v1.20.2's own e2e specs
# (tests/upstream) run against the release build with the binaries
# scripts/kube-build.sh builds once per machine (cached outside the clone).
# Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Upstream's kube-apiserver, controller-manager, scheduler and e2e.test: about
# 25 minutes the first time on 2 cores, then cached (docs/upstream-e2e.md).
ALLOT_KUBE_BIN=$(scripts/kube-build.sh | tail -1)
export ALLOT_KUBE_BIN
# The end-to-end tests against the release build first (what users run), with
# upstream's specs...
scripts/build.sh build
(cd build && ctest --output-on-failure -j2 --timeout 600 -R '^(e2e|upstream)/')
# The parsers' libFuzzer targets (clang), each for a bounded time...
scripts/fuzz.sh "${ALLOT_FUZZ_SECONDS:-20}"
# ...then everything under the sanitizers; its summary line ends the run.
scripts/build.sh build-asan -DALLOT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-asan
ctest --output-on-failure -j2 --timeout 600 -E '^upstream/'

#!/bin/sh
# run-fuzzer.sh FUZZER CORPUS_DIR SECONDS - run one libFuzzer target for a bounded
# time (the fuzz/<name> ctest tests call this from the build directory).
#
# The seed corpus is copied to a scratch directory, so new inputs never land in the
# source tree; fuzz/<name>.dict is used when it exists. A crash, leak, timeout or
# out-of-memory fails the test, and its reproducer is kept in
# ./fuzz-artifacts/<name>-* (replay: FUZZER ./fuzz-artifacts/<file>).
set -eu
fuzzer=$1
corpus=$2
secs=$3
name=$(basename "$fuzzer")
dict=$(dirname "$corpus")/../$name.dict
work=$(mktemp -d "${TMPDIR:-/tmp}/allot-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/corpus" fuzz-artifacts
if [ -d "$corpus" ]; then cp -R "$corpus/." "$work/corpus/"; fi
set -- -max_total_time="$secs" -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$PWD/fuzz-artifacts/$name-"
if [ -f "$dict" ]; then set -- "$@" -dict="$dict"; fi
"$fuzzer" "$@" "$work/corpus"

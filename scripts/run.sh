#!/usr/bin/env bash
# run.sh [allotd flags] - install dependencies, build, and start allotd in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
exec build/allotd "$@"

#!/usr/bin/env bash
# run.sh [allotd flags] - install dependencies, build, and start allotd in the foreground,
# with three simulated nodes so that pods reach Running (give --simulated-nodes 0 for none).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
exec build/allotd --simulated-nodes 3 "$@"

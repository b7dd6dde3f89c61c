#!/usr/bin/env bash
# run-one.sh TEST: run one end-to-end test (shell or Python) with a clean environment.
set -euo pipefail
t=$1
case "$t" in
  *.py) exec /usr/bin/python3 "$t" ;;
  *) exec bash "$t" ;;
esac

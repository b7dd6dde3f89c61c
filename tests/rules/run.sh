#!/usr/bin/env bash
# run.sh - the Prometheus rule files in deploy/prometheus: promtool accepts
# them (check rules) and each alert fires, and stays silent, when its unit
# test (tests/rules/<file>.test.yml, promtool test rules) says so. Every
# rule file must have a test file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
promtool=${PROMTOOL:-promtool}
command -v "$promtool" >/dev/null || { echo "promtool not found (Debian package prometheus)" >&2; exit 1; }
rules=("$root"/deploy/prometheus/*.rules.yml)
"$promtool" check rules "${rules[@]}"
for r in "${rules[@]}"; do
  t="$here/$(basename "${r%.rules.yml}").test.yml"
  [ -f "$t" ] || { echo "no unit test for $r (want $t)" >&2; exit 1; }
done
cd "$here"
"$promtool" test rules ./*.test.yml

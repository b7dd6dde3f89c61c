#!/usr/bin/env bash
# crds_manifest.sh ALLOTD: deploy/cluster/crds.yaml is what `allotd crds`
# prints, so the checked-in manifest never drifts from the generator
# (api/crd_gen.c). Rewrite it with `cmake --build build --target crds-manifest`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
allotd=${1:?usage: crds_manifest.sh ALLOTD}
if ! "$allotd" crds | diff -u "$root/deploy/cluster/crds.yaml" -; then
  echo "FAIL: deploy/cluster/crds.yaml is out of date: cmake --build build --target crds-manifest" >&2
  exit 1
fi
"$allotd" crds --output json | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)
assert l["kind"] == "List" and len(l["items"]) == 4, l.get("kind")
print("ok: deploy/cluster/crds.yaml is up to date:", ", ".join(i["metadata"]["name"] for i in l["items"]))'

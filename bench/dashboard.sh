#!/usr/bin/env bash
# dashboard.sh - pod creates/s with the dashboard open in a browser and
# without, on a server holding 1,000 namespaces x 3 ResourceQuotas (rounds
# interleaved off/on, on/off, ..., medians), and the dashboard's first render.
# The creates land in namespaces with quotas, so the page's quota watch sees
# their usage move. As shipped (scheduler and node agent on) by default;
# CONFIG=api times the API server alone. Needs node_modules (npm ci) and
# /usr/bin/chromium (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
scripts/build.sh build >/dev/null
ROUNDS=${ROUNDS:-4}
REQUESTS=${REQUESTS:-20000}
FLAGS=""
[ "${CONFIG:-}" = api ] && FLAGS="--scheduler=false --node-agent=false"
dir=$(mktemp -d /tmp/allot-dash.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# shellcheck disable=SC2086
build/allotd --data-dir "$dir" --port "$port" --log-level warn $FLAGS 2>"$dir/log" &
pid=$!
page=
trap '[ -n "$page" ] && kill $page 2>/dev/null; kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
# 1,000 namespaces in all: the tenants, and 10 fresh ones per run (run0 the
# warm-up's: the first run into an empty store is the fastest of all, and
# would count for whichever side it fell on)
runs=$((2 * ROUNDS))
/usr/bin/python3 bench/namespaces.py "$url" "$tok" "$dir/ca.crt" $((1000 - 10 * (runs + 1))) tenant
for r in $(seq 0 $runs); do /usr/bin/python3 bench/namespaces.py "$url" "$tok" "$dir/ca.crt" 10 "run$r"; done
if [ -z "$FLAGS" ]; then # room on nodes for every pod (110 each), so none waits unschedulable
  build/loadgen --data-dir "$dir" --url "$url" --connections 4 \
    --requests $(((runs + 1) * REQUESTS / 100 + 10)) --resource nodes >/dev/null
fi
settle
# A run's namespaces are deleted after it (their pods with them), so every
# run finds a store of the same size: left in place, 20,000 more pods a run
# slowed the later runs by up to a third, whichever side they fell on.
drop_run() { # drop_run RUN
  for i in $(seq 0 9); do
    curl -sS -o /dev/null --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" \
      -X DELETE "$url/api/v1/namespaces/run$1-$i"
  done
  for _ in $(seq 1 600); do # bounded: until the namespaces (and so their pods) are gone
    [ "$(curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" "$url/api/v1/namespaces" |
      grep -c "\"run$1-")" = 0 ] && break
    sleep 0.2
  done
  settle 60
}
build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" \
  --namespaces 10 --ns-prefix run0 --pid $pid --label "warm-up (not counted)" >&2
drop_run 0
open_page() { # the page, logged in and rendered, held open on a fifo
  mkfifo "$dir/hold"
  node bench/dashboard_open.mjs "$url" "$tok" <"$dir/hold" >"$dir/page.out" 2>&1 &
  page=$!
  exec 3>"$dir/hold"
  for _ in $(seq 1 600); do grep -q '^ready' "$dir/page.out" 2>/dev/null && break
    kill -0 $page 2>/dev/null || { cat "$dir/page.out" >&2; exit 1; }; sleep 0.1; done
  grep '^ready' "$dir/page.out" >&2
  settle
}
close_page() { exec 3>&-; wait $page 2>/dev/null || true; page=; rm -f "$dir/hold"; }
ticks() { # ticks NAME-REGEX: CPU clock ticks of the processes so named
  for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null || true; done |
    awk -v re="$1" '{c=$0; sub(/^[0-9]+ \(/, "", c); n=c; sub(/\) .*/, "", n); sub(/^.*\) [A-Za-z] /, "", c);
      split(c, f, " "); if (n ~ re) t += f[11] + f[12]} END{print t + 0}'
}
measure() { # measure RUN LABEL -> creates/s; the browser's CPU during it to stderr
  local b0 b1
  b0=$(ticks '^(chrom|headless|node)')
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" \
    --namespaces 10 --ns-prefix "run$1" --pid $pid --label "$2" | show
  b1=$(ticks '^(chrom|headless|node)')
  awk -v t="$(getconf CLK_TCK)" -v b=$((b1 - b0)) 'BEGIN{printf "  browser CPU during the run: %.2fs\n", b/t}' >&2
}
off=() on=() r=0
for round in $(seq 1 "$ROUNDS"); do
  order="off on"; [ $((round % 2)) -eq 0 ] && order="on off"
  for mode in $order; do
    r=$((r + 1))
    if [ $mode = on ]; then open_page; on+=("$(measure $r "dashboard open")"); close_page
    else off+=("$(measure $r "no dashboard")"); fi
    drop_run $r
  done
done
a=$(printf '%s\n' "${off[@]}" | median) b=$(printf '%s\n' "${on[@]}" | median)
# each round's own ratio (its two runs are next to each other, so the drift
# of a growing store cancels), and their geometric mean
ratios=$(for i in $(seq 0 $((ROUNDS - 1))); do echo "${on[$i]} ${off[$i]}"; done |
  awk '{printf "%.3f ", $1/$2; s += log($1/$2)} END{printf "(geometric mean %.3fx)", exp(s/NR)}')
awk -v a="$a" -v b="$b" -v n="$ROUNDS" -v c="${CONFIG:-default}" -v r="$ratios" 'BEGIN{printf "pod creates with 1000 namespaces x 3 quotas (%s config, medians of %d rounds): no dashboard %.0f/s, dashboard open %.0f/s (%.3fx, %+.1f%%); per round %s\n", c, n, a, b, b/a, (b/a-1)*100, r}'

#!/usr/bin/env bash
# dashboard.sh - what the dashboard costs allotd: pod creates/s on a server
# holding 1,000 namespaces x 3 ResourceQuotas, in three kinds of run:
#   closed   no dashboard;
#   page     the dashboard open in headless Debian chromium, on the same
#            2 cores as allotd and the load generator;
#   watches  the page's three watches (quotas, pods pending on quota,
#            namespaces) held by curl, which reads and drops what comes: the
#            page's cost to allotd without the browser's own CPU (a browser
#            usually runs on its user's machine, not on the server's).
# A round is one run of each, in an order that rotates through all six, next
# to each other; its ratios (page/closed, watches/closed) cancel the slow
# drift of a shared machine. Reports their geometric means with 95%
# confidence intervals, allotd's CPU per create, and the page's first
# render. The creates land in namespaces with quotas, so the quota watch
# sees their usage move. As shipped (scheduler and node agent
# on) by default; CONFIG=api times the API server alone. ROUNDS (default
# 12), REQUESTS a run (default 5000). Needs node_modules (npm ci) and
# /usr/bin/chromium (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
scripts/build.sh build >/dev/null
ROUNDS=${ROUNDS:-12}
REQUESTS=${REQUESTS:-5000}
FLAGS=""
[ "${CONFIG:-}" = api ] && FLAGS="--scheduler=false --node-agent=false"
dir=$(mktemp -d /tmp/allot-dash.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# shellcheck disable=SC2086
build/allotd --data-dir "$dir" --port "$port" --log-level warn $FLAGS 2>"$dir/log" &
pid=$!
page=
wpids=()
trap 'exec 3>&- 2>/dev/null; [ -n "$page" ] && kill $page 2>/dev/null; kill "${wpids[@]}" $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
# 1,000 namespaces in every run: 990 tenants, and the run's 10, made fresh
# before it and deleted after it, the two warm-up runs' included (not
# counted: the first run into a fresh store is the fastest of all, and the
# first after it, into the gap its deletion left, among the slowest; each
# would count for whichever side it fell on)
runs=$((3 * ROUNDS)) warmups=2
/usr/bin/python3 bench/namespaces.py "$url" "$tok" "$dir/ca.crt" 990 tenant
if [ -z "$FLAGS" ]; then # room on nodes for every pod (110 each), so none waits unschedulable
  build/loadgen --data-dir "$dir" --url "$url" --connections 4 \
    --requests $(((runs + warmups) * REQUESTS / 100 + 10)) --resource nodes >/dev/null
fi
settle
# A run's namespaces are deleted after it (their pods with them), so every
# run finds a store of the same size: left in place, 20,000 more pods a run
# slowed the later runs by up to a third, whichever side they fell on.
drop_run() { # drop_run PREFIX: namespaces PREFIX-0 .. PREFIX-9
  for i in $(seq 0 9); do
    curl -sS -o /dev/null --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" \
      -X DELETE "$url/api/v1/namespaces/$1-$i"
  done
  for _ in $(seq 1 600); do # bounded: until the namespaces (and so their pods) are gone
    [ "$(curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" "$url/api/v1/namespaces" |
      grep -c "\"$1-")" = 0 ] && break
    sleep 0.2
  done
  settle 60
}
# One browser for the whole bench, started (and logged in) before the
# warm-up runs, so that they and not the first measured run follow its start
# (that run was the slowest of all, whichever kind it was), and closed at
# exit. A run with the dashboard opens it in the browser's tab and one
# without leaves the tab blank, so the two differ in the page alone.
mkfifo "$dir/page.in"
node bench/dashboard_open.mjs "$url" "$tok" <"$dir/page.in" >"$dir/page.out" 2>&1 &
page=$!
exec 3>"$dir/page.in"
tab() { # tab on|off: the dashboard open, or a blank tab; waits for the answer
  local n
  n=$(wc -l <"$dir/page.out")
  echo "$1" >&3
  for _ in $(seq 1 600); do # bounded: 60 s
    [ "$(wc -l <"$dir/page.out")" -gt "$n" ] && break
    kill -0 $page 2>/dev/null || { cat "$dir/page.out" >&2; exit 1; }
    sleep 0.1
  done
  tail -n 1 "$dir/page.out" | grep -E '^(ready|off)' >&2 || { cat "$dir/page.out" >&2; exit 1; }
  settle
}
tab on # logs in
tab off
for w in $(seq 1 $warmups); do
  /usr/bin/python3 bench/namespaces.py "$url" "$tok" "$dir/ca.crt" 10 "warm$w"
  settle
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" \
    --namespaces 10 --ns-prefix "warm$w" --pid $pid --label "warm-up (not counted)" >&2
  drop_run "warm$w"
done
ticks() { # ticks NAME-REGEX: CPU clock ticks of the processes so named
  for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null || true; done |
    awk -v re="$1" '{c=$0; sub(/^[0-9]+ \(/, "", c); n=c; sub(/\) .*/, "", n); sub(/^.*\) [A-Za-z] /, "", c);
      split(c, f, " "); if (n ~ re) t += f[11] + f[12]} END{print t + 0}'
}
measure() { # measure RUN LABEL -> "creates/s server-CPU-us/request browser-CPU-s"
  local b0 b1 line
  /usr/bin/python3 bench/namespaces.py "$url" "$tok" "$dir/ca.crt" 10 "run$1" >&2
  settle
  b0=$(ticks '^(chrom|headless|node)')
  line=$(build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" \
    --namespaces 10 --ns-prefix "run$1" --pid $pid --label "$2")
  b1=$(ticks '^(chrom|headless|node)')
  echo "$line" >&2
  echo "$line" | sed -E 's/.*: ([0-9]+)\/s.*server CPU ([0-9]+) us\/request.*/\1 \2/' |
    awk -v t="$(getconf CLK_TCK)" -v b=$((b1 - b0)) '{printf "%s %s %.2f\n", $1, $2, b/t}'
}
# The page's watches, as it opens them (app.js SOURCES), held by curl.
WATCH_PATHS=(/api/v1/resourcequotas "/api/v1/pods?fieldSelector=status.pendingOnQuota%21%3D" /api/v1/namespaces)
watches() { # watches on|off
  if [ "$1" = on ]; then
    for p in "${WATCH_PATHS[@]}"; do
      sep='?'; [[ $p == *\?* ]] && sep='&'
      curl -fsS -N -o /dev/null --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" \
        "$url$p${sep}watch=1&allowWatchBookmarks=true" &
      wpids+=($!)
    done
    settle
  else
    kill "${wpids[@]}" 2>/dev/null || true
    wait "${wpids[@]}" 2>/dev/null || true
    wpids=()
  fi
}
closed=() page_on=() watched=() r=0
PERMS=("closed page watches" "page watches closed" "watches closed page"
       "closed watches page" "watches page closed" "page closed watches")
for round in $(seq 1 "$ROUNDS"); do
  for mode in ${PERMS[$(((round - 1) % 6))]}; do
    r=$((r + 1))
    case $mode in
      closed) closed+=("$(measure $r "no dashboard")") ;;
      page) tab on; page_on+=("$(measure $r "dashboard open")"); tab off ;;
      watches) watches on; watched+=("$(measure $r "its watches (curl)")"); watches off ;;
    esac
    drop_run "run$r"
  done
done
# Per round: closed, page and watches, each "creates/s CPU-us/create browser-s".
# The 95% interval is Student's t over the rounds' log ratios (t approximated
# as 1.96 + 2.4/df + 3/df^2, within 3% of the table for df >= 3).
for i in $(seq 0 $((ROUNDS - 1))); do echo "${closed[$i]} ${page_on[$i]} ${watched[$i]}"; done |
  awk -v c="${CONFIG:-default}" -v req="$REQUESTS" '
    function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
    function report(what, s, ss, list, cx,   m, sd, df, t, h) {
      m = s / n; sd = n > 1 ? sqrt((ss - n * m * m) / (n - 1)) : 0; df = n - 1
      t = df > 0 ? 1.96 + 2.4 / df + 3 / (df * df) : 0; h = t * sd / sqrt(n)
      printf "  %s: creates/s %.3fx closed (95%% CI %.3f-%.3f, %+.1f%%), allotd CPU per create %.3fx\n", what, exp(m), exp(m - h), exp(m + h), (exp(m) - 1) * 100, exp(cx / n)
      printf "    per round: %s\n", list
    }
    { n++; rc[n] = $1; rp[n] = $4; bp[n] = $6; rw[n] = $7
      x = log($4 / $1); ps += x; pss += x * x; pl = pl sprintf("%.3f ", $4 / $1); pc += log($5 / $2)
      x = log($7 / $1); ws += x; wss += x * x; wl = wl sprintf("%.3f ", $7 / $1); wc += log($8 / $2) }
    END {
      printf "pod creates, %d a run, 1000 namespaces x 3 quotas, %s config, %d rounds (geometric means of the rounds):\n", req, c, n
      report("dashboard open in chromium on the same cores", ps, pss, pl, pc)
      report("its three watches held by curl", ws, wss, wl, wc)
      printf "  medians: closed %.0f/s, page %.0f/s, watches %.0f/s; browser CPU per run with the page open: median %.2fs\n", med(rc, n), med(rp, n), med(rw, n), med(bp, n)
    }'

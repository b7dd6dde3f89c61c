# lib.sh - helpers the benchmark scripts share (source it; they set $pid to
# allotd's process id).

# settle [MAX_S]: wait (at most MAX_S, default 10 s) until allotd is idle, so
# that a run measures the requests and not the controllers still working
# through the setup's events (namespaces, quotas, pools) or the last run's
# (the node agent starts pods about 1,000 a second).
settle() {
  local prev=-1 cur
  for _ in $(seq 1 $((${1:-10} * 5))); do
    cur=$(awk '{print $14 + $15}' /proc/$pid/stat)
    [ "$prev" -ge 0 ] && [ $((cur - prev)) -le 1 ] && return 0
    prev=$cur; sleep 0.2
  done
}

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# show: a loadgen line to stderr, its rate to stdout (tee /dev/stderr would
# truncate a log file stderr is redirected to).
show() { local line; line=$(cat); echo "$line" >&2; echo "$line" | sed -E 's/.*: ([0-9]+)\/s.*/\1/'; }

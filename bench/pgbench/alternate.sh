#!/usr/bin/env bash
# Alternated pgbench slices of the unkeyed create's statement under variants of the
# schema (issue 44, docs/performance.md "Issue 44: where the INSERT's time went").
# Usage: alternate.sh SPEC ROUNDS SECONDS [CLIENTS]
# SPEC has one variant a line: name|database URL|script|SQL before|SQL after, where
# "SQL before" removes a part (DROP INDEX …, ALTER TABLE … DISABLE TRIGGER …) and "SQL
# after" puts it back; either may be empty. Before each slice the written tables are
# emptied (TRUNCATE) and checkpointed, so every slice starts from the same state; the
# part is put back on the empty table. Even rounds run the variants in reverse order.
# Each slice reports, over a window of SECONDS that starts once all CLIENTS are connected:
# risks written per second, and the CPU time of pgbench's backends (/proc, user +
# system) per risk written — what the statement costs PostgreSQL, which other work
# on a shared machine changes far less than it changes the rate. The first line is
# the baseline: each variant's totals over the rounds are printed as ratios to it
# (rate: higher is faster; CPU: lower is cheaper). pgbench from $PGBIN or PATH.
set -euo pipefail
SPEC=$(realpath "$1"); ROUNDS=${2:-4}; SECS=${3:-10}; CLIENTS=${4:-16}; PGB=${PGBIN:+$PGBIN/}pgbench
cd "$(dirname "$0")"
# @URL@ and @OLD_URL@ in SPEC stand for $URL and $OLD_URL (issue44-*.spec use them).
mapfile -t lines < <(grep -v '^#' "$SPEC" | grep . | sed -e "s|@URL@|${URL:-}|g" -e "s|@OLD_URL@|${OLD_URL:-}|g")
TICK=$(getconf CLK_TCK)
reset() { psql -q -v ON_ERROR_STOP=1 "$1" -c "TRUNCATE risks, audit_log, events, webhook_deliveries, webhook_attempts, risk_heat_counts" -c "CHECKPOINT"; }
# cpu PIDS: "pid ticks" of each backend still running (user + system time).
cpu() { local p; for p in $1; do awk -v p="$p" '{print p, $14 + $15}' "/proc/$p/stat" 2>/dev/null || true; done; }
# used BEFORE AFTER: the ticks used between the snapshots by the backends in both.
used() { awk 'NR == FNR {a[$1] = $2; next} ($1 in a) {t += $2 - a[$1]} END {print t + 0}' <(echo "$1") <(echo "$2"); }
rows() { psql -At "$1" -c "SELECT count(*) FROM risks"; }
declare -A rsum csum nsum
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  order=("${lines[@]}")
  if (( r % 2 == 0 )); then order=(); for ((j = ${#lines[@]} - 1; j >= 0; j--)); do order+=("${lines[$j]}"); done; fi
  for l in "${order[@]}"; do
    IFS='|' read -r name url script before after <<<"$l"
    reset "$url"
    [ -z "$before" ] || psql -q -v ON_ERROR_STOP=1 "$url" -c "$before"
    # Whatever ends the script, the part goes back.
    trap '[ -z "$after" ] || psql -q "$url" -c "$after"' EXIT
    $PGB -n -M prepared -c "$CLIENTS" -j 2 -T $((SECS + 60)) -f "$script" "$url" >/dev/null 2>&1 & pg=$!
    sleep 1
    while :; do # the window starts once every client is connected and writing
      pids=$(psql -At "$url" -c "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'pgbench'")
      [ "$(echo "$pids" | wc -w)" -lt "$CLIENTS" ] || break
      kill -0 $pg || { echo "pgbench failed in $name" >&2; exit 1; }; sleep 0.2
    done
    sleep 0.5
    c1=$(cpu "$pids"); n1=$(rows "$url"); t1=$(date +%s.%N)
    sleep "$SECS"
    c2=$(cpu "$pids"); n2=$(rows "$url"); t2=$(date +%s.%N); c=$(used "$c1" "$c2")
    [ "$(echo "$c2" | grep -c .)" -eq "$CLIENTS" ] || { echo "$name: a backend ended within the window" >&2; exit 1; }
    kill $pg; wait $pg 2>/dev/null || true
    reset "$url"
    [ -z "$after" ] || psql -q -v ON_ERROR_STOP=1 "$url" -c "$after"
    trap - EXIT
    read -r rate us < <(awk -v n=$((n2 - n1)) -v c="$c" -v t1="$t1" -v t2="$t2" -v k="$TICK" \
      'BEGIN {printf "%.0f %.0f\n", n / (t2 - t1), c / k * 1e6 / n}')
    rsum[$name]=$(awk -v a="${rsum[$name]:-0}" -v b="$rate" 'BEGIN {print a + b}')
    csum[$name]=$(( ${csum[$name]:-0} + c )); nsum[$name]=$(( ${nsum[$name]:-0} + n2 - n1 ))
    echo "$(date +%T) round $r $name: $rate/s, $us µs CPU per write (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
IFS='|' read -r base _ <<<"${lines[0]}"
printf "%-22s %8s %6s %10s %6s\n" variant rate ratio "CPU/write" ratio
for l in "${lines[@]}"; do
  IFS='|' read -r name _ <<<"$l"
  awk -v n="$name" -v r="${rsum[$name]}" -v rb="${rsum[$base]}" -v c="${csum[$name]}" -v w="${nsum[$name]}" \
    -v cb="${csum[$base]}" -v wb="${nsum[$base]}" -v R="$ROUNDS" -v k="$TICK" \
    'BEGIN {printf "%-22s %6.0f/s %5.2fx %7.0f µs %5.2fx\n", n, r / R, r / rb, c / k * 1e6 / w, (c / w) / (cb / wb)}'
done

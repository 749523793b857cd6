#!/bin/bash
# bench/ab.sh OLD_API NEW_API [ROUNDS] [REQUESTS]: two builds of api, alternated
# (old new, new old, …), each slice a loadgen run at 16 clients (unkeyed, keyed,
# replay) on a fresh PostgreSQL database; prints each slice and the ratios new ÷ old
# of the summed throughput and the mean CPU per request (server, server+PostgreSQL),
# with the 1-minute load at the start and end. Needs loadgen in $LOADGEN (default:
# built from the tree), psql, PostgreSQL at $PG_URL. Run it through the machine's
# gate for heavy work when one is shared (docs/performance.md, How to run).
set -euo pipefail
export PGOPTIONS="-c client_min_messages=warning"
old=$1 new=$2 rounds=${3:-4} requests=${4:-6000}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
here=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/ab.XXXXXX)
db=riskapi_h_ab_$$
trap 'psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1; rm -rf "$T"' EXIT
LOADGEN=${LOADGEN:-}
[ -n "$LOADGEN" ] || { (cd "$here" && go build -o "$T/loadgen" ./cmd/loadgen); LOADGEN=$T/loadgen; }
la() { cut -d' ' -f1 /proc/loadavg; }
s=$(la)
for r in $(seq 1 "$rounds"); do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    bin=$old; [ $v = new ] && bin=$new
    psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
    f=$T/$r-$v.txt
    "$LOADGEN" --api-bin "$bin" --spawn 1 --clients 16 --kinds unkeyed,keyed,replay --requests "$requests" \
      --rounds 1 --duration 20s --warmup 300 --progress 0 \
      --database-url "${PG_URL/\/postgres\?//$db?}" >"$f" 2>&1 || { echo "slice $r $v failed:"; tail -n 20 "$f"; exit 1; }
    awk -v r="$r" -v v="$v" -v la="$(la)" '
      $1 == "unkeyed" && NF == 9 { u = $5 } $1 == "keyed" && NF == 9 { k = $5 } $1 == "replay" && NF == 9 { p = $5 }
      /server CPU per request/ { su = $10; sk = $12; sp = $14 }
      /server\+database CPU per request/ { bu = $10; bk = $12; bp = $14 }
      END { gsub("µs", "", su); gsub("µs", "", sk); gsub("µs", "", sp); gsub("µs", "", bu); gsub("µs", "", bk); gsub("µs", "", bp)
        printf "slice %s %s load %s  req/s unkeyed %s keyed %s replay %s  CPU µs server %s/%s/%s  server+pg %s/%s/%s\n", r, v, la, u, k, p, su, sk, sp, bu, bk, bp }' "$f"
  done
done | tee "$T/slices"
e=$(la)
awk -v s="$s" -v e="$e" '
  { v = $3; n[v]++
    tu[v] += $8; tk[v] += $10; tp[v] += $12
    split($16, a, "/"); su[v] += a[1]; sk[v] += a[2]
    split($18, b, "/"); bu[v] += b[1]; bk[v] += b[2] }
  END {
    printf "new ÷ old, %d slices each, 1-min load %s → %s\n", n["new"], s, e
    printf "  throughput  unkeyed %.3f  keyed %.3f  replay %.3f\n", tu["new"]/tu["old"], tk["new"]/tk["old"], tp["new"]/tp["old"]
    printf "  server CPU per request  unkeyed %.3f (%.0f → %.0f µs)  keyed %.3f (%.0f → %.0f µs)\n", su["new"]/su["old"], su["old"]/n["old"], su["new"]/n["new"], sk["new"]/sk["old"], sk["old"]/n["old"], sk["new"]/n["new"]
    printf "  server+PostgreSQL CPU per request  unkeyed %.3f (%.0f → %.0f µs)  keyed %.3f (%.0f → %.0f µs)\n", bu["new"]/bu["old"], bu["old"]/n["old"], bu["new"]/n["new"], bk["new"]/bk["old"], bk["old"]/n["old"], bk["new"]/n["new"]
  }' "$T/slices"

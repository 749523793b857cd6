#!/usr/bin/env bash
# The floor of "audit log on ÷ off" on PostgreSQL (issue 26, docs/performance.md):
# riskapi's write as its statements (unkeyed.sql, or keyed.sql with SCRIPT=keyed.sql)
# against the same statements without the audit entry's carried INSERT, sent straight
# to PostgreSQL with pgbench. The variant is cut from the script here, so that it
# cannot drift from it. Rounds alternate on, off, off, on (ROUNDS times), SECONDS
# each, CLIENTS clients.
# Usage: [SCRIPT=keyed.sql] audit-floor.sh API_BINARY [ROUNDS] [SECONDS] [CLIENTS]
# (a fresh database riskapi_m26_aud_PID beside $PG_URL's, default
# postgres://postgres@127.0.0.1:5432/postgres, dropped at the end; pgbench from
# $PGBIN, else PATH).
set -euo pipefail
cd "$(dirname "$0")"
API=$1 ROUNDS=${2:-2} SECS=${3:-15} CLIENTS=${4:-16} ON=${SCRIPT:-unkeyed.sql}
PGB=${PGBIN:+$PGBIN/}pgbench DB=riskapi_m26_aud_$$
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
U=${PG_URL/\/postgres\?//$DB?}
[ "$U" != "$PG_URL" ] || { echo "$0: PG_URL must name the database postgres (…/postgres?…)" >&2; exit 2; }
OFF=$(mktemp)
psql -q "$PG_URL" -c "CREATE DATABASE $DB"
trap 'rm -f "$OFF"; psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
DATABASE_URL="$U" "$API" migrate >/dev/null
psql -q -v ON_ERROR_STOP=1 -f setup.sql "$U" >/dev/null
# The carried entry is the CTE carried1, from its first line to the one ending its VALUES.
awk '/^\tcarried1 AS \(INSERT INTO audit_log/ {skip = 1} !skip {print} skip && /Go-http-client\/1\.1.\)\),$/ {skip = 0}' "$ON" >"$OFF"
if grep -q audit_log "$OFF" || ! grep -q 'INSERT INTO risks' "$OFF"; then
  echo "audit-floor: could not cut the audit entry out of $ON" >&2; exit 1
fi
declare -A SUM=([on]=0 [off]=0)
for r in $(seq 1 "$ROUNDS"); do
  for ab in on off off on; do
    f=$ON; [ "$ab" = off ] && f=$OFF
    load=$(cut -d' ' -f1 /proc/loadavg)
    tps=$($PGB -n -M prepared -c "$CLIENTS" -j 2 -T "$SECS" -f "$f" "$U" 2>&1 | awk '/^tps/ {print $3; exit}')
    # A failed pgbench prints no tps: stop rather than sum it as zero.
    [ -n "$tps" ] || { echo "audit-floor: pgbench failed on $f (audit $ab)" >&2; exit 1; }
    SUM[$ab]=$(awk -v a="${SUM[$ab]}" -v t="$tps" 'BEGIN {print a + t}')
    echo "round $r, audit $ab: $tps tps (1-min load $load)"
  done
done
a=$(psql -At -c "SELECT count(*) FROM audit_log WHERE tenant_id = 'ten_pgbench'" "$U")
echo "audit entries written: $a"
awk -v s="$ON" -v on="${SUM[on]}" -v off="${SUM[off]}" 'BEGIN {printf "floor, audit on ÷ off, statements of %s: %.2f (%.0f ÷ %.0f tps summed)\n", s, on / off, on, off}'

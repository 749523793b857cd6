#!/usr/bin/env bash
# The search index's cost on the write (issue 44, docs/performance.md): risk INSERTs
# per second (risk-insert.sql, autocommit, 16 clients) with the two trigram GIN
# indexes under each setting, alternated in short slices within one run so that a
# shared machine's noise falls on each alike: PostgreSQL's default (fastupdate on,
# gin_pending_list_limit 4 MB), fastupdate off, a 32 MB pending list, and no trigram
# index at all (the ceiling). Prints each setting's rate and its ratio to the default.
# Usage: gin-settings.sh API_BINARY [ROUNDS] [SECONDS] (a fresh database beside
# $PG_URL's, dropped at the end; pgbench from $PGBIN, else PATH).
set -euo pipefail
cd "$(dirname "$0")"
API=$1; ROUNDS=${2:-3}; SECS=${3:-8}; PGB=${PGBIN:+$PGBIN/}pgbench DB=riskapi_gin_$$
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
U=${PG_URL/\/postgres\?//$DB?}
[ "$U" != "$PG_URL" ] || { echo "$0: PG_URL must name the database postgres (…/postgres?…)" >&2; exit 2; }
psql -q "$PG_URL" -c "CREATE DATABASE $DB"
trap 'psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
DATABASE_URL="$U" SECRET_KEY=pgbench-gin-settings-0123456789abcdef "$API" migrate >/dev/null
psql -q -v ON_ERROR_STOP=1 -f setup.sql "$U" >/dev/null
set_gin() { # $1: a storage-parameter list for both indexes, or "none"
  psql -q "$U" -c "DROP INDEX IF EXISTS idx_risks_title_trgm; DROP INDEX IF EXISTS idx_risks_description_trgm"
  [ "$1" = none ] && return
  psql -q "$U" -c "CREATE INDEX idx_risks_title_trgm ON risks USING gin (title gin_trgm_ops) $1;
    CREATE INDEX idx_risks_description_trgm ON risks USING gin (description gin_trgm_ops) $1"
}
declare -A sum
names=(default fastupdate_off pending_32mb no_trigram)
opts=("" "WITH (fastupdate = off)" "WITH (gin_pending_list_limit = 32768)" none)
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for i in "${!names[@]}"; do
    set_gin "${opts[$i]}"
    psql -q -c "VACUUM ANALYZE risks" "$U"
    tps=$($PGB -n -M prepared -c 16 -j 2 -T "$SECS" -f risk-insert.sql "$U" 2>&1 | awk '/^tps/ {print $3; exit}')
    sum[${names[$i]}]=$(awk -v a="${sum[${names[$i]}]:-0}" -v b="$tps" 'BEGIN {print a + b}')
    echo "round $r ${names[$i]}: $tps/s"
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${names[@]}"; do
  awk -v n="$n" -v s="${sum[$n]}" -v d="${sum[default]}" -v r="$ROUNDS" 'BEGIN {printf "%-15s %8.0f/s  %.2fx of default\n", n, s / r, s / d}'
done

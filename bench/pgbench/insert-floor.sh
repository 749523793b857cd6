#!/usr/bin/env bash
# The floor of the unkeyed write's own statement (issue 26, docs/performance.md): the
# time per risk INSERT (autocommit, 1 client, round trip included) with the schema as
# migrated, then with its parts removed one by one: the trigram GIN indexes, the
# heat-count triggers, every other secondary index. Usage: insert-floor.sh API_BINARY
# (a fresh database riskapi_m26_ins_PID beside $PG_URL's, default
# postgres://postgres@127.0.0.1:5432/postgres, dropped at the end; pgbench from
# $PGBIN, else PATH).
set -euo pipefail
cd "$(dirname "$0")"
API=$1; PGB=${PGBIN:+$PGBIN/}pgbench DB=riskapi_m26_ins_$$
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
U=${PG_URL/\/postgres\?//$DB?}
[ "$U" != "$PG_URL" ] || { echo "$0: PG_URL must name the database postgres (…/postgres?…)" >&2; exit 2; }
psql -q "$PG_URL" -c "CREATE DATABASE $DB"
trap 'psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
DATABASE_URL="$U" "$API" migrate >/dev/null
psql -q -v ON_ERROR_STOP=1 -f setup.sql "$U" >/dev/null
measure() {
  local name=$1 load; load=$(cut -d' ' -f1 /proc/loadavg)
  psql -q -c "VACUUM ANALYZE risks" "$U"
  local out; out=$($PGB -n -M prepared -c 1 -j 1 -T 15 -f risk-insert.sql "$U" 2>&1)
  local tps; tps=$(echo "$out" | awk '/^tps/ {print $3; exit}')
  echo "$name | $(awk -v t="$tps" 'BEGIN {printf "%.0f µs per INSERT (%.0f/s)", 1e6/t, t}') | load $load"
}
measure "as migrated (13 indexes incl. 2 trigram GIN, heat-count trigger)"
measure "as migrated, again"
psql -q -c "DROP INDEX idx_risks_title_trgm; DROP INDEX idx_risks_description_trgm" "$U"
measure "without the 2 trigram GIN indexes"
for t in $(psql -At -c "SELECT tgname FROM pg_trigger WHERE tgrelid='risks'::regclass AND NOT tgisinternal" "$U"); do psql -q -c "DROP TRIGGER $t ON risks" "$U"; done
measure "also without the heat-count triggers"
for i in $(psql -At -c "SELECT indexrelid::regclass FROM pg_index WHERE indrelid='risks'::regclass AND NOT indisprimary AND NOT indisunique" "$U"); do psql -q -c "DROP INDEX $i" "$U"; done
measure "also without every other secondary index (primary key and unique externalId kept)"

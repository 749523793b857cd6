#!/usr/bin/env bash
# Issue 26's figures in one run, on the current tree: one markdown table with, per
# row, the goal, the figure as a ratio against a baseline measured in the same run
# (or against the goal where the issue's goal is an absolute bound), the 1-minute
# load average at the start and end of that row's run, and whether the goal is met.
# docs/performance.md ("bench/issue26.sh: every goal in one run") says what each row
# group runs and what each goal is for.
#
#   bench/issue26.sh [--quick] [--only ROW] [--skip ROW]… [--register] [--out FILE]
#                    [--peer-src DIR]
#
#   --quick     a smoke run at small scale (a few minutes); default: the issue's scale
#   --only ROW  one row group: floor prepared sqlite cpu peer webhook audit versions reqlog
#               ratelimit dashboard register
#   --skip ROW  leave a row group out (repeatable)
#   --register  also the register at size (1 M + 9 × 100 k risks; 10–20 min per store
#               and benchmark at full scale); off by default, on with --only register
#   --out FILE  also write the table to FILE
#   --peer-src  gopotency's source, a checkout of github.com/fco-gt/gopotency
#               (or $PEER_SRC); required by the peer row group: without it the
#               script stops before running anything (or give --skip peer)
#
# Needs: go, psql and pgbench, PostgreSQL on $PG_URL (trust), Redis on
# 127.0.0.1:6379, npm dependencies (npm ci) and Chromium for the dashboard row; for
# the CPU row, initdb and pg_ctl in $PGBIN (default: pg_config --bindir) and root
# (the private cluster runs as the postgres user). Creates and drops its own
# databases (riskapi_m26_*), starts a private PostgreSQL cluster with
# pg_stat_statements for the CPU row, and stops only the processes it started. The
# whole run holds the lock file $HEAVY_LOCK (default /tmp/riskapi-heavy.lock).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
args=("$@")
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
# initdb and pg_ctl (the CPU row's private cluster) are often off PATH (Debian keeps
# them in a versioned folder that pg_config names)
PGBIN=${PGBIN:-$(pg_config --bindir 2>/dev/null || true)}
export PATH="${PGBIN:+$PGBIN:}$PATH" PGOPTIONS="-c client_min_messages=warning"
quick=0 only="" skip=" " register=0 out="" peersrc=${PEER_SRC:-}
groups=" floor prepared sqlite cpu peer webhook audit versions reqlog ratelimit dashboard register "
known() { case "$groups" in *" $2 "*) ;; *) echo "issue26: $1: unknown row group $2" >&2; exit 2 ;; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --only) only=$2; known --only "$only"; shift ;;
    --skip) known --skip "$2"; skip="$skip$2 "; shift ;;
    --register) register=1 ;;
    --out) out=$2; shift ;;
    --peer-src) peersrc=$2; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "issue26: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$only" = register ] && register=1
want() { case "$skip" in *" $1 "*) return 1 ;; esac; [ -z "$only" ] || [ "$only" = "$1" ]; }
# The peer is built from gopotency's source, which the Go module proxy does not
# serve: the caller names a checkout, checked here before anything runs.
if want peer; then
  if [ -z "$peersrc" ]; then
    echo "issue26: the peer row group needs gopotency's source: give --peer-src DIR or PEER_SRC=DIR" >&2
    echo "issue26: (git clone https://github.com/fco-gt/gopotency DIR), or leave the peer out with --skip peer" >&2
    exit 2
  fi
  grep -qs '^module github.com/fco-gt/gopotency$' "$peersrc/go.mod" ||
    { echo "issue26: --peer-src $peersrc: no go.mod of module github.com/fco-gt/gopotency there" >&2; exit 2; }
  peersrc=$(cd "$peersrc" && pwd)
fi
if want cpu && ! command -v initdb >/dev/null; then
  echo "issue26: the cpu row group needs initdb and pg_ctl: set PGBIN to their folder, or give --skip cpu" >&2
  exit 2
fi

# The arguments are checked before the wait, which can be long.
HEAVY_LOCK=${HEAVY_LOCK:-/tmp/riskapi-heavy.lock}
if [ -z "${M26_LOCKED:-}" ]; then
  echo "issue26: waiting for $HEAVY_LOCK" >&2
  exec env M26_LOCKED=1 flock "$HEAVY_LOCK" "$0" "${args[@]}"
fi

# Scale. Full: the issue's sizes; loadgen 3 rounds of up to 3000 requests (30 s) per kind.
if [ $quick = 1 ]; then
  LG=(--rounds 1 --requests 300 --duration 10s --warmup 50 --progress 0)
  PGT=2s RACES=5 AB=(on off) PATCHES=200x RLN=300x FIRSTLOAD_N=1 PREP_LG=()
  REG_ROWS=20000 REG_CALLS=20x EXPORT_ROWS=20000 IMPORT_ROWS=5000
else
  LG=(--rounds 3 --requests 3000 --duration 30s --warmup 300 --progress 0)
  PGT=10s RACES=20 AB=(on off off on) PATCHES=3000x RLN=1500x FIRSTLOAD_N=5
  REG_ROWS=1000000 REG_CALLS=200x EXPORT_ROWS=1000000 IMPORT_ROWS=100000
  # the prepared row compares two equal settings, so its figure is the machine's noise
  # around 1.0: 3,000 requests (3–4 s a phase) left it ±10 %; 8,000 make a phase ~10 s
  PREP_LG=(--requests 8000)
fi

T=$(mktemp -d /tmp/m26.XXXXXX)
chmod 711 "$T" # the private cluster's postgres user must reach its folder inside
rows=$T/rows.md
: >"$rows"
dbs=() pids=() cluster=""
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  for d in "${dbs[@]}"; do psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1; done
  [ -n "$cluster" ] && runuser -u postgres -- pg_ctl -D "$cluster/data" -m fast stop >/dev/null 2>&1
  rm -rf "$T"
}
trap cleanup EXIT
# An interrupt stops the run (cleanup still runs): a row measured half-way is no row.
trap 'log "interrupted"; exit 130' INT TERM

la() { cut -d' ' -f1 /proc/loadavg; }
log() { echo "issue26: $*" >&2; }
# row GOAL FIGURE LOAD_START LOAD_END MET
row() { printf '| %s | %s | %s → %s | %s |\n' "$1" "$2" "$3" "$4" "$5" >>"$rows"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "n/a" && a != "" && a + 0 >= b + 0) }' && echo yes || echo no; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "n/a" && a != "" && a + 0 <= b + 0) }' && echo yes || echo no; }
newdb() { # a fresh database on the shared cluster; echoes its URL
  local d=riskapi_m26_$1_$$
  psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" -c "CREATE DATABASE $d" >/dev/null
  dbs+=("$d")
  echo "${PG_URL/\/postgres\?//$d?}"
}
dropdb_() { psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS riskapi_m26_$1_$$ WITH (FORCE)" >/dev/null; }
# loadgen's report: throughput of a kind, and a value after a label
tp() { awk -v k="$1" '$1 == k && NF == 9 { print $5 }' "$2"; }
after() { sed -n "s/.*$1 *\([0-9.]*\).*/\1/p" "$2" | head -1; }
# a go benchmark's metric: metric FILE UNIT [NAME-FILTER]
metric() { awk -v u="$2" -v f="${3:-}" '/^Benchmark/ && index($1, f) { for (i = 2; i <= NF; i++) if ($i == u) v = $(i - 1) } END { print v }' "$1"; }
r2() { awk -v a="$1" 'BEGIN { if (a == "") print "n/a"; else printf "%.2f", a }'; } # a ratio to two decimals

cd "$here"
log "building into $T/bin"
mkdir -p "$T/bin"
go build -o "$T/bin/api" ./cmd/api
go build -o "$T/bin/loadgen" ./cmd/loadgen
testbin() { # testbin NAME PKG: the package's test binary, built once
  [ -x "$T/bin/$1.test" ] || go test -c -o "$T/bin/$1.test" "$2"
  echo "$T/bin/$1.test"
}
# runbench NAME PKG OUT [env…] -- [test flags…]: the package's benchmark, run in its folder
runbench() {
  local name=$1 pkg=$2 outf=$3 bin; shift 3
  bin=$(testbin "$name" "$pkg")
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  (cd "$pkg" && env -u TEST_DATABASE_URL "${envs[@]}" "$bin" -test.run '^$' -test.timeout 120m "$@") >"$outf" 2>&1 ||
    { log "$name failed:"; tail -n 20 "$outf" >&2; }
}
PGT_ENV="TEST_DATABASE_URL=$PG_URL"
loadgen() { "$T/bin/loadgen" "$@"; }

# --- the floor: riskapi keyed/unkeyed against the one-call design's, 1/16/64 clients;
#     replay ÷ first execution on PostgreSQL from the 16-client run
if want floor; then
  for c in 1 16 64; do
    # pgbench writes a database of its own, so that riskapi's sweeps never fold its rows'
    # heat-count deltas in riskapi's phases
    url=$(newdb floor$c) pgburl=$(newdb floorpgb$c)
    DATABASE_URL=$pgburl "$T/bin/api" migrate >/dev/null 2>&1
    extra=()
    # 64 pgbench clients + riskapi's pool of 32 exceed max_connections (100)
    [ $c = 64 ] && extra=(--env DATABASE_MAX_CONNS=16)
    s=$(la); f=$T/floor$c.txt
    log "floor, $c clients"
    loadgen --api-bin "$T/bin/api" --spawn 1 --clients $c "${LG[@]}" "${extra[@]}" --kinds unkeyed,keyed,replay \
      --database-url "$url" --pgbench bench/pgbench --pgbench-database-url "$pgburl" --pgbench-time $PGT >"$f" 2>"$f.err" || log "loadgen floor $c: see below"; e=$(la)
    ku=$(ratio "$(tp keyed "$f")" "$(tp unkeyed "$f")")
    oc=$(after 'one-call keyed \/ floor unkeyed' "$f")
    r=$(ratio "$ku" "$oc")
    row "floor, PostgreSQL, $c client(s): riskapi keyed/unkeyed within 5 % of the one-call design's (≥ 0.95)" \
      "**$r** (riskapi $ku ÷ one-call $oc; riskapi's own statements $(after 'pgbench floor keyed\/unkeyed' "$f"))" "$s" "$e" "$(ge "$r" 0.95)"
    if [ $c = 16 ]; then
      rp=$(ratio "$(tp replay "$f")" "$(tp keyed "$f")")
      row "replay ÷ first execution, PostgreSQL, 16 clients (≥ 3×; same run as the floor's)" "**$rp×** ($(tp replay "$f") ÷ $(tp keyed "$f") req/s)" "$s" "$e" "$(ge "$rp" 3)"
    fi
    grep -q 'result: OK' "$f" || { log "floor $c: loadgen did not pass:"; tail -n 15 "$f" "$f.err" >&2; }
    dropdb_ floor$c; dropdb_ floorpgb$c
  done
fi

# --- the default URL against the same URL naming prepared statements itself
#     (default_query_exec_mode=cache_statement), and against DATABASE_POOLER=transaction
#     (what a pooler needs), 16 clients, alternated on fresh databases (issue 44)
if want prepared; then
  s=$(la); i=0
  declare -A psum=()
  for ab in "${AB[@]}"; do
    # ABBA: a round's order turns with AB, so that no mode always runs first, right
    # after the floor's 64 clients (a fixed order measured the machine's drift).
    order=(default prepared pooler)
    [ "$ab" = off ] && order=(pooler prepared default)
    for mode in "${order[@]}"; do
      i=$((i + 1)); url=$(newdb prep$i); extra=()
      # each run starts from clean buffers: the one before it leaves no dirty pages
      psql -q "$PG_URL" -c CHECKPOINT >/dev/null
      case $mode in
        prepared) url="$url&default_query_exec_mode=cache_statement" ;;
        pooler) extra=(--env DATABASE_POOLER=transaction) ;;
      esac
      f=$T/prepared-$mode-$i.txt
      log "prepared statements: $mode ($ab)"
      loadgen --api-bin "$T/bin/api" --spawn 1 --clients 16 "${LG[@]}" "${PREP_LG[@]}" "${extra[@]}" --kinds unkeyed,keyed \
        --database-url "$url" >"$f" 2>"$f.err" || { log "loadgen prepared $mode failed"; tail -n 15 "$f" "$f.err" >&2; }
      dropdb_ prep$i
      for k in unkeyed keyed; do psum[$mode-$k]=$(awk -v a="${psum[$mode-$k]:-0}" -v b="$(tp $k "$f")" 'BEGIN { print a + b }'); done
    done
  done
  e=$(la)
  u=$(ratio "${psum[default-unkeyed]}" "${psum[prepared-unkeyed]}") k=$(ratio "${psum[default-keyed]}" "${psum[prepared-keyed]}")
  pu=$(ratio "${psum[pooler-unkeyed]}" "${psum[default-unkeyed]}") pk=$(ratio "${psum[pooler-keyed]}" "${psum[default-keyed]}")
  m=$( [ "$(ge "$u" 0.95)" = yes ] && [ "$(ge "$k" 0.95)" = yes ] && echo yes || echo no)
  row "default URL ÷ the URL with default_query_exec_mode=cache_statement, 16 clients, PostgreSQL (≥ 0.95×)" \
    "unkeyed **$u**, keyed **$k** (${#AB[@]} rounds each; DATABASE_POOLER=transaction ÷ default: unkeyed $pu, keyed $pk)" "$s" "$e" "$m"
  unset psum
fi

# --- replay ÷ first execution on SQLite
if want sqlite; then
  mkdir -p "$T/sqlite"
  s=$(la); f=$T/sqlite.txt
  log "SQLite, 16 clients"
  loadgen --api-bin "$T/bin/api" --spawn 1 --clients 16 "${LG[@]}" --kinds unkeyed,keyed,replay \
    --database-url "sqlite://$T/sqlite/riskapi.db" >"$f" 2>"$f.err" || { log "loadgen sqlite failed"; tail -n 15 "$f" "$f.err" >&2; }
  e=$(la)
  rp=$(ratio "$(tp replay "$f")" "$(tp keyed "$f")")
  row "replay ÷ first execution, SQLite, 16 clients (≥ 4×)" "**$rp×** ($(tp replay "$f") ÷ $(tp keyed "$f") req/s; keyed/unkeyed $(ratio "$(tp keyed "$f")" "$(tp unkeyed "$f")"))" "$s" "$e" "$(ge "$rp" 4)"
fi

# --- server + PostgreSQL CPU per unkeyed write, on a private cluster with
#     pg_stat_statements (the shared one does not preload it) where nothing else
#     connects; the floor is PostgreSQL's CPU for riskapi's own statements (below)
if want cpu; then
  cluster=$T/pg; mkdir -p "$cluster"; chown postgres "$cluster"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  runuser -u postgres -- initdb -D "$cluster/data" -U postgres -A trust >"$T/initdb.log" 2>&1
  runuser -u postgres -- pg_ctl -D "$cluster/data" -l "$cluster/log" -w start \
    -o "-p $port -k $cluster -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements -c max_connections=100 -c autovacuum=off" >/dev/null
  purl="postgres://postgres@127.0.0.1:$port/riskapi_m26_cpu?sslmode=disable"
  pgburl=${purl/riskapi_m26_cpu/riskapi_m26_cpupgb} # pgbench's own database, as in the floor's rows
  psql -q "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable" -c 'CREATE DATABASE riskapi_m26_cpu' \
    -c 'CREATE DATABASE riskapi_m26_cpupgb' >/dev/null
  psql -q "$purl" -c 'CREATE EXTENSION pg_stat_statements' >/dev/null
  DATABASE_URL=$pgburl "$T/bin/api" migrate >/dev/null 2>&1
  s=$(la); f=$T/cpu.txt
  log "CPU per write, 16 clients (private cluster on port $port)"
  loadgen --api-bin "$T/bin/api" --spawn 1 --clients 16 "${LG[@]}" --kinds unkeyed,keyed,replay \
    --database-url "$purl" --pgbench bench/pgbench --pgbench-database-url "$pgburl" --pgbench-time $PGT >"$f" 2>"$f.err" || { log "loadgen cpu failed"; tail -n 15 "$f" "$f.err" >&2; }
  e=$(la)
  # the floor of PostgreSQL's share: its backends' CPU per transaction when pgbench sends
  # riskapi's own two statements of an unkeyed write (bench/pgbench/unkeyed.sql), with
  # no server in between, in rounds between loadgen's, on a database of its own, the
  # backends' start taken off (loadgen's floor.go); autovacuum is off in this cluster,
  # so no worker ending in a pgbench run adds its CPU to the floor
  pgf=$(sed -n 's/.*pgbench database CPU per transaction, unkeyed \/ keyed *\([0-9]*\)µs.*/\1/p' "$f")
  cpu=$(sed -n 's/.*server+database CPU per request, unkeyed \/ keyed \/ replay *\([0-9]*\)µs.*/\1/p' "$f")
  srv=$(sed -n 's/.*server CPU per request, unkeyed \/ keyed \/ replay *\([0-9]*\)µs.*/\1/p' "$f")
  # the statement that inserts the risk (with its event and audit entry, one statement
  # on PostgreSQL): the most called statement naming the risks table in an INSERT
  ins=$(psql -Atq "$purl" -c "SELECT round((mean_exec_time * 1000)::numeric) FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND query ILIKE '%insert into%risks%' ORDER BY calls DESC LIMIT 1")
  psql -Atq "$purl" -c "SELECT calls, round((mean_exec_time * 1000)::numeric), left(regexp_replace(query, '\s+', ' ', 'g'), 100)
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT 8" >"$T/cpu-statements.txt" 2>&1
  log "CPU: pg_stat_statements, top statements (calls | mean µs | text):"; cat "$T/cpu-statements.txt" >&2
  runuser -u postgres -- pg_ctl -D "$cluster/data" -m fast stop >/dev/null; cluster=""
  r=$(ratio "$cpu" 800) db=$(awk -v a="$cpu" -v b="$srv" 'BEGIN { print (a == "" || b == "") ? "" : a - b }')
  row "server + PostgreSQL CPU per unkeyed write, 16 clients (≤ 800 µs)" \
    "**${cpu} µs** = $r× the goal (server ${srv} µs, PostgreSQL ${db:-n/a} µs). **Floor:** PostgreSQL's CPU for the same two statements sent by pgbench, ${pgf:-n/a} µs per write = $(ratio "$pgf" 800)× the goal; riskapi's PostgreSQL share $(ratio "$db" "$pgf")× that floor. The risk's statement: ${ins} µs per call (pg_stat_statements, wall clock at 16 clients)" "$s" "$e" "$(le "$cpu" 800)"
fi

# --- the peer: gopotency (bench/peer) on its own schema, then writing riskapi's rows,
#     and riskapi, each on its own database, in alternated slices: one slice of each
#     design, then the next, so drift in the machine's load falls on all three alike
#     (a replay slice lasts seconds; one run each, back to back, saw the peer's replay
#     vary 3180–4835 req/s between runs). Each figure is the median of its slices.
if want peer; then
  PEER_BIN=$T/bin/peer bench/peer/run.sh "$peersrc"
  # Longer slices than LG's for the replay: at 3000 requests it lasted under a second.
  if [ $quick = 1 ]; then SLICES=2 LP=(--rounds 1 --requests 300 --duration 5s --warmup 50 --progress 0)
  else SLICES=3 LP=(--rounds 1 --requests 20000 --duration 10s --warmup 300 --progress 0); fi
  L=(--clients 16 "${LP[@]}" --kinds unkeyed,keyed,replay --race-width 16)
  s=$(la)
  export PEER_API_KEY=pk_$(openssl rand -hex 12)
  pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  peerurl=$(newdb peer) peersurl=$(newdb peers) peerrurl=$(newdb peerr) peerqurl=$(newdb peerq) peerlurl=$(newdb peerl)
  # -riskapi-schema writes into riskapi's own tables, which `api migrate` makes.
  DATABASE_URL=$peersurl "$T/bin/api" migrate >/dev/null 2>&1
  DATABASE_URL=$peerlurl "$T/bin/api" migrate >/dev/null 2>&1
  # slice NAME I RACES: one slice of a design into $T/NAME.I.txt; the peers start on
  # their database and stop after it, as riskapi's instance does under loadgen --spawn.
  slice() {
    local name=$1 i=$2 races=$3 url flags=()
    case $name in
      peerr)
        loadgen --api-bin "$T/bin/api" --spawn 1 --database-url "$peerrurl" "${L[@]}" --races "$races" \
          >"$T/$name.$i.txt" 2>"$T/$name.$i.txt.err" || true
        return ;;
      peerq) # riskapi without its request log, which the peer does not keep: that log's share
        loadgen --api-bin "$T/bin/api" --spawn 1 --database-url "$peerqurl" --env REQUEST_LOG=off "${L[@]}" --races 0 \
          >"$T/$name.$i.txt" 2>"$T/$name.$i.txt.err" || true
        return ;;
      peer) url=$peerurl ;;
      peers) url=$peersurl flags=(-riskapi-schema) ;;
      # the same keeping riskapi's request log as riskapi does: the replay's floor
      peerl) url=$peerlurl flags=(-riskapi-schema -request-log) ;;
    esac
    DATABASE_URL=$url "$T/bin/peer" -addr 127.0.0.1:$pport "${flags[@]}" >>"$T/$name.log" 2>&1 &
    ppid=$!; pids+=("$ppid")
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$pport/" && break; sleep 0.1; done
    loadgen --targets http://127.0.0.1:$pport --api-key "$PEER_API_KEY" "${L[@]}" --races "$races" \
      >"$T/$name.$i.txt" 2>"$T/$name.$i.txt.err" || true
    kill "$ppid"; wait "$ppid" 2>/dev/null || true; pids=()
  }
  for i in $(seq "$SLICES"); do
    # Races in the last slice only: they count risks, not time.
    races=0; [ "$i" = "$SLICES" ] && races=$RACES
    log "peer slice $i of $SLICES: gopotency, gopotency writing riskapi's rows, the same keeping riskapi's request log, riskapi, riskapi with REQUEST_LOG=off (16 clients)"
    for name in peer peers peerl peerr peerq; do slice "$name" "$i" "$races"; done
  done
  dropdb_ peer; dropdb_ peers; dropdb_ peerl; dropdb_ peerr; dropdb_ peerq
  e=$(la)
  # med KIND NAME: the median over NAME's slices of KIND's req/s
  med() { for f in "$T/$2".*.txt; do tp "$1" "$f"; done | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
  # spread KIND PEER: the lowest and highest of riskapi ÷ PEER slice by slice
  spread() {
    for i in $(seq "$SLICES"); do ratio "$(tp "$1" "$T/peerr.$i.txt")" "$(tp "$1" "$T/$2.$i.txt")"; echo; done |
      grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s–%s", lo, hi }'
  }
  # cmp PEER LABEL: the three goals against one peer
  cmp() {
    local kind goal r
    for kind in keyed unkeyed replay; do
      case $kind in keyed) goal=1.5 ;; unkeyed) goal=1 ;; replay) goal=0.8 ;; esac
      r=$(ratio "$(med $kind peerr)" "$(med $kind "$1")")
      row "$2: riskapi $kind ÷ gopotency $kind, 16 clients, PostgreSQL (≥ ${goal}×)" \
        "**$r×** (medians of $SLICES alternated slices: $(med $kind peerr) ÷ $(med $kind "$1") req/s; slice by slice $(spread $kind "$1")×)" \
        "$s" "$e" "$(ge "$r" "$goal")"
    done
  }
  cmp peer "peer"
  cmp peers "peer writing riskapi's rows (-riskapi-schema)"
  # Not a goal: how much of the replay's gap is the request log (docs/requests.md).
  row "not a goal: riskapi with REQUEST_LOG=off, replay ÷ each peer's (the peers keep no request log)" \
    "**$(ratio "$(med replay peerq)" "$(med replay peer)")×** and **$(ratio "$(med replay peerq)" "$(med replay peers)")×** ($(med replay peerq) req/s; with the log $(med replay peerr))" \
    "$s" "$e" "—"
  # The replay's floor: the contract's request log (docs/requests.md) is work the peers
  # do not do. The peer writing riskapi's rows and keeping that log as riskapi keeps it
  # (bench/peer/requestlog.go), over the same peer without it, is the most the replay
  # goal against the peer can reach with the log; riskapi over that peer is what
  # riskapi's own design adds or saves beside it.
  fl=$(ratio "$(med replay peerl)" "$(med replay peers)") rl=$(ratio "$(med replay peerr)" "$(med replay peerl)")
  row "the replay's floor against the peer writing riskapi's rows (its goal ≥ 0.8×): that peer keeping riskapi's request log ÷ without it" \
    "**$fl×** ($(med replay peerl) ÷ $(med replay peers) req/s); riskapi ÷ the peer keeping the log: replay **$rl×**, keyed $(ratio "$(med keyed peerr)" "$(med keyed peerl)")×, unkeyed $(ratio "$(med unkeyed peerr)" "$(med unkeyed peerl)")× (slice by slice, replay $(spread replay peerl)×)" \
    "$s" "$e" "—"
  races() { sed -n 's/.*risks created: \([0-9]*\) for \([0-9]*\) races.*/\1 for \2/p' "$1"; }
  rr=$(races "$T/peerr.$SLICES.txt") pr=$(races "$T/peer.$SLICES.txt")
  row "same-key races, $RACES × 16 requests: risks created (exactly-once: one per race)" "riskapi $rr, gopotency $pr" "$s" "$e" \
    "$(awk -v a="$rr" 'BEGIN { split(a, x, " for "); exit !(x[1] != "" && x[1] == x[2]) }' && echo yes || echo no)"
fi

# --- one subscribed webhook endpoint (BenchmarkEventDelivery: 8 rounds of 1 s slices)
if want webhook; then
  for st in sqlite postgres; do
    envs=(); [ $st = postgres ] && envs=("$PGT_ENV")
    s=$(la); f=$T/webhook-$st.txt
    log "webhook endpoint, $st"
    runbench eventhttp ./internal/events/eventhttp "$f" "${envs[@]}" -- -test.bench EventDelivery -test.benchtime 1x
    e=$(la); r=$(r2 "$(metric "$f" one/none)"); floor=""
    if [ $st = sqlite ]; then
      # The floor at SQLite's one write lock: the same benchmark in a build whose
      # write gate sums its hold times (build tag writegatestats).
      [ -x "$T/bin/eventhttp-gate.test" ] || go test -tags writegatestats -c -o "$T/bin/eventhttp-gate.test" ./internal/events/eventhttp
      (cd ./internal/events/eventhttp && env -u TEST_DATABASE_URL "$T/bin/eventhttp-gate.test" -test.run '^$' -test.bench EventDelivery -test.benchtime 1x) >"$T/webhook-floor.txt" 2>&1
      floor="; floor at the write lock $(r2 "$(metric "$T/webhook-floor.txt" lock-floor)") (lock per write $(metric "$T/webhook-floor.txt" 'lock-µs/write-none') ÷ $(metric "$T/webhook-floor.txt" 'lock-µs/write-one') µs), load $(la) at its end"
    fi
    row "one subscribed webhook endpoint ÷ none, keyed writes, 16 clients, $st (≥ 0.9×)" "**$r** (share of a slice's events undelivered at its end $(r2 "$(metric "$f" backlog-at-end)"), lag p50 $(metric "$f" lag-p50-ms) ms$floor)" "$s" "$e" "$(ge "$r" 0.9)"
  done
fi

# --- the audit log: the same tree with and without its recorder (build tag
#     riskapi_noaudit), alternated, each run on a fresh database
if want audit; then
  go build -tags riskapi_noaudit -o "$T/bin/api-noaudit" ./cmd/api
  for st in sqlite postgres; do
    s=$(la); i=0
    declare -A sum=([on-unkeyed]=0 [on-keyed]=0 [off-unkeyed]=0 [off-keyed]=0)
    for ab in "${AB[@]}"; do
      i=$((i + 1)); bin=$T/bin/api; [ $ab = off ] && bin=$T/bin/api-noaudit
      if [ $st = sqlite ]; then mkdir -p "$T/aud$i"; url=sqlite://$T/aud$i/riskapi.db; else url=$(newdb aud$i); fi
      f=$T/audit-$st-$i.txt
      log "audit $ab, $st"
      loadgen --api-bin "$bin" --spawn 1 --clients 16 "${LG[@]}" --kinds unkeyed,keyed --database-url "$url" >"$f" 2>"$f.err" ||
        { log "loadgen audit failed"; tail -n 15 "$f" "$f.err" >&2; }
      [ $st = postgres ] && dropdb_ aud$i
      for k in unkeyed keyed; do sum[$ab-$k]=$(awk -v a="${sum[$ab-$k]}" -v b="$(tp $k "$f")" 'BEGIN { print a + b }'); done
    done
    e=$(la)
    u=$(ratio "${sum[on-unkeyed]}" "${sum[off-unkeyed]}") k=$(ratio "${sum[on-keyed]}" "${sum[off-keyed]}")
    m=$( [ "$(ge "$u" 0.9)" = yes ] && [ "$(ge "$k" 0.9)" = yes ] && echo yes || echo no)
    row "audit log on ÷ off (same tree, tag riskapi_noaudit), 16 clients, $st (≥ 0.9×)" "unkeyed **$u**, keyed **$k** (runs ${AB[*]})" "$s" "$e" "$m"
    unset sum
  done
fi

# --- versions: no build writes without them (the version is a column every write
#     bumps), so this is what docs measure: PATCH with If-Match against without
#     (BenchmarkConditionalPatch, 1 client, interleaved); throughput ratio = plain/conditional latency
if want versions; then
  for st in sqlite postgres; do
    envs=(); [ $st = postgres ] && envs=("$PGT_ENV")
    s=$(la); f=$T/versions-$st.txt
    log "versions (conditional PATCH), $st"
    runbench riskhttp ./internal/risks/riskhttp "$f" "${envs[@]}" -- -test.bench ConditionalPatch -test.benchtime $PATCHES
    e=$(la); c=$(metric "$f" conditional/plain); r=$(ratio 1 "$c")
    row "versions: PATCH with If-Match ÷ without, throughput (1/latency), 1 client, $st (≥ 0.9×; no build without versions exists)" "**$r**" "$s" "$e" "$(ge "$r" 0.9)"
  done
fi

# --- the request log (BenchmarkRequestLogThroughput: one server, log on and off by turns)
if want reqlog; then
  for st in sqlite postgres; do
    envs=(); [ $st = postgres ] && envs=("$PGT_ENV")
    s=$(la); f=$T/reqlog-$st.txt
    log "request log, $st"
    runbench requestloghttp ./internal/requestlog/requestloghttp "$f" "${envs[@]}" -- -test.bench RequestLogThroughput -test.benchtime 1x
    e=$(la); u=$(r2 "$(metric "$f" unkeyed-on/off)") k=$(r2 "$(metric "$f" keyed-on/off)")
    m=$( [ "$(ge "$u" 0.95)" = yes ] && [ "$(ge "$k" 0.95)" = yes ] && echo yes || echo no)
    row "request log on ÷ off, 16 clients, $st (≥ 0.95×)" "unkeyed **$u**, keyed **$k**" "$s" "$e" "$m"
  done
fi

# --- Redis rate limiting for quiet keys (BenchmarkRateLimitCost, SQLite, 1 client)
if want ratelimit; then
  s=$(la); f=$T/ratelimit.txt
  log "rate limit"
  runbench server ./internal/server "$f" -- -test.bench RateLimitCost -test.benchtime $RLN
  e=$(la); q=$(r2 "$(metric "$f" redis/off 8-quiet-keys)")
  row "Redis rate limit, 8 quiet keys: latency ÷ limits off, SQLite, 1 client (≤ 1.05×)" \
    "**$q** (in-memory limit ÷ off $(r2 "$(metric "$f" memory/off 8-quiet-keys)"); busy key redis ÷ off $(r2 "$(metric "$f" redis/off busy-key)"))" "$s" "$e" "$(le "$q" 1.05)"
fi

# --- the dashboard: first load and sign-in time (web/e2e/firstload.test.ts, SQLite)
if want dashboard; then
  s=$(la); f=$T/dashboard.txt
  log "dashboard first load ($FIRSTLOAD_N runs)"
  (cd web && env -u TEST_DATABASE_URL FIRSTLOAD_RUNS=$FIRSTLOAD_N npx vitest run --config vitest.e2e.config.ts e2e/firstload.test.ts) >"$f" 2>&1 ||
    { log "dashboard e2e failed"; tail -n 30 "$f" >&2; }
  e=$(la)
  kb=$(sed -n 's/.*first load, signed out: \([0-9.]*\) KB.*/\1/p' "$f" | head -1)
  med=$(sed -n 's/.*sign-in form usable.*this build: median \([0-9]*\) ms of \([0-9]*\) runs \(\[[^]]*\]\).*/\1 \2 \3/p' "$f" | head -1)
  r=$(ratio "$kb" 25)
  row "dashboard first load, signed out, gzip, web/dist as in the tree (≤ 25 KB)" "**${kb} KB** = $r× the budget" "$s" "$e" "$(le "$kb" 25)"
  ms=${med%% *}; r=$(ratio "$ms" 1000)
  row "sign-in form usable, 150 ms RTT + 4× CPU, Chromium (< 1 s, median)" "**${ms} ms** = $r× the goal (median of $(echo "$med" | cut -d' ' -f2) runs: $(echo "$med" | cut -d' ' -f3-))" "$s" "$e" "$(le "$ms" 999.999)"
fi

# --- the register at size (opt-in: --register or --only register)
if [ $register = 1 ] && want register; then
  for st in sqlite postgres; do
    envs=(); goal=150; [ $st = postgres ] && { envs=("$PGT_ENV"); goal=50; }
    s=$(la); f=$T/regq-$st.txt
    log "register reads, $st, $REG_ROWS + 9 × $((REG_ROWS / 10)) risks"
    runbench riskstore ./internal/risks/riskstore "$f" "${envs[@]}" REGISTER_BENCH_ROWS=$REG_ROWS -- -test.bench RegisterQueries -test.benchtime $REG_CALLS
    e=$(la)
    # the worst case's p99 and every case over the goal, in two groups: the reads the
    # heat-map counts or an index walk answer, and the heat maps whose filter the counts
    # cannot answer (*_scan), which count the selected rows; beside the worst of those,
    # its floor (*_scan_floor: the same rows and factors read, not grouped)
    for grp in indexed scan; do
      worst=$(awk -v g=$goal -v grp=$grp '/^BenchmarkRegisterQueries\// { for (i = 2; i <= NF; i++) if ($i == "p99-ms") { c = $1; sub(/^BenchmarkRegisterQueries\//, "", c); sub(/-[0-9]+$/, "", c)
                if (c ~ /_floor$/) { fl[c] = $(i-1); continue }
                if ((c ~ /_scan$/) != (grp == "scan")) continue; n++
                if ($(i-1) + 0 >= g) over = over " " c " " $(i-1); if ($(i-1) + 0 > w) { w = $(i-1) + 0; wc = c } } }
              END { f = fl[wc "_floor"]; printf "%s %s %s; %d cases, over the goal:%s", w, (f == "" ? "n/a" : f), wc, n, (over == "" ? " none" : over) }' "$f")
      p=${worst%% *} rest=${worst#* } r=$(ratio "${worst%% *}" $goal)
      fp=${rest%% *} rest=${rest#* }
      what="lists, sorts, q and heat maps by their counts" floor=""
      if [ $grp = scan ]; then
        what="heat maps with a filter the counts cannot answer (they count the rows)"
        floor="; **floor:** the same rows and factors read, not grouped, $fp ms = $(ratio "$fp" $goal)× the goal; the heat map $(ratio "$p" "$fp")× its floor"
      fi
      row "register reads, $REG_ROWS + 9 × $((REG_ROWS / 10)), 4 clients, $st, $what: worst p99 (< $goal ms)" "**$r× the goal** ($p ms, $rest$floor)" "$s" "$e" "$(le "$p" $((goal - 1)).999)"
    done
    s=$(la); f=$T/regx-$st.txt
    log "register export, $st, $EXPORT_ROWS rows"
    runbench riskhttp ./internal/risks/riskhttp "$f" "${envs[@]}" REGISTER_EXPORT_ROWS=$EXPORT_ROWS -- -test.bench RegisterExport -test.benchtime 1x
    e=$(la); rss=$(metric "$f" peak-rss-MiB); r=$(ratio "$rss" 64)
    row "export of $EXPORT_ROWS rows, $st: peak RSS of the benchmark process (< 64 MiB)" "**$r× the bound** ($rss MiB, heap $(metric "$f" peak-heap-MiB) MiB, $(metric "$f" rows/s) rows/s)" "$s" "$e" "$(le "$rss" 63.999)"
    s=$(la); f=$T/regi-$st.txt
    log "register import, $st, $IMPORT_ROWS rows"
    runbench riskhttp ./internal/risks/riskhttp "$f" "${envs[@]}" REGISTER_IMPORT_ROWS=$IMPORT_ROWS -- -test.bench RegisterImport -test.benchtime 1x
    e=$(la); sec=$(metric "$f" import-s); r=$(ratio "$sec" 60)
    row "import of $IMPORT_ROWS rows, $st (< 60 s)" "**$r× the bound** ($sec s)" "$s" "$e" "$(le "$sec" 59.999)"
  done
fi

{
  echo "Issue 26, $(date -u +'%Y-%m-%d %H:%M UTC'), tree $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!web/dist' || echo '+changes'), $([ $quick = 1 ] && echo 'QUICK (smoke scale)' || echo 'full scale')"
  echo
  echo "| goal | figure (ratio against its baseline in the same run) | 1-min load start → end | met |"
  echo "| --- | --- | --- | --- |"
  cat "$rows"
} | tee "$T/table.md"
if [ -n "$out" ]; then # the table, and every run's own output beside it (OUT.raw/)
  cp "$T/table.md" "$out"
  rm -rf "$out.raw"; mkdir -p "$out.raw"
  find "$T" -maxdepth 1 -name '*.txt*' -exec cp {} "$out.raw/" \;
fi
exit 0

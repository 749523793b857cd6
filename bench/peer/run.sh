#!/bin/sh
# Builds and runs issue 26's peer (bench/peer) against a local copy of gopotency's
# source, which the Go module proxy does not serve (403). The committed go.mod names
# github.com/fco-gt/gopotency without a local path; this script copies the module to
# a temporary directory, points it at the source with `go mod edit -replace` there,
# builds, and runs the binary in the foreground.
#
#   bench/peer/run.sh GOPOTENCY_SRC [peer flags…]   e.g. -addr 127.0.0.1:8090 -lean
#   environment: DATABASE_URL (PostgreSQL), PEER_API_KEY (the Bearer secret to accept)
#   PEER_BIN=path: only build, to that path, and exit.
#
# Get the source with e.g. `git clone https://github.com/fco-gt/gopotency`.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 GOPOTENCY_SRC [peer flags…]" >&2; exit 2; }
src=$(cd "$1" && pwd); shift
[ -f "$src/go.mod" ] && grep -q '^module github.com/fco-gt/gopotency$' "$src/go.mod" ||
  { echo "$0: $src is not gopotency's module" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/go.mod" "$here/go.sum" "$here"/*.go "$tmp/"
cd "$tmp"
go mod edit -replace "github.com/fco-gt/gopotency=$src"
bin=${PEER_BIN:-$tmp/peer}
go build -o "$bin" .
[ -n "${PEER_BIN:-}" ] && exit 0
"$bin" "$@"

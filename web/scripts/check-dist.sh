#!/bin/sh
# Rebuilds web/dist from the sources and fails if the result differs from what
# is committed: the Go binary embeds web/dist, so a stale build would ship a
# dashboard that does not match its sources. The build is deterministic
# (content-hashed names, no source maps, no timestamps).
set -eu
cd "$(dirname "$0")/.."
npm run build
# Against the index (what is committed, or staged to be): changed or deleted
# files, then files the build made that git does not know.
changed=$( (git diff --name-status -- dist; git ls-files --others --exclude-standard -- dist) )
if [ -n "$changed" ]; then
  echo "web/dist differs from the committed build; run 'npm run build' in web/ and commit web/dist:" >&2
  echo "$changed" >&2
  exit 1
fi
echo "web/dist matches the committed build"

#!/usr/bin/env python3
"""Print a variant of keyed.sql that riskapi does NOT send, derived from keyed.sql so
that it cannot drift from it (docs/performance.md, "What fewer statements would give").

    python3 bench/pgbench/variants.py read-in-auth > /tmp/v.sql
    pgbench -n -M prepared -c 16 -j 2 -T 10 -f /tmp/v.sql "$DATABASE_URL"

pipelined-reads   the API key's lookup and the record's plain read in one round trip
                  (8 statements, 5 round trips)
pipelined-writes  that, and the handler's INSERTs pipelined with the record's upsert
                  and COMMIT, as handlers that deferred their writes would allow
                  (8 statements, 4 round trips)
read-in-auth      the record's plain read folded into the API key's lookup, a LEFT
                  JOIN (7 statements, 5 round trips); it would tie the idempotency
                  engine to authentication
"""
import pathlib
import sys

KEYED = pathlib.Path(__file__).with_name("keyed.sql").read_text()
BODY = "\n".join(l for l in KEYED.split("\n") if not l.startswith("--"))
LOOKUP = "SELECT id, tenant_id, name"
RESERVE = "\\startpipeline\nBEGIN;"


def pipelined_reads(body):
    body = body.replace(LOOKUP, "\\startpipeline\n" + LOOKUP, 1)
    return body.replace(RESERVE, "\\endpipeline\n" + RESERVE, 1)


def pipelined_writes(body):
    body = pipelined_reads(body)
    body = body.replace("\\endpipeline\nINSERT INTO risks", "\\endpipeline\n\\startpipeline\nINSERT INTO risks", 1)
    return body.replace("\\startpipeline\nINSERT INTO idempotency_records", "INSERT INTO idempotency_records", 1)


def read_in_auth(body):
    start, end = body.index(LOOKUP), body.index(RESERVE)
    joined = """SELECT k.id, k.tenant_id, k.name, k.scopes, k.created_at, k.revoked_at, k.last_used_at,
	r.fingerprint, r.state, r.status_code, r.content_type, r.headers, r.body, r.created_at, r.expires_at, r.request_id
	FROM api_keys k LEFT JOIN idempotency_records r ON r.scope = k.tenant_id AND r.method = 'POST'
	AND r.path = '/v2/risks' AND r.idem_key = 'pgb-' || :k
	WHERE k.secret_hash = repeat('0', 64) AND k.tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL);
"""
    return body[:start] + joined + body[end:]


VARIANTS = {"pipelined-reads": pipelined_reads, "pipelined-writes": pipelined_writes, "read-in-auth": read_in_auth}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in VARIANTS:
        sys.exit(__doc__)
    out = VARIANTS[sys.argv[1]](BODY)
    if out == BODY:
        sys.exit("keyed.sql no longer has the shape this variant rewrites")
    print(f"-- {sys.argv[1]}: generated from keyed.sql by variants.py; not what riskapi sends")
    print(out)

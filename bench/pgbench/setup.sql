-- The tenant and API key the pgbench scripts write as, in a database migrated by
-- riskapi (api migrate, or any database loadgen --spawn has run on). Idempotent.
-- psql -v ON_ERROR_STOP=1 -f bench/pgbench/setup.sql "$DATABASE_URL"
INSERT INTO tenants (id, name, created_at) VALUES ('ten_pgbench', 'pgbench', now())
	ON CONFLICT DO NOTHING;
INSERT INTO api_keys (id, tenant_id, name, secret_hash, scopes, created_at)
	VALUES ('key_pgbench', 'ten_pgbench', 'pgbench', repeat('0', 64), 'risks:read,risks:write', now())
	ON CONFLICT DO NOTHING;
-- The record replay.sql reads: a live COMPLETE one.
INSERT INTO idempotency_records (scope, method, path, idem_key, fingerprint, state, status_code,
	content_type, body, created_at, updated_at, expires_at)
	VALUES ('ten_pgbench', 'POST', '/v2/risks', 'pgbench-replay', repeat('f', 64), 'complete', 201,
	'application/json', convert_to(repeat('x', 400), 'UTF8'), now(), now(), now() + interval '10 years')
	ON CONFLICT DO NOTHING;

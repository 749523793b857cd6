-- The statements of a replay of POST /v2/risks: the API key's lookup and the
-- record's plain read (Lookup), which finds the live COMPLETE record that answers
-- (2 statements, 2 round trips, no transaction, no lock, no commit).
SELECT id, tenant_id, name, scopes, created_at, revoked_at, last_used_at FROM api_keys
	WHERE secret_hash = repeat('0', 64) AND tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL);
SELECT fingerprint, state, status_code, content_type, headers, body, created_at, expires_at, request_id FROM idempotency_records
	WHERE scope = 'ten_pgbench' AND method = 'POST' AND path = '/v2/risks' AND idem_key = 'pgbench-replay';

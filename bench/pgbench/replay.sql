-- The statements of a replay of POST /v2/risks: the API key's lookup and the
-- record's plain read (Lookup), which finds the live COMPLETE record that answers
-- (2 statements, 2 round trips, no transaction, no lock, no commit).
SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_object_agg(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = repeat('0', 64);
SELECT fingerprint, state, status_code, content_type, headers, body, created_at, expires_at, request_id FROM idempotency_records
	WHERE scope = 'ten_pgbench' AND method = 'POST' AND path = '/v2/risks' AND idem_key = 'pgbench-replay';

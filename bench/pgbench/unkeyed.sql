-- The statements of an unkeyed POST /v2/risks: the API key's lookup, then the
-- risk's INSERT in autocommit (2 statements, 2 round trips, 1 durable commit).
SELECT id, tenant_id, name, scopes, created_at, revoked_at, last_used_at FROM api_keys
	WHERE secret_hash = repeat('0', 64) AND tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL) LIMIT 1;
INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner, created_at, updated_at)
	VALUES ('risk_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'Vendor contract missing a DPA', '',
	'Third-Party', 3, 4, 12, 'open', '', now(), now());

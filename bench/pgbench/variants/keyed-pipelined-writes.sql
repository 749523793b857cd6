-- Not what riskapi sends: keyed-pipelined-reads.sql with the handler's INSERTs also
-- pipelined with the record's upsert and COMMIT (8 statements, 4 round trips), as
-- handlers that deferred their writes would allow. docs/performance.md.
\set k random(1, 9223372036854775807)
\startpipeline
SELECT id, tenant_id, name, scopes, created_at, revoked_at, last_used_at FROM api_keys
	WHERE secret_hash = repeat('0', 64) AND tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL);
SELECT fingerprint, state, status_code, content_type, headers, body, created_at, expires_at, request_id
	FROM idempotency_records WHERE scope = 'ten_pgbench' AND method = 'POST' AND path = '/v2/risks' AND idem_key = 'pgb-' || :k;
\endpipeline
\startpipeline
BEGIN;
SELECT locked, (rec).idem_key IS NOT NULL, (rec).fingerprint, (rec).body
	FROM idempotency_reserve(:k, 'ten_pgbench', 'POST', '/v2/risks', 'pgb-' || :k);
\endpipeline
\startpipeline
INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner, created_at, updated_at)
	VALUES ('risk_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'Vendor contract missing a DPA', '',
	'Third-Party', 3, 4, 12, 'open', '', now(), now());
WITH ev AS (INSERT INTO events (id, tenant_id, type, payload, created_at)
	VALUES ('evt_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'risk.created',
	repeat('x', 450), now()) RETURNING id)
	INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, now(), now() + interval '3 days', now() FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = 'ten_pgbench' AND (e.event_types = '*' OR e.event_types LIKE '%risk.created%');
INSERT INTO idempotency_records (scope, method, path, idem_key, fingerprint, state, status_code,
	content_type, body, created_at, updated_at, expires_at, headers, request_id)
	VALUES ('ten_pgbench', 'POST', '/v2/risks', 'pgb-' || :k, repeat('f', 64), 'complete', 201,
	'application/json', convert_to(repeat('x', 400), 'UTF8'), now(), now(), now() + interval '1 day', '', 'req_pgbench')
	ON CONFLICT (scope, method, path, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint,
	state = excluded.state, status_code = excluded.status_code, content_type = excluded.content_type,
	headers = excluded.headers, body = excluded.body, created_at = excluded.created_at,
	updated_at = excluded.updated_at, expires_at = excluded.expires_at, request_id = excluded.request_id;
COMMIT;
\endpipeline

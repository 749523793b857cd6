-- Not what riskapi sends: keyed.sql with the record's plain read folded into the API
-- key's lookup (one statement, a LEFT JOIN; 7 statements, 5 round trips), which would
-- tie the idempotency engine to authentication. docs/performance.md.
\set k random(1, 9223372036854775807)
SELECT k.id, k.tenant_id, k.name, k.scopes, k.created_at, k.revoked_at, k.last_used_at,
	r.fingerprint, r.state, r.status_code, r.content_type, r.headers, r.body, r.created_at, r.expires_at, r.request_id
	FROM api_keys k LEFT JOIN idempotency_records r ON r.scope = k.tenant_id AND r.method = 'POST' AND r.path = '/v2/risks' AND r.idem_key = 'pgb-' || :k
	WHERE k.secret_hash = repeat('0', 64) AND k.tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL);
\startpipeline
BEGIN;
SELECT locked, (rec).idem_key IS NOT NULL, (rec).fingerprint, (rec).body
	FROM idempotency_reserve(:k, 'ten_pgbench', 'POST', '/v2/risks', 'pgb-' || :k);
\endpipeline
INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner, created_at, updated_at)
	VALUES ('risk_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'Vendor contract missing a DPA', '',
	'Third-Party', 3, 4, 12, 'open', '', now(), now());
WITH ev AS (INSERT INTO events (id, tenant_id, type, payload, created_at)
	VALUES ('evt_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'risk.created',
	repeat('x', 450), now()) RETURNING id)
	INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, now(), now() + interval '3 days', now() FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = 'ten_pgbench' AND (e.event_types = '*' OR e.event_types LIKE '%risk.created%');
\startpipeline
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

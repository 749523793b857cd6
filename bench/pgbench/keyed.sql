-- The statements of a keyed first execution of POST /v2/risks, as riskapi sends them
-- (re-captured from PostgreSQL's statement log, log_statement = all on a scratch
-- database, at 07137f8, after migrations 0001–0016; internal/idempotency/gormstore
-- postgres.go): the API key's lookup; the record's plain read (Lookup); BEGIN, SET
-- LOCAL idle_in_transaction_session_timeout and idempotency_reserve (lock and read
-- under it) pipelined in one round trip; the risk's INSERT, its audit entry and its
-- event with the webhook deliveries, all carried in the event's one statement (as in
-- unkeyed.sql: the risk store and the audit recorder defer theirs, internal/database
-- carry.go); the record's upsert and COMMIT pipelined in one round trip (8
-- statements, 5 round trips, 1 durable commit). Sizes as riskapi's: response body
-- ~560 bytes, headers 77. keyed-onecall.sql is the same write as one function call.
\set k random(1, 9223372036854775807)
SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_object_agg(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = repeat('0', 64);
SELECT fingerprint, state, status_code, content_type, headers, body, created_at, expires_at, request_id
	FROM idempotency_records WHERE scope = 'ten_pgbench' AND method = 'POST' AND path = '/v2/risks' AND idem_key = 'pgb-' || :k;
\startpipeline
BEGIN;
SET LOCAL idle_in_transaction_session_timeout = 60000;
SELECT locked, (rec).idem_key IS NOT NULL, coalesce((rec).fingerprint, ''),
	coalesce((rec).state, ''), coalesce((rec).status_code, 0), coalesce((rec).content_type, ''), coalesce((rec).headers, ''), (rec).body,
	coalesce((rec).created_at, 'epoch'), coalesce((rec).expires_at, 'epoch'), (rec).request_id
	FROM idempotency_reserve(:k, 'ten_pgbench', 'POST', '/v2/risks', 'pgb-' || :k);
\endpipeline
WITH carried0 AS (INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact,
	risk_score, status, owner, external_id, version, treatment, review_date, residual_likelihood,
	residual_impact, residual_score, metadata, created_at, updated_at)
	VALUES ('risk_' || lpad(to_hex((extract(epoch FROM now()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	'ten_pgbench', 'pgb k ' || :k,
	'Load test risk: the vendor''s contract has no data processing agreement, so personal data may be processed without the safeguards the regulation requires.',
	'Third-Party', 3, 4, 12, 'open', 'loadgen', NULL, 1, NULL, NULL, NULL, NULL, NULL, '{}', now(), now())),
	carried1 AS (INSERT INTO audit_log (id, tenant_id, occurred_at, actor_type, actor_id, actor_email, action,
	target_type, target_id, changes, request_id, ip, user_agent)
	VALUES ('aud_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || substr(md5(random()::text), 1, 18),
	'ten_pgbench', now(), 'api_key', 'key_pgbench', '', 'risk.created',
	'risk', 'risk_' || lpad(to_hex((extract(epoch FROM now()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	repeat('x', 440), md5(random()::text), '127.0.0.1', 'Go-http-client/1.1')),
	ev AS (INSERT INTO events (id, tenant_id, type, payload, created_at)
	VALUES ('evt_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || substr(md5(random()::text), 1, 18),
	'ten_pgbench', 'risk.created', repeat('x', 760), now()) RETURNING id)
	INSERT INTO webhook_deliveries
	(tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, now(), now() + interval '3 days', now() FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = 'ten_pgbench' AND (e.event_types = '*' OR e.event_types LIKE '%,risk.created,%');
\startpipeline
INSERT INTO idempotency_records
	(scope, method, path, idem_key, fingerprint, state, status_code, content_type, body, created_at, updated_at, expires_at, headers, request_id)
	VALUES ('ten_pgbench', 'POST', '/v2/risks', 'pgb-' || :k, repeat('f', 64), 'complete', 201,
	'application/json', convert_to(repeat('x', 560), 'UTF8'), now(), now(), now() + interval '1 day', repeat('h', 77), md5(random()::text))
	ON CONFLICT (scope, method, path, idem_key) DO UPDATE SET
	fingerprint = excluded.fingerprint, state = excluded.state, status_code = excluded.status_code,
	content_type = excluded.content_type, headers = excluded.headers, body = excluded.body, created_at = excluded.created_at,
	updated_at = excluded.updated_at, expires_at = excluded.expires_at, request_id = excluded.request_id;
COMMIT;
\endpipeline

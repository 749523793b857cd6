-- The statements of an unkeyed POST /v2/risks, as riskapi sends them (re-captured
-- from PostgreSQL's statement log, log_statement = all on a scratch database, at
-- 07137f8, after migrations 0001–0016): the API key's lookup; then the risk's INSERT
-- with every column GORM names, its audit-log entry and its risk.created event with
-- the webhook deliveries it fans out to, all in ONE statement in its own implicit
-- transaction (the lazy unit of work: the risk store defers its INSERT and the audit
-- recorder its entry, and the event's statement carries both: internal/database
-- carry.go, ExecCarrying). 2 statements, 2 round trips, 1 durable commit; no BEGIN,
-- no SET LOCAL, no COMMIT. Sizes as riskapi's for loadgen's request: title unique per
-- write, description 149 characters, audit changes ~440, event payload ~760. IDs are
-- time-ordered, as riskapi's UUIDv7s are; the audit entry's target is the risk's ID
-- (now() is the statement's, so both expressions give one value).
-- unkeyed-noaudit.sql is the write before the audit log (issue 24),
-- unkeyed-audit-separate.sql the transaction with the entry's INSERT on its own.
\set k random(1, 9223372036854775807)
SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_object_agg(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = repeat('0', 64);
WITH carried0 AS (INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact,
	risk_score, status, owner, external_id, version, treatment, review_date, residual_likelihood,
	residual_impact, residual_score, metadata, created_at, updated_at)
	VALUES ('risk_' || lpad(to_hex((extract(epoch FROM now()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	'ten_pgbench', 'pgb u ' || :k,
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

-- The unkeyed create's carried statement as the server sends it (captured on f6bdbbf with
-- log_statement = all): risk, audit entry, event, skipped attempts, deliveries (issue 44, alternate.sh).
\set k random(1, 9223372036854775807)
\set n random(0, 24)
\set l 1 + :n % 5
\set i 1 + :n / 5
\set s :l * :i
WITH carried0 AS (INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner, owner_user_id, external_id, version, treatment, review_date, review_every, residual_likelihood, residual_impact, residual_score, metadata, created_at, updated_at)
	VALUES ('risk_' || lpad(to_hex((extract(epoch FROM now()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	'ten_pgbench', 'pgb u ' || :k,
	'Load test risk: the vendor''s contract has no data processing agreement, so personal data may be processed without the safeguards the regulation requires.',
	'Third-Party', :l, :i, :s, 'open', 'loadgen', NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, '{}', now(), now())),
	carried1 AS (INSERT INTO audit_log (id, tenant_id, occurred_at, actor_type, actor_id, actor_email, action,
	target_type, target_id, changes, request_id, ip, user_agent, via, client, risk_id)
	VALUES ('aud_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	'ten_pgbench', now(), 'api_key', 'key_pgbench', '', 'risk.created',
	'risk', 'risk_' || lpad(to_hex((extract(epoch FROM now()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	repeat('x', 500), 'req' || :k, '127.0.0.1', 'Go-http-client/1.1', NULL, NULL, NULL)),
	ev AS (INSERT INTO events (id, tenant_id, type, payload, created_at)
	VALUES ('evt_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || lpad(to_hex(:k::bigint), 18, '0'),
	'ten_pgbench', 'risk.created', repeat('x', 950), now()) RETURNING id),
	skipped AS (INSERT INTO webhook_attempts
	(tenant_id, endpoint_id, event_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
	SELECT e.tenant_id, e.id, ev.id, 0, 0, 0, 'skipped: the endpoint was disabled', 0, now() FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = 'ten_pgbench' AND (e.event_types = '*' OR e.event_types LIKE '%,risk.created,%') AND e.disabled_at IS NOT NULL)
	INSERT INTO webhook_deliveries
	(tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, now(), now() + interval '3 days', now() FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = 'ten_pgbench' AND (e.event_types = '*' OR e.event_types LIKE '%,risk.created,%') AND e.disabled_at IS NULL;

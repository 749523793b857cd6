-- The statements of an unkeyed POST /v2/risks as riskapi sent them before the audit
-- log (issue 24; unkeyed.sql is today's): the API key's
-- lookup; BEGIN; the risk's INSERT; its risk.created event's INSERT (with the
-- webhook deliveries it fans out to, one statement: internal/events/eventstore);
-- COMMIT (5 statements, 5 round trips, 1 durable commit).
SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_object_agg(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = repeat('0', 64);
BEGIN;
INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner, created_at, updated_at)
	VALUES ('risk_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'Vendor contract missing a DPA', '',
	'Third-Party', 3, 4, 12, 'open', '', now(), now());
WITH ev AS (INSERT INTO events (id, tenant_id, type, payload, created_at)
	VALUES ('evt_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'risk.created',
	repeat('x', 450), now()) RETURNING id)
	INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
	SELECT e.tenant_id, ev.id, e.id, 'pending', 0, now(), now() + interval '3 days', now() FROM webhook_endpoints e CROSS JOIN ev
	WHERE e.tenant_id = 'ten_pgbench' AND (e.event_types = '*' OR e.event_types LIKE '%risk.created%');
COMMIT;

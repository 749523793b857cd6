-- unkeyed-noaudit.sql and the change's audit-log entry as an INSERT of its own before
-- COMMIT (6 statements, 6 round trips), as riskapi sent it before the entry rode in
-- the event's statement (unkeyed.sql). IDs are time-ordered, as UUIDv7s are.
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
INSERT INTO audit_log (id, tenant_id, occurred_at, actor_type, actor_id, actor_email, action, target_type, target_id,
	changes, request_id, ip, user_agent)
	VALUES ('aud_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || substr(md5(random()::text), 1, 18),
	'ten_pgbench', now(), 'api_key', 'key_pgbench', '', 'risk.created', 'risk', 'risk_' || md5(random()::text),
	repeat('x', 350), md5(random()::text), '127.0.0.1', 'Go-http-client/1.1');
COMMIT;

-- The tenant and API key the pgbench scripts write as, in a database migrated by
-- riskapi (api migrate, or any database loadgen --spawn has run on). Idempotent.
-- psql -v ON_ERROR_STOP=1 -f bench/pgbench/setup.sql "$DATABASE_URL"
INSERT INTO tenants (id, name, created_at) VALUES ('ten_pgbench', 'pgbench', now())
	ON CONFLICT DO NOTHING;
INSERT INTO api_keys (id, tenant_id, name, secret_hash, scopes, created_at)
	VALUES ('key_pgbench', 'ten_pgbench', 'pgbench', repeat('0', 64), 'risks:read,risks:write', now())
	ON CONFLICT DO NOTHING;
-- The record replay.sql reads: a live COMPLETE one.
INSERT INTO idempotency_records (scope, method, path, idem_key, fingerprint, state, status_code,
	content_type, body, created_at, updated_at, expires_at)
	VALUES ('ten_pgbench', 'POST', '/v2/risks', 'pgbench-replay', repeat('f', 64), 'complete', 201,
	'application/json', convert_to(repeat('x', 400), 'UTF8'), now(), now(), now() + interval '10 years')
	ON CONFLICT DO NOTHING;
-- The one-call design of a keyed first execution (keyed-onecall.sql): the key's
-- lock, the record's read under it, the handler's INSERT, the audit entry, the
-- event with its webhook deliveries and the record, all in ONE statement whose
-- implicit transaction commits once. Not riskapi's design (docs/performance.md,
-- "The floor"): it is here only to measure how far riskapi's statements are from
-- it, and teardown.sql drops it. The caller builds IDs and the response body, as a
-- Go handler would before the call. Answers 'busy' (lock held: riskapi's 409),
-- 'mismatch' (another body: 422), 'replay' (the stored answer) or 'created'.
CREATE OR REPLACE FUNCTION pgbench_keyed_write(lock_id bigint, k_scope text, k_key text, k_fingerprint text,
	risk_id text, risk_title text, risk_description text, actor_id text, audit_id text, audit_changes text,
	request_id text, client_ip text, user_agent text, event_id text, event_payload text, resp_body bytea, resp_headers text)
	RETURNS TABLE (outcome text, status_code bigint, body bytea)
	LANGUAGE plpgsql AS $$
DECLARE
	rec idempotency_records;
	t timestamptz := now();
BEGIN
	IF NOT pg_try_advisory_xact_lock(lock_id) THEN
		outcome := 'busy'; RETURN NEXT; RETURN;
	END IF;
	SELECT r.* INTO rec FROM idempotency_records r
		WHERE r.scope = k_scope AND r.method = 'POST' AND r.path = '/v2/risks' AND r.idem_key = k_key AND r.expires_at > t;
	IF FOUND THEN
		outcome := CASE WHEN rec.fingerprint = k_fingerprint THEN 'replay' ELSE 'mismatch' END;
		status_code := rec.status_code; body := rec.body; RETURN NEXT; RETURN;
	END IF;
	INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner,
		external_id, version, treatment, review_date, residual_likelihood, residual_impact, residual_score, metadata, created_at, updated_at)
		VALUES (risk_id, k_scope, risk_title, risk_description, 'Third-Party', 3, 4, 12, 'open', 'loadgen',
		NULL, 1, NULL, NULL, NULL, NULL, NULL, '{}', t, t);
	INSERT INTO audit_log (id, tenant_id, occurred_at, actor_type, actor_id, actor_email, action, target_type, target_id,
		changes, request_id, ip, user_agent)
		VALUES (audit_id, k_scope, t, 'api_key', actor_id, '', 'risk.created', 'risk', risk_id,
		audit_changes, request_id, client_ip, user_agent);
	INSERT INTO events (id, tenant_id, type, payload, created_at) VALUES (event_id, k_scope, 'risk.created', event_payload, t);
	INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, state, attempts, next_attempt_at, retry_until, created_at)
		SELECT e.tenant_id, event_id, e.id, 'pending', 0, t, t + interval '3 days', t FROM webhook_endpoints e
		WHERE e.tenant_id = k_scope AND (e.event_types = '*' OR e.event_types LIKE '%,risk.created,%');
	INSERT INTO idempotency_records (scope, method, path, idem_key, fingerprint, state, status_code,
		content_type, body, created_at, updated_at, expires_at, headers, request_id)
		VALUES (k_scope, 'POST', '/v2/risks', k_key, k_fingerprint, 'complete', 201,
		'application/json', resp_body, t, t, t + interval '1 day', resp_headers, request_id)
		ON CONFLICT (scope, method, path, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint,
		state = excluded.state, status_code = excluded.status_code, content_type = excluded.content_type,
		headers = excluded.headers, body = excluded.body, created_at = excluded.created_at,
		updated_at = excluded.updated_at, expires_at = excluded.expires_at, request_id = excluded.request_id;
	outcome := 'created'; status_code := 201; body := resp_body; RETURN NEXT;
END
$$;

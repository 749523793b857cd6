-- The keyed first execution of keyed.sql in the one-call design: the API key's
-- lookup, then pgbench_keyed_write (setup.sql) — lock, read under it, the risk's
-- INSERT, the audit entry, the event and its deliveries, the record — as one
-- statement in its own implicit transaction (2 statements, 2 round trips, 1 durable
-- commit). Same rows, columns and sizes as keyed.sql. Not what riskapi sends: the
-- floor of the best design, to say how far riskapi is from it.
\set k random(1, 9223372036854775807)
SELECT k.id, k.tenant_id, k.name, k.scopes, k.mode, k.created_at, k.revoked_at, k.last_used_at,
	k.expires_at, k.expiry_recorded_at, k.allowed_cidrs, k.rolled_to, t.api_version, t.risk_appetite, t.appetite_version,
	(SELECT json_object_agg(c.category, c.appetite) FROM category_appetites AS c WHERE c.tenant_id = t.id)
	FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id AND t.disabled_at IS NULL WHERE k.secret_hash = repeat('0', 64);
SELECT outcome, status_code, body FROM pgbench_keyed_write(:k, 'ten_pgbench', 'pgb1-' || :k, repeat('f', 64),
	'risk_' || md5(random()::text || clock_timestamp()::text), 'pgb 1 ' || :k,
	'Load test risk: the vendor''s contract has no data processing agreement, so personal data may be processed without the safeguards the regulation requires.',
	'key_pgbench', 'aud_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || substr(md5(random()::text), 1, 18),
	repeat('x', 440), md5(random()::text), '127.0.0.1', 'Go-http-client/1.1',
	'evt_' || md5(random()::text || clock_timestamp()::text), repeat('x', 760), convert_to(repeat('x', 560), 'UTF8'), repeat('h', 77));

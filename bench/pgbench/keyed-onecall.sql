-- The keyed first execution of keyed.sql in the one-call design: the API key's
-- lookup, then pgbench_keyed_write (setup.sql) — lock, read under it, the risk's
-- INSERT, the audit entry, the event and its deliveries, the record — as one
-- statement in its own implicit transaction (2 statements, 2 round trips, 1 durable
-- commit). Same rows, columns and sizes as keyed.sql. Not what riskapi sends: the
-- floor of the best design, to say how far riskapi is from it.
\set k random(1, 9223372036854775807)
SELECT id, tenant_id, name, scopes, created_at, revoked_at, last_used_at FROM api_keys
	WHERE secret_hash = repeat('0', 64) AND tenant_id IN (SELECT id FROM tenants WHERE disabled_at IS NULL);
SELECT outcome, status_code, body FROM pgbench_keyed_write(:k, 'ten_pgbench', 'pgb1-' || :k, repeat('f', 64),
	'risk_' || md5(random()::text || clock_timestamp()::text), 'pgb 1 ' || :k,
	'Load test risk: the vendor''s contract has no data processing agreement, so personal data may be processed without the safeguards the regulation requires.',
	'key_pgbench', 'aud_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0') || substr(md5(random()::text), 1, 18),
	repeat('x', 440), md5(random()::text), '127.0.0.1', 'Go-http-client/1.1',
	'evt_' || md5(random()::text || clock_timestamp()::text), repeat('x', 760), convert_to(repeat('x', 560), 'UTF8'), repeat('h', 77));

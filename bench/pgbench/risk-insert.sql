-- One risk INSERT as riskapi sends it for an unkeyed create (columns and sizes as
-- unkeyed.sql), on its own: insert-floor.sh measures it against the schema's parts.
\set k random(1, 9223372036854775807)
INSERT INTO risks (id, tenant_id, title, description, category, likelihood, impact, risk_score, status, owner,
	external_id, version, treatment, review_date, residual_likelihood, residual_impact, residual_score, metadata, created_at, updated_at)
	VALUES ('risk_' || md5(random()::text || clock_timestamp()::text), 'ten_pgbench', 'pgb u ' || :k,
	'Load test risk: the vendor''s contract has no data processing agreement, so personal data may be processed without the safeguards the regulation requires.',
	'Third-Party', 3, 4, 12, 'open', 'loadgen', NULL, 1, NULL, NULL, NULL, NULL, NULL, '{}', now(), now());

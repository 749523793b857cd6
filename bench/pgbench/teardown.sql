-- Drops what setup.sql created that is not riskapi's schema: the one-call design's
-- function. The tenant, key and rows the scripts wrote stay (the database is a
-- benchmark's). psql -v ON_ERROR_STOP=1 -f bench/pgbench/teardown.sql "$DATABASE_URL"
DROP FUNCTION IF EXISTS pgbench_keyed_write(bigint, text, text, text, text, text, text, text, text, text, text, text, text, text, text, bytea, text);

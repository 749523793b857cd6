// Package e2e runs riskapi as real processes for end-to-end tests and load runs: it
// builds the api binary once per test binary, starts instances on a database, kills
// them with SIGKILL, restarts them and stops them gracefully, provisions tenants and
// API keys through the binary's own CLI, and drives keyed writes over loopback with
// an exact account of every answer (workload.go).
//
// It is test support, in a non-test file so that several test packages and
// cmd/loadgen can share it. Every process it starts is bound to 127.0.0.1, every wait
// is bounded, and the *T helpers register a t.Cleanup that kills what they started.
//
// The tests in this package (go test ./internal/e2e/) run on the store that
// TEST_DATABASE_URL selects (see internal/dbtest); the multi-instance ones skip on
// SQLite, which supports one process only. Heavier variants sit behind flags, which
// go after the package (docs/performance.md):
//
//	go test -timeout 30m -run TestSweepUnderLoad -v ./internal/e2e/ -sweep.rows=1000000
//	go test -timeout 30m -run 'TestCrash|TestScaleOut|TestFault|TestStoreFault' -v ./internal/e2e/ -e2e.scale=10
//
// TestPostgresImmediateStop ignores TEST_DATABASE_URL: it stops PostgreSQL itself, so
// it starts a private cluster (PGCluster), and E2E_IMMEDIATE_STOPS sets its rounds:
//
//	E2E_IMMEDIATE_STOPS=10 go test -count=1 -run TestPostgresImmediateStop -v ./internal/e2e/
//
// E2E_RACE=1 builds the server under test with -race; a data race it reports fails the
// test.
package e2e

//go:build !riskapi_noaudit

package app

// withAudit says whether the recording point records audit-log entries: always,
// except in a binary built with the tag riskapi_noaudit, which exists only so that
// bench/issue26.sh can measure what the audit log costs a write (the same tree
// with and without its recorder, docs/performance.md). Never ship that build.
const withAudit = true

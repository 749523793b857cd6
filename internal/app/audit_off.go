//go:build riskapi_noaudit

package app

// withAudit is false in a build with the tag riskapi_noaudit: a benchmark-only
// binary without the audit log's recorder (see audit_on.go).
const withAudit = false

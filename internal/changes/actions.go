package changes

import (
	"fmt"
	"slices"
	"strings"
)

//go:generate go run ../../cmd/listgen -root ../..

// The actions riskapi records, each declared here once, with its row of Registry.
// No other package declares an Action: Point refuses to record one Registry lacks.
const (
	RiskCreated                 Action = "risk.created"
	RiskUpdated                 Action = "risk.updated"
	RiskDeleted                 Action = "risk.deleted"
	AttachmentCreated           Action = "attachment.created"
	AttachmentDeleted           Action = "attachment.deleted"
	UserCreated                 Action = "user.created"
	UserRoleChanged             Action = "user.role_changed"
	UserDeleted                 Action = "user.deleted"
	UserPasswordChanged         Action = "user.password_changed"
	APIKeyCreated               Action = "api_key.created"
	APIKeyRevoked               Action = "api_key.revoked"
	APIKeyRolled                Action = "api_key.rolled"
	APIKeyExpired               Action = "api_key.expired"
	APIKeyRefused               Action = "api_key.refused"
	WebhookSourceCreated        Action = "webhook_source.created"
	WebhookSourceDeleted        Action = "webhook_source.deleted"
	WebhookEndpointCreated      Action = "webhook_endpoint.created"
	WebhookEndpointDeleted      Action = "webhook_endpoint.deleted"
	WebhookEndpointUpdated      Action = "webhook_endpoint.updated"
	WebhookEndpointDisabled     Action = "webhook_endpoint.disabled"
	WebhookEndpointEnabled      Action = "webhook_endpoint.enabled"
	WebhookEndpointSecretRolled Action = "webhook_endpoint.secret_rolled"
	SessionCreated              Action = "session.created"
	SessionFailed               Action = "session.failed"
	TenantDisabled              Action = "tenant.disabled"
	TenantEnabled               Action = "tenant.enabled"
	SandboxDataDeleted          Action = "sandbox.data_deleted"
	TenantAPIVersionMoved       Action = "tenant.api_version_moved"
	ReviewCreated               Action = "review.created"
	ActionCreated               Action = "action.created"
	ActionUpdated               Action = "action.updated"
	AcceptanceCreated           Action = "acceptance.created"
	AcceptanceApproved          Action = "acceptance.approved"
	AcceptanceRejected          Action = "acceptance.rejected"
	// The due-date notices (docs/register.md, Due dates): emitted by the schedule,
	// once per (kind, object, due date), each with a derived event ID (Change.EventID).
	RiskReviewDue      Action = "risk.review_due"
	RiskReviewOverdue  Action = "risk.review_overdue"
	ActionOverdue      Action = "action.overdue"
	AcceptanceExpiring Action = "acceptance.expiring"
	AcceptanceExpired  Action = "acceptance.expired"
	APIKeyExpiring     Action = "api_key.expiring"
	// The appetite (docs/register.md, Appetite).
	TenantAppetiteChanged Action = "tenant.appetite_changed"
	RiskAppetiteExceeded  Action = "risk.appetite_exceeded"
)

// Declared is one action's declaration: what the audit log's table says of it
// (docs/audit-log.md, generated from Registry by cmd/listgen) and whether it is also
// an event type (docs/events.md).
type Declared struct {
	Action Action
	// Event: each recorded change of this action also emits an event of the same
	// name, whose data.object is the change's After (Before for a deletion).
	Event bool
	// When says which writes record it (the table's "when" column, Markdown).
	When string
	// Changes says what its entry's changes hold (the table's "changes" column).
	Changes string
}

// Registry is every action riskapi records, in documentation order: the one list
// audit.Actions (the audit log's filter) and events.Types are derived from, and that
// docs/audit-log.md's table is generated from.
var Registry = []Declared{
	{RiskCreated, true, "`POST /v{1,2}/risks`; an import's new row; an inbound `finding.created` (actor: the source)", "the risk's fields"},
	{RiskUpdated, true, "`PATCH`, `PUT /v{1,2}/risks/{id}`; an import's row with a known `externalId`; an inbound `finding.updated` (or a re-sent `finding.created`); each risk a deleted user owned (`DELETE /v1/users/{id}`: it becomes a name owner)", "the risk's fields that changed"},
	{RiskDeleted, true, "`DELETE /v{1,2}/risks/{id}`", "the risk's fields"},
	{AttachmentCreated, true, "an upload (`POST /v{1,2}/risks/{id}/attachments`)", "the attachment's metadata"},
	{AttachmentDeleted, true, "`DELETE /v{1,2}/attachments/{id}`; each attachment removed with its risk", "the attachment's metadata"},
	{UserCreated, false, "`POST /v1/users`, `api user create`", "`email`, `role`"},
	{UserRoleChanged, false, "`PATCH /v1/users/{id}`", "`role`"},
	{UserDeleted, false, "`DELETE /v1/users/{id}`, `api user delete`", "`email`, `role`"},
	{UserPasswordChanged, false, "`POST /v1/me/password`, `api user reset-password`", "`{\"password\":\"changed\"}`"},
	{APIKeyCreated, false, "`POST /v1/api-keys`, `api apikey create`", "`name`, `scopes`, `mode`, `createdBy`"},
	{APIKeyRevoked, false, "`DELETE /v1/api-keys/{id}`, `api apikey revoke`", "`revokedAt`"},
	{APIKeyRolled, false, "`POST /v1/api-keys/{id}/roll` (target: the old key; the new one is recorded as `api_key.created`)", "`expiresAt`, `rolledTo`"},
	{APIKeyExpired, false, "the first request with a key past its `expiresAt` (actor: the key), or the sweep that finds it expired (actor `system`); once per key", "`expired`"},
	{APIKeyRefused, false, "a request refused with 403 `IP_NOT_ALLOWED` (actor: the key); at most once a minute per key and instance", "null; the entry's `ip` is the refused address"},
	{WebhookSourceCreated, false, "`POST /v1/webhook-sources`, `api webhook create`", "`source`"},
	{WebhookSourceDeleted, false, "`DELETE /v1/webhook-sources/{id}`", "`source`"},
	{WebhookEndpointCreated, false, "`POST /v1/webhook-endpoints`", "`url`, `events`"},
	{WebhookEndpointDeleted, false, "`DELETE /v1/webhook-endpoints/{id}`", "`url`, `events`"},
	{WebhookEndpointUpdated, false, "`PATCH /v1/webhook-endpoints/{id}`", "`url`, `events`, `description` that changed"},
	{WebhookEndpointDisabled, true, "`POST /v1/webhook-endpoints/{id}/disable`; an endpoint whose every delivery failed for `WEBHOOK_AUTO_DISABLE_AFTER` (actor `system`)", "`disabledAt`"},
	{WebhookEndpointEnabled, false, "`POST /v1/webhook-endpoints/{id}/enable`", "`disabledAt`"},
	{WebhookEndpointSecretRolled, false, "`POST /v1/webhook-endpoints/{id}/roll-secret`", "`previousSecretExpiresAt`; `secret` named as changed, never shown"},
	{SessionCreated, false, "a sign-in (actor: the user)", "null"},
	{SessionFailed, false, "a refused sign-in of one of the tenant's users (wrong password)", "null; `target.id` is empty"},
	{TenantDisabled, false, "`api tenant disable` (actor `system`)", "`disabled`"},
	{TenantEnabled, false, "`api tenant enable` (actor `system`)", "`disabled`"},
	{SandboxDataDeleted, false, "`DELETE /v1/sandbox/data`, in the tenant's live audit log (`target.id`: the sandbox)", "how many of each kind of record were erased"},
	{TenantAPIVersionMoved, false, "`POST /v1/tenant/api-version`", "`apiVersion`"},
	{ReviewCreated, true, "`POST /v{1,2}/risks/{id}/reviews` (the risk's `reviewDate` moves: `risk.updated`)", "the review"},
	{ActionCreated, true, "`POST /v{1,2}/risks/{id}/actions`", "the action's fields"},
	{ActionUpdated, true, "`PATCH /v{1,2}/actions/{id}`", "the action's fields that changed"},
	{AcceptanceCreated, true, "`POST /v{1,2}/risks/{id}/acceptances` (status `pending`)", "the acceptance"},
	{AcceptanceApproved, true, "`POST /v1/acceptances/{id}/approve` by an admin other than the requester (the risk's `treatment` becomes `accept`: `risk.updated`)", "`status`, `decidedBy`, `decisionNote`, `decidedAt`, `riskSnapshot`"},
	{AcceptanceRejected, true, "`POST /v1/acceptances/{id}/reject` by an admin other than the requester", "`status`, `decidedBy`, `decisionNote`, `decidedAt`, `riskSnapshot`"},
	{RiskReviewDue, true, "the schedule, `REVIEW_DUE_DAYS` before the risk's `reviewDate` (actor `system`; once per risk and date)", "the risk, as found"},
	{RiskReviewOverdue, true, "the schedule, the day after the risk's `reviewDate` passed with no review (actor `system`; once per risk and date)", "the risk, as found"},
	{ActionOverdue, true, "the schedule, the day after an open action's `dueDate` (actor `system`; once per action and date)", "the action, as found"},
	{AcceptanceExpiring, true, "the schedule, 14 days before an approved acceptance's `validUntil` (actor `system`; once per acceptance and date)", "the acceptance, as found"},
	{AcceptanceExpired, true, "the schedule, the day after an approved acceptance's `validUntil`: its status becomes `expired` (and the risk's `treatment` null: `risk.updated`; actor `system`)", "`status`"},
	{APIKeyExpiring, true, "the schedule, 7 days before an unrevoked, unrolled API key's `expiresAt` (actor `system`; once per key and date)", "the key, as found (never its secret)"},
	{TenantAppetiteChanged, false, "`PATCH /v1/tenant` (admin)", "`riskAppetite`, `categoryAppetite` that changed"},
	{RiskAppetiteExceeded, true, "a write of a risk (create, update, import, inbound finding) that moves its `riskScore` from within its appetite (its category's, else the tenant's) to above it, in the write's transaction: once per crossing (actor: the write's)", "the risk as written, and `appetite`"},
}

// Names returns the actions of Registry for which keep is true (nil: all), in its
// order, as T (a string type of another package: events.Type, …).
func Names[T ~string](keep func(Declared) bool) []T {
	var out []T
	for _, d := range Registry {
		if keep == nil || keep(d) {
			out = append(out, T(d.Action))
		}
	}
	return out
}

// IsEvent keeps the actions that are event types (Names).
func IsEvent(d Declared) bool { return d.Event }

// Declaration returns a's row of Registry, or false when a is not declared.
func (a Action) Declaration() (Declared, bool) { return Find(string(a)) }

// Find returns the row of Registry of the action named name, or false.
func Find(name string) (Declared, bool) {
	i := slices.IndexFunc(Registry, func(d Declared) bool { return string(d.Action) == name })
	if i < 0 {
		return Declared{}, false
	}
	return Registry[i], true
}

// TargetType is the type of what a's changes are about: the part of its name before
// the dot ("risk" of "risk.updated"), as the audit log's target.type shows it.
func (a Action) TargetType() string {
	t, _, _ := strings.Cut(string(a), ".")
	return t
}

// undeclared is the error of recording an action Registry lacks: nothing would list
// it, and the audit log's filter would refuse it.
func undeclared(a Action) error {
	return fmt.Errorf("changes: action %q is not declared in changes.Registry", a)
}

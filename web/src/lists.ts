/**
 * The lists the dashboard offers to pick from, each typed as a record over the
 * type generated from docs/openapi.yaml (sdk-ts/src/openapi.ts): a value the
 * spec adds or drops fails `tsc` here until the list follows, so the lists
 * cannot drift from the API.
 */
import type { AuditAction, EventType, IdempotencyOutcome, Scope } from "@riskapi/sdk";

const eventTypes: Record<EventType, true> = {
  "risk.created": true, "risk.updated": true, "risk.deleted": true, "attachment.created": true, "attachment.deleted": true,
};
const scopes: Record<Scope, true> = { "risks:read": true, "risks:write": true, "requests:read": true, "events:read": true, "audit:read": true };
const outcomes: Record<IdempotencyOutcome, true> = {
  executed: true, replayed: true, in_progress: true, key_reused: true, failed: true, store_unavailable: true,
};
const auditActions: Record<AuditAction, true> = {
  "risk.created": true, "risk.updated": true, "risk.deleted": true, "attachment.created": true, "attachment.deleted": true,
  "user.created": true, "user.role_changed": true, "user.deleted": true, "user.password_changed": true,
  "api_key.created": true, "api_key.revoked": true, "webhook_source.created": true, "webhook_source.deleted": true,
  "webhook_endpoint.created": true, "webhook_endpoint.deleted": true, "session.created": true, "session.failed": true,
  "tenant.disabled": true, "tenant.enabled": true,
};

/** EVENT_TYPES are every event type, in the spec's order. */
export const EVENT_TYPES = Object.keys(eventTypes) as EventType[];
/** SCOPES are every scope an API key can have. */
export const SCOPES = Object.keys(scopes) as Scope[];
/** OUTCOMES are every idempotency outcome the request log reports. */
export const OUTCOMES = Object.keys(outcomes) as IdempotencyOutcome[];
/** AUDIT_ACTIONS are every action the audit log records, in the spec's order. */
export const AUDIT_ACTIONS = Object.keys(auditActions) as AuditAction[];

/**
 * The lists the dashboard offers to pick from, each typed as a record over the
 * type generated from docs/openapi.yaml (sdk-ts/src/openapi.ts): a value the
 * spec adds or drops fails `tsc` here until the list follows, so the lists
 * cannot drift from the API.
 */
import type { EventType, IdempotencyOutcome, Scope } from "@riskapi/sdk";

const eventTypes: Record<EventType, true> = {
  "risk.created": true, "risk.updated": true, "risk.deleted": true, "attachment.created": true, "attachment.deleted": true,
};
const scopes: Record<Scope, true> = { "risks:read": true, "risks:write": true, "requests:read": true, "events:read": true, "audit:read": true };
const outcomes: Record<IdempotencyOutcome, true> = {
  executed: true, replayed: true, in_progress: true, key_reused: true, failed: true, store_unavailable: true,
};

/** EVENT_TYPES are every event type, in the spec's order. */
export const EVENT_TYPES = Object.keys(eventTypes) as EventType[];
/** SCOPES are every scope an API key can have. */
export const SCOPES = Object.keys(scopes) as Scope[];
/** OUTCOMES are every idempotency outcome the request log reports. */
export const OUTCOMES = Object.keys(outcomes) as IdempotencyOutcome[];

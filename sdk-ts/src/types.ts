/**
 * The shapes of the API, taken from the types generated from docs/openapi.yaml
 * (src/openapi.ts, `npm run generate`), so that they cannot drift from the spec.
 */

import type { components, paths } from "./openapi.js";

type Schemas = components["schemas"];

/** A risk as the server returns it; `likelihood`, `impact` and `riskScore` are null when not assessed. */
export type Risk = Schemas["Risk"];
/** A risk's owner as read: one of the tenant's users (`userId`, `name` their email) or a name (`userId` null). */
export type Owner = Schemas["Owner"];
/** A risk's owner as written: exactly one of `{userId}` (a user of the tenant) and `{name}`. */
export type OwnerWrite = { userId: string; name?: never } | { name: string; userId?: never };
/** The spec's write owner is one object with both members optional; the SDK's says exactly one. */
type OwnerOneOf<T> = T extends { owner?: unknown } ? Omit<T, "owner"> & { owner?: OwnerWrite } : T;
/** The status of a risk: "open", "mitigated" or "closed". */
export type RiskStatus = Schemas["RiskStatus"];
/** The body of POST /v2/risks: `title` is required; `status` defaults to "open". */
export type RiskCreateParams = OwnerOneOf<paths["/v2/risks"]["post"]["requestBody"]["content"]["application/json"]>;
/** The body of PUT /v2/risks/{id}: a full replace, shaped like a create. */
export type RiskReplaceParams = OwnerOneOf<paths["/v2/risks/{id}"]["put"]["requestBody"]["content"]["application/json"]>;
/** The body of PATCH /v2/risks/{id}: only the fields given change; `null` unsets a number. */
export type RiskUpdateParams = OwnerOneOf<paths["/v2/risks/{id}"]["patch"]["requestBody"]["content"]["application/json"]>;
/** A file attached to a risk. */
export type Attachment = Schemas["Attachment"];
/** An RFC 9457 problem document, as the server sends it on every 4xx/5xx. */
export type Problem = Schemas["Problem"];

/** The decision taken about a risk: "accept", "mitigate", "transfer" or "avoid" (null on a risk: none). */
export type RiskTreatment = NonNullable<Schemas["RiskTreatment"]>;
/** A risk's own key-value pairs (docs/register.md, "Fields"). */
export type RiskMetadata = Schemas["Metadata"];
/** The order of a risk list or export: a field, `-` in front for descending. */
export type RiskSort = components["parameters"]["RiskSort"];
/** What an import did, or with dryRun would do (POST /v2/risks/import). */
export type ImportReport = Schemas["ImportReport"];
/** The heat map: all 25 cells, likelihood-major, and the risks lacking a factor. */
export type Heatmap = Schemas["Heatmap"];
/** One cell of a heat map. */
export type HeatmapCell = Heatmap["cells"][number];
/** Where risks moved since a day: `count` of them were in `from` then (null: on no cell) and are in `to` now (null: unassessed). */
export type HeatmapMove = Schemas["HeatmapMove"];

type FilterQuery = NonNullable<paths["/v2/risks/heatmap"]["get"]["parameters"]["query"]>;

/**
 * The filters of GET /v2/risks, …/heatmap and …/export (docs/register.md,
 * "Finding risks"); absent members do not filter, and a risk is selected when
 * every given one holds. `status`, `treatment` and the four factors
 * (`likelihood`, `impact`, `residualLikelihood`, `residualImpact`) take one
 * value or a list (any of them); `metadata` selects risks holding each key with that value.
 */
export type RiskFilter = Omit<FilterQuery, "basis" | "movedSince" | "status" | "treatment" | "metadata" | Factor> & {
  status?: RiskStatus | RiskStatus[];
  treatment?: RiskTreatment | RiskTreatment[];
  metadata?: Record<string, string>;
} & { [F in Factor]?: FactorValue | FactorValue[] };

/** The factor filters: `likelihood: 4, impact: 2` is one heat-map cell's risks. */
type Factor = "likelihood" | "impact" | "residualLikelihood" | "residualImpact";
/** A likelihood or impact, 1–5. */
export type FactorValue = 1 | 2 | 3 | 4 | 5;

/** The query of a risk list: paging, every filter, and the order. */
export interface RiskListParams extends ListParams, RiskFilter {
  /** Default "-createdAt"; ties are broken by id. A cursor belongs to its filter and sort. */
  sort?: RiskSort;
}

/** The query of a heat map: every filter, and the basis (default "inherent"). */
export interface RiskHeatmapParams extends RiskFilter {
  basis?: "inherent" | "residual";
  /** A day (YYYY-MM-DD, UTC): the answer's `moves` say where the selected risks were when it began (a costly read). */
  movedSince?: string;
}

/** The query of an export: every filter, the order, and the format (default "csv"). */
export interface RiskExportParams extends RiskFilter {
  format?: "csv" | "ndjson";
  sort?: RiskSort;
}

/** The query of a list call. */
export interface ListParams {
  /** Page size, 1–100; the server's default is 20. */
  limit?: number;
  /** The `nextCursor` of the previous page; omit for the first page. */
  cursor?: string;
}

/** One page of a list: `nextCursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** A review of a risk (docs/register.md). */
export type Review = Schemas["Review"];
/** The body of POST /risks/{id}/reviews: `outcome` "unchanged" or "changed". */
export type ReviewCreateParams = Schemas["ReviewCreate"];
/** A treatment action of a risk, with an owner user and a due date. */
export type Action = Schemas["Action"];
/** The body of POST /risks/{id}/actions. */
export type ActionCreateParams = Schemas["ActionCreate"];
/** The body of PATCH /actions/{id}. */
export type ActionUpdateParams = Schemas["ActionPatch"];
/** The filters of GET /actions. */
export interface ActionListParams {
  ownerId?: string;
  status?: Schemas["ActionStatus"];
  dueBefore?: string;
  limit?: number;
  cursor?: string;
}
/** An acceptance of a risk, pending, approved, rejected or expired. */
export type Acceptance = Schemas["Acceptance"];
/** The body of POST /risks/{id}/acceptances. */
export type AcceptanceCreateParams = Schemas["AcceptanceCreate"];
/** The filters of GET /acceptances. */
export interface AcceptanceListParams {
  status?: Schemas["AcceptanceStatus"];
  limit?: number;
  cursor?: string;
}

/** One committed change (risk.created, …), as listed and as delivered to webhook endpoints. */
export type Event = Schemas["Event"];
/** The type of an event, e.g. "risk.created". */
export type EventType = Schemas["EventTypeName"];
/** One entry of the request log (docs/requests.md). */
export type RequestLogEntry = Schemas["RequestLogEntry"];
/** What the idempotency engine did with a keyed write: "executed", "replayed", … */
export type IdempotencyOutcome = Schemas["IdempotencyOutcome"];
/** What the server knows of one idempotency key (the inspector). */
export type IdempotencyKeyState = Schemas["IdempotencyKeyState"];
/** The signed-in user and their tenant (GET /v1/me). */
export type Me = Schemas["Me"];
/** GET /v1/my-work: the signed-in user's due reviews, open actions and acceptances to decide. */
export type MyWork = Schemas["MyWork"];
/** A role: "admin" or "member". */
export type Role = Schemas["Role"];
/** A user of the tenant. */
export type User = Schemas["User"];
/** The body of POST /v1/users. */
export type UserCreateParams = Schemas["UserCreate"];
/** An API key as listed (never its secret). */
export type ApiKey = Schemas["ApiKey"];
/** A new API key, with its secret `key`, shown once. */
export type ApiKeyCreated = Schemas["ApiKeyCreated"];
/** The body of POST /v1/api-keys. */
export type ApiKeyCreateParams = Schemas["ApiKeyCreate"];
/** A key's mode: "live" reaches live data, "test" only the tenant's sandbox (docs/sandboxes.md). */
export type ApiKeyMode = Schemas["ApiKeyMode"];
/** What DELETE /v1/sandbox/data erased, counted by kind. */
export type SandboxErased = Schemas["SandboxErased"];
/** A scope of an API key, e.g. "risks:write". */
export type Scope = Schemas["Scope"];
/** An inbound webhook source. */
export type WebhookSource = Schemas["WebhookSource"];
/** A new webhook source, with its signing secret, shown once. */
export type WebhookSourceCreated = Schemas["WebhookSourceCreated"];
/** An outbound webhook endpoint. */
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
/** A new webhook endpoint, with its signing secret, shown once. */
export type WebhookEndpointCreated = Schemas["WebhookEndpointCreated"];
/** The body of POST /v1/webhook-endpoints. */
export type WebhookEndpointCreateParams = paths["/v1/webhook-endpoints"]["post"]["requestBody"]["content"]["application/json"];
/** One attempt to deliver an event to an endpoint; `outcome` "skipped" when it arrived while the endpoint was disabled. */
export type DeliveryAttempt = Schemas["DeliveryAttempt"];
/** The body of POST /v1/api-keys/{id}/roll: the old secret's overlap in seconds, and the new key's expiry. */
export type ApiKeyRollParams = Schemas["ApiKeyRoll"];
/** A rolled API key: the new one with its secret `key` (shown once) and the old one as `previous`. */
export type ApiKeyRolled = Schemas["ApiKeyRolled"];
/** The body of PATCH /v1/webhook-endpoints/{id}: members left out stay as they are. */
export type WebhookEndpointPatch = Schemas["WebhookEndpointPatch"];
/** An endpoint with its new secret, shown once (roll-secret). */
export type WebhookEndpointSecret = Schemas["WebhookEndpointSecret"];
/** The outcome of a ping: the endpoint's status and how long it took. */
export type WebhookPing = Schemas["WebhookPing"];

/** The filters of the request log; absent members do not filter. */
export interface RequestListParams extends ListParams {
  /** The attempts made with this Idempotency-Key. */
  idempotencyKey?: string;
  /** Requests answered with this HTTP status. */
  status?: number;
  /** Requests with this method. */
  method?: string;
  /** Keyed writes with this outcome. */
  outcome?: IdempotencyOutcome;
  /** Logged at or after this time (RFC 3339). */
  since?: string;
  /** Logged before this time (RFC 3339). */
  until?: string;
}

/** The filter of the event list. */
export interface EventListParams extends ListParams {
  /** Only events of this type. */
  type?: EventType;
}

/** One audit-log entry: who (`actor`) did what (`action`) to which resource (`target`), with its `changes` (docs/audit-log.md). */
export type AuditEntry = Schemas["AuditEntry"];
/** An audit-log action, e.g. "risk.updated", "user.role_changed". */
export type AuditAction = Schemas["AuditAction"];
/** Who made a change: a user (with their email as it was then), an API key, a webhook source, or `system` (a CLI command; `id` null). */
export type AuditActor = AuditEntry["actor"];
/** One member's change: `{ from, to }` (null where it had or has no value), or "changed" for a secret or password, whose values are never recorded. */
export type AuditChange = NonNullable<AuditEntry["changes"]>[string];

/** The filters of the audit log; absent members do not filter, and they combine. */
export interface AuditListParams extends ListParams {
  /** Only entries of this action. */
  action?: AuditAction;
  /** Only entries by this actor (a user's, key's or source's ID). */
  actorId?: string;
  /** Only entries about this resource (a risk's, user's, key's … ID). */
  targetId?: string;
  /** Only entries that occurred at or after this time (a Date, or RFC 3339). */
  since?: Date | string;
  /** Only entries that occurred before this time (exclusive; a Date, or RFC 3339). */
  until?: Date | string;
}

/** The query of an export: the list's filters (no paging) and the format. */
export interface AuditExportParams extends Omit<AuditListParams, "limit" | "cursor"> {
  /** "ndjson": one entry per line, as the list shows it; "csv": one row per entry, `changes` as JSON. */
  format: "ndjson" | "csv";
}

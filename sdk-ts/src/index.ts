/**
 * @riskapi/sdk — the official TypeScript SDK of riskapi, for Node 20+ and
 * browsers. See docs/sdk-typescript.md.
 *
 * ```ts
 * const client = new RiskApi({ apiKey: process.env.RISKAPI_KEY!, baseUrl: "http://127.0.0.1:8080" });
 * const risk = await client.risks.create({ title: "Vendor contract missing a DPA", likelihood: 3, impact: 4 });
 * for await (const r of client.risks.list()) console.log(r.id, r.title);
 *
 * // In a browser page of the dashboard's origin, as the signed-in user (/v1, the session cookie):
 * const me = await new RiskApi({ session: true }).account.me();
 * ```
 */

export { RiskApi, type ClientOptions, type RawRequest, type RawResponse } from "./client.js";
export { Risks } from "./risks.js";
export { linesOf, riskQuery, type RiskExport, type RiskImportParams } from "./register.js";
export { Attachments, type AttachmentContent, type AttachmentUploadParams, type UploadSource } from "./attachments.js";
export { Events } from "./events.js";
export { Reviews, Actions, Acceptances } from "./followup.js";
export { Requests, IdempotencyKeys } from "./requests.js";
export { AuditLog, type AuditExport } from "./audit.js";
export { Account } from "./account.js";
export { Users, ApiKeys, WebhookSources, WebhookEndpoints } from "./admin.js";
export { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_S } from "./webhooks.js";
export { RiskApiError, NetworkError, type ErrorCode, type FieldError } from "./errors.js";
export { etag, StaleRiskError, MAX_MODIFY_ATTEMPTS } from "./versions.js";
export {
  classify,
  backoffDelay,
  parseRetryAfter,
  BASE_WAIT_MS,
  DEFAULT_MAX_WAIT_MS,
  type RetryDecision,
} from "./retry.js";
export { API_VERSION } from "./transport.js";
export type { CallOptions, ResponseInfo, RetryEvent } from "./transport.js";
export type {
  Acceptance,
  AcceptanceCreateParams,
  AcceptanceListParams,
  Action,
  ActionCreateParams,
  ActionListParams,
  ActionUpdateParams,
  Review,
  ReviewCreateParams,
  Owner,
  OwnerWrite,
  ApiKey,
  ApiKeyMode,
  SandboxErased,
  ApiKeyCreated,
  ApiKeyCreateParams,
  Attachment,
  AuditAction,
  AuditActor,
  AuditChange,
  AuditEntry,
  AuditExportParams,
  AuditListParams,
  DeliveryAttempt,
  Event,
  EventListParams,
  EventType,
  IdempotencyKeyState,
  IdempotencyOutcome,
  ListParams,
  Me,
  MyWork,
  Page,
  Problem,
  RequestListParams,
  RequestLogEntry,
  Heatmap,
  HeatmapCell,
  HeatmapMove,
  ImportReport,
  Risk,
  RiskCreateParams,
  RiskExportParams,
  RiskFilter,
  FactorValue,
  RiskHeatmapParams,
  RiskListParams,
  RiskMetadata,
  RiskSort,
  RiskTreatment,
  RiskReplaceParams,
  RiskStatus,
  RiskUpdateParams,
  Role,
  Scope,
  User,
  UserCreateParams,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointCreateParams,
  WebhookSource,
  WebhookSourceCreated,
} from "./types.js";
export type { components, paths } from "./openapi.js";

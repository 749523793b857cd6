/**
 * @riskapi/sdk — the official TypeScript SDK of riskapi, for Node 20+ and
 * browsers. See docs/sdk-typescript.md.
 *
 * ```ts
 * const client = new RiskApi({ apiKey: process.env.RISKAPI_KEY!, baseUrl: "http://127.0.0.1:8080" });
 * const risk = await client.risks.create({ title: "Vendor contract missing a DPA", likelihood: 3, impact: 4 });
 * for await (const r of client.risks.list()) console.log(r.id, r.title);
 * ```
 */

export { RiskApi, type ClientOptions } from "./client.js";
export { Risks } from "./risks.js";
export { Attachments, type AttachmentContent, type AttachmentUploadParams, type UploadSource } from "./attachments.js";
export { RiskApiError, NetworkError, type ErrorCode, type FieldError } from "./errors.js";
export {
  classify,
  backoffDelay,
  parseRetryAfter,
  BASE_WAIT_MS,
  DEFAULT_MAX_WAIT_MS,
  type RetryDecision,
} from "./retry.js";
export type { CallOptions, ResponseInfo, RetryEvent } from "./transport.js";
export type {
  Attachment,
  ListParams,
  Page,
  Problem,
  Risk,
  RiskCreateParams,
  RiskReplaceParams,
  RiskStatus,
  RiskUpdateParams,
} from "./types.js";
export type { components, paths } from "./openapi.js";

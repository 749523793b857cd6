/**
 * The shapes of the API, taken from the types generated from docs/openapi.yaml
 * (src/openapi.ts, `npm run generate`), so that they cannot drift from the spec.
 */

import type { components, paths } from "./openapi.js";

type Schemas = components["schemas"];

/** A risk as the server returns it; `likelihood`, `impact` and `riskScore` are null when not assessed. */
export type Risk = Schemas["Risk"];
/** The status of a risk: "open", "mitigated" or "closed". */
export type RiskStatus = Schemas["RiskStatus"];
/** The body of POST /v2/risks: `title` is required; `status` defaults to "open". */
export type RiskCreateParams = paths["/v2/risks"]["post"]["requestBody"]["content"]["application/json"];
/** The body of PUT /v2/risks/{id}: a full replace, shaped like a create. */
export type RiskReplaceParams = paths["/v2/risks/{id}"]["put"]["requestBody"]["content"]["application/json"];
/** The body of PATCH /v2/risks/{id}: only the fields given change; `null` unsets a number. */
export type RiskUpdateParams = paths["/v2/risks/{id}"]["patch"]["requestBody"]["content"]["application/json"];
/** A file attached to a risk. */
export type Attachment = Schemas["Attachment"];
/** An RFC 9457 problem document, as the server sends it on every 4xx/5xx. */
export type Problem = Schemas["Problem"];

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

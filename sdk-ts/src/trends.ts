/**
 * The register in time (docs/register.md, "Appetite" and "Trends"): the
 * series of the tenant's daily snapshots, a risk's score history, and in
 * session mode the tenant's risk appetite. The Go SDK's Risks.Trends and
 * Risks.ScoreHistory are their twins.
 */

import type { Send } from "./page.js";
import { jsonBody } from "./risks.js";
import type { CallOptions } from "./transport.js";
import type { components } from "./openapi.js";

type Schemas = components["schemas"];
/** The register's counts on one day. */
export type TrendCounts = Schemas["TrendCounts"];
/** One step of a series: the counts of its last snapshot. */
export type TrendPoint = Schemas["TrendPoint"];
/** A series; a step the server did not run in has no point. */
export type TrendSeries = Schemas["TrendSeries"];
/** A risk's scores from `at` on. */
export type ScorePoint = Schemas["ScorePoint"];
/** The tenant, its API version pin and its appetite (GET /v1/tenant). */
export type Tenant = Schemas["TenantPin"];
/** A merge patch of the tenant's appetite (PATCH /v1/tenant). */
export type AppetitePatch = Schemas["TenantAppetitePatch"];

/** The query of a series: days `from`–`to` (YYYY-MM-DD, UTC) by `interval`; the server's defaults are the 90 days to today, by day. */
export interface TrendsParams {
  from?: string;
  to?: string;
  interval?: "day" | "week" | "month";
}

/** A tenant as read, with the ETag of its appetite's version for `setAppetite`'s `ifMatch`. */
export interface TenantWithETag {
  tenant: Tenant;
  etag: string;
}

/** The register's trends and scores over time; with an API key, scope risks:read. */
export class Trends {
  constructor(
    private readonly send: Send,
    private readonly session: (what: string) => void,
  ) {}

  /** The series of daily snapshots (GET /register/trends). */
  async series(params: TrendsParams = {}, opts?: CallOptions): Promise<TrendSeries> {
    const r = await this.send({ method: "GET", path: "/register/trends", query: { ...params }, expect: "json" }, opts);
    return r.json as TrendSeries;
  }

  /** A risk's score history, oldest first (GET /risks/{id}/score-history); a risk never had is a 404 RiskApiError. */
  async scoreHistory(riskId: string, opts?: CallOptions): Promise<ScorePoint[]> {
    const r = await this.send({ method: "GET", path: `/risks/${encodeURIComponent(riskId)}/score-history`, expect: "json" }, opts);
    return (r.json as { data: ScorePoint[] }).data;
  }

  /** Session mode: the tenant and its appetite (GET /v1/tenant). */
  async tenant(opts?: CallOptions): Promise<TenantWithETag> {
    this.session("trends.tenant");
    const r = await this.send({ method: "GET", path: "/tenant", expect: "raw", accept: "application/json" }, opts);
    const res = r.response;
    return { tenant: (await res.json()) as Tenant, etag: res.headers.get("ETag") ?? "" };
  }

  /**
   * Session mode, admins: sets the tenant's appetite (PATCH /v1/tenant);
   * `opts.ifMatch` (the `etag` of `tenant()`) makes it conditional (412 when stale).
   */
  async setAppetite(patch: AppetitePatch, opts?: CallOptions): Promise<Tenant> {
    this.session("trends.setAppetite");
    const r = await this.send({ method: "PATCH", path: "/tenant", body: jsonBody(patch), expect: "json" }, opts);
    return r.json as Tenant;
  }
}

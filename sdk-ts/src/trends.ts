/**
 * The register in time (docs/register.md, "Appetite" and "Trends"): the
 * series of the tenant's daily snapshots, a risk's score history, and in
 * session mode the tenant's risk appetite. The Go SDK's Risks.Trends and
 * Risks.ScoreHistory are their twins.
 */

import type { RiskApi } from "./client.js";
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

/**
 * The register's trends and scores over time (with an API key, scope
 * risks:read), and in session mode the tenant's appetite:
 * `const t = new Trends(client); await t.series({ interval: "week" })`.
 * Not a member of RiskApi, so that an app that never draws a trend (the
 * dashboard's first load) carries none of it.
 */
export class Trends {
  constructor(private readonly client: RiskApi) {}

  /** The series of daily snapshots (GET /register/trends). */
  async series(params: TrendsParams = {}, opts?: CallOptions): Promise<TrendSeries> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    const qs = q.toString();
    return (await this.client.request({ method: "GET", path: "/register/trends" + (qs ? `?${qs}` : "") }, opts)).json as TrendSeries;
  }

  /** A risk's score history, oldest first (GET /risks/{id}/score-history); a risk never had is a 404 RiskApiError. */
  async scoreHistory(riskId: string, opts?: CallOptions): Promise<ScorePoint[]> {
    const r = await this.client.request({ method: "GET", path: `/risks/${encodeURIComponent(riskId)}/score-history` }, opts);
    return (r.json as { data: ScorePoint[] }).data;
  }

  /** Session mode: the tenant and its appetite (GET /v1/tenant); `appetiteETag(tenant)` is what setAppetite's `ifMatch` takes. */
  async tenant(opts?: CallOptions): Promise<Tenant> {
    return (await this.client.request({ method: "GET", path: "/tenant" }, opts)).json as Tenant;
  }

  /**
   * Session mode, admins: sets the tenant's appetite (PATCH /v1/tenant, keyed);
   * `opts.ifMatch` (`appetiteETag(tenant)`) makes it conditional (412 when stale).
   */
  async setAppetite(patch: AppetitePatch, opts?: CallOptions): Promise<Tenant> {
    return (await this.client.request({ method: "PATCH", path: "/tenant", json: patch }, opts)).json as Tenant;
  }
}

/** appetiteETag is the ETag of the tenant's appetite, for setAppetite's `ifMatch`. */
export function appetiteETag(t: Tenant): string {
  return `"${t.appetiteVersion}"`;
}

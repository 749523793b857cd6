/** The risk calls (docs/openapi.yaml, tag "risks"), the same under /v1 and /v2. */

import { getPage, paginate, type Send } from "./page.js";
import type { CallOptions, Request } from "./transport.js";
import type { ListParams, Page, Risk, RiskCreateParams, RiskReplaceParams, RiskUpdateParams } from "./types.js";

/** A JSON request body, encoded once and sent unchanged on every attempt. */
export function jsonBody(v: unknown): Request["body"] {
  const text = JSON.stringify(v);
  return () => ({ body: text, contentType: "application/json" });
}

/** Risks of the client's tenant; with an API key, writes need scope risks:write, reads risks:read. */
export class Risks {
  constructor(private readonly send: Send) {}

  /** Creates a risk (POST /v2/risks, 201). `riskScore` defaults to likelihood × impact when both are given. */
  async create(params: RiskCreateParams, opts?: CallOptions): Promise<Risk> {
    const r = await this.send({ method: "POST", path: "/risks", body: jsonBody(params), expect: "json" }, opts);
    return r.json as Risk;
  }

  /** Reads one risk (GET /v2/risks/{id}); another tenant's is a 404 RiskApiError. */
  async get(id: string, opts?: CallOptions): Promise<Risk> {
    const r = await this.send({ method: "GET", path: riskPath(id), expect: "json" }, opts);
    return r.json as Risk;
  }

  /** Reads one page of risks (GET /v2/risks?limit=&cursor=). */
  async listPage(params: ListParams = {}, opts?: CallOptions): Promise<Page<Risk>> {
    return getPage<Risk>(this.send, "/risks", params, opts);
  }

  /** Every risk, page by page: `for await (const r of client.risks.list()) …`. */
  list(params: ListParams = {}, opts?: CallOptions): AsyncGenerator<Risk, void, undefined> {
    return paginate((cursor) => this.listPage({ limit: params.limit, cursor }, opts), params.cursor);
  }

  /** Changes the fields given (PATCH /v2/risks/{id}); `null` unsets likelihood, impact or riskScore. */
  async update(id: string, params: RiskUpdateParams, opts?: CallOptions): Promise<Risk> {
    const r = await this.send({ method: "PATCH", path: riskPath(id), body: jsonBody(params), expect: "json" }, opts);
    return r.json as Risk;
  }

  /** Replaces the risk (PUT /v2/risks/{id}); fields not given take their defaults, as on create. */
  async replace(id: string, params: RiskReplaceParams, opts?: CallOptions): Promise<Risk> {
    const r = await this.send({ method: "PUT", path: riskPath(id), body: jsonBody(params), expect: "json" }, opts);
    return r.json as Risk;
  }

  /** Deletes the risk (DELETE /v2/risks/{id}, 204). A retry of a delete that went through is replayed, not a 404. */
  async delete(id: string, opts?: CallOptions): Promise<void> {
    await this.send({ method: "DELETE", path: riskPath(id), expect: "empty" }, opts);
  }
}

function riskPath(id: string): string {
  return "/risks/" + encodeURIComponent(id);
}

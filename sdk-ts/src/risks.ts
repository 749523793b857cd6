/** The risk calls (docs/openapi.yaml, tag "risks"), the same under /v1 and /v2. */

import { paginate, type Send } from "./page.js";
import { exportRisks, heatmap, importRisks, riskQuery, type RiskExport, type RiskImportParams } from "./register.js";
import type { CallOptions, Request } from "./transport.js";
import type {
  Heatmap, ImportReport, Page, Risk, RiskCreateParams, RiskExportParams, RiskHeatmapParams, RiskListParams, RiskReplaceParams, RiskUpdateParams,
} from "./types.js";
import { etag, MAX_MODIFY_ATTEMPTS, staleRisk, StaleRiskError } from "./versions.js";

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

  /**
   * Reads one page of the risks the filters select, in the order of `sort`
   * (GET /v2/risks; docs/register.md, "Finding risks"). Pass the page's
   * `nextCursor` with the same filters and sort for the next page; a cursor
   * sent with another query is a 400 naming `cursor`.
   */
  async listPage(params: RiskListParams = {}, opts?: CallOptions): Promise<Page<Risk>> {
    const r = await this.send({ method: "GET", path: "/risks", query: riskQuery(params), expect: "json" }, opts);
    return r.json as Page<Risk>;
  }

  /**
   * Every risk the filters select, page by page, each once, in the order of
   * `sort`: `for await (const r of client.risks.list({ status: "open", sort: "-riskScore" })) …`.
   */
  list(params: RiskListParams = {}, opts?: CallOptions): AsyncGenerator<Risk, void, undefined> {
    const { cursor: first, ...query } = params;
    return paginate((cursor) => this.listPage({ ...query, ...(cursor ? { cursor } : {}) }, opts), first);
  }

  /** Counts the risks the filters select by likelihood × impact, or the residual pair (GET /v2/risks/heatmap). */
  async heatmap(params: RiskHeatmapParams = {}, opts?: CallOptions): Promise<Heatmap> {
    return heatmap(this.send, params, opts);
  }

  /**
   * Opens a streamed export of the risks the filters select, CSV (default) or
   * NDJSON, in the order of `sort` (GET /v2/risks/export):
   * `for await (const line of (await client.risks.export({ format: "ndjson" })).lines()) …`.
   */
  async export(params: RiskExportParams = {}, opts?: CallOptions): Promise<RiskExport> {
    return exportRisks(this.send, params, opts);
  }

  /**
   * Imports a CSV in one unit of work (POST /v2/risks/import): every row is
   * written or none; rows with an externalId create or update that risk, so
   * the same file twice changes nothing the second time. With `dryRun` it
   * answers the same report and writes nothing. Keyed like every write (give
   * `opts.idempotencyKey` to keep one key across processes); a retry is
   * replayed, never imported twice. Rejects with a 400 RiskApiError whose
   * `errors` carry `row`, `field` and `detail` for every bad row, 413 past the
   * server's row limit.
   */
  async import(params: RiskImportParams, opts?: CallOptions): Promise<ImportReport> {
    return importRisks(this.send, params, opts);
  }

  /**
   * Changes the fields given (PATCH /v2/risks/{id}); `null` unsets likelihood,
   * impact or riskScore. With `opts.ifMatch` (`etag(risk)`) it writes only
   * over that version: otherwise it rejects with a StaleRiskError carrying the
   * risk as stored, and nothing changes.
   */
  async update(id: string, params: RiskUpdateParams, opts?: CallOptions): Promise<Risk> {
    return this.write("PATCH", id, params, opts);
  }

  /** Replaces the risk (PUT /v2/risks/{id}); fields not given take their defaults, as on create. `opts.ifMatch` as for update. */
  async replace(id: string, params: RiskReplaceParams, opts?: CallOptions): Promise<Risk> {
    return this.write("PUT", id, params, opts);
  }

  /**
   * Deletes the risk (DELETE /v2/risks/{id}, 204). A retry of a delete that
   * went through is replayed, not a 404. `opts.ifMatch` as for update.
   */
  async delete(id: string, opts?: CallOptions): Promise<void> {
    await this.send({ method: "DELETE", path: riskPath(id), expect: "empty" }, opts).catch((e: unknown) => {
      throw staleRisk(e);
    });
  }

  /**
   * modify is the safe read-change-write of one risk: it reads the risk, asks
   * `change` for the update to make to it, and sends that with If-Match of the
   * version read. When another writer changed the risk in between (412), it
   * calls `change` again on the risk as stored now (the refusal carries it, so
   * no extra read) and tries again, at most MAX_MODIFY_ATTEMPTS writes.
   * Nobody's change is overwritten unseen: `change` always decides on the
   * latest version.
   *
   * ```ts
   * const r = await client.risks.modify(id, (r) => ({ owner: { name: r.owner.name.toLowerCase() } }));
   * ```
   *
   * `opts.ifMatch` is set by modify; each write gets its own idempotency key
   * unless `opts.idempotencyKey` is given (a 412 is not stored by the server,
   * so the same key runs again). A rejection of `change` stops modify as is.
   * Rejects with the errors of get and update, and with the last
   * StaleRiskError when every attempt found a newer version.
   */
  async modify(id: string, change: (r: Risk) => RiskUpdateParams | Promise<RiskUpdateParams>, opts: CallOptions = {}): Promise<Risk> {
    const { ifMatch: _ignored, ...rest } = opts;
    let r = await this.get(id, rest);
    for (let attempt = 1; ; attempt++) {
      const params = await change(r);
      try {
        return await this.update(id, params, { ...rest, ifMatch: etag(r) });
      } catch (e) {
        if (!(e instanceof StaleRiskError) || attempt >= MAX_MODIFY_ATTEMPTS) throw e;
        r = e.current;
      }
    }
  }

  /** write sends a PATCH or PUT and decodes the risk answered; a 412 with the stored risk becomes a StaleRiskError. */
  private async write(method: "PATCH" | "PUT", id: string, params: RiskUpdateParams | RiskReplaceParams, opts?: CallOptions): Promise<Risk> {
    try {
      const r = await this.send({ method, path: riskPath(id), body: jsonBody(params), expect: "json" }, opts);
      return r.json as Risk;
    } catch (e) {
      throw staleRisk(e);
    }
  }
}

function riskPath(id: string): string {
  return "/risks/" + encodeURIComponent(id);
}

/**
 * The audit log and a risk's history (docs/openapi.yaml, tag "audit";
 * docs/audit-log.md), under /v1 (administrators) and /v2 (scope audit:read;
 * a risk's history needs risks:read). The Go SDK's AuditLogService is its twin.
 */

import { getPage, paginate, type Send } from "./page.js";
import type { CallOptions } from "./transport.js";
import type { AuditEntry, AuditExportParams, AuditListParams, ListParams, Page } from "./types.js";

/** An export being read: the headers at once, the entries as the server streams them. */
export interface AuditExport {
  /** "application/x-ndjson" or "text/csv; charset=utf-8". */
  contentType: string;
  /**
   * The unread response: read it with `.text()`, `.blob()` or `.body` (a
   * ReadableStream). The server ends the body early if its store fails
   * mid-stream, so a short export is possible: compare with what you expect
   * (the last ID, the `until` of the window).
   */
  response: Response;
}

/** The tenant's audit log, newest first, and one risk's history, oldest first. */
export class AuditLog {
  constructor(private readonly send: Send) {}

  /** Reads one page of the log (GET /audit-log with the filters of params); an unknown action or a bad date is a 400 RiskApiError. */
  listPage(params: AuditListParams = {}, opts?: CallOptions): Promise<Page<AuditEntry>> {
    return getPage<AuditEntry>(this.send, "/audit-log", query(params), opts);
  }

  /** Every entry matching params, newest first, page by page: `for await (const e of client.auditLog.list({ action: "risk.updated" })) …`. */
  list(params: AuditListParams = {}, opts?: CallOptions): AsyncGenerator<AuditEntry, void, undefined> {
    return paginate((cursor) => this.listPage({ ...params, cursor }, opts), params.cursor);
  }

  /**
   * Starts an export of every entry matching params (GET /audit-log/export,
   * `format` "ndjson" or "csv"), newest first; retried until its headers
   * arrive, then handed over unread so that a large log is never held in
   * memory. See {@link AuditLog.exportEntries} to read NDJSON as entries.
   */
  async export(params: AuditExportParams, opts?: CallOptions): Promise<AuditExport> {
    const accept = params.format === "csv" ? "text/csv" : "application/x-ndjson";
    const q = query(params) as Record<string, string | number | undefined>;
    const r = await this.send({ method: "GET", path: "/audit-log/export", query: q, expect: "raw", accept }, opts);
    return { contentType: r.response.headers.get("Content-Type") ?? accept, response: r.response };
  }

  /**
   * Every entry matching params, newest first, parsed from an NDJSON export as
   * its lines arrive: one request, however long the log. A connection lost
   * mid-stream rejects the iteration (export again from the `until` of the
   * last entry read: `until` is exclusive).
   */
  async *exportEntries(params: Omit<AuditExportParams, "format"> = {}, opts?: CallOptions): AsyncGenerator<AuditEntry, void, undefined> {
    const { response } = await this.export({ ...params, format: "ndjson" }, opts);
    if (!response.body) return;
    yield* ndjson(response.body);
  }

  /** Reads one page of the risk's history, oldest first (GET /risks/{id}/history); a risk with no entry is a 404 RiskApiError. */
  historyPage(riskId: string, params: ListParams = {}, opts?: CallOptions): Promise<Page<AuditEntry>> {
    return getPage<AuditEntry>(this.send, `/risks/${encodeURIComponent(riskId)}/history`, { limit: params.limit, cursor: params.cursor }, opts);
  }

  /** Every entry of the risk's history, oldest first, page by page; it works after the risk is deleted. */
  history(riskId: string, params: ListParams = {}, opts?: CallOptions): AsyncGenerator<AuditEntry, void, undefined> {
    return paginate((cursor) => this.historyPage(riskId, { limit: params.limit, cursor }, opts), params.cursor);
  }
}

/** query is the list's query string: dates as RFC 3339 in UTC, absent filters left out. */
function query(p: AuditListParams | AuditExportParams): ListParams {
  const out = { ...p } as Record<string, unknown>;
  for (const k of ["since", "until"] as const) {
    const v = p[k];
    out[k] = v instanceof Date ? v.toISOString() : v || undefined;
  }
  for (const k of ["action", "actorId", "targetId", "cursor"] as const) if (!out[k]) delete out[k];
  return out as ListParams;
}

/** ndjson yields one parsed value per non-empty line of body, as the bytes arrive. */
async function* ndjson(body: ReadableStream<Uint8Array>): AsyncGenerator<AuditEntry, void, undefined> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let rest = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      rest += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = rest.split("\n");
      rest = done ? "" : lines.pop()!;
      for (const line of lines) if (line.trim() !== "") yield JSON.parse(line) as AuditEntry;
      if (done) return;
    }
  } finally {
    // A loop that breaks early stops the download. Not awaited: a teed body
    // (a fetch wrapper that clones) settles its cancel only with both branches.
    void reader.cancel().catch(() => undefined);
  }
}

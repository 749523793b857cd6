/** The request log and the idempotency inspector (docs/requests.md), under /v1 and /v2. */

import { getPage, paginate, type Send } from "./page.js";
import type { CallOptions } from "./transport.js";
import type { IdempotencyKeyState, Page, RequestListParams, RequestLogEntry } from "./types.js";

/** The tenant's request log, newest first; with an API key, scope requests:read. */
export class Requests {
  constructor(private readonly send: Send) {}

  /** Reads one page of the log (GET /requests with the filters of params). */
  listPage(params: RequestListParams = {}, opts?: CallOptions): Promise<Page<RequestLogEntry>> {
    return getPage<RequestLogEntry>(this.send, "/requests", params, opts);
  }

  /** Every entry matching params, page by page. */
  list(params: RequestListParams = {}, opts?: CallOptions): AsyncGenerator<RequestLogEntry, void, undefined> {
    return paginate((cursor) => this.listPage({ ...params, cursor }, opts), params.cursor);
  }

  /** The entry of one request, by its request id (GET /requests/{id}); unknown or expired: 404 RiskApiError. */
  async get(requestId: string, opts?: CallOptions): Promise<RequestLogEntry> {
    return (await this.send({ method: "GET", path: "/requests/" + encodeURIComponent(requestId), expect: "json" }, opts)).json as RequestLogEntry;
  }
}

/** The idempotency inspector: what became of a keyed write, without sending it again. */
export class IdempotencyKeys {
  constructor(private readonly send: Send) {}

  /**
   * What the server knows of key as sent with method and path, e.g.
   * ("…", "POST", "/v1/risks") (GET /idempotency-keys/{key}?method=&path=).
   * No live record (never sent, expired, failed before running): 404 RiskApiError.
   */
  async get(key: string, method: string, path: string, opts?: CallOptions): Promise<IdempotencyKeyState> {
    const r = await this.send({ method: "GET", path: "/idempotency-keys/" + encodeURIComponent(key), query: { method, path }, expect: "json" }, opts);
    return r.json as IdempotencyKeyState;
  }
}

/** The event calls (docs/openapi.yaml, tag "events"; docs/events.md), under /v1 and /v2. */

import { getPage, paginate, type Send } from "./page.js";
import type { CallOptions } from "./transport.js";
import type { Event, EventListParams, Page } from "./types.js";

/** Events of the client's tenant, newest first; with an API key, scope events:read. */
export class Events {
  constructor(
    private readonly send: Send,
    private readonly session: (what: string) => void,
  ) {}

  /** Reads one page of events (GET /events?limit=&cursor=&type=). */
  listPage(params: EventListParams = {}, opts?: CallOptions): Promise<Page<Event>> {
    return getPage<Event>(this.send, "/events", params, opts);
  }

  /** Every event, page by page. */
  list(params: EventListParams = {}, opts?: CallOptions): AsyncGenerator<Event, void, undefined> {
    return paginate((cursor) => this.listPage({ ...params, cursor }, opts), params.cursor);
  }

  /** Reads one event (GET /events/{id}); an expired or another tenant's is a 404 RiskApiError. */
  async get(id: string, opts?: CallOptions): Promise<Event> {
    return (await this.send({ method: "GET", path: "/events/" + encodeURIComponent(id), expect: "json" }, opts)).json as Event;
  }

  /** Delivers the event again to the tenant's endpoints (POST /v1/events/{id}/redeliver; session mode, admins). */
  async redeliver(id: string, opts?: CallOptions): Promise<unknown> {
    this.session("events.redeliver");
    return (await this.send({ method: "POST", path: `/events/${encodeURIComponent(id)}/redeliver`, expect: "json" }, opts)).json;
  }
}

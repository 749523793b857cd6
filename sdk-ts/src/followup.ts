/**
 * The register in time (docs/openapi.yaml, tag "register"; docs/register.md): a
 * risk's reviews, treatment actions and acceptances, the same under /v1 and /v2.
 * Deciding an acceptance is an admin's: session mode only.
 */

import { getPage, paginate, type Send } from "./page.js";
import { jsonBody } from "./risks.js";
import type { CallOptions } from "./transport.js";
import type {
  Acceptance, AcceptanceCreateParams, AcceptanceListParams, Action, ActionCreateParams, ActionListParams, ActionUpdateParams,
  Page, Review, ReviewCreateParams,
} from "./types.js";

type PageParams = { limit?: number; cursor?: string };

const riskPath = (id: string, what: string) => `/risks/${encodeURIComponent(id)}/${what}`;

/** Reviews of risks; a review moves the risk's reviewDate to today plus its reviewEvery. */
export class Reviews {
  constructor(private readonly send: Send) {}

  /** Records a review of the risk (POST /risks/{id}/reviews). */
  async create(riskId: string, params: ReviewCreateParams, opts?: CallOptions): Promise<Review> {
    return (await this.send({ method: "POST", path: riskPath(riskId, "reviews"), body: jsonBody(params), expect: "json" }, opts)).json as Review;
  }

  /** The risk's reviews, newest first. */
  list(riskId: string, params: PageParams = {}, opts?: CallOptions): AsyncGenerator<Review, void, undefined> {
    return paginate((cursor) => getPage<Review>(this.send, riskPath(riskId, "reviews"), { ...params, cursor }, opts), params.cursor);
  }
}

/** Treatment actions; `opts.ifMatch` (`"<version>"`) makes an update conditional (412 when stale). */
export class Actions {
  constructor(private readonly send: Send) {}

  /** Adds an open action to the risk (POST /risks/{id}/actions); the owner is a user of the tenant. */
  async create(riskId: string, params: ActionCreateParams, opts?: CallOptions): Promise<Action> {
    return (await this.send({ method: "POST", path: riskPath(riskId, "actions"), body: jsonBody(params), expect: "json" }, opts)).json as Action;
  }

  /** The action (GET /actions/{id}); its version is its ETag. */
  async get(id: string, opts?: CallOptions): Promise<Action> {
    return (await this.send({ method: "GET", path: "/actions/" + encodeURIComponent(id), expect: "json" }, opts)).json as Action;
  }

  /** Changes the action (PATCH /actions/{id}). */
  async update(id: string, params: ActionUpdateParams, opts?: CallOptions): Promise<Action> {
    return (await this.send({ method: "PATCH", path: "/actions/" + encodeURIComponent(id), body: jsonBody(params), expect: "json" }, opts)).json as Action;
  }

  /** One page of the tenant's actions (GET /actions?ownerId=&status=&dueBefore=). */
  listPage(params: ActionListParams = {}, opts?: CallOptions): Promise<Page<Action>> {
    return getPage<Action>(this.send, "/actions", params, opts);
  }

  /** The tenant's actions, oldest first. */
  list(params: ActionListParams = {}, opts?: CallOptions): AsyncGenerator<Action, void, undefined> {
    return paginate((cursor) => this.listPage({ ...params, cursor }, opts), params.cursor);
  }

  /** The risk's actions, oldest first. */
  listForRisk(riskId: string, params: PageParams = {}, opts?: CallOptions): AsyncGenerator<Action, void, undefined> {
    return paginate((cursor) => getPage<Action>(this.send, riskPath(riskId, "actions"), { ...params, cursor }, opts), params.cursor);
  }
}

/** Acceptances of risks: requested by anyone with risks:write, decided by another admin (session mode). */
export class Acceptances {
  constructor(
    private readonly send: Send,
    private readonly session: (what: string) => void,
  ) {}

  /** Requests the acceptance of the risk until validUntil, at most a year away (POST /risks/{id}/acceptances). */
  async request(riskId: string, params: AcceptanceCreateParams, opts?: CallOptions): Promise<Acceptance> {
    return (await this.send({ method: "POST", path: riskPath(riskId, "acceptances"), body: jsonBody(params), expect: "json" }, opts)).json as Acceptance;
  }

  /** The acceptance (GET /acceptances/{id}). */
  async get(id: string, opts?: CallOptions): Promise<Acceptance> {
    return (await this.send({ method: "GET", path: "/acceptances/" + encodeURIComponent(id), expect: "json" }, opts)).json as Acceptance;
  }

  /** Approves it (POST /v1/acceptances/{id}/approve): the risk's treatment becomes accept. The requester gets 403 SELF_APPROVAL. */
  async approve(id: string, note = "", opts?: CallOptions): Promise<Acceptance> {
    return this.decide(id, "approve", note, opts);
  }

  /** Rejects it (POST /v1/acceptances/{id}/reject). */
  async reject(id: string, note = "", opts?: CallOptions): Promise<Acceptance> {
    return this.decide(id, "reject", note, opts);
  }

  private async decide(id: string, verb: string, note: string, opts?: CallOptions): Promise<Acceptance> {
    this.session("acceptances." + verb);
    const path = `/acceptances/${encodeURIComponent(id)}/${verb}`;
    return (await this.send({ method: "POST", path, body: jsonBody({ note }), expect: "json" }, opts)).json as Acceptance;
  }

  /** The tenant's acceptances, newest first (GET /acceptances?status=). */
  list(params: AcceptanceListParams = {}, opts?: CallOptions): AsyncGenerator<Acceptance, void, undefined> {
    return paginate((cursor) => getPage<Acceptance>(this.send, "/acceptances", { ...params, cursor }, opts), params.cursor);
  }

  /** The risk's acceptances, newest first. */
  listForRisk(riskId: string, params: PageParams = {}, opts?: CallOptions): AsyncGenerator<Acceptance, void, undefined> {
    return paginate((cursor) => getPage<Acceptance>(this.send, riskPath(riskId, "acceptances"), { ...params, cursor }, opts), params.cursor);
  }
}

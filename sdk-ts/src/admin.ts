/**
 * The tenant's administration in session mode (docs/roles-and-credentials.md):
 * users, API keys, inbound webhook sources and outbound endpoints. Admins
 * only; a member gets 403. Creating a key, source or endpoint answers with a
 * secret shown once: those calls are sent without an Idempotency-Key (their
 * routes refuse one) and never retried.
 */

import { getPage, paginate, type Send } from "./page.js";
import { jsonBody } from "./risks.js";
import type { CallOptions } from "./transport.js";
import type {
  ApiKey, ApiKeyCreated, ApiKeyCreateParams, ApiKeyRolled, ApiKeyRollParams, DeliveryAttempt, ListParams, Page, Role, User, UserCreateParams,
  SandboxErased, WebhookEndpoint, WebhookEndpointCreated, WebhookEndpointCreateParams, WebhookEndpointPatch, WebhookEndpointSecret,
  WebhookPing, WebhookSource, WebhookSourceCreated,
} from "./types.js";

/** A collection under /v1 that admins list, create in and delete from. */
class Collection<T, Created, Params> {
  constructor(
    protected readonly send: Send,
    protected readonly session: (what: string) => void,
    private readonly path: string,
    private readonly secretOnCreate: boolean,
  ) {}

  /** Reads one page, newest first. */
  async listPage(params: ListParams = {}, opts?: CallOptions): Promise<Page<T>> {
    this.session(this.path);
    return getPage<T>(this.send, this.path, params, opts);
  }

  /** Every one, page by page, newest first: `for await (const u of client.users.list()) …`. */
  list(params: ListParams = {}, opts?: CallOptions): AsyncGenerator<T, void, undefined> {
    return paginate((cursor) => this.listPage({ ...params, cursor }, opts), params.cursor);
  }

  /** Creates one (201). */
  async create(params: Params, opts?: CallOptions): Promise<Created> {
    this.session(this.path);
    const r = await this.send({ method: "POST", path: this.path, body: jsonBody(params), expect: "json", unkeyed: this.secretOnCreate }, opts);
    return r.json as Created;
  }

  /** Deletes (or revokes) one by id (204). */
  async delete(id: string, opts?: CallOptions): Promise<void> {
    this.session(this.path);
    await this.send({ method: "DELETE", path: `${this.path}/${encodeURIComponent(id)}`, expect: "empty" }, opts);
  }
}

/** The tenant's users (/v1/users). */
export class Users extends Collection<User, User, UserCreateParams> {
  constructor(send: Send, session: (what: string) => void) {
    super(send, session, "/users", false);
  }

  /** Changes a user's role (PATCH /v1/users/{id}); demoting the last admin is 400. */
  async setRole(id: string, role: Role, opts?: CallOptions): Promise<User> {
    this.session("users.setRole");
    return (await this.send({ method: "PATCH", path: `/users/${encodeURIComponent(id)}`, body: jsonBody({ role }), expect: "json" }, opts)).json as User;
  }
}

/** The tenant's API keys (/v1/api-keys); delete revokes. */
export class ApiKeys extends Collection<ApiKey, ApiKeyCreated, ApiKeyCreateParams> {
  constructor(send: Send, session: (what: string) => void) {
    super(send, session, "/api-keys", true);
  }

  /**
   * Rolls a key (POST /v1/api-keys/{id}/roll): a new key with the same name, scopes and
   * networks, its secret shown this once; the old secret keeps working for `expiresIn`
   * seconds (0–604800), then gets 401 API_KEY_EXPIRED. `params` is that number, or the
   * body with `newKeyExpiresAt` (RFC 3339), the new key's expiry (none without it). Sent
   * unkeyed and never retried: the answer carries a secret.
   */
  async roll(id: string, params: number | ApiKeyRollParams, opts?: CallOptions): Promise<ApiKeyRolled> {
    this.session("apiKeys.roll");
    const body = typeof params === "number" ? { expiresIn: params } : params;
    const r = await this.send({ method: "POST", path: `/api-keys/${encodeURIComponent(id)}/roll`, body: jsonBody(body), expect: "json", unkeyed: true }, opts);
    return r.json as ApiKeyRolled;
  }
}

/** Inbound webhook sources (/v1/webhook-sources). */
export class WebhookSources extends Collection<WebhookSource, WebhookSourceCreated, { source: string }> {
  constructor(send: Send, session: (what: string) => void) {
    super(send, session, "/webhook-sources", true);
  }
}

/** Outbound webhook endpoints (/v1/webhook-endpoints) and their delivery attempts. */
export class WebhookEndpoints extends Collection<WebhookEndpoint, WebhookEndpointCreated, WebhookEndpointCreateParams> {
  constructor(send: Send, session: (what: string) => void) {
    super(send, session, "/webhook-endpoints", true);
  }

  /** One page of an endpoint's delivery attempts, newest first. */
  async deliveries(id: string, params: ListParams = {}, opts?: CallOptions): Promise<Page<DeliveryAttempt>> {
    this.session("webhookEndpoints.deliveries");
    return getPage<DeliveryAttempt>(this.send, `/webhook-endpoints/${encodeURIComponent(id)}/deliveries`, params, opts);
  }

  /** One endpoint (GET /v1/webhook-endpoints/{id}); never its secret. */
  async get(id: string, opts?: CallOptions): Promise<WebhookEndpoint> {
    this.session("webhookEndpoints.get");
    return (await this.send({ method: "GET", path: this.one(id), expect: "json" }, opts)).json as WebhookEndpoint;
  }

  /** Changes an endpoint's url, events or description (PATCH); members left out stay. */
  async update(id: string, patch: WebhookEndpointPatch, opts?: CallOptions): Promise<WebhookEndpoint> {
    this.session("webhookEndpoints.update");
    return (await this.send({ method: "PATCH", path: this.one(id), body: jsonBody(patch), expect: "json" }, opts)).json as WebhookEndpoint;
  }

  /** Disables an endpoint: events arriving meanwhile are logged as skipped, not sent. */
  async disable(id: string, opts?: CallOptions): Promise<WebhookEndpoint> {
    this.session("webhookEndpoints.disable");
    return (await this.send({ method: "POST", path: `${this.one(id)}/disable`, expect: "json" }, opts)).json as WebhookEndpoint;
  }

  /** Enables an endpoint again; redeliver its skipped events to send them. */
  async enable(id: string, opts?: CallOptions): Promise<WebhookEndpoint> {
    this.session("webhookEndpoints.enable");
    return (await this.send({ method: "POST", path: `${this.one(id)}/enable`, expect: "json" }, opts)).json as WebhookEndpoint;
  }

  /** Sends the endpoint a signed `endpoint.ping` now and answers its status and duration. */
  async ping(id: string, opts?: CallOptions): Promise<WebhookPing> {
    this.session("webhookEndpoints.ping");
    return (await this.send({ method: "POST", path: `${this.one(id)}/ping`, expect: "json" }, opts)).json as WebhookPing;
  }

  /**
   * Rolls the endpoint's signing secret: the new one is answered this once; until
   * `expiresIn` seconds (0–604800) have passed, deliveries carry both signatures.
   * Sent unkeyed and never retried: the answer carries a secret.
   */
  async rollSecret(id: string, expiresIn: number, opts?: CallOptions): Promise<WebhookEndpointSecret> {
    this.session("webhookEndpoints.rollSecret");
    const r = await this.send({ method: "POST", path: `${this.one(id)}/roll-secret`, body: jsonBody({ expiresIn }), expect: "json", unkeyed: true }, opts);
    return r.json as WebhookEndpointSecret;
  }

  private one(id: string): string {
    return `/webhook-endpoints/${encodeURIComponent(id)}`;
  }

  /** Every delivery attempt of an endpoint, page by page, newest first. */
  allDeliveries(id: string, params: ListParams = {}, opts?: CallOptions): AsyncGenerator<DeliveryAttempt, void, undefined> {
    return paginate((cursor) => this.deliveries(id, { ...params, cursor }, opts), params.cursor);
  }
}

/** The tenant's sandbox, its test data (docs/sandboxes.md). */
export class Sandbox {
  constructor(
    private readonly send: Send,
    private readonly session: (what: string) => void,
  ) {}

  /**
   * Erases the sandbox's data (DELETE /v1/sandbox/data), whichever mode the client is
   * in; keys, endpoints and sources are kept. Sent without an Idempotency-Key, which
   * the route refuses: erasing twice is erasing once.
   */
  async erase(opts?: CallOptions): Promise<SandboxErased> {
    this.session("sandbox.erase");
    return (await this.send({ method: "DELETE", path: "/sandbox/data", expect: "json", unkeyed: true }, opts)).json as SandboxErased;
  }
}

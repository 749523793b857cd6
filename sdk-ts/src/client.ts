/**
 * The client: its two modes, its options, their defaults and their
 * validation. The calls live in one file per service; the call loop in
 * transport.ts.
 */

import { Account } from "./account.js";
import { ApiKeys, Sandbox, Users, WebhookEndpoints, WebhookSources } from "./admin.js";
import { Attachments, multipartBody, type UploadSource } from "./attachments.js";
import { AuditLog } from "./audit.js";
import type { RiskApiError } from "./errors.js";
import { Events } from "./events.js";
import { Acceptances, Actions, Reviews } from "./followup.js";
import { IdempotencyKeys, Requests } from "./requests.js";
import { DEFAULT_MAX_WAIT_MS } from "./retry.js";
import { Risks, jsonBody } from "./risks.js";
import { SDK_VERSION, call, defaultSleep, type CallOptions, type RetryEvent, type TransportConfig } from "./transport.js";

/**
 * Options of {@link RiskApi}. Exactly one mode: `apiKey` (the public API,
 * /v2, `Authorization: Bearer`) or `session: true` (a browser page of the
 * dashboard's origin, /v1, the HttpOnly session cookie sent by the browser).
 */
export interface ClientOptions {
  /** The API key, "rk_…" (from `api apikey create`), sent as `Authorization: Bearer`. Never logged. */
  apiKey?: string;
  /** True: speak /v1 as the signed-in browser user, with the session cookie (same origin); no apiKey. */
  session?: boolean;
  /** The server root; default the page's origin in session mode, else "http://localhost:8080". A path prefix is kept. */
  baseUrl?: string;
  /** The fetch to send with, default globalThis.fetch (Node 20+, browsers). Inject one for proxies or tests. */
  fetch?: typeof globalThis.fetch;
  /** Retries after the first attempt, default 20 (high enough that maxElapsedMs normally ends a call); 0 disables retrying. */
  maxRetries?: number;
  /** Cap of a single wait, Retry-After included, in milliseconds; default 30 000. */
  maxWaitMs?: number;
  /** Budget of one call in milliseconds, default 60 000: no retry starts whose wait would end past it. */
  maxElapsedMs?: number;
  /** Timeout of one attempt (until its whole answer is read), in milliseconds; default 120 000. A timed-out attempt is retried. */
  attemptTimeoutMs?: number;
  /** Prefixes the User-Agent header (Node; browsers keep their own). */
  userAgent?: string;
  /** Waits ms milliseconds, rejecting when signal aborts. For tests: observe waits without waiting. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1), default Math.random: the jitter of the backoff. */
  random?: () => number;
  /** The clock in epoch milliseconds, default Date.now: the call budget and HTTP-date Retry-After. */
  now?: () => number;
  /** Called before each wait with the reason of the retry; the API key is never in it. */
  onRetry?: (e: RetryEvent) => void;
  /** Called with every 401 answer before its call rejects: the session ended (or the key was revoked). */
  onUnauthorized?: (e: RiskApiError) => void;
  /**
   * Session mode: asked before each request; true sends `Riskapi-Mode: test`, so the
   * request reads and writes the tenant's sandbox (docs/sandboxes.md). A call whose
   * own headers name `Riskapi-Mode` keeps it. An API key carries its own mode
   * (`rk_test_…`): ignored then.
   */
  testData?: () => boolean;
}

/** A request of {@link RiskApi.request}: a write kept as data (e.g. in an outbox) and sent later. */
export interface RawRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path under the API version, e.g. "/risks" or "/risks/risk_…/attachments". */
  path: string;
  /** A JSON body. */
  json?: unknown;
  /** A multipart/form-data upload: the file under "file", then the fields. */
  multipart?: { file: UploadSource; filename: string; contentType?: string; fields?: Record<string, string> };
}

/** The 2xx answer of {@link RiskApi.request}. */
export interface RawResponse {
  status: number;
  /** The parsed JSON body; undefined when it had none (204). */
  json: unknown;
  /** The X-Request-Id header. */
  requestId: string;
  /** Idempotent-Replayed: true — an earlier attempt with the key had done the write. */
  replayed: boolean;
}

/**
 * RiskApi is the client of riskapi. Every write carries one Idempotency-Key
 * (UUID v4, minted per call, or the caller's) on all its attempts, so a call
 * whose answer was lost is retried without being applied twice
 * (docs/idempotency.md). Create one and share it.
 *
 * @throws TypeError when an option makes no sense (no mode or both, empty
 * key, negative retries, non-positive waits, a base URL that is not absolute
 * http/https), and when crypto.randomUUID is missing (a browser page outside
 * a secure context).
 */
export class RiskApi {
  /** Risks of the tenant. */
  readonly risks: Risks;
  /** Files attached to risks. */
  readonly attachments: Attachments;
  /** Events of the tenant (risk.created, …). */
  readonly events: Events;
  /** Reviews of risks. */
  readonly reviews: Reviews;
  /** Treatment actions. */
  readonly actions: Actions;
  /** Acceptances of risks (deciding one: session mode, admins). */
  readonly acceptances: Acceptances;
  /** The tenant's request log. */
  readonly requests: Requests;
  /** The idempotency inspector. */
  readonly idempotencyKeys: IdempotencyKeys;
  /** The tenant's audit log (session mode: admins; API key: scope audit:read) and a risk's history (risks:read). */
  readonly auditLog: AuditLog;
  /** Session mode: signing in and out, who is signed in, the password. */
  readonly account: Account;
  /** Session mode, admins: the tenant's users. */
  readonly users: Users;
  /** Session mode, admins: API keys. */
  readonly apiKeys: ApiKeys;
  /** Session mode, admins: inbound webhook sources. */
  readonly webhookSources: WebhookSources;
  /** Session mode, admins: outbound webhook endpoints. */
  readonly webhookEndpoints: WebhookEndpoints;
  /** Session mode, admins: the tenant's sandbox (erasing its data). */
  readonly sandbox: Sandbox;
  /** "session" or "apiKey". */
  readonly mode: "session" | "apiKey";
  private readonly send: (req: Parameters<typeof call>[1], opts?: CallOptions) => ReturnType<typeof call>;

  constructor(options: ClientOptions) {
    const cfg = resolve(options);
    this.mode = cfg.version === "/v1" ? "session" : "apiKey";
    const send = (this.send = call.bind(undefined, cfg));
    const session = (what: string) => {
      if (this.mode !== "session") throw new TypeError(`riskapi: ${what} needs a session client (new RiskApi({ session: true }))`);
    };
    this.risks = new Risks(send);
    this.attachments = new Attachments(send);
    this.events = new Events(send, session);
    this.reviews = new Reviews(send);
    this.actions = new Actions(send);
    this.acceptances = new Acceptances(send, session);
    this.requests = new Requests(send);
    this.idempotencyKeys = new IdempotencyKeys(send);
    this.auditLog = new AuditLog(send);
    this.account = new Account(send, session);
    this.users = new Users(send, session);
    this.apiKeys = new ApiKeys(send, session);
    this.webhookSources = new WebhookSources(send, session);
    this.webhookEndpoints = new WebhookEndpoints(send, session);
    this.sandbox = new Sandbox(send, session);
  }

  /**
   * request sends a request given as data, through the same call loop as every
   * method (keys, retries, errors): for code that keeps writes to send later,
   * like the dashboard's outbox, which passes its own idempotencyKey and
   * maxRetries 0 to run one attempt at a time.
   */
  async request(r: RawRequest, opts: CallOptions = {}): Promise<RawResponse> {
    let out: RawResponse | undefined;
    const body = r.multipart ? multipartBody(r.multipart, r.multipart.fields) : r.json !== undefined ? jsonBody(r.json) : undefined;
    const settled = await this.send({ method: r.method, path: r.path, ...(body ? { body } : {}), expect: "json-or-empty" }, {
      ...opts,
      onResponse: (info) => {
        out = { status: info.status, json: undefined, requestId: info.requestId, replayed: info.replayed };
        opts.onResponse?.(info);
      },
    });
    return { ...out!, json: settled.json };
  }
}

function resolve(o: ClientOptions): TransportConfig {
  if (o.session && o.apiKey !== undefined) throw new TypeError("riskapi: give apiKey or session, not both");
  if (!o.session && (typeof o.apiKey !== "string" || o.apiKey.trim() === "")) throw new TypeError("riskapi: apiKey is empty");
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  const base = new URL(o.baseUrl ?? (o.session && origin ? origin : "http://localhost:8080"));
  if (base.protocol !== "http:" && base.protocol !== "https:") {
    throw new TypeError(`riskapi: baseUrl ${o.baseUrl} is not http or https`);
  }
  if (base.search || base.hash) throw new TypeError(`riskapi: baseUrl ${o.baseUrl} has a query or fragment`);
  const maxRetries = o.maxRetries ?? 20;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError("riskapi: maxRetries must be an integer ≥ 0");
  const maxWaitMs = positive("maxWaitMs", o.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  const maxElapsedMs = positive("maxElapsedMs", o.maxElapsedMs ?? 60_000);
  const attemptTimeoutMs = positive("attemptTimeoutMs", o.attemptTimeoutMs ?? 120_000);
  if (typeof (o.fetch ?? globalThis.fetch) !== "function") throw new TypeError("riskapi: no fetch: pass options.fetch");
  // Browsers offer randomUUID only in secure contexts (https, localhost).
  if (typeof globalThis.crypto?.randomUUID !== "function") {
    throw new TypeError("riskapi: crypto.randomUUID is unavailable (a browser page needs https or localhost)");
  }
  const ua = `riskapi-sdk-ts/${SDK_VERSION}`;
  return {
    baseUrl: base.origin + base.pathname.replace(/\/+$/, ""),
    version: o.session ? "/v1" : "/v2",
    authorization: o.session ? "" : "Bearer " + o.apiKey,
    // The session cookie goes only to the page's own origin (docs/dashboard.md).
    credentials: o.session ? "same-origin" : "omit",
    onUnauthorized: o.onUnauthorized,
    testData: o.session ? o.testData : undefined,
    // A browser page sends its own User-Agent (and refuses to be given one).
    userAgent: o.userAgent ? `${o.userAgent} ${ua}` : o.session ? "" : ua,
    // Bound to globalThis: browsers refuse a fetch called on another object.
    fetch: o.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    maxRetries,
    maxWaitMs,
    maxElapsedMs,
    attemptTimeoutMs,
    sleep: o.sleep ?? defaultSleep,
    random: o.random ?? Math.random,
    now: o.now ?? Date.now,
    newKey: () => globalThis.crypto.randomUUID(),
    onRetry: o.onRetry,
  };
}

function positive(name: string, v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new TypeError(`riskapi: ${name} must be a positive number of milliseconds`);
  return v;
}

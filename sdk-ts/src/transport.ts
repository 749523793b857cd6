/**
 * The call loop every SDK method goes through: one idempotency key per write
 * call, attempts retried by the rule of retry.ts, waits bounded by the
 * client's budget (docs/sdk-typescript.md, "Retry policy").
 */

import { NetworkError, RiskApiError } from "./errors.js";
import { backoffDelay, classify, parseRetryAfter } from "./retry.js";
import { hasXHR, xhrFetch } from "./xhr.js";

/** The version this SDK reports in its User-Agent. */
export const SDK_VERSION = "0.1.0";

/**
 * The API version this SDK's types are written for, sent as Riskapi-Version on
 * every request (docs/api-versions.md): answers keep these shapes whatever the
 * tenant's pin.
 */
export const API_VERSION = "2027-01-15";

/** Per-call options that every method accepts as its last argument. */
export interface CallOptions {
  /**
   * The Idempotency-Key to send on a write (`[A-Za-z0-9._-]{8,128}`). Omit it
   * and the SDK mints a UUID v4 for the call. Give your own to make an
   * operation idempotent across calls or processes, e.g. "import-7-row-17".
   */
  idempotencyKey?: string;
  /** Cancels the call at once, during an attempt or a wait; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Extra request headers. They cannot override Authorization, Idempotency-Key, Content-Type, Content-Length or Accept. */
  headers?: Record<string, string>;
  /** Called once with the details of the response that settled the call. */
  onResponse?: (info: ResponseInfo) => void;
  /**
   * Sent as If-Match: the version the caller saw, as its ETag (`etag(risk)`,
   * e.g. `"3"` with the quotes), so that a write over a newer version is
   * refused with 412 (a risk's: StaleRiskError) and changes nothing.
   */
  ifMatch?: string;
  /** Retries after the first attempt for this call, overriding the client's maxRetries; 0 sends once. */
  maxRetries?: number;
  /** Timeout of each attempt of this call in milliseconds, overriding the client's attemptTimeoutMs. */
  attemptTimeoutMs?: number;
  /**
   * Called as the request body goes out, with bytes sent and the total (0 when
   * unknown). Where XMLHttpRequest exists (browsers) the call is sent with it,
   * because fetch reports no upload progress; elsewhere it is never called.
   */
  onUploadProgress?: (loaded: number, total: number) => void;
}

/** The details of the 2xx response that settled a call. */
export interface ResponseInfo {
  /** The HTTP status, e.g. 201. */
  status: number;
  /** The X-Request-Id header. */
  requestId: string;
  /** The Idempotency-Key the call sent; undefined for reads. */
  idempotencyKey: string | undefined;
  /** True when the server answered `Idempotent-Replayed: true`: an earlier attempt had already done the write. */
  replayed: boolean;
  /** How many attempts the call made, from 1. */
  attempts: number;
}

/** Reported to {@link TransportConfig.onRetry} before each wait; never carries the API key. */
export interface RetryEvent {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Why it is retried, from {@link classify}. */
  reason: string;
  /** The wait before the next attempt, in milliseconds. */
  waitMs: number;
  /** The failed attempt's error. */
  error: RiskApiError | NetworkError;
}

/** The resolved settings of a client; see ClientOptions for their meaning. */
export interface TransportConfig {
  /** The server root, e.g. "http://127.0.0.1:8080" (a path prefix kept, no trailing slash). */
  baseUrl: string;
  /** The API version every path goes under: "/v2" with an API key, "/v1" in session mode. */
  version: "/v1" | "/v2";
  /** "Bearer rk_…" in API key mode; "" in session mode, where the browser sends the cookie. */
  authorization: string;
  /** fetch's credentials: "same-origin" in session mode (the cookie goes), "omit" with an API key. */
  credentials: RequestCredentials;
  /** Called with every 401 answer (a session that ended), before the call rejects. */
  onUnauthorized: ((e: RiskApiError) => void) | undefined;
  /** Session mode: true sends `Riskapi-Mode: test` unless the call names the mode itself. */
  testData?: (() => boolean) | undefined;
  userAgent: string;
  fetch: typeof globalThis.fetch;
  maxRetries: number;
  maxWaitMs: number;
  maxElapsedMs: number;
  attemptTimeoutMs: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  now: () => number;
  newKey: () => string;
  onRetry: ((e: RetryEvent) => void) | undefined;
}

/** One API request, its body made afresh for every attempt so that a retry can send it again. */
export interface Request {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path under the API version, e.g. "/risks/risk_…"; the client puts "/v1" or "/v2" before it. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: () => { body: BodyInit; contentType?: string };
  /**
   * "json": the 2xx body is read and parsed; "json-or-empty": parsed when there
   * is one (a 204 has none); "empty": it is read and dropped; "raw": the
   * Response is handed over unread.
   */
  expect: "json" | "json-or-empty" | "empty" | "raw";
  accept?: string;
  /**
   * A write whose route refuses an Idempotency-Key (signing in and out, and
   * creating anything whose answer carries a secret, which is never kept in an
   * idempotency record): sent without one and never retried, since a retry
   * could act twice.
   */
  unkeyed?: boolean;
}

/** What a settled call gives its method: the parsed body ("json"), or the unread Response ("raw"). */
export interface Settled {
  json: unknown;
  response: Response;
}

const MANAGED_HEADERS = new Set(["authorization", "idempotency-key", "content-type", "content-length", "accept"]);

/** Sleeps ms milliseconds, or rejects with the signal's reason as soon as it aborts. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A 2xx body that is not the JSON the contract promises: sending the request
 * again would not change it, so it is not retried.
 */
class BadResponseError extends Error {
  override name = "BadResponseError";
}

/** The result of one attempt: a settled call, or the error that ended the attempt. */
type Attempt = { settled: Settled } | { error: unknown };

/**
 * Runs req until it settles or the budget is spent. A write carries one
 * Idempotency-Key on every attempt. Rejects with the last RiskApiError, a
 * NetworkError, or the caller's abort reason.
 */
export async function call(cfg: TransportConfig, relative: Request, opts: CallOptions = {}): Promise<Settled> {
  const req = { ...relative, path: cfg.version + relative.path };
  const isWrite = req.method !== "GET";
  const key = isWrite && !req.unkeyed ? (opts.idempotencyKey ?? cfg.newKey()) : undefined;
  const maxRetries = isWrite && req.unkeyed ? 0 : (opts.maxRetries ?? cfg.maxRetries);
  const start = cfg.now();
  for (let attempt = 1; ; attempt++) {
    opts.signal?.throwIfAborted();
    const a = await attemptOnce(cfg, req, key, attempt, opts);
    if ("settled" in a) {
      opts.onResponse?.({
        status: a.settled.response.status,
        requestId: a.settled.response.headers.get("X-Request-Id") ?? "",
        idempotencyKey: key,
        replayed: a.settled.response.headers.get("Idempotent-Replayed") === "true",
        attempts: attempt,
      });
      return a.settled;
    }
    if (opts.signal?.aborted) throw opts.signal.reason;
    const decision = classify(a.error);
    if (a.error instanceof RiskApiError || a.error instanceof NetworkError) a.error.attempts = attempt;
    if (a.error instanceof RiskApiError && a.error.status === 401) cfg.onUnauthorized?.(a.error);
    if (!decision.retry || attempt > maxRetries) throw finalError(req, attempt, a.error);
    const retryAfter = a.error instanceof RiskApiError ? a.error.retryAfterMs : undefined;
    const waitMs = backoffDelay(attempt - 1, retryAfter, cfg.random, cfg.maxWaitMs);
    if (cfg.now() - start + waitMs > cfg.maxElapsedMs) throw finalError(req, attempt, a.error);
    cfg.onRetry?.({
      method: req.method,
      path: req.path,
      idempotencyKey: key,
      attempt,
      reason: decision.reason,
      waitMs,
      error: a.error as RiskApiError | NetworkError,
    });
    await cfg.sleep(waitMs, opts.signal);
  }
}

/** Says how many attempts a network failure took; a RiskApiError is the last answer as it was. */
function finalError(req: Request, attempts: number, err: unknown): unknown {
  if (!(err instanceof NetworkError) || attempts === 1) return err;
  const cause = err.cause instanceof Error ? err.cause.message : String(err.cause);
  return new NetworkError(`riskapi: ${req.method} ${req.path}: giving up after ${attempts} attempts: ${cause}`, {
    method: req.method,
    path: req.path,
    idempotencyKey: err.idempotencyKey,
    attempts,
    cause: err.cause,
  });
}

async function attemptOnce(
  cfg: TransportConfig,
  req: Request,
  key: string | undefined,
  attempt: number,
  opts: CallOptions,
): Promise<Attempt> {
  // Each attempt has its own timeout; the caller's signal ends every attempt.
  const ctl = new AbortController();
  const timeoutMs = opts.attemptTimeoutMs ?? cfg.attemptTimeoutMs;
  const timer = setTimeout(
    () => ctl.abort(new DOMException(`attempt ${attempt} timed out after ${timeoutMs} ms`, "TimeoutError")),
    timeoutMs,
  );
  const onAbort = () => ctl.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  let handedOver = false;
  try {
    let res: Response;
    let text: string | undefined;
    try {
      const b = req.body?.();
      const send = opts.onUploadProgress && hasXHR() ? xhrFetch(opts.onUploadProgress) : cfg.fetch;
      res = await send(url(cfg.baseUrl, req), {
        method: req.method,
        headers: headers(cfg, req, key, b?.contentType, opts),
        ...(b ? { body: b.body } : {}),
        signal: ctl.signal,
        redirect: "manual",
        credentials: cfg.credentials,
      });
      // The body is read inside the attempt: a connection cut while the
      // answer streams in is a network error like any other, and retried.
      // Not for an error answer, though: its status decides, and a 500 whose
      // problem document was cut short is still not retried.
      if (!res.ok) text = await res.text().catch(() => "");
      else if (req.expect !== "raw") text = await res.text();
    } catch (e) {
      if (classify(e).retry) {
        const msg = e instanceof Error ? e.message : String(e);
        return { error: new NetworkError(`riskapi: ${req.method} ${req.path}: ${msg}`, { method: req.method, path: req.path, idempotencyKey: key, attempts: attempt, cause: e }) };
      }
      return { error: e };
    }
    if (!res.ok) {
      return {
        error: new RiskApiError({
          status: res.status,
          statusText: res.statusText,
          body: text ?? "",
          headerRequestId: res.headers.get("X-Request-Id"),
          idempotencyKey: key,
          retryAfterMs: parseRetryAfter(res.headers.get("Retry-After"), cfg.now()),
          attempts: attempt,
        }),
      };
    }
    if (req.expect === "empty" || req.expect === "raw" || (req.expect === "json-or-empty" && !text)) {
      handedOver = req.expect === "raw";
      return { settled: { json: undefined, response: res } };
    }
    try {
      return { settled: { json: JSON.parse(text ?? ""), response: res } };
    } catch (e) {
      return { error: new BadResponseError(`riskapi: ${req.method} ${req.path}: ${res.status} answer is not JSON`, { cause: e }) };
    }
  } finally {
    clearTimeout(timer);
    // An unread download stays tied to the caller's signal while it is read.
    if (!handedOver) opts.signal?.removeEventListener("abort", onAbort);
  }
}

function url(base: string, req: Request): string {
  let u = base + req.path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) q.set(k, String(v));
  const qs = q.toString();
  if (qs) u += "?" + qs;
  return u;
}

function headers(
  cfg: TransportConfig,
  req: Request,
  key: string | undefined,
  contentType: string | undefined,
  opts: CallOptions,
): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (!MANAGED_HEADERS.has(k.toLowerCase())) h.set(k, v);
  if (cfg.authorization) h.set("Authorization", cfg.authorization);
  if (!h.has("Riskapi-Mode") && cfg.testData?.()) h.set("Riskapi-Mode", "test");
  h.set("Accept", req.accept ?? "application/json");
  if (cfg.userAgent) h.set("User-Agent", cfg.userAgent);
  // A caller's own Riskapi-Version wins: a write kept as data and sent later (the
  // dashboard's outbox) goes in the version its body was written in.
  if (!h.has("Riskapi-Version")) h.set("Riskapi-Version", API_VERSION);
  // A FormData body has no contentType here: fetch sets it, with the boundary.
  if (contentType) h.set("Content-Type", contentType);
  if (key !== undefined) h.set("Idempotency-Key", key);
  if (opts.ifMatch !== undefined) h.set("If-Match", opts.ifMatch);
  return h;
}

/**
 * The client: its options, their defaults and their validation. The calls
 * themselves live in risks.ts and attachments.ts; the call loop in transport.ts.
 */

import { DEFAULT_MAX_WAIT_MS } from "./retry.js";
import { Attachments } from "./attachments.js";
import { Risks } from "./risks.js";
import { SDK_VERSION, call, defaultSleep, type RetryEvent, type TransportConfig } from "./transport.js";

/** Options of {@link RiskApi}; only `apiKey` is required. */
export interface ClientOptions {
  /** The API key, "rk_…" (from `api apikey create`), sent as `Authorization: Bearer`. Never logged. */
  apiKey: string;
  /** The server root, default "http://localhost:8080"; the SDK appends /v2/…, keeping a path prefix. */
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
}

/**
 * RiskApi is the client of riskapi's public /v2 API. Every write carries one
 * Idempotency-Key (UUID v4, minted per call) on all its attempts, so a call
 * whose answer was lost is retried without being applied twice
 * (docs/idempotency.md). Create one and share it.
 *
 * @throws TypeError when an option makes no sense (empty key, negative
 * retries, non-positive waits, a base URL that is not absolute http/https),
 * and when crypto.randomUUID is missing (a browser page outside a secure context).
 */
export class RiskApi {
  /** Risks of the key's tenant. */
  readonly risks: Risks;
  /** Files attached to risks. */
  readonly attachments: Attachments;

  constructor(options: ClientOptions) {
    const cfg = resolve(options);
    const send = call.bind(undefined, cfg);
    this.risks = new Risks(send);
    this.attachments = new Attachments(send);
  }
}

function resolve(o: ClientOptions): TransportConfig {
  if (typeof o.apiKey !== "string" || o.apiKey.trim() === "") throw new TypeError("riskapi: apiKey is empty");
  const base = new URL(o.baseUrl ?? "http://localhost:8080");
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
    authorization: "Bearer " + o.apiKey,
    userAgent: o.userAgent ? `${o.userAgent} ${ua}` : ua,
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

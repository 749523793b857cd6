/**
 * The retry rule of riskapi's clients, as small pure functions so that the SDK
 * and the dashboard's outbox share one home for it (docs/sdk-typescript.md,
 * "Retry policy"; the same table as the Go SDK's in docs/sdk.md).
 *
 * Writes are keyed (docs/idempotency.md): retrying one with the same
 * Idempotency-Key is safe, because the server replays its stored outcome
 * instead of running the request twice.
 */

import { NetworkError } from "./errors.js";

/** The outcome of {@link classify}: whether to try again, and why (for logs and tests). */
export interface RetryDecision {
  /** True when the same request, with the same idempotency key, should be sent again. */
  retry: boolean;
  /** A short human-readable reason, e.g. "429: rate limited". */
  reason: string;
}

/**
 * classify decides whether an attempt that ended with an HTTP status, or with
 * a thrown error instead of a response, should be retried.
 *
 * - 2xx: settled, not retried.
 * - 409 (the same key still in progress), 429 (rate limited), 502, 503, 504
 *   (the server or its store unreachable): retried.
 * - 500 and every other status, 422 included: not retried — the server ran and
 *   failed, or the request itself is wrong; sending it again cannot help.
 * - A {@link NetworkError}, or the TypeError that `fetch` throws when the
 *   network fails, or an attempt timeout (`TimeoutError`): retried.
 * - The caller's abort (`AbortError`) and any other error (a bug, a body that
 *   cannot be read): not retried.
 * - An error object with a numeric `status` (e.g. RiskApiError) is classified
 *   by that status.
 */
export function classify(statusOrError: number | unknown): RetryDecision {
  if (typeof statusOrError === "number") return classifyStatus(statusOrError);
  const err = statusOrError;
  if (err instanceof NetworkError) return { retry: true, reason: "network error" };
  if (typeof err === "object" && err !== null) {
    const e = err as { name?: unknown; status?: unknown };
    if (typeof e.status === "number") return classifyStatus(e.status);
    if (e.name === "AbortError") return { retry: false, reason: "aborted by the caller" };
    if (e.name === "TimeoutError") return { retry: true, reason: "attempt timed out" };
    if (err instanceof TypeError) return { retry: true, reason: "network error" };
  }
  return { retry: false, reason: "not a network error: " + String(err) };
}

function classifyStatus(status: number): RetryDecision {
  if (status >= 200 && status < 300) return { retry: false, reason: "success" };
  switch (status) {
    case 409:
      return { retry: true, reason: "409: a request with this idempotency key is still in progress" };
    case 429:
      return { retry: true, reason: "429: rate limited" };
    case 502:
    case 503:
    case 504:
      return { retry: true, reason: `${status}: server temporarily unavailable` };
    default:
      return { retry: false, reason: `${status} is not retryable` };
  }
}

/** The first backoff ceiling, in milliseconds; it doubles with each retry. */
export const BASE_WAIT_MS = 500;

/** The default cap of a single wait, Retry-After included, in milliseconds. */
export const DEFAULT_MAX_WAIT_MS = 30_000;

/**
 * backoffDelay returns the wait in milliseconds before retry number `attempt`
 * (0 for the first retry).
 *
 * A Retry-After from the server (`retryAfterMs` > 0) is honoured exactly, up
 * to `maxWaitMs`, because the server knows when its lease or rate window ends.
 * Otherwise it is exponential backoff with full jitter: a uniformly random wait
 * in [0, min(maxWaitMs, 500 ms · 2^attempt)), which spreads out clients that
 * failed together instead of having them retry in lock-step.
 *
 * @param rand returns a number in [0, 1), like Math.random (injectable for tests).
 */
export function backoffDelay(
  attempt: number,
  retryAfterMs: number | null | undefined,
  rand: () => number = Math.random,
  maxWaitMs: number = DEFAULT_MAX_WAIT_MS,
): number {
  if (retryAfterMs != null && retryAfterMs > 0) return Math.min(retryAfterMs, maxWaitMs);
  const n = Math.max(0, Math.floor(attempt));
  const ceiling = n >= 30 ? maxWaitMs : Math.min(maxWaitMs, BASE_WAIT_MS * 2 ** n);
  const r = Math.min(Math.max(rand(), 0), 1 - Number.EPSILON);
  return Math.floor(r * ceiling);
}

/** Bounds a parsed Retry-After so an absurd value stays a finite number; maxWaitMs caps the wait far below it. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * parseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3), either
 * delay-seconds ("120") or an HTTP-date, relative to `nowMs` (epoch
 * milliseconds). It returns the wait in milliseconds, or undefined when the
 * value is absent, malformed or in the past.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  const v = (value ?? "").trim();
  if (v === "") return undefined;
  if (/^\d+$/.test(v)) {
    const secs = Number(v);
    return Math.min(secs * 1000, MAX_RETRY_AFTER_MS);
  }
  // Only the IMF-fixdate form servers send ("Sun, 06 Nov 1994 08:49:37 GMT");
  // Date.parse would also accept free text, which Retry-After does not allow.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(v)) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  const d = t - nowMs;
  if (d <= 0) return undefined;
  return Math.min(d, MAX_RETRY_AFTER_MS);
}

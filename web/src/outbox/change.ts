/**
 * A change is one write the user made, kept in the outbox until the server
 * settles it (docs/dashboard.md, "The outbox"). Its idempotency key is minted
 * once, when the user acts, and sent with every attempt: a retry after a lost
 * response is replayed by the server instead of running twice
 * (docs/idempotency.md).
 *
 * This file is the outbox's state machine, kept pure so it can be tested
 * without a browser: {@link newChange} starts a change, {@link afterAttempt}
 * moves it on after each attempt. Whether an attempt is retried is decided by
 * the SDK's `classify` and `backoffDelay` (sdk-ts/src/retry.ts), the one home
 * of that rule.
 */
import { backoffDelay, classify } from "@riskapi/sdk/retry";

/** pending: not settled yet; done: a 2xx settled it; refused: a status that retrying cannot fix. */
export type ChangeState = "pending" | "done" | "refused";

/** The write methods a change can carry. */
export type WriteMethod = "POST" | "PUT" | "PATCH" | "DELETE";

/** A JSON request body. */
export interface JsonBody {
  kind: "json";
  json: unknown;
}

/** A multipart upload: the file is kept in IndexedDB as a Blob until it is sent. */
export interface FileBody {
  kind: "file";
  file: Blob;
  filename: string;
  /** Optional form fields sent beside the file (e.g. "description"). */
  fields: Record<string, string>;
}

/** A problem+json body (RFC 9457), as much of it as the dashboard shows. */
export interface ProblemSummary {
  code?: string;
  title?: string;
  detail?: string;
  requestId?: string;
}

/** One queued write and what became of it. Stored in IndexedDB under its key. */
export interface Change {
  /** The Idempotency-Key (UUID v4), minted when the user acted; also the record's primary key. */
  key: string;
  /** Creation time in epoch milliseconds; the queue is sent in this order. */
  createdAt: number;
  method: WriteMethod;
  /** Same-origin path under /v1, e.g. "/v1/risks". */
  path: string;
  body: JsonBody | FileBody | null;
  /** What the user did, in words, for the changes panel (e.g. "Create risk “Flood”"). */
  label: string;
  state: ChangeState;
  /** Attempts made so far. */
  attempts: number;
  /** Earliest time (epoch ms) of the next attempt; 0 means now. */
  nextAttemptAt: number;
  /** Status of the last attempt; 0 for a network error; undefined before the first. */
  lastStatus?: number;
  /** Why the last attempt ended as it did (classify's reason, or a problem's detail). */
  lastReason?: string;
  /** The problem the server answered with, when it refused the change. */
  problem?: ProblemSummary;
  /** True when the settling response carried Idempotent-Replayed: true. */
  replayed?: boolean;
  /** The request id (X-Request-Id) of the last response, for the request log. */
  requestId?: string;
  /** The settling response's JSON body, when it had one. */
  result?: unknown;
  /** When the change settled (epoch ms). */
  settledAt?: number;
}

/** What the user asks for; the outbox adds the key and the bookkeeping. */
export interface ChangeInput {
  method: WriteMethod;
  path: string;
  body: JsonBody | FileBody | null;
  label: string;
}

/** newChange starts a pending change with a fresh key, due now. */
export function newChange(input: ChangeInput, key: string, now: number): Change {
  return { ...input, key, createdAt: now, state: "pending", attempts: 0, nextAttemptAt: 0 };
}

/** The end of one attempt: an HTTP response, or no usable response at all. */
export type Attempt =
  | {
      status: number;
      /** Retry-After in milliseconds, when the response carried one. */
      retryAfterMs?: number;
      replayed?: boolean;
      requestId?: string;
      /** The parsed JSON body, when there was one. */
      json?: unknown;
    }
  | { error: unknown };

/**
 * afterAttempt returns the change as it stands after `attempt`, which began
 * when the change had made `change.attempts` attempts.
 *
 * - 2xx, replayed or not: done.
 * - 401: still pending but not retried on a timer: the session is gone, and the
 *   sender waits until the user signs in again (the request never ran, so no
 *   record holds its key).
 * - What classify retries (network errors, 409, 429, 502–504): pending, due
 *   after backoffDelay, which honours Retry-After.
 * - Anything else (422 IDEMPOTENCY_KEY_REUSED, other 4xx, 500): refused. A
 *   refused change never blocks the ones after it.
 */
export function afterAttempt(change: Change, attempt: Attempt, now: number, rand: () => number): Change {
  const next: Change = { ...change, attempts: change.attempts + 1 };
  if ("error" in attempt) {
    const d = classify(attempt.error);
    next.lastStatus = 0;
    next.lastReason = d.reason;
    if (!d.retry) return settle(next, "refused", now);
    next.nextAttemptAt = now + backoffDelay(change.attempts, undefined, rand);
    return next;
  }
  next.lastStatus = attempt.status;
  if (attempt.requestId !== undefined) next.requestId = attempt.requestId;
  const d = classify(attempt.status);
  if (attempt.status >= 200 && attempt.status < 300) {
    next.replayed = attempt.replayed === true;
    next.lastReason = next.replayed ? "replayed by the server" : "applied";
    if (attempt.json !== undefined) next.result = attempt.json;
    delete next.problem;
    return settle(next, "done", now);
  }
  const problem = problemOf(attempt.json);
  if (problem) next.problem = problem;
  if (attempt.status === 401) {
    next.lastReason = "signed out: sign in again to send it";
    next.nextAttemptAt = Number.MAX_SAFE_INTEGER;
    return next;
  }
  next.lastReason = problem?.detail ?? d.reason;
  if (!d.retry) return settle(next, "refused", now);
  next.nextAttemptAt = now + backoffDelay(change.attempts, attempt.retryAfterMs, rand);
  return next;
}

/** resume makes a pending change due now: after sign-in, on reconnecting, or when the user asks. */
export function resume(change: Change): Change {
  return change.state === "pending" ? { ...change, nextAttemptAt: 0 } : change;
}

function settle(c: Change, state: ChangeState, now: number): Change {
  c.state = state;
  c.settledAt = now;
  c.nextAttemptAt = 0;
  return c;
}

function problemOf(json: unknown): ProblemSummary | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const p = json as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === "string" ? v : undefined);
  const out: ProblemSummary = {};
  for (const k of ["code", "title", "detail", "requestId"] as const) {
    const v = s(p[k]);
    if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

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
import { API_VERSION } from "@riskapi/sdk";
import { afterStale, retitled } from "./merge";

/** The version of changes queued before they carried one: the dashboard then spoke 2026-12-01. */
export const LEGACY_API_VERSION = "2026-12-01";

/**
 * pending: not settled yet; done: a 2xx settled it; refused: a status that
 * retrying cannot fix; conflict: an edit met a newer version that changed the
 * same field, and waits for the user to choose (merge.ts).
 */
export type ChangeState = "pending" | "done" | "refused" | "conflict";

/** unsettled is true for a change still the user's to lose: pending, or waiting in conflict. */
export function unsettled(c: Change): boolean {
  return c.state === "pending" || c.state === "conflict";
}

/**
 * redone is true for a refused change its user has since made again: a later
 * change of theirs from the same form (name and target) that sent every field
 * the refused one sent was saved. The refusal then needs nothing more of them,
 * so the header stops counting it; the panel still lists it, as history, until
 * cleared. A later save of other fields (or one whose field was dropped by
 * Keep theirs) leaves it refused.
 */
export function redone(c: Change, all: Change[]): boolean {
  const f = c.form;
  if (c.state !== "refused" || !f) return false;
  const sent = (x: Change) => (x.body?.kind === "json" && x.body.json !== null && typeof x.body.json === "object" ? Object.keys(x.body.json) : []);
  return all.some((d) => d.state === "done" && d.createdAt > c.createdAt && sameOwner(d.owner, c.owner) &&
    d.form?.name === f.name && d.form.target === f.target && sent(c).every((k) => sent(d).includes(k)));
}

/** Fields of a risk by their JSON name, with JSON values (a string, a number or null). */
export type Fields = Record<string, unknown>;

/** What a change in conflict met: the version stored now and its values of the user's fields. */
export interface ConflictInfo {
  /** The stored version, whose ETag "Keep mine" sends as If-Match. */
  version: number;
  /** The stored values of every field the change sets. */
  theirs: Fields;
  /** The fields both writers changed, to different values. */
  fields: string[];
}

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
  /** VALIDATION_FAILED: the offending fields, by their JSON name, so the form shows each error beside its field. */
  errors?: { field: string; detail: string; row?: number }[];
}

/**
 * Owner is who made a change: it is sent only while this same user of this
 * same tenant is signed in (docs/dashboard.md, "Whose change it is").
 */
export interface Owner {
  userId: string;
  tenantId: string;
  /** Shown on the sign-in page while the user's changes wait; never their content. */
  email: string;
}

/** sameOwner is true when a and b are the same user of the same tenant. */
export function sameOwner(a: Owner | null | undefined, b: Owner | null | undefined): boolean {
  return !!a && !!b && a.userId === b.userId && a.tenantId === b.tenantId;
}

/**
 * FormOrigin is the form a change came from and what the user had typed in
 * it, so that a refusal puts it back (with the error beside the field) instead
 * of losing it.
 */
export interface FormOrigin {
  /** Which form: "new-risk", "edit-risk", "user-role", … */
  name: string;
  /** What it edits, e.g. the risk's id; absent for a create. */
  target?: string;
  /** The form's fields as typed. */
  values: Record<string, string>;
}

/** One queued write and what became of it. Stored in IndexedDB under its key. */
export interface Change {
  /** The Idempotency-Key (UUID v4), minted when the user acted; also the record's primary key. */
  key: string;
  /** Creation time in epoch milliseconds; the queue is sent in this order. */
  createdAt: number;
  method: WriteMethod;
  /** The path under /v1, e.g. "/risks" (the SDK's client in session mode puts /v1 before it). */
  path: string;
  body: JsonBody | FileBody | null;
  /** What the user did, in words, for the changes panel (e.g. "Create risk “Flood”"). */
  label: string;
  /** Who made it; it is sent only while they are signed in. */
  owner: Owner;
  /**
   * The data it was made in: "test" for the sandbox (the Test data switch on,
   * mode.ts); sent in it whatever the switch says then. Absent (changes queued
   * before the switch existed): live.
   */
  mode?: "live" | "test";
  /**
   * The API version its body, If-Match base and form were written in
   * (docs/api-versions.md), sent as Riskapi-Version whatever the dashboard speaks
   * by then. Absent (changes queued before the dashboard named its version):
   * 2026-12-01, where an owner is a string.
   */
  apiVersion?: string;
  /** The form it came from, restored when it is refused. */
  form?: FormOrigin;
  /** True once the refused change's form was put back or the user dismissed it there. */
  restored?: boolean;
  /** Sent as If-Match: the ETag of the version the user saw (an edit of a risk). */
  ifMatch?: string;
  /** The values the user saw of the fields the change sets: the base of the merge after a 412 (merge.ts). */
  base?: Fields;
  /** Set while the state is "conflict": what the change met. */
  conflict?: ConflictInfo;
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

/** What the user asks for; the outbox adds the key, the owner and the bookkeeping. */
export interface ChangeInput {
  method: WriteMethod;
  path: string;
  body: JsonBody | FileBody | null;
  label: string;
  form?: FormOrigin;
  /** The ETag of the version the user saw, sent as If-Match. */
  ifMatch?: string;
  /** The values the user saw of the fields the change sets. */
  base?: Fields;
  /** The data it is made in; live when absent. */
  mode?: "live" | "test";
  /** The API version it is written in; the SDK's (the newest) when absent. */
  apiVersion?: string;
}

/** newChange starts a pending change of owner with a fresh key, due now. */
export function newChange(input: ChangeInput, owner: Owner, key: string, now: number): Change {
  return { apiVersion: API_VERSION, ...input, owner, key, createdAt: now, state: "pending", attempts: 0, nextAttemptAt: 0 };
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

/** STALE_REASON is why a change refused 412 was not applied, in the changes panel's words. */
export const STALE_REASON = "someone changed it after you read it, so this was not applied";

/**
 * afterAttempt returns the change as it stands after `attempt`, which began
 * when the change had made `change.attempts` attempts.
 *
 * - 2xx, replayed or not: done.
 * - 412 with the stored risk, for an edit that knows its base: merged
 *   (merge.ts): sent again at once over the new version, or a conflict.
 * - 401: still pending but not retried on a timer: the session is gone, and the
 *   sender waits until the user signs in again (the request never ran, so no
 *   record holds its key).
 * - What classify retries (network errors, 409, 429, 502–504): pending, due
 *   after backoffDelay, which honours Retry-After; but a 409 no retry can
 *   change (ACCEPTANCE_DECIDED) is refused.
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
    // An edit merged over, or kept under, someone else's rename is named by the title stored now.
    const stored = (attempt.json as { title?: unknown } | undefined)?.title;
    if (change.method === "PATCH" && typeof stored === "string") next.label = retitled(next.label, stored);
    delete next.problem;
    return settle(next, "done", now);
  }
  if (attempt.status === 412) {
    const merged = afterStale(next, attempt.json);
    if (merged) return merged;
  }
  const problem = problemOf(attempt.json);
  if (problem) next.problem = problem;
  if (attempt.status === 401) {
    next.lastReason = "signed out: sign in again to send it";
    next.nextAttemptAt = Number.MAX_SAFE_INTEGER;
    return next;
  }
  // A 412 left unmerged (a delete): the API's detail names If-Match, which the dashboard's user never sees.
  next.lastReason = attempt.status === 412 ? STALE_REASON : problem?.detail ?? d.reason;
  if (!d.retry || final(problem)) return settle(next, "refused", now);
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

/**
 * The problems of a retried status (409) that no retry can change
 * (docs/errors.md, Retry "no"): ACCEPTANCE_DECIDED, an approve or reject of an
 * acceptance decided meanwhile (by another admin). The SDK retries a 409 by its
 * status a bounded number of times; the outbox never gives up on a pending
 * change, so it would send this one forever: it is refused at once instead.
 */
const FINAL_CODES = new Set(["ACCEPTANCE_DECIDED"]);

function final(problem: ProblemSummary | undefined): boolean {
  return problem?.code !== undefined && FINAL_CODES.has(problem.code);
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
  if (Array.isArray(p.errors)) {
    out.errors = p.errors.flatMap((e: unknown) => {
      const f = e as { field?: unknown; detail?: unknown; row?: unknown };
      if (typeof f?.field !== "string" || typeof f.detail !== "string") return [];
      // An import's errors name their CSV row too.
      return [{ field: f.field, detail: f.detail, ...(typeof f.row === "number" ? { row: f.row } : {}) }];
    });
  }
  return Object.keys(out).length ? out : undefined;
}

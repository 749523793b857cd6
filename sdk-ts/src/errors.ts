/**
 * The SDK's two error types: {@link RiskApiError} for an answer of the server
 * that is not 2xx (an RFC 9457 problem document, docs/errors.md), and
 * {@link NetworkError} for an attempt that got no usable answer.
 */

import type { components } from "./openapi.js";

/** A stable, machine-readable error code of docs/errors.md, e.g. "IDEMPOTENCY_KEY_REUSED". */
export type ErrorCode = components["schemas"]["ErrorCode"];

/** One offending field of a VALIDATION_FAILED answer. */
export interface FieldError {
  /** The JSON name of the field, e.g. "title". */
  field: string;
  /** What is wrong with it. */
  detail: string;
  /** An import's bad row, the CSV header being row 1; absent for other requests. */
  row?: number;
}

/** The caps of what is kept of a non-2xx body: a problem document is small. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * RiskApiError is a non-2xx answer of the server, decoded from its RFC 9457
 * problem+json body. After retries it is the last attempt's answer.
 *
 * A body that is not problem+json (e.g. a proxy's HTML 502 page) still gives a
 * RiskApiError: `status` is set, `code` is empty, `title` is the status text
 * and `detail` the start of the body.
 */
export class RiskApiError extends Error {
  /** The HTTP status, from the status line (it wins over the body's). */
  readonly status: number;
  /** The stable reason, e.g. "IDEMPOTENCY_KEY_REUSED"; "" when the body was not a problem. Branch on this. */
  readonly code: ErrorCode | "";
  /** The problem type URI; "" when the server gave none. */
  readonly type: string;
  /** A short human-readable summary of the problem type. */
  readonly title: string;
  /** An explanation of this occurrence, for humans. */
  readonly detail: string;
  /** Identifies the request in the server's logs: the body's "requestId", else the X-Request-Id header. */
  readonly requestId: string;
  /** The offending fields of a VALIDATION_FAILED answer; empty otherwise. */
  readonly errors: FieldError[];
  /** The Idempotency-Key the call sent; undefined for reads. */
  readonly idempotencyKey: string | undefined;
  /** The wait the server asked for with Retry-After, in milliseconds; undefined when absent. */
  readonly retryAfterMs: number | undefined;
  /** The raw body, at most 64 KiB of it. */
  readonly body: string;
  /** How many attempts the call made. */
  attempts: number;

  constructor(init: {
    status: number;
    statusText?: string;
    body: string;
    headerRequestId?: string | null;
    idempotencyKey?: string | undefined;
    retryAfterMs?: number | undefined;
    attempts?: number;
  }) {
    const body = init.body.slice(0, MAX_ERROR_BODY);
    const p = parseProblem(body);
    const title = p?.title ?? (init.statusText || `HTTP ${init.status}`);
    const detail = p?.detail ?? body.slice(0, 200).trim();
    const code = p?.code ?? "";
    const requestId = p?.requestId || init.headerRequestId || "";
    super(formatMessage(init.status, code, title, detail, requestId));
    this.name = "RiskApiError";
    this.status = init.status;
    this.code = code;
    this.type = p?.type ?? "";
    this.title = title;
    this.detail = detail;
    this.requestId = requestId;
    this.errors = p?.errors ?? [];
    this.idempotencyKey = init.idempotencyKey;
    this.retryAfterMs = init.retryAfterMs;
    this.body = body;
    this.attempts = init.attempts ?? 1;
  }
}

/**
 * NetworkError is a call whose last attempt got no usable HTTP response: the
 * connection was refused, reset or cut (before the request was sent or while
 * the answer was being read), or the attempt timed out. The request may or may
 * not have reached the server; retrying a keyed write with the same key is safe
 * either way. `cause` holds the underlying error.
 */
export class NetworkError extends Error {
  /** The HTTP method of the call, e.g. "POST". */
  readonly method: string;
  /** The path of the call, e.g. "/v2/risks". */
  readonly path: string;
  /** The Idempotency-Key the call sent; undefined for reads. */
  readonly idempotencyKey: string | undefined;
  /** How many attempts the call made (1 when it was not retried). */
  attempts: number;

  constructor(
    message: string,
    init: { method: string; path: string; idempotencyKey?: string | undefined; attempts?: number; cause?: unknown },
  ) {
    super(message, { cause: init.cause });
    this.name = "NetworkError";
    this.method = init.method;
    this.path = init.path;
    this.idempotencyKey = init.idempotencyKey;
    this.attempts = init.attempts ?? 1;
  }
}

/** "riskapi: <status> <code>: <detail> (request <id>)", leaving out what the server did not give. */
function formatMessage(status: number, code: string, title: string, detail: string, requestId: string): string {
  let m = `riskapi: ${status} ${code || title || "error"}`;
  if (detail) m += `: ${detail}`;
  if (requestId) m += ` (request ${requestId})`;
  return m;
}

interface ParsedProblem {
  type?: string;
  title?: string;
  detail?: string;
  code?: ErrorCode;
  requestId?: string;
  errors?: FieldError[];
}

/** Reads the members of an RFC 9457 body that have the documented types; undefined if it is not a JSON object. */
function parseProblem(body: string): ParsedProblem | undefined {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof o[k] === "string" ? (o[k] as string) : undefined);
  const p: ParsedProblem = {};
  const type = str("type");
  if (type !== undefined) p.type = type;
  const title = str("title");
  if (title !== undefined) p.title = title;
  const detail = str("detail");
  if (detail !== undefined) p.detail = detail;
  const code = str("code");
  if (code !== undefined) p.code = code as ErrorCode;
  const requestId = str("requestId");
  if (requestId !== undefined) p.requestId = requestId;
  if (Array.isArray(o["errors"])) {
    p.errors = o["errors"].filter(
      (e): e is FieldError =>
        typeof e === "object" && e !== null && typeof e.field === "string" && typeof e.detail === "string",
    );
  }
  return p;
}

/**
 * Reads and online-only writes on /v1, with the session cookie (same origin,
 * so the browser sends it and Sec-Fetch-Site says same-origin). Changes the
 * user makes to risks, attachments and settings go through the outbox
 * instead (outbox/outbox.ts); only what must not be queued is sent here:
 * signing in and out, and creating anything whose response carries a secret
 * (docs/idempotency.md: those routes refuse an Idempotency-Key).
 */

/** ApiError is a non-2xx answer: its status and the problem+json (RFC 9457) fields. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly requestId: string,
  ) {
    super(detail || code || `HTTP ${status}`);
    this.name = "ApiError";
  }
}

// The API's shapes come from docs/openapi.yaml through the SDK's generated
// types (type-only: nothing of the SDK is bundled for them).
export type { Attachment, Page, Risk, RiskCreateParams, RiskUpdateParams } from "@riskapi/sdk";

/** GET /v1/me (docs/openapi.yaml, tenant self-service). */
export interface Me {
  user: { id: string; email: string; role: "admin" | "member" };
  tenant: { id: string; name: string };
}

/**
 * UNAUTHENTICATED is dispatched on window whenever /v1 answers 401 (the
 * session expired, was logged out, or the user was removed): the app shows the
 * sign-in form, and the outbox holds its changes until the user is back.
 */
export const UNAUTHENTICATED = "riskapi:unauthenticated";

/** request sends one request and returns its JSON (undefined for 204); non-2xx throws ApiError. */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "Content-Type": "application/json" };
  }
  const res = await fetch(path, init);
  const text = await res.text();
  const json: unknown = text ? safeJSON(text) : undefined;
  if (!res.ok) {
    if (res.status === 401 && path !== "/v1/sessions") dispatchEvent(new Event(UNAUTHENTICATED));
    const p = (json ?? {}) as Record<string, unknown>;
    const s = (v: unknown) => (typeof v === "string" ? v : "");
    throw new ApiError(res.status, s(p.code), s(p.detail) || s(p.title), s(p.requestId) || (res.headers.get("X-Request-Id") ?? ""));
  }
  return json as T;
}

/** get reads path as JSON. */
export function get<T>(path: string): Promise<T> {
  return request<T>("GET", path);
}

/** query builds "?a=1&b=2" from the non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? "?" + s : "";
}

/** isUnavailable is true for a 404 on a whole route: this server does not offer the feature. */
export function isUnavailable(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}

function safeJSON(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

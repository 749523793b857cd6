/**
 * The dashboard's one way to the server: the TypeScript SDK (sdk-ts) in
 * session mode — /v1, the HttpOnly session cookie, same origin. Reads and
 * online-only writes (signing in and out, creating anything whose answer
 * carries a secret) call it directly; every other change goes through the
 * outbox (outbox/outbox.ts), which sends with the same client.
 */
import { etag, NetworkError, RiskApi, RiskApiError } from "@riskapi/sdk";
import { mode } from "./mode";
import { offlineFetch } from "./offline";

// The API's shapes come from docs/openapi.yaml through the SDK's generated types.
export type {
  Acceptance, Action, ApiKey, Attachment, AuditAction, AuditChange, AuditEntry, AuditListParams, DeliveryAttempt, Event, IdempotencyKeyState, Me, Page, RequestListParams, RequestLogEntry, Review,
  Risk, RiskCreateParams, RiskUpdateParams, User, WebhookEndpoint, WebhookSource,
} from "@riskapi/sdk";
export { etag, NetworkError, RiskApiError };

/**
 * UNAUTHENTICATED is dispatched on window whenever /v1 answers 401 (the
 * session expired, was logged out, or the user was removed): the app shows the
 * sign-in form, and the outbox holds the user's changes until they are back.
 */
export const UNAUTHENTICATED = "riskapi:unauthenticated";

let client: RiskApi | undefined;
let offlineClient: RiskApi | undefined;

function newClient(maxRetries?: number): RiskApi {
  return new RiskApi({
    session: true,
    maxElapsedMs: 10_000,
    ...(maxRetries === undefined ? {} : { maxRetries }),
    onUnauthorized: () => dispatchEvent(new Event(UNAUTHENTICATED)),
    // The Test data switch: every request says the mode it reads and writes in.
    testData: () => mode() === "test",
    // Reads labelled with their user, for the service worker's cache (offline.ts).
    fetch: (input, init) => offlineFetch(input, init),
  });
}

/**
 * api is the tab's SDK client; reads give up after 10 s, so a page never hangs
 * on "Loading…". Offline, it tries once: the service worker answers from the
 * user's cache at once or not at all, and retrying cannot help until the
 * browser is back online.
 */
export function api(): RiskApi {
  if (globalThis.navigator?.onLine === false) return (offlineClient ??= newClient(0));
  return (client ??= newClient());
}

/** isUnavailable is true for a 404 on a whole route: this server does not offer the feature. */
export function isUnavailable(err: unknown): boolean {
  return err instanceof RiskApiError && err.status === 404;
}

/**
 * explain says in words what went wrong, for people: the server's detail, a
 * rate limit as "try again in 3 s", no connection as such.
 */
export function explain(err: unknown): string {
  if (err instanceof RiskApiError) {
    if (err.status === 429) return `Too many requests: try again in ${Math.max(1, Math.ceil((err.retryAfterMs ?? 1000) / 1000))} s.`;
    return err.detail || err.title || `The server answered ${err.status}.`;
  }
  if (err instanceof NetworkError) return "Cannot reach the server: check the connection and try again.";
  return err instanceof Error ? err.message : String(err);
}

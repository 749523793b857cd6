/**
 * The outbox's transport: one attempt of a change through the SDK's client
 * (api.ts), with the change's own Idempotency-Key and no retry of its own —
 * the outbox decides about retries (change.ts), across reloads. An upload
 * reports its progress (the SDK sends it with XMLHttpRequest in browsers).
 */
import { RiskApiError } from "@riskapi/sdk";
import { api } from "../api";
import { MODE_HEADER } from "../mode";
import { LEGACY_API_VERSION, type Attempt, type Change } from "./change";
import type { Transport } from "./outbox";

/** How long one JSON attempt may take before it counts as a network failure; an upload has no limit but the SDK's. */
const JSON_TIMEOUT_MS = 60_000;

/** sdkTransport sends changes with the dashboard's SDK client. */
export const sdkTransport: Transport = {
  async send(c: Change, onProgress: (loaded: number, total: number) => void): Promise<Attempt> {
    const upload = c.body?.kind === "file" ? c.body : undefined;
    try {
      const r = await api().request(
        {
          method: c.method,
          path: c.path,
          ...(upload ? { multipart: { file: upload.file, filename: upload.filename, fields: upload.fields } } : {}),
          ...(c.body?.kind === "json" ? { json: c.body.json } : {}),
        },
        {
          idempotencyKey: c.key,
          // The server refuses it (401) unless the session is still its author's:
          // the cookie can change under this tab (docs/dashboard.md).
          // In the mode it was made in, whatever the Test data switch says now.
          // In the API version it was written in: a change queued before the move to
          // 2027-01-15 carries a string owner, which only 2026-12-01 reads.
          headers: { "Riskapi-Author": c.owner.userId, [MODE_HEADER]: c.mode ?? "live", "Riskapi-Version": c.apiVersion ?? LEGACY_API_VERSION },
          maxRetries: 0,
          ...(c.ifMatch ? { ifMatch: c.ifMatch } : {}),
          ...(upload ? { onUploadProgress: onProgress } : { attemptTimeoutMs: JSON_TIMEOUT_MS }),
        },
      );
      return { status: r.status, replayed: r.replayed, requestId: r.requestId, json: r.json };
    } catch (err) {
      if (err instanceof RiskApiError) return attemptOf(err);
      // A NetworkError (retried), or anything else, which the SDK's classify judges.
      return { error: err };
    }
  },
};

function attemptOf(err: RiskApiError): Attempt {
  let json: unknown;
  try {
    json = JSON.parse(err.body);
  } catch {
    json = undefined;
  }
  const a: Attempt = { status: err.status, json };
  if (err.requestId) a.requestId = err.requestId;
  if (err.retryAfterMs !== undefined) a.retryAfterMs = err.retryAfterMs;
  return a;
}

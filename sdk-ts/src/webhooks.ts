/**
 * Verifying riskapi's webhook deliveries in TypeScript receivers (Node 20+,
 * browsers, workers), as the Go SDK's sdk/webhooks does. Every delivery is
 * signed as Standard Webhooks defines (https://www.standardwebhooks.com):
 * webhook-id (the event id, the same on every retry: deduplicate on it),
 * webhook-timestamp (unix seconds) and webhook-signature ("v1,<base64
 * HMAC-SHA256 of id.timestamp.body>", keyed by the base64-decoded secret
 * after "whsec_"). It uses WebCrypto, whose HMAC verify compares in constant
 * time.
 */

/** Why a delivery did not verify; `reason` is stable, branch on it. */
export class WebhookVerificationError extends Error {
  constructor(
    /** missing_headers | bad_signature | too_old | too_new | bad_secret | bad_timestamp */
    readonly reason: "missing_headers" | "bad_signature" | "too_old" | "too_new" | "bad_secret" | "bad_timestamp",
    message: string,
  ) {
    super("riskapi webhooks: " + message);
    this.name = "WebhookVerificationError";
  }
}

/** How far webhook-timestamp may be from now, in seconds: a replayed capture of an old delivery is refused. */
export const WEBHOOK_TOLERANCE_S = 5 * 60;

/**
 * verifyWebhook resolves when payload — the request body exactly as received,
 * as a string or bytes — was signed by riskapi with secret ("whsec_…", shown
 * once when the endpoint was created) within the last 5 minutes; otherwise it
 * rejects with a {@link WebhookVerificationError}. `headers` is a Headers or
 * a plain object of the request's headers; `nowMs` is for tests.
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
  nowMs: number = Date.now(),
): Promise<void> {
  const get = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    const v = key === undefined ? undefined : headers[key];
    return Array.isArray(v) ? v[0] : v;
  };
  const keyBytes = decodeSecret(secret);
  const id = get("webhook-id");
  const ts = get("webhook-timestamp");
  const sigs = get("webhook-signature");
  if (!id || !ts || !sigs) throw new WebhookVerificationError("missing_headers", "webhook-id, webhook-timestamp or webhook-signature is missing");
  if (!/^\d+$/.test(ts)) throw new WebhookVerificationError("bad_timestamp", "webhook-timestamp is not unix seconds");
  const age = nowMs / 1000 - Number(ts);
  if (age > WEBHOOK_TOLERANCE_S) throw new WebhookVerificationError("too_old", "the timestamp is too old");
  if (age < -WEBHOOK_TOLERANCE_S) throw new WebhookVerificationError("too_new", "the timestamp is in the future");
  const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  for (const part of sigs.split(" ")) {
    const [version, sig] = part.split(",", 2);
    if (version !== "v1" || !sig) continue;
    const bytes = base64(sig);
    if (bytes && (await crypto.subtle.verify("HMAC", key, bytes, signed))) return;
  }
  throw new WebhookVerificationError("bad_signature", "no v1 signature matches the payload and secret");
}

function decodeSecret(secret: string): Uint8Array<ArrayBuffer> {
  const b = secret.startsWith("whsec_") ? base64(secret.slice("whsec_".length)) : undefined;
  if (!b || b.length === 0) throw new WebhookVerificationError("bad_secret", "the secret is not whsec_ followed by base64");
  return b;
}

function base64(s: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

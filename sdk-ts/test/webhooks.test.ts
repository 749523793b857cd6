// verifyWebhook against signatures made by hand from the Standard Webhooks
// specification (node:crypto), not by the code under test.

import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../src/index.js";

const key = Buffer.from("0123456789abcdef0123456789abcdef");
const secret = "whsec_" + key.toString("base64");
const body = '{"id":"evt_1","type":"risk.created"}';
const now = Date.parse("2026-12-01T08:00:00Z");

function sign(k: Buffer, id: string, tsMs: number, payload: string): Record<string, string> {
  const ts = Math.floor(tsMs / 1000);
  const sig = createHmac("sha256", k).update(`${id}.${ts}.${payload}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": `v0,bm9wZQ== v1,${sig}` };
}

describe("verifyWebhook", () => {
  it("accepts a delivery signed with the secret, as a string, bytes or Headers", async () => {
    const h = sign(key, "evt_1", now, body);
    await expect(verifyWebhook(body, h, secret, now)).resolves.toBeUndefined();
    await expect(verifyWebhook(new TextEncoder().encode(body), new Headers(h), secret, now)).resolves.toBeUndefined();
  });

  it.each([
    ["body changed", body + " ", sign(key, "evt_1", now, body), secret, "bad_signature"],
    ["other secret", body, sign(Buffer.from("another key of 32 bytes........."), "evt_1", now, body), secret, "bad_signature"],
    ["id changed", body, { ...sign(key, "evt_1", now, body), "webhook-id": "evt_2" }, secret, "bad_signature"],
    ["too old", body, sign(key, "evt_1", now - 301_000, body), secret, "too_old"],
    ["too new", body, sign(key, "evt_1", now + 301_000, body), secret, "too_new"],
    ["no signature", body, { "webhook-id": "evt_1", "webhook-timestamp": String(now / 1000) }, secret, "missing_headers"],
    ["bad secret", body, sign(key, "evt_1", now, body), "not-a-secret", "bad_secret"],
  ])("refuses: %s", async (_name, payload, headers, sec, reason) => {
    await expect(verifyWebhook(payload, headers, sec, now)).rejects.toMatchObject({ name: "WebhookVerificationError", reason });
  });
});

import { classify } from "@riskapi/sdk/retry";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newChange, type Change } from "./change";
import { sdkTransport } from "./send";

const owner = { userId: "usr_1", tenantId: "ten_1", email: "a@x.test" };
const change = (extra: Partial<Change> = {}): Change => ({
  ...newChange({ method: "POST", path: "/risks", body: { kind: "json", json: { title: "Flood" } }, label: "Create" }, owner, "6f1c2b1e-8d7a-4c5b-9e0f-1a2b3c4d5e6f", 1),
  ...extra,
});

/** stub answers every fetch with respond and records what was sent. */
function stub(respond: () => Response | Promise<Response>) {
  const seen: { url: string; init: RequestInit }[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => (seen.push({ url, init }), respond()));
  return seen;
}

afterEach(() => vi.unstubAllGlobals());

describe("sdkTransport (one attempt of a change through the SDK)", () => {
  it("sends once to /v1 with the change's key, the cookie and If-Match, and reports a replay", async () => {
    const seen = stub(() => new Response('{"id":"risk_1"}', { status: 201, headers: { "Idempotent-Replayed": "true", "X-Request-Id": "r1" } }));
    const a = await sdkTransport.send(change({ ifMatch: '"3"' }), () => undefined);
    expect(a).toEqual({ status: 201, replayed: true, requestId: "r1", json: { id: "risk_1" } });
    expect(seen).toHaveLength(1);
    const h = new Headers(seen[0]!.init.headers);
    expect(new URL(seen[0]!.url).pathname).toBe("/v1/risks");
    expect([h.get("Idempotency-Key"), h.get("If-Match"), h.has("Authorization"), seen[0]!.init.credentials]).toEqual([
      "6f1c2b1e-8d7a-4c5b-9e0f-1a2b3c4d5e6f", '"3"', false, "same-origin",
    ]);
  });

  it("hands a retryable answer back at once, with Retry-After and the problem, for the outbox to decide", async () => {
    const seen = stub(() => new Response('{"code":"RATE_LIMITED","detail":"slow down"}', { status: 429, headers: { "Retry-After": "3", "X-Request-Id": "r2" } }));
    const a = await sdkTransport.send(change(), () => undefined);
    expect(seen).toHaveLength(1);
    expect(a).toEqual({ status: 429, retryAfterMs: 3000, requestId: "r2", json: { code: "RATE_LIMITED", detail: "slow down" } });
  });

  it("reports no answer as an error the retry rule retries", async () => {
    stub(() => Promise.reject(new TypeError("Failed to fetch")));
    const a = await sdkTransport.send(change(), () => undefined);
    expect("error" in a && classify(a.error).retry).toBe(true);
  });

  it("sends a change in the API version it was written in: the newest now, 2026-12-01 for one queued before changes carried it", async () => {
    const seen = stub(() => new Response('{"id":"risk_1"}', { status: 200, headers: { "X-Request-Id": "r3" } }));
    const fresh = change({ method: "PATCH", path: "/risks/risk_1", body: { kind: "json", json: { owner: { userId: "usr_2" } } } });
    // As IndexedDB hands back a change stored by the dashboard before the move: no apiVersion, a string owner.
    const { apiVersion: _, ...stored } = change({ method: "PATCH", path: "/risks/risk_1", body: { kind: "json", json: { owner: "Ada" } }, ifMatch: '"4"' });
    await sdkTransport.send(fresh, () => undefined);
    await sdkTransport.send(stored as Change, () => undefined);
    const sent = seen.map((s) => new Headers(s.init.headers));
    expect(fresh.apiVersion).toBe("2027-01-15");
    expect(sent.map((h) => h.get("Riskapi-Version"))).toEqual(["2027-01-15", "2026-12-01"]);
    // Its author and base version go with it as they were.
    expect(sent.map((h) => [h.get("Riskapi-Author"), h.get("If-Match")])).toEqual([["usr_1", null], ["usr_1", '"4"']]);
    expect(seen.map((s) => JSON.parse(String(s.init.body)))).toEqual([{ owner: { userId: "usr_2" } }, { owner: "Ada" }]);
  });
});

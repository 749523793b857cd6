// The services beyond risks and attachments, and the session mode the
// dashboard uses: what goes on the wire for each, against a scripted fetch.

import { describe, expect, it } from "vitest";
import { RiskApi, RiskApiError } from "../src/index.js";
import { fakeClient, json, problem, risk } from "./fake.js";

const page = (data: unknown[]) => json(200, { data, hasMore: false, nextCursor: null });

describe("session mode (the dashboard: /v1 and the cookie)", () => {
  it("speaks /v1 with the cookie and no Authorization, keying writes as with a key", async () => {
    const { client, seen } = fakeClient([json(201, risk("risk_1"))], { session: true });
    await client.risks.create({ title: "t" });
    const s = seen[0]!;
    expect(s.url.href).toBe("http://riskapi.test/v1/risks");
    expect(s.headers.has("Authorization")).toBe(false);
    expect(s.headers.has("User-Agent")).toBe(false);
    expect(s.credentials).toBe("same-origin");
    expect(s.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("never sends the cookie in API key mode", async () => {
    const { client, seen } = fakeClient([json(201, risk("risk_1"))]);
    await client.risks.create({ title: "t" });
    expect(seen[0]!.credentials).toBe("omit");
    expect(seen[0]!.url.pathname).toBe("/v2/risks");
  });

  it("signs in once, unkeyed, never retrying the password", async () => {
    const { client, seen } = fakeClient([problem(503, "STORE_UNAVAILABLE"), json(201, { token: "t", expiresAt: "x" })], { session: true });
    await expect(client.account.signIn("a@b.test", "secret pw")).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.has("Idempotency-Key")).toBe(false);
    expect(seen[0]!.url.pathname).toBe("/v1/sessions");
  });

  it("creates secrets unkeyed and sends once; role changes and revocations keyed", async () => {
    const { client, seen } = fakeClient([json(201, { id: "key_1", key: "rk_x" }), json(200, { id: "usr_1", role: "member" }), new Response(null, { status: 204 })], { session: true });
    expect(await client.apiKeys.create({ name: "n", scopes: ["risks:read"] })).toMatchObject({ key: "rk_x" });
    await client.users.setRole("usr_1", "member");
    await client.apiKeys.delete("key_1");
    expect(seen.map((s) => [s.method, s.url.pathname, s.headers.has("Idempotency-Key")])).toEqual([
      ["POST", "/v1/api-keys", false],
      ["PATCH", "/v1/users/usr_1", true],
      ["DELETE", "/v1/api-keys/key_1", true],
    ]);
  });

  it("rolls keys and endpoint secrets unkeyed; changes, disables, enables and pings endpoints keyed", async () => {
    const { client, seen } = fakeClient([
      json(201, { id: "key_2", key: "rk_y", previous: { id: "key_1" } }),
      json(200, { id: "we_1", secret: "whsec_x" }),
      json(200, { id: "we_1", description: "d" }),
      json(200, { id: "we_1", disabledAt: "2026-01-01T00:00:00Z" }),
      json(200, { id: "we_1", disabledAt: null }),
      json(200, { status: 204, delivered: true, error: null, durationMs: 3 }),
      json(200, { id: "we_1" }),
    ], { session: true });
    expect(await client.apiKeys.roll("key_1", 3600)).toMatchObject({ key: "rk_y" });
    expect(await client.webhookEndpoints.rollSecret("we_1", 60)).toMatchObject({ secret: "whsec_x" });
    await client.webhookEndpoints.update("we_1", { description: "d" });
    await client.webhookEndpoints.disable("we_1");
    await client.webhookEndpoints.enable("we_1");
    expect(await client.webhookEndpoints.ping("we_1")).toMatchObject({ status: 204, delivered: true });
    await client.webhookEndpoints.get("we_1");
    expect(seen.map((s) => [s.method, s.url.pathname, s.headers.has("Idempotency-Key")])).toEqual([
      ["POST", "/v1/api-keys/key_1/roll", false],
      ["POST", "/v1/webhook-endpoints/we_1/roll-secret", false],
      ["PATCH", "/v1/webhook-endpoints/we_1", true],
      ["POST", "/v1/webhook-endpoints/we_1/disable", true],
      ["POST", "/v1/webhook-endpoints/we_1/enable", true],
      ["POST", "/v1/webhook-endpoints/we_1/ping", true],
      ["GET", "/v1/webhook-endpoints/we_1", false],
    ]);
    expect(JSON.parse(new TextDecoder().decode(seen[0]!.body))).toEqual({ expiresIn: 3600 });
  });

  it("rolls a key giving the new key an expiry of its own", async () => {
    const { client, seen } = fakeClient([json(201, { id: "key_2", key: "rk_y", expiresAt: "2027-01-01T00:00:00Z" })], { session: true });
    await client.apiKeys.roll("key_1", { expiresIn: 60, newKeyExpiresAt: "2027-01-01T00:00:00Z" });
    expect(JSON.parse(new TextDecoder().decode(seen[0]!.body))).toEqual({ expiresIn: 60, newKeyExpiresAt: "2027-01-01T00:00:00Z" });
  });

  it("iterates every admin list across pages, following nextCursor", async () => {
    const more = (data: unknown[], next: string) => json(200, { data, hasMore: true, nextCursor: next });
    const { client, seen } = fakeClient([
      more([{ id: "usr_1" }], "c1"), page([{ id: "usr_2" }]),
      more([{ eventId: "evt_1" }], "d1"), page([{ eventId: "evt_2" }]),
    ], { session: true });
    const users: string[] = [];
    for await (const u of client.users.list({ limit: 1 })) users.push(u.id);
    const attempts: string[] = [];
    for await (const a of client.webhookEndpoints.allDeliveries("we_1")) attempts.push(a.eventId);
    expect(users).toEqual(["usr_1", "usr_2"]);
    expect(attempts).toEqual(["evt_1", "evt_2"]);
    expect(seen.map((s) => s.url.pathname + s.url.search)).toEqual([
      "/v1/users?limit=1", "/v1/users?limit=1&cursor=c1",
      "/v1/webhook-endpoints/we_1/deliveries", "/v1/webhook-endpoints/we_1/deliveries?cursor=d1",
    ]);
  });

  it("reads My work in session mode, with its limit", async () => {
    const work = { reviewDueDays: 7, reviews: { data: [{ riskId: "risk_1", title: "t", reviewDate: "2026-12-01", reviewEvery: null, state: "overdue" }], hasMore: false },
      actions: { data: [], hasMore: false }, acceptances: { data: [], hasMore: false } };
    const { client, seen } = fakeClient([json(200, work)], { session: true });
    const got = await client.account.myWork({ limit: 5 });
    expect(got.reviews.data[0]!.state).toBe("overdue");
    expect(seen[0]!.method + " " + seen[0]!.url.pathname + seen[0]!.url.search).toBe("GET /v1/my-work?limit=5");
  });

  it("refuses session-only calls on an API key client before sending", async () => {
    const { client, seen } = fakeClient([json(200, {})]);
    await expect(client.account.me()).rejects.toThrow(/session client/);
    await expect(client.account.myWork()).rejects.toThrow(/session client/);
    await expect(client.users.listPage()).rejects.toThrow(/session client/);
    expect(seen).toHaveLength(0);
    expect(() => new RiskApi({ session: true, apiKey: "rk_x" })).toThrow(TypeError);
    expect(() => new RiskApi({})).toThrow(TypeError);
  });

  it("tells onUnauthorized of a 401 (the session ended) and rejects", async () => {
    const seen401: RiskApiError[] = [];
    const { client } = fakeClient([problem(401, "UNAUTHENTICATED")], { session: true, onUnauthorized: (e) => seen401.push(e) });
    await expect(client.risks.listPage()).rejects.toMatchObject({ status: 401 });
    expect(seen401.map((e) => e.code)).toEqual(["UNAUTHENTICATED"]);
  });
});

describe("request(): a write kept as data, sent one attempt at a time", () => {
  it("sends the caller's key once with maxRetries 0 and reports status, request id and replay", async () => {
    const { client, seen } = fakeClient([json(201, risk("risk_1"), { "Idempotent-Replayed": "true", "X-Request-Id": "r9" })], { session: true });
    const r = await client.request({ method: "POST", path: "/risks", json: { title: "t" } }, { idempotencyKey: "k-12345678", maxRetries: 0 });
    expect(r).toMatchObject({ status: 201, requestId: "r9", replayed: true, json: { id: "risk_1" } });
    expect(seen[0]!.headers.get("Idempotency-Key")).toBe("k-12345678");
  });

  it("rejects a retryable answer at once with maxRetries 0, carrying Retry-After", async () => {
    const { client, seen } = fakeClient([problem(429, "RATE_LIMITED", { retryAfter: "3" })], { session: true });
    const err = await client.request({ method: "DELETE", path: "/risks/r" }, { maxRetries: 0 }).catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 3000 });
  });

  it("answers a 204 with no body and uploads multipart", async () => {
    const { client, seen } = fakeClient([new Response(null, { status: 204 }), json(201, { id: "att_1" })], { session: true });
    expect((await client.request({ method: "DELETE", path: "/risks/r" })).json).toBeUndefined();
    await client.request({ method: "POST", path: "/risks/r/attachments", multipart: { file: new Blob(["hi"], { type: "text/plain" }), filename: "a.txt", fields: { description: "d" } } });
    const form = await new Response(seen[1]!.body, { headers: { "Content-Type": seen[1]!.headers.get("Content-Type")! } }).formData();
    expect([(form.get("file") as File).name, form.get("description")]).toEqual(["a.txt", "d"]);
  });

  it("sends If-Match when asked", async () => {
    const { client, seen } = fakeClient([json(200, risk("risk_1"))]);
    await client.risks.update("risk_1", { title: "x" }, { ifMatch: '"3"' });
    expect(seen[0]!.headers.get("If-Match")).toBe('"3"');
  });
});

describe("events, request log, idempotency inspector", () => {
  it("list and get with their filters, in either mode", async () => {
    const { client, seen } = fakeClient([page([{ id: "evt_1" }]), json(200, { id: "evt_1" }), page([]), json(200, { id: "req_1" }), json(200, { state: "complete" })]);
    const ids: string[] = [];
    for await (const e of client.events.list({ type: "risk.created", limit: 5 })) ids.push(e.id);
    await client.events.get("evt_1");
    await client.requests.listPage({ idempotencyKey: "k", status: 422, method: "POST", outcome: "key_reused", since: "2026-12-01T00:00:00Z" });
    await client.requests.get("req_1");
    expect(await client.idempotencyKeys.get("k", "POST", "/v2/risks")).toEqual({ state: "complete" });
    expect(ids).toEqual(["evt_1"]);
    expect(seen.map((s) => s.url.pathname + s.url.search)).toEqual([
      "/v2/events?type=risk.created&limit=5",
      "/v2/events/evt_1",
      "/v2/requests?idempotencyKey=k&status=422&method=POST&outcome=key_reused&since=2026-12-01T00%3A00%3A00Z",
      "/v2/requests/req_1",
      "/v2/idempotency-keys/k?method=POST&path=%2Fv2%2Frisks",
    ]);
  });

  it("redelivers an event in session mode, keyed", async () => {
    const { client, seen } = fakeClient([json(202, { eventId: "evt_1" })], { session: true });
    await client.events.redeliver("evt_1");
    expect([seen[0]!.method, seen[0]!.url.pathname, seen[0]!.headers.has("Idempotency-Key")]).toEqual(["POST", "/v1/events/evt_1/redeliver", true]);
  });
});

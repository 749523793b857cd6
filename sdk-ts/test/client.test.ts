import { describe, expect, it } from "vitest";
import { API_VERSION, NetworkError, RiskApi, RiskApiError, type ResponseInfo } from "../src/index.js";
import { fakeClient, json, problem, risk } from "./fake.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const cut = () => new TypeError("fetch failed", { cause: new Error("ECONNRESET") });

describe("idempotency keys", () => {
  it("mints one UUID v4 per write call and sends it on every retry", async () => {
    const { client, seen } = fakeClient([cut(), problem(503, "STORE_UNAVAILABLE", { retryAfter: "1" }), problem(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", { retryAfter: "1" }), json(201, risk("risk_1"))]);
    const r = await client.risks.create({ title: "t" });
    expect(r.id).toBe("risk_1");
    expect(seen).toHaveLength(4);
    const keys = seen.map((s) => s.headers.get("Idempotency-Key"));
    expect(keys[0]).toMatch(UUID_V4);
    expect(new Set(keys).size).toBe(1);
    // The same bytes every time, too: the fingerprint must match.
    expect(new Set(seen.map((s) => new TextDecoder().decode(s.body))).size).toBe(1);
  });

  it("gives each call its own key", async () => {
    const { client, seen } = fakeClient([json(201, risk("risk_1"))]);
    await client.risks.create({ title: "a" });
    await client.risks.create({ title: "a" });
    expect(seen[0]!.headers.get("Idempotency-Key")).not.toBe(seen[1]!.headers.get("Idempotency-Key"));
  });

  it("uses the caller's key, and none on reads", async () => {
    const { client, seen } = fakeClient([json(200, risk("risk_1"))]);
    await client.risks.update("risk_1", { likelihood: null }, { idempotencyKey: "import-7-row-17" });
    await client.risks.get("risk_1");
    expect(seen[0]!.headers.get("Idempotency-Key")).toBe("import-7-row-17");
    expect(seen[0]!.method).toBe("PATCH");
    expect(new TextDecoder().decode(seen[0]!.body)).toBe('{"likelihood":null}');
    expect(seen[1]!.headers.has("Idempotency-Key")).toBe(false);
  });

  it("keys deletes too, and reports a replay", async () => {
    const { client, seen } = fakeClient([cut(), new Response(null, { status: 204, headers: { "Idempotent-Replayed": "true", "X-Request-Id": "r2" } })]);
    let info: ResponseInfo | undefined;
    await client.risks.delete("risk_1", { onResponse: (i) => (info = i) });
    expect(seen.map((s) => s.method)).toEqual(["DELETE", "DELETE"]);
    expect(info).toEqual({ status: 204, requestId: "r2", idempotencyKey: seen[0]!.headers.get("Idempotency-Key"), replayed: true, attempts: 2 });
  });
});

describe("retry policy", () => {
  it.each([500, 422, 400, 401, 403, 404, 413])("does not retry %i", async (status) => {
    const { client, seen } = fakeClient([problem(status, "X"), json(201, risk("risk_1"))]);
    await expect(client.risks.create({ title: "t" })).rejects.toMatchObject({ status });
    expect(seen).toHaveLength(1);
  });

  it.each([409, 429, 502, 503, 504])("retries %i with the same key", async (status) => {
    const { client, seen } = fakeClient([problem(status, "X"), json(201, risk("risk_1"))]);
    await client.risks.create({ title: "t" });
    expect(seen).toHaveLength(2);
  });

  it("waits Retry-After (seconds and HTTP-date), otherwise jittered backoff", async () => {
    const { client, waits } = fakeClient([
      problem(429, "RATE_LIMITED", { retryAfter: "3" }),
      cut(),
      problem(503, "STORE_UNAVAILABLE", { retryAfter: "Tue, 01 Dec 2026 08:00:10 GMT" }),
      problem(502, "X"),
      json(201, risk("risk_1")),
    ]);
    await client.risks.create({ title: "t" });
    // 3 s; backoff 0.5·1000; HTTP-date 10 s after the start minus the 3.5 s waited; backoff 0.5·4000.
    expect(waits).toEqual([3000, 500, 6500, 2000]);
  });

  it("retries a connection cut while the answer is read", async () => {
    const broken = () =>
      new Response(new ReadableStream({ start: (c) => { c.enqueue(new TextEncoder().encode('{"id":')); c.error(new TypeError("terminated")); } }), { status: 201 });
    const { client, seen } = fakeClient([broken, json(201, risk("risk_1"))]);
    expect((await client.risks.create({ title: "t" })).id).toBe("risk_1");
    expect(seen).toHaveLength(2);
  });

  it("retries an attempt that timed out", async () => {
    const hang = (_req: unknown, signal: AbortSignal) => new Promise<Error>((resolve) => signal.addEventListener("abort", () => resolve(signal.reason as Error)));
    const { client, seen } = fakeClient([hang, json(201, risk("risk_1"))], { attemptTimeoutMs: 5 });
    await client.risks.create({ title: "t" });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.headers.get("Idempotency-Key")).toBe(seen[0]!.headers.get("Idempotency-Key"));
  });

  it("does not retry a 500 whose body was cut short", async () => {
    const cutBody = () =>
      new Response(new ReadableStream({ start: (c) => { c.enqueue(new TextEncoder().encode('{"code":')); c.error(new TypeError("terminated")); } }), { status: 500, headers: { "X-Request-Id": "r500" } });
    const { client, seen } = fakeClient([cutBody, json(201, risk("risk_1"))]);
    await expect(client.risks.create({ title: "t" })).rejects.toMatchObject({ status: 500, code: "", requestId: "r500" });
    expect(seen).toHaveLength(1);
  });

  it("does not retry a 2xx that is not JSON", async () => {
    const { client, seen } = fakeClient([new Response("<html>", { status: 201 })]);
    await expect(client.risks.create({ title: "t" })).rejects.toThrow(/not JSON/);
    expect(seen).toHaveLength(1);
  });

  it("gives up within maxElapsedMs with the last answer", async () => {
    const { client, seen, waits } = fakeClient([problem(503, "STORE_UNAVAILABLE", { requestId: "last" })], { random: () => 1 - Number.EPSILON });
    const err = await client.risks.create({ title: "t" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect(err).toMatchObject({ status: 503, code: "STORE_UNAVAILABLE", requestId: "last", attempts: seen.length });
    // Ceilings 0.5, 1, 2, 4, 8, 16 s (sum 31.5 s, jitter at the top); a 30 s wait would end past 60 s.
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(60_000);
    expect(waits).toHaveLength(6);
    expect(seen).toHaveLength(7);
  });

  it("gives up after maxRetries with a NetworkError that says so", async () => {
    const { client, seen } = fakeClient([cut()], { maxRetries: 2 });
    const err = await client.risks.get("risk_1").catch((e: unknown) => e);
    expect(seen).toHaveLength(3);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).message).toBe("riskapi: GET /v2/risks/risk_1: giving up after 3 attempts: fetch failed");
    expect((err as NetworkError).attempts).toBe(3);
  });

  it("caps one wait at maxWaitMs and honours a short budget", async () => {
    const { client, waits, seen } = fakeClient([problem(429, "RATE_LIMITED", { retryAfter: "3600" })], { maxWaitMs: 2000, maxElapsedMs: 5000 });
    await expect(client.risks.create({ title: "t" })).rejects.toMatchObject({ status: 429, retryAfterMs: 3_600_000 });
    expect(waits).toEqual([2000, 2000]);
    expect(seen).toHaveLength(3);
  });

  it("stops at once when the caller aborts during a wait", async () => {
    const ctl = new AbortController();
    const { client, seen } = fakeClient([problem(503, "STORE_UNAVAILABLE")], {
      sleep: async () => { ctl.abort(new Error("user left")); throw ctl.signal.reason; },
    });
    await expect(client.risks.create({ title: "t" }, { signal: ctl.signal })).rejects.toThrow("user left");
    expect(seen).toHaveLength(1);
  });
});

describe("errors", () => {
  it("carry status, code, title, detail, request id and key", async () => {
    const { client, seen } = fakeClient([problem(422, "IDEMPOTENCY_KEY_REUSED", { requestId: "abc", detail: "this Idempotency-Key was used with a different request" })]);
    const err = (await client.risks.create({ title: "t" }).catch((e: unknown) => e)) as RiskApiError;
    expect(err).toBeInstanceOf(RiskApiError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      status: 422, code: "IDEMPOTENCY_KEY_REUSED", title: "title of IDEMPOTENCY_KEY_REUSED",
      detail: "this Idempotency-Key was used with a different request", requestId: "abc",
      idempotencyKey: seen[0]!.headers.get("Idempotency-Key"), attempts: 1,
    });
    expect(err.message).toBe("riskapi: 422 IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with a different request (request abc)");
  });

  it("name the fields of VALIDATION_FAILED", async () => {
    const body = { type: "t", title: "Validation failed", status: 400, detail: "title: required", code: "VALIDATION_FAILED", requestId: "r", errors: [{ field: "title", detail: "required" }] };
    const { client } = fakeClient([new Response(JSON.stringify(body), { status: 400 })]);
    await expect(client.risks.create({ title: "" })).rejects.toMatchObject({ code: "VALIDATION_FAILED", errors: [{ field: "title", detail: "required" }] });
  });

  it("still describe an answer that is not a problem", async () => {
    const { client } = fakeClient([new Response("<h1>Bad gateway</h1>", { status: 500, statusText: "Internal Server Error", headers: { "X-Request-Id": "hdr" } })]);
    await expect(client.risks.get("x")).rejects.toMatchObject({ status: 500, code: "", title: "Internal Server Error", detail: "<h1>Bad gateway</h1>", requestId: "hdr" });
  });
});

describe("requests", () => {
  it("send the key as a bearer, JSON, and keep a base path prefix", async () => {
    const { seen } = await (async () => {
      const f = fakeClient([json(201, risk("risk_1"))], { baseUrl: "http://riskapi.test/prefix/" });
      await f.client.risks.create({ title: "t", likelihood: 3, impact: 4 }, { headers: { Authorization: "Bearer evil", "Idempotency-Key": "x", "X-Trace": "1" }, idempotencyKey: "mine-12345" });
      return f;
    })();
    const s = seen[0]!;
    expect(s.url.href).toBe("http://riskapi.test/prefix/v2/risks");
    expect(s.headers.get("Authorization")).toBe("Bearer rk_test");
    expect(s.headers.get("Idempotency-Key")).toBe("mine-12345");
    expect(s.headers.get("X-Trace")).toBe("1");
    expect(s.headers.get("Content-Type")).toBe("application/json");
    expect(JSON.parse(new TextDecoder().decode(s.body))).toEqual({ title: "t", likelihood: 3, impact: 4 });
  });

  it("refuse options that make no sense", () => {
    expect(() => new RiskApi({ apiKey: "" })).toThrow(TypeError);
    expect(() => new RiskApi({ apiKey: "k", maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new RiskApi({ apiKey: "k", maxWaitMs: 0 })).toThrow(/maxWaitMs/);
    expect(() => new RiskApi({ apiKey: "k", baseUrl: "ftp://x" })).toThrow(/http/);
    expect(() => new RiskApi({ apiKey: "k", baseUrl: "not a url" })).toThrow();
  });
});

describe("uploads", () => {
  it("send the same bytes, name and type on every attempt", async () => {
    const bytes = new Uint8Array(100_000).map((_, i) => (i * 7) % 251);
    const { client, seen } = fakeClient([cut(), problem(503, "STORE_UNAVAILABLE"), json(201, { id: "att_1" })]);
    const a = await client.attachments.upload("risk_1", { file: bytes, filename: "scan.bin", contentType: "application/x-scan", description: "d" });
    expect(a.id).toBe("att_1");
    expect(seen).toHaveLength(3);
    for (const s of seen) {
      expect(s.url.pathname).toBe("/v2/risks/risk_1/attachments");
      const form = await new Response(s.body, { headers: { "Content-Type": s.headers.get("Content-Type")! } }).formData();
      const file = form.get("file") as File;
      expect(file.name).toBe("scan.bin");
      expect(file.type).toBe("application/x-scan");
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);
      expect(form.get("description")).toBe("d");
    }
    expect(new Set(seen.map((s) => s.headers.get("Idempotency-Key"))).size).toBe(1);
  });

  it("take a Blob's name and type", async () => {
    const { client, seen } = fakeClient([json(201, { id: "att_1" })]);
    await client.attachments.upload("risk_1", { file: new File(["hello"], "note.txt", { type: "text/plain" }) });
    const form = await new Response(seen[0]!.body, { headers: { "Content-Type": seen[0]!.headers.get("Content-Type")! } }).formData();
    const file = form.get("file") as File;
    expect([file.name, file.type, await file.text()]).toEqual(["note.txt", "text/plain", "hello"]);
    expect(form.has("description")).toBe(false);
  });
});

describe("paging", () => {
  it("iterates every page in order, following the cursor", async () => {
    const pages = [
      json(200, { data: [risk("r1"), risk("r2")], hasMore: true, nextCursor: "c1" }),
      json(200, { data: [risk("r3")], hasMore: true, nextCursor: "c2" }),
      json(200, { data: [], hasMore: false, nextCursor: null }),
    ];
    const { client, seen } = fakeClient([(req) => pages[seen.length - 1]!]);
    const ids: string[] = [];
    for await (const r of client.risks.list({ limit: 2 })) ids.push(r.id);
    expect(ids).toEqual(["r1", "r2", "r3"]);
    expect(seen.map((s) => s.url.search)).toEqual(["?limit=2", "?limit=2&cursor=c1", "?limit=2&cursor=c2"]);
  });

  it("stops fetching when the loop breaks", async () => {
    const { client, seen } = fakeClient([json(200, { data: [risk("r1"), risk("r2")], hasMore: true, nextCursor: "c1" })]);
    for await (const r of client.risks.list()) if (r.id === "r1") break;
    expect(seen).toHaveLength(1);
  });

  it("retries a page, then rejects the iteration with the page's error", async () => {
    const { client, seen } = fakeClient([
      json(200, { data: [risk("r1")], hasMore: true, nextCursor: "c1" }),
      cut(),
      problem(404, "NOT_FOUND"),
    ]);
    const ids: string[] = [];
    await expect((async () => { for await (const a of client.attachments.list("risk_1")) ids.push(a.id); })()).rejects.toMatchObject({ status: 404 });
    expect(ids).toEqual(["r1"]);
    expect(seen).toHaveLength(3);
  });
});

describe("downloads", () => {
  it("retry until the headers arrive, then hand over the unread bytes", async () => {
    const bytes = new TextEncoder().encode("the bytes");
    const { client, seen } = fakeClient([
      cut(),
      new Response(bytes, { status: 200, headers: { "Content-Type": "text/plain", "Content-Length": "9", ETag: '"abc123"' } }),
    ]);
    const d = await client.attachments.download("att_1");
    expect(seen.map((s) => [s.url.pathname, s.headers.get("Accept"), s.headers.has("Idempotency-Key")])).toEqual([
      ["/v2/attachments/att_1/content", "*/*", false],
      ["/v2/attachments/att_1/content", "*/*", false],
    ]);
    expect([d.contentType, d.size, d.sha256]).toEqual(["text/plain", 9, "abc123"]);
    expect(await d.response.text()).toBe("the bytes");
  });
});

describe("test data (docs/sandboxes.md)", () => {
  it("sends Riskapi-Mode: test while testData says so, keeps a call's own mode, and never with an API key", async () => {
    let on = true;
    const { client, seen } = fakeClient([json(200, risk("risk_1"))], { session: true, testData: () => on });
    await client.risks.get("risk_1");
    await client.request({ method: "POST", path: "/risks", json: { title: "t" } }, { headers: { "Riskapi-Mode": "live" } });
    on = false;
    await client.risks.get("risk_1");
    expect(seen.map((s) => s.headers.get("Riskapi-Mode"))).toEqual(["test", "live", null]);
    const keyed = fakeClient([json(200, risk("risk_1"))], { testData: () => true });
    await keyed.client.risks.get("risk_1");
    expect(keyed.seen[0]!.headers.has("Riskapi-Mode")).toBe(false);
  });

  it("erases the sandbox without an Idempotency-Key", async () => {
    const { client, seen } = fakeClient([json(200, { id: "sbx_1", livemode: false, risks: 2 })], { session: true });
    const out = await client.sandbox.erase();
    expect(out.risks).toBe(2);
    expect(seen[0]!.method).toBe("DELETE");
    expect(seen[0]!.url.pathname).toBe("/v1/sandbox/data");
    expect(seen[0]!.headers.has("Idempotency-Key")).toBe(false);
  });
});

describe("API version", () => {
  it("sends Riskapi-Version 2027-01-15 on reads and writes, and writes owners as objects", async () => {
    const { client, seen } = fakeClient([json(201, { ...risk("risk_1"), owner: { userId: "usr_1", name: "ada@example.com" } })]);
    const r = await client.risks.create({ title: "t", owner: { userId: "usr_1" } });
    await client.risks.get("risk_1");
    expect(API_VERSION).toBe("2027-01-15");
    expect(seen.map((s) => s.headers.get("Riskapi-Version"))).toEqual(["2027-01-15", "2027-01-15"]);
    expect(JSON.parse(new TextDecoder().decode(seen[0]!.body))).toEqual({ title: "t", owner: { userId: "usr_1" } });
    expect(r.owner).toEqual({ userId: "usr_1", name: "ada@example.com" });
  });

  it("sends the caller's own Riskapi-Version instead: a write kept as data goes in the version it was written in", async () => {
    const { client, seen } = fakeClient([json(200, { ...risk("risk_1"), owner: "Ada" })]);
    await client.request({ method: "PATCH", path: "/risks/risk_1", json: { owner: "Ada" } }, { headers: { "Riskapi-Version": "2026-12-01" } });
    expect(seen[0]!.headers.get("Riskapi-Version")).toBe("2026-12-01");
  });
});

// The SDK against a real riskapi (the shipped binary, `serve --demo`, on a
// fresh database of the store under test: SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set), directly or through FaultProxy. Here the
// server's idempotency engine, fingerprints and stored responses are the ones
// that ship, so these tests show that the SDK's keys and retries and the
// server's replays fit together: a lost answer never makes a second risk.

import { createHash, randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { NetworkError, RiskApi, RiskApiError, type AuditEntry, type ClientOptions, type ResponseInfo } from "../../src/index.js";
import { FaultProxy } from "@riskapi/testkit";
import { startServer, type Server } from "./server.js";

let server: Server;
let proxy: FaultProxy;
let waits: number[];

beforeAll(async () => {
  server = await startServer(inject("riskapiBinary"));
}, 90_000);
afterAll(async () => {
  await server?.stop();
}, 30_000);
afterEach(async () => {
  await proxy?.close();
});

/**
 * A client of the demo tenant through a new fault proxy. Its waits are
 * recorded and shortened to at most 100 ms: enough for a busy server to finish
 * an attempt still in progress (409), short of what the policy asked.
 */
async function viaProxy(opts: Partial<ClientOptions> = {}): Promise<RiskApi> {
  proxy = await FaultProxy.start(server.baseUrl);
  waits = [];
  return new RiskApi({
    apiKey: server.demo.apiKey,
    baseUrl: proxy.url,
    sleep: async (ms) => {
      waits.push(ms);
      await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 100)));
    },
    ...opts,
  });
}

/** A client straight to the server, for looking at what is stored. */
function direct(): RiskApi {
  return new RiskApi({ apiKey: server.demo.apiKey, baseUrl: server.baseUrl });
}

async function risksTitled(title: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const r of direct().risks.list({ limit: 100 })) if (r.title === title) ids.push(r.id);
  return ids;
}

const unique = (what: string) => `${what} ${randomUUID()}`;

describe(`the SDK against a real riskapi (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("creates a risk once when the first answer is lost after the server committed", async () => {
    const client = await viaProxy();
    proxy.on("POST", "/v2/risks", 1, { action: "cut-after-answer" });
    const title = unique("answer lost");
    let info: ResponseInfo | undefined;
    const r = await client.risks.create({ title, likelihood: 3, impact: 4 }, { onResponse: (i) => (info = i) });

    expect(r.riskScore).toBe(12);
    const seen = proxy.requests("POST", "/v2/risks");
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ forwarded: true, status: 201, replayed: false, action: "cut-after-answer" });
    expect(seen[1]).toMatchObject({ forwarded: true, status: 201, replayed: true, key: seen[0]!.key });
    expect(seen[1]!.bodySha256).toBe(seen[0]!.bodySha256);
    expect(info).toMatchObject({ status: 201, replayed: true, attempts: 2, idempotencyKey: seen[0]!.key });
    expect(await risksTitled(title)).toEqual([r.id]);
  });

  it("uploads once when the answer is lost, and downloads the same bytes", async () => {
    const owner = await direct().risks.create({ title: unique("with attachment") });
    const client = await viaProxy();
    const path = `/v2/risks/${owner.id}/attachments`;
    proxy.on("POST", path, 1, { action: "cut-after-answer" });
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) % 256);
    const a = await client.attachments.upload(owner.id, { file: bytes, filename: "scan.bin", contentType: "application/octet-stream", description: "twice sent" });

    const seen = proxy.requests("POST", path);
    expect(seen.map((s) => [s.status, s.replayed])).toEqual([[201, false], [201, true]]);
    expect(seen[1]!.key).toBe(seen[0]!.key);
    const sha = createHash("sha256").update(bytes).digest("hex");
    expect(a).toMatchObject({ filename: "scan.bin", size: bytes.length, sha256: sha, description: "twice sent" });
    const all = [];
    for await (const x of direct().attachments.list(owner.id)) all.push(x.id);
    expect(all).toEqual([a.id]);

    const d = await client.attachments.download(a.id);
    expect(d.sha256).toBe(sha);
    expect(new Uint8Array(await d.response.arrayBuffer())).toEqual(bytes);
  });

  it("deletes once: the retry of a lost 204 is replayed, not a 404", async () => {
    const r = await direct().risks.create({ title: unique("to delete") });
    const client = await viaProxy();
    proxy.on("DELETE", `/v2/risks/${r.id}`, 1, { action: "cut-after-answer" });
    await client.risks.delete(r.id);
    expect(proxy.requests("DELETE", `/v2/risks/${r.id}`).map((s) => [s.status, s.replayed])).toEqual([[204, false], [204, true]]);
    await expect(direct().risks.get(r.id)).rejects.toMatchObject({ status: 404, code: "NOT_FOUND" });
  });

  it("retries an attempt that timed out with the same key, and the write happens once", async () => {
    const client = await viaProxy({ attemptTimeoutMs: 1000 });
    proxy.on("POST", "/v2/risks", 1, { action: "hold-answer", ms: 10_000 });
    const title = unique("slow answer");
    const r = await client.risks.create({ title });
    // A busy server may be slower than the attempt timeout more than once,
    // or answer a retry 409 while the first attempt still runs: every
    // attempt carries the one key, one ran, and the last was a replay.
    const seen = proxy.requests("POST", "/v2/risks");
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen.filter((s) => s.status === 201 && !s.replayed)).toHaveLength(1);
    expect(seen.at(-1)).toMatchObject({ status: 201, replayed: true });
    expect(await risksTitled(title)).toEqual([r.id]);
  });

  it("waits the Retry-After of a 503 and of a 429, then succeeds", async () => {
    const client = await viaProxy();
    const r = await direct().risks.create({ title: unique("rate limited"), likelihood: 2, impact: 2 });
    const path = `/v2/risks/${r.id}`;
    proxy.on("PATCH", path, 1, { action: "answer", status: 503, code: "STORE_UNAVAILABLE", retryAfter: "2" });
    proxy.on("PATCH", path, 2, { action: "answer", status: 429, code: "RATE_LIMITED", retryAfter: "5" });
    const updated = await client.risks.update(r.id, { impact: 5, riskScore: null });
    expect(waits).toEqual([2000, 5000]);
    expect(updated).toMatchObject({ impact: 5, riskScore: null });
    const seen = proxy.requests("PATCH", path);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen.map((s) => s.forwarded)).toEqual([false, false, true]);
  });

  it("does not retry a 500", async () => {
    const client = await viaProxy();
    proxy.on("POST", "/v2/risks", 1, { action: "answer", status: 500, code: "INTERNAL" });
    await expect(client.risks.create({ title: unique("not retried") })).rejects.toMatchObject({ status: 500, code: "INTERNAL" });
    expect(proxy.requests("POST", "/v2/risks")).toHaveLength(1);
  });

  it("does not retry 422 IDEMPOTENCY_KEY_REUSED, and stores nothing for it", async () => {
    const client = await viaProxy();
    const key = "ts-sdk-" + randomUUID();
    const first = await client.risks.create({ title: unique("first use") }, { idempotencyKey: key });
    const other = unique("other body");
    const err = await client.risks.create({ title: other }, { idempotencyKey: key }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect(err).toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED", idempotencyKey: key, attempts: 1 });
    expect((err as RiskApiError).requestId).not.toBe("");
    expect(proxy.requests("POST", "/v2/risks")).toHaveLength(2);
    expect(await risksTitled(other)).toEqual([]);
    expect(first.id).toMatch(/^risk_/);
  });

  it("gives up on an unreachable server with a NetworkError within its budget", async () => {
    const client = new RiskApi({ apiKey: server.demo.apiKey, baseUrl: "http://127.0.0.1:1", maxRetries: 3, sleep: async () => {} });
    const err = await client.risks.get("risk_x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).attempts).toBe(4);
  });

  it("pages through every risk, and rejects a bad key with a typed error", async () => {
    const client = direct();
    const made = new Set<string>();
    for (let i = 0; i < 5; i++) made.add((await client.risks.create({ title: unique("paged") })).id);
    const seen = new Set<string>();
    for await (const r of client.risks.list({ limit: 2 })) seen.add(r.id);
    for (const id of made) expect(seen.has(id)).toBe(true);

    const bad = new RiskApi({ apiKey: "rk_not_a_key", baseUrl: server.baseUrl });
    await expect(bad.risks.create({ title: "x" })).rejects.toMatchObject({ status: 401, code: "UNAUTHENTICATED" });
  });

  it("reads a change back from the audit log, its NDJSON export and the risk's history", async () => {
    const client = direct();
    const r = await client.risks.create({ title: unique("audited") });
    await client.risks.update(r.id, { status: "mitigated" });
    const listed: AuditEntry[] = [];
    for await (const e of client.auditLog.list({ targetId: r.id, action: "risk.updated" })) listed.push(e);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ action: "risk.updated", actor: { type: "api_key" }, target: { type: "risk", id: r.id }, changes: { status: { from: "open", to: "mitigated" } } });
    const exported: AuditEntry[] = [];
    for await (const e of client.auditLog.exportEntries({ targetId: r.id })) exported.push(e);
    expect(exported.map((e) => e.action)).toEqual(["risk.updated", "risk.created"]);
    expect(exported[0]).toEqual(listed[0]);
    // Oldest first, one entry a page.
    const history: string[] = [];
    for await (const e of client.auditLog.history(r.id, { limit: 1 })) history.push(e.id);
    expect(history).toEqual(exported.map((e) => e.id).reverse());
    await expect(client.auditLog.listPage({ since: "yesterday" })).rejects.toMatchObject({ status: 400, code: "VALIDATION_FAILED" });
  });
});

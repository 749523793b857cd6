// The audit log (docs/audit-log.md): what goes on the wire for each call, in
// both modes, and how an NDJSON export is read as entries while it streams.

import { describe, expect, it } from "vitest";
import { RiskApiError, type AuditEntry } from "../src/index.js";
import { fakeClient, json, problem } from "./fake.js";

function entry(id: string, action: AuditEntry["action"] = "risk.updated"): AuditEntry {
  return {
    id, occurredAt: "2026-12-02T05:40:00.123456Z", actor: { type: "user", id: "usr_1", email: "ann@example.com" },
    action, target: { type: "risk", id: "risk_1" }, changes: { status: { from: "open", to: "mitigated" } },
    requestId: "req_1", ip: "203.0.113.7", userAgent: "test", livemode: true, via: null, client: null,
  };
}

const page = (data: AuditEntry[], nextCursor: string | null = null) => json(200, { data, hasMore: nextCursor !== null, nextCursor });

/** A streamed body that arrives in the given chunks, cut wherever the test says. */
function streamed(chunks: string[], contentType: string): { res: Response; cancelled: () => boolean } {
  let cancelled = false;
  const enc = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(enc.encode(chunks[i++]!));
      else c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { res: new Response(body, { status: 200, headers: { "Content-Type": contentType } }), cancelled: () => cancelled };
}

describe("audit log", () => {
  it("lists every page newest first with its filters, dates as RFC 3339 UTC, on /v2 with a key", async () => {
    const { client, seen } = fakeClient([page([entry("aud_3"), entry("aud_2")], "c2"), page([entry("aud_1")])]);
    const ids: string[] = [];
    const since = new Date("2026-12-01T08:00:00+01:00");
    for await (const e of client.auditLog.list({ action: "risk.updated", actorId: "usr_1", targetId: "risk_1", since, until: "2026-12-03T00:00:00Z", limit: 2 })) {
      ids.push(e.id);
    }
    expect(ids).toEqual(["aud_3", "aud_2", "aud_1"]);
    const q = seen.map((s) => [s.url.pathname, Object.fromEntries(s.url.searchParams)]);
    const filters = { action: "risk.updated", actorId: "usr_1", targetId: "risk_1", since: "2026-12-01T07:00:00.000Z", until: "2026-12-03T00:00:00Z", limit: "2" };
    expect(q).toEqual([
      ["/v2/audit-log", filters],
      ["/v2/audit-log", { ...filters, cursor: "c2" }],
    ]);
  });

  it("leaves out filters not given, and speaks /v1 with the cookie in session mode", async () => {
    const { client, seen } = fakeClient([page([])], { session: true });
    expect((await client.auditLog.listPage({ action: undefined, actorId: "", since: "" })).data).toEqual([]);
    expect(seen[0]!.url.href).toBe("http://riskapi.test/v1/audit-log");
    expect(seen[0]!.credentials).toBe("same-origin");
  });

  it("rejects a member's listing with the server's 403 at once, without retrying", async () => {
    const { client, seen } = fakeClient([problem(403, "FORBIDDEN")], { session: true });
    const err = await client.auditLog.listPage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect(err).toMatchObject({ status: 403, code: "FORBIDDEN" });
    expect(seen).toHaveLength(1);
  });

  it("reads a risk's history oldest first, page by page; a risk without entries is a 404", async () => {
    const { client, seen } = fakeClient([page([entry("aud_1", "risk.created")], "c1"), page([entry("aud_2")]), problem(404, "NOT_FOUND")]);
    const actions: string[] = [];
    for await (const e of client.auditLog.history("risk_1", { limit: 1 })) actions.push(e.action);
    expect(actions).toEqual(["risk.created", "risk.updated"]);
    expect(seen.map((s) => s.url.pathname + s.url.search)).toEqual(["/v2/risks/risk_1/history?limit=1", "/v2/risks/risk_1/history?limit=1&cursor=c1"]);
    await expect(client.auditLog.historyPage("risk_none")).rejects.toMatchObject({ status: 404 });
  });

  it("parses an NDJSON export as it streams, lines cut across chunks, with the filters in the query", async () => {
    const lines = [entry("aud_2"), entry("aud_1")].map((e) => JSON.stringify(e) + "\n").join("");
    const cut = lines.indexOf("\n") - 10;
    const { res } = streamed([lines.slice(0, 7), lines.slice(7, cut), lines.slice(cut)], "application/x-ndjson");
    const { client, seen } = fakeClient([res]);
    const got: AuditEntry[] = [];
    for await (const e of client.auditLog.exportEntries({ action: "risk.updated" })) got.push(e);
    expect(got).toEqual([entry("aud_2"), entry("aud_1")]);
    expect(seen[0]!.url.pathname + seen[0]!.url.search).toBe("/v2/audit-log/export?action=risk.updated&format=ndjson");
    expect(seen[0]!.headers.get("Accept")).toBe("application/x-ndjson");
  });

  it("stops downloading when the loop breaks early", async () => {
    const { res, cancelled } = streamed([JSON.stringify(entry("aud_3")) + "\n", JSON.stringify(entry("aud_2")) + "\n", "never read"], "application/x-ndjson");
    // Its own fetch: the scripted one answers with a clone, whose cancel the original would not see.
    const { client } = fakeClient([], { fetch: async () => res });
    for await (const e of client.auditLog.exportEntries()) {
      expect(e.id).toBe("aud_3");
      break;
    }
    await expect.poll(cancelled).toBe(true);
  });

  it("hands a CSV export over unread once its headers arrive, after retrying a 503", async () => {
    const csv = "id,occurredAt\naud_1,2026-12-02T05:40:00.123456Z\n";
    const { client, seen, waits } = fakeClient([problem(503, "STORE_UNAVAILABLE"), new Response(csv, { headers: { "Content-Type": "text/csv; charset=utf-8" } })], { session: true });
    const x = await client.auditLog.export({ format: "csv", until: new Date("2026-12-02T06:00:00Z") });
    expect(x.contentType).toBe("text/csv; charset=utf-8");
    expect(await x.response.text()).toBe(csv);
    expect(waits).toHaveLength(1);
    expect(seen.map((s) => s.url.pathname + s.url.search)).toEqual([
      "/v1/audit-log/export?format=csv&until=2026-12-02T06%3A00%3A00.000Z",
      "/v1/audit-log/export?format=csv&until=2026-12-02T06%3A00%3A00.000Z",
    ]);
    expect(seen[0]!.headers.get("Accept")).toBe("text/csv");
  });
});

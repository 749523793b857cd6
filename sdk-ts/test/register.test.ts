// The risk register's calls (docs/register.md) against a scripted fetch: what
// goes on the wire for filters, sort, heat map, export and import, and how
// the answers come back.

import { describe, expect, it } from "vitest";
import { RiskApiError, linesOf } from "../src/index.js";
import { fakeClient, json, problem, risk } from "./fake.js";

const query = (u: URL) => Object.fromEntries(u.searchParams);

describe("risks.listPage and risks.list with filters and sort", () => {
  it("sends every filter as the server names it: lists joined by commas, metadata[KEY]", async () => {
    const { client, seen } = fakeClient([json(200, { data: [], hasMore: false, nextCursor: null })]);
    await client.risks.listPage({
      limit: 5, status: ["open", "mitigated"], treatment: "mitigate", category: "IT", owner: "", minScore: 4, maxScore: 20,
      reviewBefore: "2026-12-02", createdSince: "2026-01-01T00:00:00Z", q: "vendor dpa", metadata: { ticket: "SEC-42", "a.b": "x" },
      sort: "-riskScore",
    });
    expect(query(seen[0]!.url)).toEqual({
      limit: "5", status: "open,mitigated", treatment: "mitigate", category: "IT", owner: "", minScore: "4", maxScore: "20",
      reviewBefore: "2026-12-02", createdSince: "2026-01-01T00:00:00Z", q: "vendor dpa", "metadata[ticket]": "SEC-42", "metadata[a.b]": "x",
      sort: "-riskScore",
    });
  });

  it("keeps the filters and sort on every page the iterator reads, with each page's cursor", async () => {
    const { client, seen } = fakeClient([
      json(200, { data: [risk("risk_1"), risk("risk_2")], hasMore: true, nextCursor: "c1" }),
      json(200, { data: [risk("risk_3")], hasMore: false, nextCursor: null }),
    ]);
    const ids: string[] = [];
    for await (const r of client.risks.list({ limit: 2, status: "open", q: "flood", sort: "title" })) ids.push(r.id);
    expect(ids).toEqual(["risk_1", "risk_2", "risk_3"]);
    expect(seen.map((s) => query(s.url))).toEqual([
      { limit: "2", status: "open", q: "flood", sort: "title" },
      { limit: "2", status: "open", q: "flood", sort: "title", cursor: "c1" },
    ]);
  });

  it("rejects a bad filter with the parameter the server named", async () => {
    const body = { ...JSON.parse(await problem(400, "VALIDATION_FAILED").text()), errors: [{ field: "sort", detail: "unknown field" }] };
    const { client } = fakeClient([json(400, body)]);
    const err = await client.risks.listPage({ sort: "-title" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect((err as RiskApiError).errors).toEqual([{ field: "sort", detail: "unknown field" }]);
  });
});

describe("risks.heatmap", () => {
  it("asks for the basis with the filters and returns the cells", async () => {
    const cells = Array.from({ length: 25 }, (_, i) => ({ likelihood: Math.floor(i / 5) + 1, impact: (i % 5) + 1, count: i === 7 ? 3 : 0 }));
    const { client, seen } = fakeClient([json(200, { basis: "residual", cells, unassessed: 2 })]);
    const h = await client.risks.heatmap({ basis: "residual", status: ["open"] });
    expect(query(seen[0]!.url)).toEqual({ basis: "residual", status: "open" });
    expect(seen[0]!.url.pathname).toBe("/v2/risks/heatmap");
    expect(h.cells.find((c) => c.count > 0)).toEqual({ likelihood: 2, impact: 3, count: 3 });
    expect(h.unassessed).toBe(2);
  });
});

describe("risks.export", () => {
  it("streams the lines of the body, a character split across chunks kept whole", async () => {
    const text = "id,title\r\nrisk_1,Überschwemmung\r\nrisk_2,\"two\"\r\n";
    const bytes = new TextEncoder().encode(text);
    const split = bytes.indexOf(0xc3) + 1; // inside "Ü"
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, split));
        c.enqueue(bytes.slice(split));
        c.close();
      },
    });
    const { client, seen } = fakeClient([
      new Response(body, { status: 200, headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": 'attachment; filename="risks.csv"' } }),
    ]);
    const ex = await client.risks.export({ format: "csv", owner: "ada", sort: "title" });
    expect(query(seen[0]!.url)).toEqual({ format: "csv", owner: "ada", sort: "title" });
    expect(seen[0]!.headers.get("Accept")).toBe("*/*");
    expect(ex.filename).toBe("risks.csv");
    expect(ex.contentType).toMatch(/^text\/csv/);
    const lines: string[] = [];
    for await (const l of ex.lines()) lines.push(l);
    expect(lines).toEqual(["id,title", "risk_1,Überschwemmung", 'risk_2,"two"']);
  });

  it("splits lines over chunks in linesOf, keeping a last line without its end", async () => {
    async function* chunks() {
      yield new TextEncoder().encode('{"a":1}\n{"b"');
      yield new TextEncoder().encode(":2}\n{\"c\":3}");
    }
    const out: string[] = [];
    for await (const l of linesOf(chunks())) out.push(l);
    expect(out).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });
});

describe("risks.import", () => {
  it("uploads the CSV as part file, dry run in the query, and returns the report", async () => {
    const { client, seen } = fakeClient([json(201, { created: 2, updated: 0, unchanged: 1, errors: [] })]);
    const report = await client.risks.import({ file: "title,likelihood\nFlood,3\n", filename: "risks.csv", dryRun: true });
    expect(report).toMatchObject({ created: 2, updated: 0, unchanged: 1 });
    const s = seen[0]!;
    expect([s.method, s.url.pathname, query(s.url)]).toEqual(["POST", "/v2/risks/import", { dryRun: "true" }]);
    const form = await new Response(s.body, { headers: { "Content-Type": s.headers.get("Content-Type")! } }).formData();
    const file = form.get("file") as File;
    expect([file.name, await file.text()]).toEqual(["risks.csv", "title,likelihood\nFlood,3\n"]);
    expect(s.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("retries a lost answer with the same key and the same bytes", async () => {
    const { client, seen } = fakeClient([new TypeError("fetch failed"), json(201, { created: 1, updated: 0, unchanged: 0, errors: [] }, { "Idempotent-Replayed": "true" })]);
    await client.risks.import({ file: new Blob(["title\nFlood\n"]) });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.headers.get("Idempotency-Key")).toBe(seen[0]!.headers.get("Idempotency-Key"));
    const fileOf = async (i: number) => {
      const form = await new Response(seen[i]!.body, { headers: { "Content-Type": seen[i]!.headers.get("Content-Type")! } }).formData();
      return (form.get("file") as File).text();
    };
    expect(await fileOf(1)).toBe("title\nFlood\n");
    expect(await fileOf(0)).toBe(await fileOf(1));
    expect(query(seen[0]!.url)).toEqual({});
  });

  it("rejects bad rows with each row, field and detail", async () => {
    const errors = [{ row: 3, field: "likelihood", detail: "must be 1–5" }];
    const body = { ...JSON.parse(await problem(400, "VALIDATION_FAILED").text()), errors };
    const { client, seen } = fakeClient([json(400, body)]);
    const err = await client.risks.import({ file: "title,likelihood\nA,1\nB,9\n" }).catch((e: unknown) => e);
    expect((err as RiskApiError).errors).toEqual(errors);
    expect(seen).toHaveLength(1);
  });
});

describe("attachments.delete", () => {
  it("sends a keyed DELETE and resolves on 204", async () => {
    const { client, seen } = fakeClient([new Response(null, { status: 204 })]);
    await client.attachments.delete("att_1");
    expect([seen[0]!.method, seen[0]!.url.pathname]).toEqual(["DELETE", "/v2/attachments/att_1"]);
    expect(seen[0]!.headers.get("Idempotency-Key")).toBeTruthy();
  });
});

describe("actions.get and acceptances.get", () => {
  it("read one action and one acceptance by ID, and reject an unknown one with NOT_FOUND", async () => {
    const action = { id: "act_1", riskId: "risk_1", title: "fix", ownerId: "usr_1", dueDate: null, status: "open", version: 2,
      createdAt: "2026-12-01T00:00:00Z", updatedAt: "2026-12-01T00:00:00Z" };
    const { client, seen } = fakeClient([json(200, action), json(200, { id: "acc_1", status: "pending" }), problem(404, "NOT_FOUND")]);
    expect((await client.actions.get("act_1")).version).toBe(2);
    expect((await client.acceptances.get("acc_1")).id).toBe("acc_1");
    const err = await client.actions.get("act_2").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect((err as RiskApiError).code).toBe("NOT_FOUND");
    expect(seen.map((s) => `${s.method} ${s.url.pathname}`)).toEqual([
      "GET /v2/actions/act_1", "GET /v2/acceptances/acc_1", "GET /v2/actions/act_2",
    ]);
  });
});

describe("reviews, actions and acceptances on the wire (docs/register.md)", () => {
  it("keys each write, sends If-Match on a conditional action edit, the list filters as named, decisions in session mode only", async () => {
    const action = { id: "act_1", riskId: "risk_1", title: "fix", ownerId: "usr_1", dueDate: "2027-01-01", status: "open", version: 1,
      createdAt: "2026-12-01T00:00:00Z", updatedAt: "2026-12-01T00:00:00Z" };
    const { client, seen } = fakeClient([
      json(201, { id: "rev_1", riskId: "risk_1", outcome: "unchanged", note: "ok", nextReviewDate: "2027-03-01" }),
      json(200, { data: [{ id: "rev_1" }], hasMore: false, nextCursor: null }),
      json(201, action),
      problem(412, "PRECONDITION_FAILED"),
      json(200, { data: [action], hasMore: false, nextCursor: null }),
      json(201, { id: "acc_1", status: "pending" }),
      json(200, { data: [], hasMore: false, nextCursor: null }),
    ]);
    expect((await client.reviews.create("risk_1", { outcome: "unchanged", note: "ok" })).nextReviewDate).toBe("2027-03-01");
    const reviews = [];
    for await (const r of client.reviews.list("risk_1")) reviews.push(r.id);
    expect(reviews).toEqual(["rev_1"]);
    await client.actions.create("risk_1", { title: "fix", ownerId: "usr_1", dueDate: "2027-01-01" });
    const stale = await client.actions.update("act_1", { status: "done" }, { ifMatch: '"1"' }).catch((e: unknown) => e);
    expect((stale as RiskApiError).code).toBe("PRECONDITION_FAILED");
    await client.actions.listPage({ ownerId: "usr_1", status: "open", dueBefore: "2027-02-01" });
    await client.acceptances.request("risk_1", { justification: "cheap", validUntil: "2027-06-01" });
    for await (const a of client.acceptances.list({ status: "pending" })) void a;
    // Deciding is a signed-in admin's: an API key client refuses before sending.
    await expect(client.acceptances.approve("acc_1")).rejects.toThrow(/session client/);
    expect(seen.map((s) => [s.method, s.url.pathname + s.url.search, s.headers.has("Idempotency-Key")])).toEqual([
      ["POST", "/v2/risks/risk_1/reviews", true],
      ["GET", "/v2/risks/risk_1/reviews", false],
      ["POST", "/v2/risks/risk_1/actions", true],
      ["PATCH", "/v2/actions/act_1", true],
      ["GET", "/v2/actions?ownerId=usr_1&status=open&dueBefore=2027-02-01", false],
      ["POST", "/v2/risks/risk_1/acceptances", true],
      ["GET", "/v2/acceptances?status=pending", false],
    ]);
    expect(seen[3]!.headers.get("If-Match")).toBe('"1"');
    expect(JSON.parse(new TextDecoder().decode(seen[3]!.body))).toEqual({ status: "done" });
    expect(JSON.parse(new TextDecoder().decode(seen[5]!.body))).toEqual({ justification: "cheap", validUntil: "2027-06-01" });

    const admin = fakeClient([json(200, { id: "acc_1", status: "approved" }), json(200, { id: "acc_2", status: "rejected" })], { session: true });
    expect((await admin.client.acceptances.approve("acc_1", "fine")).status).toBe("approved");
    expect((await admin.client.acceptances.reject("acc_2")).status).toBe("rejected");
    expect(admin.seen.map((s) => [s.method, s.url.pathname, s.headers.has("Idempotency-Key"), new TextDecoder().decode(s.body)])).toEqual([
      ["POST", "/v1/acceptances/acc_1/approve", true, '{"note":"fine"}'],
      ["POST", "/v1/acceptances/acc_2/reject", true, '{"note":""}'],
    ]);
  });
});

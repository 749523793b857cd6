// The register's calls against a real riskapi (docs/register.md): filters and
// sort paged through, the heat map, a streamed export, an import whose answer
// is lost (replayed, never imported twice) and an attachment's delete.

import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { RiskApi, RiskApiError } from "../../src/index.js";
import { FaultProxy } from "@riskapi/testkit";
import { startServer, type Server } from "./server.js";

let server: Server;
let proxy: FaultProxy | undefined;

beforeAll(async () => {
  server = await startServer(inject("riskapiBinary"));
}, 90_000);
afterAll(async () => {
  await server?.stop();
}, 30_000);
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const direct = () => new RiskApi({ apiKey: server.demo.apiKey, baseUrl: server.baseUrl });

describe(`the register against a real riskapi (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("pages through a filter and sort, each matching risk once, in order; the heat map counts the same risks", async () => {
    const client = direct();
    const category = "cat-" + randomUUID().slice(0, 8);
    const made = [];
    for (let i = 0; i < 7; i++) {
      made.push(await client.risks.create({ title: `Risk ${String.fromCharCode(71 - i)}`, category, likelihood: (i % 5) + 1, impact: 2, status: i === 6 ? "closed" : "open" }));
    }
    const titles: string[] = [];
    for await (const r of client.risks.list({ category, status: "open", sort: "title", limit: 2 })) titles.push(r.title);
    expect(titles).toEqual(["Risk B", "Risk C", "Risk D", "Risk E", "Risk F", "Risk G"]);

    const h = await client.risks.heatmap({ category, status: "open" });
    expect(h.cells).toHaveLength(25);
    expect(h.cells.reduce((n, c) => n + c.count, 0)).toBe(6);
    expect(h.cells.find((c) => c.likelihood === 1 && c.impact === 2)?.count).toBe(2);

    // Since today: all were made today, so each came from no cell; one moved on since.
    await client.risks.update(made[0]!.id, { likelihood: 5, impact: 5 });
    const today = new Date().toISOString().slice(0, 10);
    const moved = await client.risks.heatmap({ category, status: "open", movedSince: today });
    expect(moved.movedSince).toBe(today);
    expect(moved.moves).toContainEqual({ from: null, to: { likelihood: 5, impact: 5 }, count: 1 });
    expect(moved.moves!.every((m) => m.from === null)).toBe(true);
    expect(moved.moves!.reduce((n, m) => n + m.count, 0)).toBe(6);
  });

  it("imports once when the answer is lost, after a dry run that wrote nothing; the export streams the rows back", async () => {
    const category = "imp-" + randomUUID().slice(0, 8);
    const csv = `externalId,title,category,likelihood,impact\nx-${category}-1,Flood,${category},3,4\nx-${category}-2,Fire,${category},2,5\n`;
    const dry = await direct().risks.import({ file: csv, filename: "risks.csv", dryRun: true });
    expect(dry).toMatchObject({ created: 2, updated: 0, unchanged: 0 });
    expect((await direct().risks.listPage({ category })).data).toHaveLength(0);

    proxy = await FaultProxy.start(server.baseUrl);
    const client = new RiskApi({ apiKey: server.demo.apiKey, baseUrl: proxy.url, sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 100))) });
    proxy.on("POST", "/v2/risks/import", 1, { action: "cut-after-answer" });
    const report = await client.risks.import({ file: csv, filename: "risks.csv" });
    expect(report).toMatchObject({ created: 2, updated: 0, unchanged: 0 });
    expect(proxy.requests("POST", "/v2/risks/import").map((s) => [s.status, s.replayed])).toEqual([[201, false], [201, true]]);

    const ex = await direct().risks.export({ format: "ndjson", category, sort: "title" });
    const rows = [];
    for await (const line of ex.lines()) rows.push(JSON.parse(line) as { title: string; riskScore: number });
    expect(rows.map((r) => [r.title, r.riskScore])).toEqual([["Fire", 10], ["Flood", 12]]);
    expect((await direct().risks.import({ file: csv })).unchanged).toBe(2);
  });

  it("refuses a CSV with a bad row, naming the row, and writes nothing", async () => {
    const category = "bad-" + randomUUID().slice(0, 8);
    const csv = `title,category,likelihood\nGood,${category},3\nBad,${category},9\n`;
    const err = await direct().risks.import({ file: csv }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect((err as RiskApiError).errors).toEqual([expect.objectContaining({ row: 3, field: "likelihood" })]);
    expect((await direct().risks.listPage({ category })).data).toHaveLength(0);
  });

  it("deletes an attachment: its content is 404 from then on", async () => {
    const client = direct();
    const r = await client.risks.create({ title: "with a file" });
    const a = await client.attachments.upload(r.id, { file: "hello", filename: "a.txt", contentType: "text/plain" });
    await client.attachments.delete(a.id);
    await expect(client.attachments.download(a.id)).rejects.toMatchObject({ status: 404 });
    expect((await client.attachments.listPage(r.id)).data).toEqual([]);
  });
});

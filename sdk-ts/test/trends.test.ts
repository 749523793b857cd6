// The register in time: what goes on the wire for trends, score history and the
// tenant's appetite, against a scripted fetch.

import { describe, expect, it } from "vitest";
import { appetiteETag, Trends } from "../src/trends.js";
import { fakeClient, json } from "./fake.js";

describe("trends", () => {
  it("reads the series with its query and a risk's score history", async () => {
    const series = { from: "2026-01-01", to: "2026-01-31", interval: "week", points: [] };
    const { client, seen } = fakeClient([json(200, series), json(200, { data: [{ at: "2026-01-02T00:00:00Z", riskScore: 4, residualScore: null }] })]);
    expect(await new Trends(client).series({ from: "2026-01-01", to: "2026-01-31", interval: "week" })).toEqual(series);
    const h = await new Trends(client).scoreHistory("risk_1");
    expect(h[0]!.riskScore).toBe(4);
    expect(seen.map((s) => s.url.pathname + s.url.search)).toEqual([
      "/v2/register/trends?from=2026-01-01&to=2026-01-31&interval=week",
      "/v2/risks/risk_1/score-history",
    ]);
  });

  it("reads the tenant's appetite with its ETag and sets it conditionally, keyed (session mode)", async () => {
    const tenant = { id: "ten_1", name: "t", apiVersion: "x", rollback: null, riskAppetite: 9, categoryAppetite: {}, appetiteVersion: 4 };
    const { client, seen } = fakeClient([json(200, tenant), json(200, { ...tenant, riskAppetite: 6 })], { session: true });
    const t = new Trends(client);
    const got = await t.tenant();
    expect(appetiteETag(got)).toBe('"4"');
    expect((await t.setAppetite({ riskAppetite: 6 }, { ifMatch: appetiteETag(got) })).riskAppetite).toBe(6);
    expect(seen[1]!.method).toBe("PATCH");
    expect(seen[1]!.url.pathname).toBe("/v1/tenant");
    expect(seen[1]!.headers.get("If-Match")).toBe('"4"');
    expect(seen[1]!.headers.has("Idempotency-Key")).toBe(true);
  });
});

// The register in time: what goes on the wire for trends, score history and the
// tenant's appetite, against a scripted fetch.

import { describe, expect, it } from "vitest";
import { fakeClient, json } from "./fake.js";

describe("trends", () => {
  it("reads the series with its query and a risk's score history", async () => {
    const series = { from: "2026-01-01", to: "2026-01-31", interval: "week", points: [] };
    const { client, seen } = fakeClient([json(200, series), json(200, { data: [{ at: "2026-01-02T00:00:00Z", riskScore: 4, residualScore: null }] })]);
    expect(await client.trends.series({ from: "2026-01-01", to: "2026-01-31", interval: "week" })).toEqual(series);
    const h = await client.trends.scoreHistory("risk_1");
    expect(h[0]!.riskScore).toBe(4);
    expect(seen.map((s) => s.url.pathname + s.url.search)).toEqual([
      "/v2/register/trends?from=2026-01-01&to=2026-01-31&interval=week",
      "/v2/risks/risk_1/score-history",
    ]);
  });

  it("reads the tenant's appetite with its ETag and sets it conditionally, keyed (session mode)", async () => {
    const tenant = { id: "ten_1", name: "t", apiVersion: "x", rollback: null, riskAppetite: 9, categoryAppetite: {} };
    const { client, seen } = fakeClient([
      new Response(JSON.stringify(tenant), { status: 200, headers: { "Content-Type": "application/json", ETag: '"4"' } }),
      json(200, { ...tenant, riskAppetite: 6 }),
    ], { session: true });
    const got = await client.trends.tenant();
    expect(got).toEqual({ tenant, etag: '"4"' });
    expect((await client.trends.setAppetite({ riskAppetite: 6 }, { ifMatch: got.etag })).riskAppetite).toBe(6);
    expect(seen[1]!.method).toBe("PATCH");
    expect(seen[1]!.url.pathname).toBe("/v1/tenant");
    expect(seen[1]!.headers.get("If-Match")).toBe('"4"');
    expect(seen[1]!.headers.has("Idempotency-Key")).toBe(true);
  });

  it("refuses the tenant's appetite with an API key", async () => {
    const { client } = fakeClient([]);
    await expect(client.trends.tenant()).rejects.toThrow();
  });
});

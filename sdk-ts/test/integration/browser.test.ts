// The SDK as a browser runs it: sdk-ts/dist loaded as ES modules into Debian's
// Chromium (driven by playwright-core) from the fault proxy's origin, calling
// the real server through that proxy. A lost answer is retried by the page
// with the same key and replayed, and makes one risk.

import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RiskApi } from "../../src/index.js";
import { FaultProxy } from "@riskapi/testkit";
import { startServer, type Server } from "./server.js";

/** CHROMIUM overrides the browser's path; Debian's package installs it here. */
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const dist = fileURLToPath(new URL("../../dist/", import.meta.url));

let server: Server;
let proxy: FaultProxy;
let browser: Browser;

beforeAll(async () => {
  server = await startServer(inject("riskapiBinary"));
  proxy = await FaultProxy.start(server.baseUrl);
  proxy.serveFiles("/sdk/", dist);
  browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await server?.stop();
}, 30_000);

describe("the SDK in Chromium", () => {
  it("creates one risk when the first answer is lost after the server committed", async () => {
    const page = await browser.newPage();
    // Any page of the proxy's origin; the SDK is imported into it below.
    await page.goto(`${proxy.url}/sdk/index.js`);
    proxy.on("POST", "/v2/risks", 1, { action: "cut-after-answer" });
    const title = `browser ${crypto.randomUUID()}`;

    // The page's code is a string: Vitest would rewrite a function's import().
    const inPage = `(async ({ apiKey, title }) => {
      const sdk = await import(location.origin + "/sdk/index.js");
      const client = new sdk.RiskApi({ apiKey, baseUrl: location.origin });
      let replayed = false;
      const r = await client.risks.create({ title, likelihood: 2, impact: 5 }, { onResponse: (i) => (replayed = i.replayed) });
      let err;
      try {
        await client.risks.get("risk_00000000000000000000000000000000");
      } catch (e) {
        err = { name: e.name, isRiskApiError: e instanceof sdk.RiskApiError, status: e.status, code: e.code, requestId: e.requestId };
      }
      return { id: r.id, riskScore: r.riskScore, replayed, err };
    })(${JSON.stringify({ apiKey: server.demo.apiKey, title })})`;
    const got = (await page.evaluate(inPage)) as {
      id: string;
      riskScore: number;
      replayed: boolean;
      err?: { name: string; isRiskApiError: boolean; status: number; code: string; requestId: string };
    };
    await page.close();

    expect(got).toMatchObject({ riskScore: 10, replayed: true, err: { name: "RiskApiError", isRiskApiError: true, status: 404, code: "NOT_FOUND" } });
    expect(got.err?.requestId).not.toBe("");
    const seen = proxy.requests("POST", "/v2/risks");
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(seen.filter((s) => s.status === 201 && !s.replayed)).toHaveLength(1);

    const ids: string[] = [];
    for await (const r of new RiskApi({ apiKey: server.demo.apiKey, baseUrl: server.baseUrl }).risks.list({ limit: 100 })) {
      if (r.title === title) ids.push(r.id);
    }
    expect(ids).toEqual([got.id]);
  });
});

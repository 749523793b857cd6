// axe-core (the accessibility engine) on every page of the dashboard, in a
// real Chromium against a real riskapi: no serious or critical violation.

import axe from "axe-core";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createRisk, harness, settled, signIn, titled, unique } from "./ui";

const env = harness();

/** violations runs axe on the page as it is and returns the serious and critical ones, described. */
async function violations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const r = await (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) }));
  });
  return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.nodes.join(", ")}`);
}

describe(`accessibility in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("has no serious violation on any page", async () => {
    const { page } = await env.browser();
    await page.goto("/");
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    const found: Record<string, string[]> = { "/ (signed out)": await violations(page) };

    await signIn(page, await env.server().account());
    const title = unique("Checked by axe");
    await createRisk(page, title);
    await settled(page, title);
    const [risk] = await titled(page, title);
    const pages: [string, string][] = [
      ["/", "Risks"],
      ["/?show=heatmap&status=open", "Risks"],
      [`/?show=heatmap&movedSince=${new Date().toISOString().slice(0, 10)}`, "Risks"],
      [`/risks/${risk!.id}`, title],
      ["/requests", "Request log"],
      ["/events", "Events"],
      ["/audit", "Audit log"],
      ["/trends", "Trends"],
      ["/report", "Risk report"],
      ["/account/password", "Change password"],
      ["/admin/users", "Admin"],
      ["/admin/api-keys", "Admin"],
      ["/admin/webhooks", "Admin"],
      ["/no/such/page", "Page not found"],
    ];
    for (const [path, heading] of pages) {
      await page.goto(path);
      await page.getByRole("heading", { name: heading, exact: true }).first().waitFor();
      await page.waitForTimeout(300); // lists loaded
      found[path] = await violations(page);
    }
    expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length > 0))).toEqual({});
  });
});

// The risk list's total (docs/dashboard.md, "The register"), in a real
// Chromium: how many risks the filters select, all pages together, not only
// the 20 shown; it follows a filter and the user's own create.

import { describe, expect, it } from "vitest";
import { allSaved, createRisk, harness, settled, signIn } from "./ui";

const env = harness();

describe(`the risk list's total in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("says how many risks the filters select across pages, and follows a filter and a create", async () => {
    const { page } = await env.browser();
    await signIn(page, await env.server().account());
    for (let i = 0; i < 23; i++) {
      const category = i < 5 ? "Facilities" : "IT";
      expect((await page.request.post("/v1/risks", { data: { title: `Counted ${i}`, category, ...(i % 2 ? { likelihood: 2, impact: 3 } : {}) } })).status()).toBe(201);
    }
    await page.goto("/");
    const count = page.locator("p.count");
    await expect.poll(() => count.textContent()).toBe("23 risks");
    expect(await page.locator("table.risks tbody tr").count()).toBe(20); // one page of them
    await page.goto("/?category=facilities");
    await expect.poll(() => count.textContent()).toBe("5 risks");
    await createRisk(page, "Counted after", "1", "1");
    await settled(page, "Counted after"); // its own change: "All changes saved" may be from before it
    await allSaved(page);
    await page.goto("/");
    await expect.poll(() => count.textContent()).toBe("24 risks");
  });
});

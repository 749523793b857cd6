// The Test data switch in a real Chromium against a real riskapi
// (docs/sandboxes.md, docs/dashboard.md): it shows the sandbox under a banner,
// what is made there stays there, and a change queued with it on is sent to
// the sandbox even after the switch is turned off.

import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { allSaved, createRisk, harness, settled, signIn, unique } from "./ui";

const env = harness();

/** titlesIn returns the titles of the risks the server holds in mode, read with the session cookie. */
async function titlesIn(page: Page, mode: "live" | "test"): Promise<string[]> {
  const res = await page.request.get("/v1/risks?limit=100", { headers: { "Riskapi-Mode": mode } });
  expect(res.status()).toBe(200);
  const body = (await res.json()) as { data: { title: string; livemode: boolean }[] };
  for (const r of body.data) expect(r.livemode).toBe(mode === "live");
  return body.data.map((r) => r.title);
}

const testSwitch = (page: Page) => page.getByRole("switch", { name: "Test data" });
const banner = (page: Page) => page.getByTestId("test-banner");
/** listed counts where the page's content (not the Changes panel) shows text. */
const listed = (page: Page, text: string) => page.getByRole("main").getByText(text).count();

describe(`the Test data switch in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("shows the sandbox under a banner, keeps its risks apart from live ones, and holds for the browser session", async () => {
    const b = await env.browser();
    const page = b.page;
    await signIn(page, await env.server().account());
    expect(await banner(page).count()).toBe(0);

    const live = unique("Live flood");
    await createRisk(page, live);
    // Its own change, done: the header may still say "All changes saved" from before
    // the change is queued (so CI saw at load 6, the create not yet sent).
    await settled(page, live);
    await allSaved(page);

    await testSwitch(page).check();
    await banner(page).waitFor();
    expect(await banner(page).textContent()).toContain("Test data");
    // The live risk is not in the sandbox's list.
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    await expect.poll(() => listed(page, live)).toBe(0);

    const sandboxed = unique("Sandbox flood");
    await createRisk(page, sandboxed);
    await settled(page, sandboxed);
    await allSaved(page);
    await expect.poll(() => listed(page, sandboxed)).toBeGreaterThan(0);
    expect(await titlesIn(page, "test")).toEqual([sandboxed]);
    expect(await titlesIn(page, "live")).toEqual([live]);

    // A reload keeps the switch (the browser session), and the banner with it.
    await page.reload();
    await banner(page).waitFor();
    expect(await testSwitch(page).isChecked()).toBe(true);

    await testSwitch(page).uncheck();
    await expect.poll(() => banner(page).count()).toBe(0);
    await expect.poll(() => listed(page, live)).toBeGreaterThan(0);
    expect(await listed(page, sandboxed)).toBe(0);
  });

  it("sends a change queued with Test data on to the sandbox, though the switch is off when it goes", async () => {
    const b = await env.browser();
    const page = b.page;
    await signIn(page, await env.server().account());
    await testSwitch(page).check();
    await banner(page).waitFor();

    await b.context.setOffline(true);
    const title = unique("Queued in the sandbox");
    await createRisk(page, title);
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await expect.poll(() => page.locator("li.change", { hasText: title }).locator(".badge.test").count()).toBe(1);

    await testSwitch(page).uncheck();
    await expect.poll(() => banner(page).count()).toBe(0);
    await b.context.setOffline(false);
    await allSaved(page);

    expect(await titlesIn(page, "test")).toEqual([title]);
    expect(await titlesIn(page, "live")).toEqual([]);
  });
});

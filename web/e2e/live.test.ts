// Another writer's change, followed (docs/dashboard.md, "Live"), in a real
// Chromium: an open risk page and an open list show a change made outside
// this tab within a few seconds (the tab asks for the tenant's newest event
// every 1.5 s), and what the user is typing in the edit form stays.

import { describe, expect, it } from "vitest";
import { harness, signIn, unique } from "./ui";

const env = harness();
/** The interval (1.5 s), a read, and a loaded machine's slack. */
const WITHIN = 5_000;

describe(`live updates in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("shows another writer's edit on an open risk page without losing the draft, and a new risk on an open list", async () => {
    const { page } = await env.browser();
    await signIn(page, await env.server().account());
    const title = unique("Followed live");
    const made = await page.request.post("/v1/risks", { data: { title } });
    const { id } = (await made.json()) as { id: string };
    await page.goto(`/risks/${id}`);
    await page.getByRole("heading", { name: title }).waitFor();
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Description").fill("my draft, not saved");

    // Written outside this tab: the dashboard hears of it only by following the tenant's events.
    const renamed = unique("Renamed elsewhere");
    const started = Date.now();
    expect((await page.request.patch(`/v1/risks/${id}`, { data: { title: renamed }, headers: { "If-Match": '"1"' } })).status()).toBe(200);
    await page.getByRole("heading", { name: renamed }).waitFor({ timeout: WITHIN });
    const took = Date.now() - started;
    expect(await edit.getByLabel("Description").inputValue()).toBe("my draft, not saved");
    expect(await edit.getByLabel("Title").inputValue()).toBe(renamed);
    console.log(`risk page followed the edit in ${took} ms`);

    await page.goto("/");
    await page.locator("table.risks").getByText(renamed).waitFor();
    const another = unique("Made elsewhere");
    expect((await page.request.post("/v1/risks", { data: { title: another } })).status()).toBe(201);
    await page.locator("table.risks").getByText(another).waitFor({ timeout: WITHIN });
  });
});

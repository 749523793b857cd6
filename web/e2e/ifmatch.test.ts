// A server that refuses risk writes without If-Match (REQUIRE_IF_MATCH=true,
// contract section 12), in a real Chromium: the dashboard's deletes carry the
// ETag of the version shown, and a refused delete says so on the risk's page
// instead of going back to the list as if it had worked (issue 43).

import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { harness, settled, signIn, unique } from "./ui";

const env = harness({ REQUIRE_IF_MATCH: "true" });

async function signedIn(): Promise<Page> {
  const { page } = await env.browser();
  await signIn(page, await env.server().account());
  return page;
}

async function made(page: Page, title: string): Promise<string> {
  const res = await page.request.post("/v1/risks", { data: { title } });
  expect(res.status()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function confirmDelete(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Delete risk" }).click();
  await page.getByRole("button", { name: "Confirm delete" }).click();
}

describe(`deletes under REQUIRE_IF_MATCH=true in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("deletes a risk from its page with If-Match of the version shown, then shows the list", async () => {
    const page = await signedIn();
    const title = unique("Deleted with If-Match");
    const id = await made(page, title);
    const ifMatch: (string | undefined)[] = [];
    page.on("request", (r) => r.method() === "DELETE" && ifMatch.push(r.headers()["if-match"]));
    await page.goto(`/risks/${id}`);
    await page.getByRole("heading", { name: title }).waitFor();
    await confirmDelete(page);
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    await settled(page, `Delete risk “${title}”`);
    expect(ifMatch).toEqual(['"1"']);
    expect((await page.request.get(`/v1/risks/${id}`)).status()).toBe(404);
    await expect.poll(() => page.locator("table.risks").getByText(title).count()).toBe(0);
  });

  it("stays on the risk's page and says why when the delete is refused: someone changed the risk after the user asked to delete it", async () => {
    const page = await signedIn();
    const title = unique("Changed before the delete");
    const id = await made(page, title);
    await page.goto(`/risks/${id}`);
    await page.getByRole("heading", { name: title }).waitFor();
    await page.getByRole("button", { name: "Delete risk" }).click();
    // Another writer, while the question is open; the page hears of it and
    // re-reads version 2 under the question, but the user asked about version 1.
    const other = await page.request.patch(`/v1/risks/${id}`, { data: { description: "theirs" }, headers: { "If-Match": '"1"' } });
    expect(other.status()).toBe(200);
    const version = page.locator(".facts div").filter({ has: page.locator("dt", { hasText: /^Version$/ }) }).locator("dd");
    await expect.poll(() => version.textContent()).toBe("2");
    await page.getByRole("button", { name: "Confirm delete" }).click();
    await settled(page, `Delete risk “${title}”`, "refused");
    const alert = page.getByRole("alert").filter({ hasText: "Not deleted" });
    await alert.waitFor();
    // In words, not the API's: the page's user never sees If-Match.
    expect(await alert.textContent()).toBe("Not deleted: someone changed this risk after you asked to delete it. It now shows as it is: delete it again if you still want to.");
    await expect.poll(() => page.locator("li.change.refused", { hasText: title }).textContent()).toContain("someone changed it after you read it");
    // Still on its page, and still on the server.
    expect(new URL(page.url()).pathname).toBe(`/risks/${id}`);
    await page.getByRole("heading", { name: title }).waitFor();
    expect((await page.request.get(`/v1/risks/${id}`)).status()).toBe(200);
    // Deleted elsewhere since: the page says so, not as if its refused delete had gone through.
    expect((await page.request.delete(`/v1/risks/${id}`, { headers: { "If-Match": '"2"' } })).status()).toBe(204);
    await page.getByText("This risk does not exist").waitFor();
    expect(new URL(page.url()).pathname).toBe(`/risks/${id}`);
  });

  it("deletes over the user's own edit when asked before the page had re-read it", async () => {
    const page = await signedIn();
    const title = unique("Edited then deleted at once");
    const id = await made(page, title);
    await page.goto(`/risks/${id}`);
    await page.getByRole("heading", { name: title }).waitFor();
    // The page's re-reads of the risk wait: it still shows version 1 when the delete is asked for.
    let hold = true;
    await page.route(`**/v1/risks/${id}`, async (route) => {
      if (route.request().method() !== "GET") return route.fallback();
      while (hold) await new Promise((r) => setTimeout(r, 50));
      await route.fallback();
    });
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Description").fill("mine");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await settled(page, `Edit risk “${title}`);
    const deleted = page.waitForResponse((r) => r.request().method() === "DELETE" && r.url().endsWith(`/v1/risks/${id}`));
    await confirmDelete(page);
    const res = await deleted;
    hold = false;
    expect(res.request().headers()["if-match"]).toBe('"2"');
    expect(res.status()).toBe(204);
    await page.getByRole("heading", { name: "Risks" }).waitFor();
  });

  it("sends an edit and then a delete made offline over the version the edit stored: both apply", async () => {
    const { page, context } = await env.browser();
    await signIn(page, await env.server().account());
    const title = unique("Edited then deleted offline");
    const id = await made(page, title);
    await page.goto(`/risks/${id}`);
    await page.getByRole("heading", { name: title }).waitFor();
    await context.setOffline(true);
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Description").fill("last words");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await confirmDelete(page);
    // Offline, the delete waits in the outbox and the list shows the risk as deleting.
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    await context.setOffline(false);
    await settled(page, `Delete risk “${title}”`);
    await settled(page, `Edit risk “${title}”`);
    expect((await page.request.get(`/v1/risks/${id}`)).status()).toBe(404);
    expect(await page.locator("li.change.refused").count()).toBe(0);
  });
});

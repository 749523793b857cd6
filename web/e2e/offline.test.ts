// Offline-complete (docs/dashboard.md, "Offline"), in a real Chromium against
// a real riskapi, with the dashboard's service worker running: a reload while
// offline opens the dashboard with the lists last read and the changes still
// queued, a risk seen only in a list opens from its row, and once the user has
// signed out the next user on that browser sees nothing of theirs — not on the
// page, not in the browser's caches.

import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createRisk, harness, settled, signIn, unique } from "./ui";

const h = harness();

/** everythingCached is the text of every response in the origin's caches, with each cache's name. */
function everythingCached(page: Page): Promise<{ names: string[]; text: string }> {
  return page.evaluate(async () => {
    const names = await caches.keys();
    let text = "";
    for (const name of names) {
      const cache = await caches.open(name);
      for (const req of await cache.keys()) {
        if (!new URL(req.url).pathname.startsWith("/v1/")) continue; // the app's own files
        text += req.url + "\n" + (await (await cache.match(req))!.text()) + "\n";
      }
    }
    return { names, text };
  });
}

describe("offline", () => {
  it("reloads offline with the last lists and queued changes, and shows the next user none of them", async () => {
    const first = await h.server().account("admin");
    const next = await h.server().account("admin");
    const b = await h.browser(undefined, true);
    const { page, context } = b;

    // The worker installs on the first visit and takes the page over.
    await page.goto("/");
    await page.waitForFunction(() => !!navigator.serviceWorker.controller, undefined, { timeout: 30_000 });
    await signIn(page, first);

    const opened = unique("Opened before the train");
    const listed = unique("Only in the list");
    await createRisk(page, opened);
    await settled(page, opened);
    await createRisk(page, listed);
    await settled(page, listed);
    // The list read after both settled is what the worker keeps; one risk's page is read too.
    await page.getByRole("link", { name: opened }).click();
    await page.getByRole("heading", { name: opened }).waitFor();
    await page.goto("/");
    await page.getByRole("link", { name: listed }).waitFor();

    // Offline: a change queued, then a reload.
    await context.setOffline(true);
    const queued = unique("Queued on the train");
    await createRisk(page, queued);
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await page.reload();
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    await page.getByRole("link", { name: opened }).waitFor();
    await page.getByRole("link", { name: listed }).waitFor();
    await page.getByText(queued).first().waitFor();
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    // Marked as the copy it is.
    await page.getByTestId("offline-copy").waitFor();

    // A risk read before opens from its copy; one only ever in the list, from its row.
    await page.getByRole("link", { name: opened }).click();
    await page.getByRole("heading", { name: opened }).waitFor();
    await page.goto("/");
    await page.getByRole("link", { name: listed }).click();
    await page.getByRole("heading", { name: listed }).waitFor();
    // One this browser never saw says so.
    await page.goto("/risks/risk_never_seen_here");
    await page.getByText("This risk is not available offline").waitFor();
    await page.goto("/");
    await page.getByRole("link", { name: listed }).waitFor();

    const before = await everythingCached(page);
    expect(before.text).toContain(opened);
    expect(before.names.filter((n) => n.startsWith("riskapi-data-"))).toHaveLength(1);

    // Signed out while still offline: the user's cache goes at once.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("alertdialog", { name: "Sign out with unsent changes" }).waitFor();
    await page.getByRole("button", { name: "Keep and sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    const signedOut = await everythingCached(page);
    expect(signedOut.names.filter((n) => n.startsWith("riskapi-data-"))).toEqual([]);
    expect(signedOut.text).toBe("");
    // A reload offline now is the sign-in form, with nothing of the user's lists.
    await page.reload();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await page.getByText(opened).count()).toBe(0);

    // The next user, online, then offline: nothing of the first user's.
    await context.setOffline(false);
    await signIn(page, next);
    const theirs = unique("The next user's own");
    await createRisk(page, theirs);
    await settled(page, theirs);
    await page.getByRole("link", { name: theirs }).waitFor();
    await context.setOffline(true);
    await page.reload();
    await page.getByRole("link", { name: theirs }).waitFor();
    const shown = (await page.locator("main").textContent()) ?? "";
    for (const t of [opened, listed, queued]) expect(shown).not.toContain(t);
    expect(await page.locator("li.change", { hasText: queued }).count()).toBe(0);
    const cached = await everythingCached(page);
    expect(cached.text).toContain(theirs);
    for (const t of [opened, listed, queued]) expect(cached.text).not.toContain(t);
    expect(cached.names.filter((n) => n.startsWith("riskapi-data-"))).toHaveLength(1);
    await context.setOffline(false);
  });
});

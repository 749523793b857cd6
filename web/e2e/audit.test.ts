// The audit log in the dashboard (docs/dashboard.md, docs/audit-log.md), in a
// real Chromium against a real riskapi: an admin's edit of a risk is read back
// on the Audit log page (filters in the URL, kept across a reload and Back,
// links to the risk and the request, the export) and in the risk's History;
// a member has no such page.

import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { allSaved, harness, signIn, unique } from "./ui";

const env = harness();

/** The rows of the audit table as shown. */
const rows = (page: Page) => page.locator("table.audit-log tbody tr");

describe(`the audit log in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("shows an admin's edit of a risk with its actor and change, filtered by the URL across a reload and Back, and in the risk's History", async () => {
    const admin = await env.server().account();
    const { page } = await env.browser();
    await signIn(page, admin);
    const title = unique("Audited flood");
    const made = await page.request.post("/v1/risks", { data: { title, owner: { name: "Ada" } } });
    expect(made.status()).toBe(201);
    const risk = (await made.json()) as { id: string };

    // The admin changes the risk in the dashboard.
    await page.goto(`/risks/${risk.id}`);
    const form = page.getByRole("form", { name: "Edit risk" });
    await form.getByLabel("Owner").fill("Grace");
    await form.getByRole("button", { name: "Save changes" }).click();
    await allSaved(page);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    // The tenant is new: the admin made by the command line, their sign-in, the creation and the edit, newest first.
    await expect.poll(() => rows(page).locator("td:nth-child(3)").allTextContents()).toEqual(["risk.updated", "risk.created", "session.created", "user.created"]);

    await page.goto("/audit?action=risk.updated");
    await page.reload();
    expect(await page.getByRole("form", { name: "Filters" }).getByLabel("Action").inputValue()).toBe("risk.updated");
    await expect.poll(() => rows(page).count()).toBe(1);
    const row = rows(page).first();
    expect(await row.locator("td:nth-child(2)").textContent()).toBe(admin.email);
    expect(await row.locator("td:nth-child(4)").textContent()).toBe(`risk ${risk.id}`);
    expect(await row.locator("td:nth-child(5)").textContent()).toBe("Owner: Ada → Grace");
    expect(await row.locator("td:nth-child(7)").textContent()).toMatch(/^(127\.0\.0\.1|::1)$/);

    // Another filter from the form goes into the URL; Back brings the first one back.
    const filters = page.getByRole("form", { name: "Filters" });
    await filters.getByLabel("Action").selectOption("risk.created");
    await filters.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?action=risk.created");
    await expect.poll(() => rows(page).locator("td:nth-child(3)").allTextContents()).toEqual(["risk.created"]);
    await page.goBack();
    await expect.poll(() => rows(page).locator("td:nth-child(3)").allTextContents()).toEqual(["risk.updated"]);

    // The export holds what the filters match.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "CSV" }).click()]);
    const csv = (await readFile((await download.path())!, "utf8")).trim().split("\n");
    expect(csv).toHaveLength(2);
    expect(csv[1]).toContain(`,risk.updated,risk,${risk.id},`);

    // The request that made the change, in the request log (written within about a second).
    const requestId = (await row.locator("td.rid a").textContent())!;
    await row.locator("td.rid a").click();
    await expect.poll(() => new URL(page.url()).search).toBe(`?id=${requestId}`);
    // Wait for the entry through the API, then load the page once: reloading inside a poll
    // reads "Loading…" forever on a machine slow enough to need longer than the interval.
    await expect.poll(async () => (await page.request.get(`/v1/requests/${requestId}`)).status(), { timeout: 30_000, interval: 500 }).toBe(200);
    await page.reload();
    const entry = page.getByRole("region", { name: "Request" }).locator("pre");
    await expect.poll(() => entry.textContent()).toContain(`"method": "PATCH"`);

    // The target opens the risk, whose History shows who changed what.
    await page.goBack();
    // Once seen to time out in a loaded CI run and never since: say what the page showed.
    await rows(page).first().locator("td.target a").waitFor().catch(async (err: unknown) => {
      throw new Error(`${String(err)}\nat ${page.url()} the page showed: ${(await page.locator("body").innerText()).slice(0, 600)}`);
    });
    await rows(page).first().locator("td.target a").click();
    await page.getByRole("heading", { name: title }).waitFor();
    const history = page.getByRole("region", { name: "History" }).getByRole("listitem").filter({ has: page.locator(".entry-head") });
    await expect.poll(() => history.count()).toBe(2);
    expect(await history.nth(0).locator(".entry-head").textContent()).toContain(`${admin.email} created it`);
    // The creation lists what it set, not the members it left empty ("description none → (empty)", "metadata none → {}"),
    // by their names in words, each with its value (not "none → Ada").
    const created = await history.nth(0).locator("ul.changes li .field").allTextContents();
    expect(created).toEqual(expect.arrayContaining(["Title", "Owner"]));
    expect(created).not.toContain("Description");
    expect(created).not.toContain("Metadata");
    expect(await history.nth(0).locator("ul.changes").textContent()).not.toContain("none →");
    expect(await history.nth(1).locator(".entry-head").textContent()).toContain(`${admin.email} updated it`);
    expect(await history.nth(1).locator("ul.changes").textContent()).toBe("Owner: Ada → Grace");
  });

  it("fits 1280 px with named actors: an API key by its name, the Client column in view, a creation's many fields folded", async () => {
    const admin = await env.server().account();
    const { page } = await env.browser();
    await signIn(page, admin);
    const made = await page.request.post("/v1/api-keys", { data: { name: "deploy bot", scopes: ["risks:read", "risks:write"] } });
    expect(made.status()).toBe(201);
    const key = ((await made.json()) as { key: string }).key;
    const full = { description: "Water in the server room after heavy rain", category: "Facilities", owner: { name: "Ada" }, likelihood: 3, impact: 4, metadata: { site: "Leeds" } };
    const byKey = await page.request.post("/v2/risks", { data: { title: unique("Made by a key"), ...full }, headers: { Authorization: `Bearer ${key}` } });
    expect(byKey.status()).toBe(201);
    for (let i = 0; i < 30; i++) expect((await page.request.post("/v1/risks", { data: { title: unique(`Audited ${i}`), ...full } })).status()).toBe(201);

    await page.goto("/audit");
    await expect.poll(() => rows(page).count()).toBe(34); // the user, the sign-in, the key, 31 risks
    const actors = await rows(page).locator("td:nth-child(2)").allTextContents();
    expect(actors).toContain("API key “deploy bot”");
    for (const a of actors) expect(a).not.toMatch(/key_[0-9a-f]{8,}|usr_[0-9a-f]{8,}/);
    // Everything in view at 1280 px: the table no wider than the page, its last column inside the window.
    const wrap = page.locator(".audit .table-wrap");
    expect(await wrap.evaluate((w) => w.scrollWidth - w.clientWidth)).toBeLessThanOrEqual(0);
    const client = (await page.getByRole("columnheader", { name: "Client" }).boundingBox())!;
    expect(client.x + client.width).toBeLessThanOrEqual(1280);
    // Compact: a creation shows three of its fields and folds the rest; 34 rows, not thousands of pixels each.
    const height = (await page.locator("table.audit-log tbody").boundingBox())!.height;
    expect(height / 34).toBeLessThan(110);
    expect(await rows(page).first().locator("td.changes summary").textContent()).toMatch(/^\d+ more$/);
    const dir = process.env.E2E_SCREENSHOTS;
    if (dir) await page.screenshot({ path: `${dir}/dashboard-audit.png`, clip: { x: 0, y: 0, width: 1280, height: 800 } });

    // The risk's History names the key as the audit page does, not "API key …a23b0e", and so do
    // its Reviews and Acceptance when the key reviewed it and asked for its acceptance.
    const riskId = ((await byKey.json()) as { id: string }).id;
    const asKey = { headers: { Authorization: `Bearer ${key}` } };
    expect((await page.request.post(`/v2/risks/${riskId}/reviews`, { data: { outcome: "unchanged", note: "quarterly" }, ...asKey })).status()).toBe(201);
    const until = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    expect((await page.request.post(`/v2/risks/${riskId}/acceptances`, { data: { justification: "cheaper than a pump", validUntil: until }, ...asKey })).status()).toBe(201);
    await page.goto(`/risks/${riskId}`);
    await expect.poll(() => page.locator(".history-list .entry-head").first().textContent()).toContain("API key “deploy bot” created it");
    await expect.poll(() => page.getByRole("list", { name: "Reviews" }).textContent()).toContain("API key “deploy bot”: unchanged");
    await expect.poll(() => page.getByRole("list", { name: "Acceptances" }).textContent()).toContain("requested by API key “deploy bot”");
    expect(await page.locator(".reviews, .acceptances").allTextContents()).not.toContainEqual(expect.stringMatching(/key_[0-9a-f]{8,}/));
    // And My work, where the key's request awaits this admin's decision.
    await page.goto("/my-work");
    await expect.poll(() => page.getByRole("list", { name: "Acceptances awaiting your decision" }).textContent()).toContain("requested by API key “deploy bot”");
  });

  it("has no Audit log for a member: no link, and the page says it is for admins when the server answers 403", async () => {
    const admin = await env.server().account();
    const member = await env.server().account("member", admin.tenantId);
    const { page } = await env.browser();
    await signIn(page, member);
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }).count()).toBe(0);
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/audit-log");
    await page.goto("/audit?action=risk.updated");
    expect((await answered).status()).toBe(403);
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    await page.getByText("Admins only.").waitFor();
    expect(await rows(page).count()).toBe(0);
    expect(await page.getByRole("link", { name: "CSV" }).count()).toBe(0);
  });
});

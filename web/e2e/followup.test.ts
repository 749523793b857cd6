// The register in time in a real Chromium against a real riskapi
// (docs/dashboard.md, "My work" and "Reviews, actions and acceptances"): the
// My work page lists what is due for the signed-in user and lets an admin
// decide another's acceptance; the risk page records a review, adds and edits
// actions, requests an acceptance that another admin approves; owners are
// picked from the tenant's users; and a change queued by the dashboard before
// it spoke 2027-01-15 (a string owner, no version) is still sent as it was made.

import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { Account } from "./server";
import { allSaved, harness, settled, signIn, unique } from "./ui";

const env = harness();

const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

interface Owner { userId: string | null; name: string }
interface StoredRisk { id: string; title: string; owner: Owner; reviewDate: string | null; treatment: string | null; version: number }

async function userId(page: Page): Promise<string> {
  const res = await page.request.get("/v1/me");
  expect(res.status()).toBe(200);
  return ((await res.json()) as { user: { id: string } }).user.id;
}

async function json<T>(page: Page, path: string): Promise<T> {
  const res = await page.request.get(path);
  expect(res.status(), path).toBe(200);
  return (await res.json()) as T;
}

async function post<T>(page: Page, path: string, data: unknown): Promise<T> {
  const res = await page.request.post(path, { data });
  expect(res.status(), `${path}: ${await res.text()}`).toBe(201);
  return (await res.json()) as T;
}

/** Two admins of one tenant, each signed in in their own browser. */
async function twoAdmins(): Promise<{ alice: { page: Page; account: Account; id: string }; bob: { page: Page; account: Account; id: string } }> {
  const a = await env.server().account();
  const b = await env.server().account("admin", a.tenantId);
  const pa = (await env.browser()).page;
  const pb = (await env.browser()).page;
  await signIn(pa, a);
  await signIn(pb, b);
  return { alice: { page: pa, account: a, id: await userId(pa) }, bob: { page: pb, account: b, id: await userId(pb) } };
}

describe(`the register in time in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("My work lists my reviews due, my actions with the overdue one marked, and lets me approve another admin's acceptance", async () => {
    const { alice, bob } = await twoAdmins();
    const mine = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Server room flood"), owner: { userId: alice.id }, reviewDate: day(3) });
    const later = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Not due yet"), owner: { userId: alice.id }, reviewDate: day(60) });
    const bobs = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Bob's risk"), owner: { userId: bob.id }, reviewDate: day(1) });
    const overdue = await post<{ id: string }>(alice.page, `/v1/risks/${mine.id}/actions`, { title: unique("Buy pumps"), ownerId: alice.id, dueDate: day(-2) });
    const soon = await post<{ id: string }>(alice.page, `/v1/risks/${mine.id}/actions`, { title: unique("Move servers"), ownerId: alice.id, dueDate: day(10) });
    const bobsAction = await post<{ id: string; title: string }>(alice.page, `/v1/risks/${mine.id}/actions`, { title: unique("Bob's task"), ownerId: bob.id, dueDate: day(-1) });
    const acc = await post<{ id: string }>(bob.page, `/v1/risks/${mine.id}/acceptances`, { justification: "Pumps on order", validUntil: day(120) });

    await alice.page.getByRole("link", { name: "My work" }).click();
    await alice.page.getByRole("heading", { name: "My work" }).waitFor();
    const reviews = alice.page.getByRole("list", { name: "Reviews due" });
    await expect.poll(() => reviews.textContent()).toContain(mine.title);
    expect(await reviews.textContent()).not.toContain(later.title);
    expect(await reviews.textContent()).not.toContain(bobs.title);
    const actions = alice.page.getByRole("list", { name: "My actions" });
    await expect.poll(() => actions.getByRole("listitem").allTextContents()).toHaveLength(2);
    const items = await actions.getByRole("listitem").allTextContents();
    // By due date: the overdue one first, marked so.
    expect(items[0]).toContain(day(-2));
    expect(items[0]).toContain("overdue");
    expect(items[1]).toContain(day(10));
    expect(items[1]).not.toContain("overdue");
    expect(items.join()).not.toContain(bobsAction.title);
    void overdue, soon;

    // Bob requested it: Alice decides; Bob's own My work does not offer it to him.
    const decide = alice.page.getByRole("list", { name: "Acceptances awaiting your decision" });
    await expect.poll(() => decide.textContent()).toContain("Pumps on order");
    await bob.page.goto("/my-work");
    await expect.poll(() => bob.page.getByRole("list", { name: "Acceptances awaiting your decision" }).textContent()).toContain("Nothing awaits your decision");
    // The acceptance names its risk by title, not ID, says it is asked until its date, and its buttons name the risk.
    expect(await decide.getByRole("link").allTextContents()).toEqual([mine.title]);
    expect(await decide.textContent()).toContain(`pending (asked until ${day(120)})`);
    expect(await decide.getByRole("button", { name: `Approve the acceptance of “${mine.title}”`, exact: true }).count()).toBe(1);
    expect(await decide.getByRole("button", { name: `Reject the acceptance of “${mine.title}”`, exact: true }).count()).toBe(1);
    await decide.getByLabel("Decision note").fill("ok until the pumps come");
    await decide.getByRole("button", { name: "Approve" }).click();
    await settled(alice.page, "Approve acceptance");
    const stored = (await json<{ data: { id: string; status: string; decidedBy: { id: string }; decisionNote: string }[] }>(alice.page, `/v1/risks/${mine.id}/acceptances`)).data.find((x) => x.id === acc.id);
    expect(stored).toMatchObject({ status: "approved", decidedBy: { id: alice.id }, decisionNote: "ok until the pumps come" });
    expect((await json<StoredRisk>(alice.page, `/v1/risks/${mine.id}`)).treatment).toBe("accept");
    await expect.poll(() => decide.textContent()).toContain("Nothing awaits your decision");
  });

  it("an approval queued offline, while a third admin rejects the acceptance, is refused as decided: not sent again and again", async () => {
    const { alice, bob } = await twoAdmins();
    const risk = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Legacy VPN"), owner: { userId: alice.id } });
    const acc = await post<{ id: string }>(alice.page, `/v1/risks/${risk.id}/acceptances`, { justification: "Retired in spring", validUntil: day(90) });
    await bob.page.goto("/my-work");
    const decide = bob.page.getByRole("list", { name: "Acceptances awaiting your decision" });
    await expect.poll(() => decide.textContent()).toContain("Retired in spring");
    await bob.page.context().setOffline(true);
    await decide.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => bob.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");

    // Carol, a third admin, rejects it meanwhile.
    const carol = await env.server().account("admin", alice.account.tenantId);
    const base = env.server().baseUrl;
    const session = await fetch(base + "/v1/sessions", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: carol.email, password: carol.password }) });
    const { token } = (await session.json()) as { token: string };
    const rejected = await fetch(`${base}/v1/acceptances/${acc.id}/reject`, { method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` }, body: JSON.stringify({ note: "no" }) });
    expect(rejected.status).toBe(200);

    const sent: number[] = [];
    bob.page.on("response", (r) => { if (r.url().endsWith(`/acceptances/${acc.id}/approve`)) sent.push(r.status()); });
    await bob.page.context().setOffline(false);
    await settled(bob.page, "Approve acceptance", "refused");
    expect(await bob.page.locator("li.change.refused", { hasText: "Approve acceptance" }).first().textContent()).toContain("rejected");
    await expect.poll(() => bob.page.getByTestId("pending-indicator").textContent()).not.toContain("pending");
    expect(sent).toEqual([409]);
    const stored = (await json<{ data: { id: string; status: string }[] }>(alice.page, `/v1/risks/${risk.id}/acceptances`)).data.find((x) => x.id === acc.id);
    expect(stored?.status).toBe("rejected");
  });

  it("the risk page records a review, adds and edits an action, and an acceptance requested here is approved by another admin", async () => {
    const { alice, bob } = await twoAdmins();
    const risk = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Vendor DPA missing"), owner: { name: "Legal" }, reviewEvery: "P3M" });
    const page = alice.page;
    await page.goto(`/risks/${risk.id}`);
    await page.getByRole("heading", { name: risk.title }).waitFor();
    // The cadence in words, not "P3M".
    expect(await page.locator("section.reviews > p").first().textContent()).toContain("Reviewed: every 3 months");

    // A review: recorded, listed, and the risk's next review moved three months on.
    const review = page.getByRole("form", { name: "Record review" });
    await review.getByLabel("Outcome").selectOption("changed");
    await review.getByLabel("Review note").fill("Vendor promised a DPA by March");
    await review.getByRole("button", { name: "Record review" }).click();
    await settled(page, "Review risk");
    const reviews = await json<{ data: { outcome: string; note: string; reviewer: { id: string } }[] }>(page, `/v1/risks/${risk.id}/reviews`);
    expect(reviews.data).toMatchObject([{ outcome: "changed", note: "Vendor promised a DPA by March", reviewer: { id: alice.id } }]);
    const reviewed = await json<StoredRisk>(page, `/v1/risks/${risk.id}`);
    expect(reviewed.reviewDate! > day(80)).toBe(true);
    await expect.poll(() => page.getByRole("list", { name: "Reviews" }).textContent()).toContain("Vendor promised a DPA by March");

    // An action for Bob, picked from the tenant's users by email.
    const add = page.getByRole("form", { name: "Add action" });
    const title = unique("Chase the vendor");
    await add.getByLabel("Action title").fill(title);
    await add.getByRole("combobox", { name: "Action owner" }).selectOption({ label: bob.account.email });
    await add.getByLabel("Due date").fill(day(14));
    await add.getByRole("button", { name: "Add action" }).click();
    await settled(page, "Add action");
    const [action] = (await json<{ data: { id: string; title: string; ownerId: string; dueDate: string; status: string; version: number }[] }>(page, `/v1/risks/${risk.id}/actions`)).data;
    expect(action).toMatchObject({ title, ownerId: bob.id, dueDate: day(14), status: "open", version: 1 });
    const row = page.locator(`tr[data-action="${action!.id}"]`);
    await expect.poll(() => row.textContent()).toContain(bob.account.email);

    // Edited: done, with If-Match of the version shown.
    const patches: { ifMatch: string | undefined; body: unknown }[] = [];
    page.on("request", (r) => r.method() === "PATCH" && r.url().includes("/v1/actions/") && patches.push({ ifMatch: r.headers()["if-match"], body: r.postDataJSON() }));
    await row.getByRole("button", { name: `Edit action ${title}` }).click();
    const edit = page.getByRole("form", { name: `Edit action ${title}` });
    await edit.getByLabel("Status").selectOption("done");
    await edit.getByRole("button", { name: "Save action" }).click();
    await settled(page, "Edit action");
    expect(patches).toEqual([{ ifMatch: '"1"', body: { status: "done" } }]);
    expect((await json<{ data: { status: string; version: number }[] }>(page, `/v1/risks/${risk.id}/actions`)).data[0]).toMatchObject({ status: "done", version: 2 });

    // Bob moves the due date while Alice's form is open: her save is refused, said in
    // words (not the API's If-Match detail), and Edit starts again from Bob's version.
    await row.getByRole("button", { name: `Edit action ${title}` }).click();
    expect((await bob.page.request.patch(`/v1/actions/${action!.id}`, { data: { dueDate: day(21) }, headers: { "If-Match": '"2"' } })).status()).toBe(200);
    await edit.getByLabel("Status").selectOption("open");
    await edit.getByRole("button", { name: "Save action" }).click();
    const stale = edit.getByRole("alert");
    await expect.poll(() => stale.textContent(), { timeout: 30_000 }).toContain("someone changed it after you opened this form");
    expect(await stale.textContent()).not.toContain("If-Match");
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain(day(21));
    await row.getByRole("button", { name: `Edit action ${title}` }).click();
    await edit.getByLabel("Status").selectOption("open");
    await edit.getByRole("button", { name: "Save action" }).click();
    await expect.poll(async () => (await json<{ data: { status: string; dueDate: string; version: number }[] }>(page, `/v1/risks/${risk.id}/actions`)).data[0], { timeout: 30_000 })
      .toMatchObject({ status: "open", dueDate: day(21), version: 4 });

    // An acceptance requested here: the requester is told another admin decides; Bob approves it on the risk's page.
    const req = page.getByRole("form", { name: "Request acceptance" });
    await req.getByLabel("Justification").fill("Low impact until renewal");
    await req.getByLabel("Valid until").fill(day(60));
    await req.getByRole("button", { name: "Request acceptance" }).click();
    await settled(page, "Request acceptance");
    const list = page.getByRole("list", { name: "Acceptances" });
    await expect.poll(() => list.textContent()).toContain("another admin decides it");
    expect(await list.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await bob.page.goto(`/risks/${risk.id}`);
    const bobs = bob.page.getByRole("list", { name: "Acceptances" });
    await bobs.getByRole("button", { name: "Reject" }).waitFor();
    await bobs.getByRole("button", { name: "Approve" }).click();
    await settled(bob.page, "Approve acceptance");
    await expect.poll(async () => (await json<StoredRisk>(page, `/v1/risks/${risk.id}`)).treatment).toBe("accept");
    await expect.poll(() => bobs.textContent()).toContain("approved");
  });

  it("sets a risk's review cadence in its edit form: sent with If-Match, stored, and shown in words in Reviews", async () => {
    const { alice } = await twoAdmins();
    const risk = await post<StoredRisk & { reviewEvery: string | null }>(alice.page, "/v1/risks", { title: unique("Backup tapes unchecked") });
    expect(risk.reviewEvery).toBeNull();
    const page = alice.page;
    await page.goto(`/risks/${risk.id}`);
    await page.getByRole("heading", { name: risk.title }).waitFor();
    const cadenceLine = page.locator("section.reviews > p").first();
    expect(await cadenceLine.textContent()).toContain("Reviewed: no cadence set");
    const patches: { ifMatch: string | undefined; body: unknown }[] = [];
    page.on("request", (r) => r.method() === "PATCH" && r.url().includes(`/v1/risks/${risk.id}`) && patches.push({ ifMatch: r.headers()["if-match"], body: r.postDataJSON() }));
    const form = page.getByRole("form", { name: "Edit risk" });
    await form.getByLabel("Review every").selectOption({ label: "every 3 months" });
    await form.getByRole("button", { name: "Save changes" }).click();
    await settled(page, "Edit risk");
    expect(patches).toEqual([{ ifMatch: `"${risk.version}"`, body: { reviewEvery: "P3M" } }]);
    expect((await json<{ reviewEvery: string | null }>(page, `/v1/risks/${risk.id}`)).reviewEvery).toBe("P3M");
    await expect.poll(() => cadenceLine.textContent()).toContain("Reviewed: every 3 months");
    await expect.poll(() => form.getByLabel("Review every").inputValue()).toBe("P3M");
    await allSaved(page);
  });

  it("shows a member who owns each action by email, though a member may not list the tenant's users", async () => {
    const { alice, bob } = await twoAdmins();
    const risk = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Badge reader firmware") });
    const title = unique("Patch the readers");
    const action = await post<{ id: string }>(alice.page, `/v1/risks/${risk.id}/actions`, { title, ownerId: bob.id });
    const carol = await env.server().account("member", alice.account.tenantId);
    const page = (await env.browser()).page;
    await signIn(page, carol);
    await page.goto(`/risks/${risk.id}`);
    const row = page.locator(`tr[data-action="${action.id}"]`);
    await expect.poll(() => row.textContent()).toContain(bob.account.email);
    expect(await row.textContent()).not.toContain(bob.id);
    // Editing it, the owner is Bob by email too, not a usr_… ID.
    await row.getByRole("button", { name: `Edit action ${title}` }).click();
    const owner = page.getByRole("form", { name: `Edit action ${title}` }).getByRole("combobox", { name: "Owner" });
    await expect.poll(() => owner.evaluate((s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent)).toBe(bob.account.email);
  });

  it("picks an owner from the tenant's users by email, takes other text as a name, and shows owners as names", async () => {
    const { alice, bob } = await twoAdmins();
    const risk = await post<StoredRisk>(alice.page, "/v1/risks", { title: unique("Generator fuel"), owner: { name: "Facilities" } });
    const page = alice.page;
    await page.goto("/");
    await expect.poll(() => page.getByRole("row").filter({ hasText: risk.title }).textContent()).toContain("Facilities");
    await page.goto(`/risks/${risk.id}`);
    const form = page.getByRole("form", { name: "Edit risk" });
    const owner = form.getByLabel("Owner");
    await expect.poll(() => owner.inputValue()).toBe("Facilities");
    // The field suggests the tenant's users.
    await expect.poll(() => page.locator("datalist#owner-users option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toContain(bob.account.email);
    await owner.fill(bob.account.email);
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await json<StoredRisk>(page, `/v1/risks/${risk.id}`)).owner).toEqual({ userId: bob.id, name: bob.account.email });
    await expect.poll(() => owner.inputValue()).toBe(bob.account.email);
    await owner.fill("Night shift");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await json<StoredRisk>(page, `/v1/risks/${risk.id}`)).owner).toEqual({ userId: null, name: "Night shift" });
    await allSaved(page);
  });

  it("sends a change queued before the move to 2027-01-15 in 2026-12-01, with its author, If-Match and string owner", async () => {
    const account = await env.server().account();
    // No Riskapi-Version over the page's own: the outbox's header is what the server gets.
    const { page } = await env.browser(null);
    await signIn(page, account);
    const risk = await post<StoredRisk>(page, "/v1/risks", { title: unique("Queued long ago"), owner: { name: "Ada" } });
    const key = randomUUID();
    // As the dashboard stored it in IndexedDB before changes carried their version.
    await page.evaluate(async ({ key, id }) => {
      const owner = JSON.parse(localStorage.getItem("riskapi-identity")!) as { userId: string; tenantId: string; email: string };
      const db = await new Promise<IDBDatabase>((ok, fail) => {
        const r = indexedDB.open("riskapi-outbox", 2);
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      await new Promise<void>((ok, fail) => {
        const tx = db.transaction("changes", "readwrite");
        tx.objectStore("changes").put({
          key, createdAt: Date.now(), method: "PATCH", path: `/risks/${id}`, body: { kind: "json", json: { owner: "Grace" } },
          label: "Edit risk “queued long ago”", owner, mode: "live", ifMatch: '"1"', base: { owner: "Ada" },
          form: { name: "edit-risk", target: id, values: { owner: "Grace" } }, state: "pending", attempts: 0, nextAttemptAt: 0,
        });
        tx.oncomplete = () => ok();
        tx.onerror = () => fail(tx.error);
      });
      db.close();
    }, { key, id: risk.id });
    await page.reload();
    await settled(page, "queued long ago");
    const stored = await json<StoredRisk>(page, `/v1/risks/${risk.id}`);
    expect(stored).toMatchObject({ owner: { userId: null, name: "Grace" }, version: 2 });
    // The request log says the version it was read in, and whose it was.
    await expect.poll(async () => (await json<{ data: { apiVersion: string; status: number; method: string }[] }>(page, `/v1/requests?idempotencyKey=${key}`)).data)
      .toMatchObject([{ apiVersion: "2026-12-01", status: 200, method: "PATCH" }]);
    // A change made now goes in the newest version.
    const sent: (string | undefined)[] = [];
    page.on("request", (r) => r.method() === "PATCH" && sent.push(r.headers()["riskapi-version"]));
    await page.goto(`/risks/${risk.id}`);
    const form = page.getByRole("form", { name: "Edit risk" });
    await expect.poll(() => form.getByLabel("Owner").inputValue()).toBe("Grace");
    await form.getByLabel("Owner").fill("Linus");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await json<StoredRisk>(page, `/v1/risks/${risk.id}`)).owner).toEqual({ userId: null, name: "Linus" });
    expect(sent).toEqual(["2027-01-15"]);
  });
});

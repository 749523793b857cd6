// Versions and conflicts in a real Chromium against a real riskapi
// (docs/dashboard.md, "Conflicts"): an offline edit meets another user's
// newer version; disjoint fields are merged on their own, a clash is shown
// as a Conflict and each choice does what it says; one user's own edits
// across a reload are both kept.

import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { Browser } from "./browser";
import type { Account } from "./server";
import { allSaved, harness, signIn, unique } from "./ui";

const env = harness();

interface StoredRisk {
  id: string;
  title: string;
  owner: { userId: string | null; name: string };
  category: string;
  version: number;
}

/** Two users of one tenant, each in their own browser, and a risk both look at. */
async function twoUsers(fields: Record<string, unknown> = {}): Promise<{ a: Browser; b: Browser; risk: StoredRisk }> {
  const alice: Account = await env.server().account();
  const bob = await env.server().account("member", alice.tenantId);
  const a = await env.browser();
  const b = await env.browser();
  await signIn(a.page, alice);
  await signIn(b.page, bob);
  const res = await a.page.request.post("/v1/risks", { data: { title: unique("Flood in the cellar"), owner: { name: "Ada" }, ...fields } });
  expect(res.status()).toBe(201);
  return { a, b, risk: (await res.json()) as StoredRisk };
}

/** stored reads the risk as the server holds it now. */
async function stored(page: Page, id: string): Promise<StoredRisk> {
  const res = await page.request.get(`/v1/risks/${id}`);
  expect(res.status()).toBe(200);
  return (await res.json()) as StoredRisk;
}

/** openRisk opens the risk's page and returns its edit form. */
async function openRisk(page: Page, id: string) {
  await page.goto(`/risks/${id}`);
  const form = page.getByRole("form", { name: "Edit risk" });
  await form.getByLabel("Title").waitFor();
  return form;
}

/** editTitleOnline is another user's edit of the title in their own dashboard, saved at once: it returns once the server holds it. */
async function editTitleOnline(page: Page, id: string, title: string): Promise<void> {
  const form = await openRisk(page, id);
  await form.getByLabel("Title").fill(title);
  await form.getByRole("button", { name: "Save changes" }).click();
  await expect.poll(async () => (await stored(page, id)).title).toBe(title);
}

/** patches records the PATCHes of a page that reach the server (are answered) from now on. */
// The "requestfinished" event can reach the test after the server has stored
// the change, so assertions on what was sent poll rather than read once.
function patches(page: Page): Request[] {
  const seen: Request[] = [];
  page.on("requestfinished", (r) => r.method() === "PATCH" && seen.push(r));
  return seen;
}

/** noConflict is true when the page shows no conflict, neither on the risk nor in the Changes panel. */
async function noConflict(page: Page): Promise<boolean> {
  return (await page.getByRole("region", { name: "Conflict" }).count()) === 0 && (await page.locator("li.change.conflict").count()) === 0;
}

describe(`versions and conflicts in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("lets a conflict go from the Changes panel when its risk was deleted since: Keep theirs there settles it, what was typed stays readable", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    await a.context.setOffline(true);
    const mine = unique("Mine: flood in the cellar");
    await form.getByLabel("Title").fill(mine);
    await form.getByLabel("Category").fill("Facilities");
    await form.getByRole("button", { name: "Save changes" }).click();
    await editTitleOnline(b.page, risk.id, unique("Theirs: flood in the cellar"));
    await a.context.setOffline(false);
    await a.page.getByRole("region", { name: "Conflict" }).waitFor({ timeout: 30_000 });
    expect((await b.page.request.delete(`/v1/risks/${risk.id}`)).status()).toBe(204);
    await a.page.reload(); // the risk's page says it does not exist: no choice there any more
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change in conflict");

    const row = a.page.locator("li.change.conflict");
    await row.getByRole("button", { name: "Keep theirs" }).click();
    // The clashing Title is dropped; the Category it also sent goes out, meets the deleted risk and is refused, readable.
    const refused = a.page.locator("li.change.refused");
    await expect.poll(() => refused.textContent()).toContain("it is gone, and its form with it; what you typed: category “Facilities”");
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).not.toContain("in conflict");
    expect(await a.page.locator("li.change.conflict").count()).toBe(0);
  });

  it("merges an offline edit of Owner with another user's new Title: both kept, no conflict shown", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    const sent = patches(a.page);
    await a.context.setOffline(true);
    await form.getByLabel("Owner").fill("Grace");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");

    const theirs = unique("Flood in the cellar and the lift shaft");
    await editTitleOnline(b.page, risk.id, theirs);

    await a.context.setOffline(false);
    await allSaved(a.page);
    expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, owner: { name: "Grace" }, version: 3 });
    // Only the field the user changed, first over the version they saw, then over the newer one.
    await expect.poll(() => sent.map((r) => [r.headers()["if-match"], r.postDataJSON()])).toEqual([
      [`"1"`, { owner: { name: "Grace" } }],
      [`"2"`, { owner: { name: "Grace" } }],
    ]);
    await expect.poll(() => form.getByLabel("Title").inputValue()).toBe(theirs);
    expect(await noConflict(a.page)).toBe(true);
  });

  for (const [which, start, impact] of [
    ["a scored risk", { likelihood: 2, impact: 3 }, 4],
    ["a risk nobody has scored (its factors shown as not assessed, none made up)", {}, 1],
  ] as const) {
    it(`merges an offline edit of Impact with another user's new Likelihood on ${which}: both kept, the score of the two, no conflict`, async () => {
      const { a, b, risk } = await twoUsers(start);
      const form = await openRisk(a.page, risk.id);
      expect(await form.getByLabel(/^Likelihood/).inputValue()).toBe(String("likelihood" in start ? start.likelihood : ""));
      expect(await form.getByLabel(/^Impact/).inputValue()).toBe(String("impact" in start ? start.impact : ""));
      const sent = patches(a.page);
      await a.context.setOffline(true);
      await form.getByLabel(/^Impact/).selectOption(String(impact));
      await form.getByRole("button", { name: "Save changes" }).click();
      await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");

      const theirs = await openRisk(b.page, risk.id);
      await theirs.getByLabel(/^Likelihood/).selectOption("5");
      await theirs.getByRole("button", { name: "Save changes" }).click();
      await expect.poll(async () => (await stored(b.page, risk.id)).version).toBe(2);

      await a.context.setOffline(false);
      await allSaved(a.page);
      expect(await stored(a.page, risk.id)).toMatchObject({ likelihood: 5, impact, riskScore: 5 * impact, version: 3 });
      // Only the factor this user changed: the other user's Likelihood is never sent back.
      await expect.poll(() => sent.map((r) => [r.headers()["if-match"], r.postDataJSON()])).toEqual([
        [`"1"`, { impact }],
        [`"2"`, { impact }],
      ]);
      expect(await noConflict(a.page)).toBe(true);
    });
  }

  for (const choice of ["Keep mine", "Keep theirs"] as const) {
    it(`shows an offline edit of Title that met another user's Title as a Conflict; ${choice} does what it says`, async () => {
      const { a, b, risk } = await twoUsers();
      const form = await openRisk(a.page, risk.id);
      await a.context.setOffline(true);
      const mine = unique("Mine: flood in the cellar");
      await form.getByLabel("Title").fill(mine);
      await form.getByRole("button", { name: "Save changes" }).click();
      const theirs = unique("Theirs: flood in the cellar");
      await editTitleOnline(b.page, risk.id, theirs);
      await a.context.setOffline(false);

      const conflict = a.page.getByRole("region", { name: "Conflict" });
      await conflict.waitFor({ timeout: 30_000 });
      await conflict.getByRole("cell", { name: mine }).waitFor();
      await conflict.getByRole("cell", { name: theirs }).waitFor();
      expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, version: 2 });
      // It lives in the outbox: still there, unsent, after a reload.
      await a.page.reload();
      await conflict.getByRole("cell", { name: mine }).waitFor();
      await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change in conflict");

      const sent = patches(a.page);
      await conflict.getByRole("button", { name: choice }).click();
      await allSaved(a.page);
      await expect.poll(() => noConflict(a.page)).toBe(true);
      if (choice === "Keep mine") {
        expect(await stored(a.page, risk.id)).toMatchObject({ title: mine, version: 3 });
        await expect.poll(() => sent.map((r) => [r.headers()["if-match"], r.postDataJSON()])).toEqual([[`"2"`, { title: mine }]]);
        await expect.poll(() => form.getByLabel("Title").inputValue()).toBe(mine);
      } else {
        await a.page.waitForTimeout(1000); // time enough for anything queued to go out
        expect(sent).toEqual([]);
        expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, version: 2 });
        await expect.poll(() => form.getByLabel("Title").inputValue()).toBe(theirs);
      }
    });
  }

  it("shows a clash of register fields as the page does: a cleared Treatment and Review date as none, and only the metadata keys both changed", async () => {
    const { a, b, risk } = await twoUsers({ treatment: "accept", reviewDate: "2027-01-31", metadata: { team: "ops", ticket: "T-1" } });
    const form = await openRisk(a.page, risk.id);
    await a.context.setOffline(true);
    await form.getByLabel("Treatment").selectOption("mitigate");
    await form.getByLabel("Review date").fill("2027-03-31");
    await form.getByLabel("Value 1").fill("security"); // team
    await form.getByRole("button", { name: "Add metadata" }).click();
    await form.getByLabel("Key 3").fill("env"); // a key nobody else touches
    await form.getByLabel("Value 3").fill("prod");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    const other = await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { treatment: null, reviewDate: null, metadata: { team: "finance", site: "Lyon" } } });
    expect(other.status()).toBe(200);
    await a.context.setOffline(false);

    const box = a.page.getByRole("region", { name: "Conflict" });
    await box.waitFor();
    const row = async (field: string) => ({
      mine: await box.getByRole("row", { name: field }).locator('[data-side="mine"]').textContent(),
      theirs: await box.getByRole("row", { name: field }).locator('[data-side="theirs"]').textContent(),
    });
    expect(await row("Treatment")).toEqual({ mine: "mitigate", theirs: "none" });
    expect(await row("Review date")).toEqual({ mine: "2027-03-31", theirs: "none" });
    expect(await row("Metadata")).toEqual({ mine: "team: security", theirs: "team: finance" });
    expect(await box.textContent()).toContain("Your change of metadata key env waits with it");
    await box.getByRole("button", { name: "Keep mine" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)) as unknown).toMatchObject({
      treatment: "mitigate", reviewDate: "2027-03-31", metadata: { team: "security", ticket: "T-1", site: "Lyon", env: "prod" },
    });
  });

  for (const choice of ["Keep mine", "Keep theirs"] as const) {
    it(`${choice} on the first of two offline edits of Title that met another user's Title: the later edit, typed over the first, is compared with what is stored then, never with the user's own value`, async () => {
      const { a, b, risk } = await twoUsers({ description: "d0" });
      const form = await openRisk(a.page, risk.id);
      const sent = patches(a.page);
      await a.context.setOffline(true);
      const [t1, t2] = [unique("T1"), unique("T2")];
      const save = async (label: string, value: string, pending: number) => {
        await form.getByLabel(label).fill(value);
        await form.getByRole("button", { name: "Save changes" }).click();
        await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain(pending === 1 ? "1 change pending" : `${pending} changes pending`);
      };
      // Three edits, each typed over the risk with the earlier ones laid over it: the third's base for Title is the first's T1.
      await save("Title", t1, 1);
      await save("Owner", "O1", 2);
      await save("Title", t2, 3);
      const theirs = unique("B-title");
      expect((await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { title: theirs, description: "d-bob" } })).status()).toBe(200);
      await a.context.setOffline(false);

      // Both Title edits clash with B's; the Owner edit merges on its own (version 3), and both conflicts are shown against it.
      const boxes = a.page.getByRole("region", { name: "Conflict" });
      await expect.poll(() => boxes.count(), { timeout: 30_000 }).toBe(2);
      const first = boxes.filter({ has: a.page.getByRole("cell", { name: t1 }) });
      const second = boxes.filter({ has: a.page.getByRole("cell", { name: t2 }) });
      for (const box of [first, second]) {
        await box.getByRole("cell", { name: theirs }).waitFor();
        await box.getByRole("columnheader", { name: "Theirs (version 3)" }).waitFor();
      }
      expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, owner: { name: "O1" }, description: "d-bob", version: 3 });

      await first.getByRole("button", { name: choice }).click();
      if (choice === "Keep mine") {
        // T1 is stored (version 4); the later edit's base is T1, so it is sent over version 4 on its own: no second question.
        await allSaved(a.page);
        expect(await noConflict(a.page)).toBe(true);
        expect(await stored(a.page, risk.id)).toMatchObject({ title: t2, owner: { name: "O1" }, description: "d-bob", version: 5 });
        await expect.poll(() => form.getByLabel("Title").inputValue()).toBe(t2);
      } else {
        // Nothing is sent for T1; the later edit still clashes with B's title, which is what is stored (version 3).
        await a.page.waitForTimeout(1000); // time enough for anything queued to go out
        await expect.poll(() => boxes.count()).toBe(1);
        await second.getByRole("cell", { name: theirs }).waitFor();
        await second.getByRole("columnheader", { name: "Theirs (version 3)" }).waitFor();
        expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, owner: { name: "O1" }, description: "d-bob", version: 3 });
        await second.getByRole("button", { name: "Keep mine" }).click();
        await allSaved(a.page);
        expect(await noConflict(a.page)).toBe(true);
        expect(await stored(a.page, risk.id)).toMatchObject({ title: t2, owner: { name: "O1" }, description: "d-bob", version: 4 });
      }
      await expect.poll(() => sent.map((r) => [r.headers()["if-match"], r.postDataJSON()])).toEqual([
        [`"1"`, { title: t1 }],
        [`"1"`, { owner: { name: "O1" } }],
        [`"2"`, { owner: { name: "O1" } }],
        // The later Title edit was compared with version 3, which the Owner edit answered with: not sent until it could go.
        ...(choice === "Keep mine" ? [[`"3"`, { title: t1 }], [`"4"`, { title: t2 }]] : [[`"3"`, { title: t2 }]]),
      ]);
    });
  }

  it("moves a draft onto another user's newer version when it re-reads: the fields left alone show theirs, Save sends only what was typed", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    const sent = patches(a.page);
    await form.getByLabel("Owner").fill("Grace"); // a draft, not saved yet

    const theirs = unique("Flood in the cellar, now the boiler room");
    await editTitleOnline(b.page, risk.id, theirs);
    // A reconnect re-reads the risk, the draft still open.
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    await expect.poll(() => form.getByLabel("Title").inputValue()).toBe(theirs);
    expect(await form.getByLabel("Owner").inputValue()).toBe("Grace");

    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)).owner.name).toBe("Grace");
    await allSaved(a.page);
    expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, owner: { name: "Grace" }, version: 3 });
    await expect.poll(() => sent.map((r) => [r.headers()["if-match"], r.postDataJSON() as unknown])).toEqual([['"2"', { owner: { name: "Grace" } }]]);
    expect(await noConflict(a.page)).toBe(true);
  });

  it("keeps what is typed while a re-read is being drawn: the form follows the new version and loses no keystroke", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    const sent = patches(a.page);
    const typed = unique("Grace");
    // The keystroke lands in the gap between the render that draws version 2
    // and the effect that moves the form onto it (Preact runs effects a frame
    // later): a MutationObserver types the moment the page shows "Version 2".
    await a.page.evaluate((owner) => {
      const version = () => [...document.querySelectorAll("dl.facts dt")].find((dt) => dt.textContent === "Version")?.nextElementSibling?.textContent;
      new MutationObserver((_, seen) => {
        if (version() !== "2") return;
        seen.disconnect();
        const label = [...document.querySelectorAll("form.edit-risk label")].find((l) => l.firstChild?.textContent === "Owner");
        const input = label!.querySelector("input")!;
        input.value = owner;
        input.dispatchEvent(new Event("input", { bubbles: true }));
        document.body.dataset.typed = "yes";
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, typed);
    expect((await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { description: "B desc" } })).status()).toBe(200);
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    await a.page.locator("body[data-typed=yes]").waitFor();
    await expect.poll(() => form.getByLabel("Description").inputValue()).toBe("B desc");
    expect(await form.getByLabel("Owner").inputValue()).toBe(typed);

    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)).owner.name).toBe(typed);
    await expect.poll(() => sent.map((r) => [r.headers()["if-match"], r.postDataJSON() as unknown])).toEqual([['"2"', { owner: { name: typed } }]]);
  });

  it("shows a conflict, not an overwrite, when a re-read brings another user's change of the field a draft is typing in", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    const mine = unique("Flood, mine");
    await form.getByLabel("Title").fill(mine); // a draft, not saved yet

    const theirs = unique("Flood, theirs");
    await editTitleOnline(b.page, risk.id, theirs);
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    // The re-read has come (the page's heading is the stored title); the draft keeps what was typed.
    await a.page.getByRole("heading", { name: theirs }).waitFor();
    expect(await form.getByLabel("Title").inputValue()).toBe(mine);

    await form.getByRole("button", { name: "Save changes" }).click();
    await a.page.getByRole("region", { name: "Conflict" }).waitFor();
    expect(await stored(a.page, risk.id)).toMatchObject({ title: theirs, version: 2 });
  });

  it("after Keep mine, shows what is stored, and a later Save sends only what was typed since: another user's change made after it stays", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    await form.getByLabel("Title").fill("A title");
    const other = await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { title: "B title", description: "B desc" } });
    expect(other.status()).toBe(200);
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    await a.page.getByRole("heading", { name: "B title" }).waitFor();
    await form.getByRole("button", { name: "Save changes" }).click();
    await a.page.getByRole("region", { name: "Conflict" }).getByRole("button", { name: "Keep mine" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)).title).toBe("A title");
    await allSaved(a.page);

    // B puts the title back; A, seeing it, edits only Owner.
    expect((await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { title: "B again" } })).status()).toBe(200);
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    await expect.poll(() => form.getByLabel("Title").inputValue()).toBe("B again");
    expect(await form.getByLabel("Description").inputValue()).toBe("B desc");
    const sent = patches(a.page);
    await form.getByLabel("Owner").fill("A owner");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)).owner.name).toBe("A owner");
    expect(await stored(a.page, risk.id)).toMatchObject({ title: "B again", owner: { name: "A owner" } });
    await expect.poll(() => sent.map((r) => r.postDataJSON() as unknown)).toEqual([{ owner: { name: "A owner" } }]);
  });

  it("puts back only what a refused edit typed: another user's change made while it waited stays, in the form and on the server", async () => {
    const { a, b, risk } = await twoUsers();
    const form = await openRisk(a.page, risk.id);
    await a.context.setOffline(true);
    await form.getByLabel("Title").fill("   "); // the server refuses a blank title
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    expect((await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { description: "B desc" } })).status()).toBe(200);
    await a.context.setOffline(false);
    await expect.poll(() => form.getByLabel("Title").getAttribute("aria-invalid")).toBe("true");
    expect(await form.getByLabel("Description").inputValue()).toBe("B desc");
    expect(await a.page.getByText("Refused change").count()).toBe(0);

    const sent = patches(a.page);
    await form.getByLabel("Title").fill("Fixed title");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)).title).toBe("Fixed title").catch(async (err: unknown) => {
      throw new Error(`${String(err)}\nsent ${JSON.stringify(sent.map((r) => [r.headers()["if-match"], r.postData()]))}\npage: ${(await a.page.locator("body").innerText()).slice(0, 1500)}`);
    });
    expect(await stored(a.page, risk.id)).toMatchObject({ description: "B desc" });
    await expect.poll(() => sent.map((r) => r.postDataJSON() as unknown)).toEqual([{ title: "Fixed title" }]);
    // Made again and saved: the header no longer counts the refusal; the panel keeps it, saying so.
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toBe("All changes saved");
    expect(await a.page.locator("li.change.refused").textContent()).toContain("made again and saved since");
  });

  it("puts back from beside the form only what the refused edit typed: another user's Owner and Category saved meanwhile stay", async () => {
    const { a, b, risk } = await twoUsers({ category: "Ops" });
    const form = await openRisk(a.page, risk.id);
    await a.context.setOffline(true);
    await form.getByLabel("Title").fill("   "); // the server refuses a blank title
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await form.getByLabel("Description").fill("my draft description"); // a new draft: the refusal waits beside it
    await a.context.setOffline(false);
    const aside = a.page.getByRole("group", { name: "Refused change" });
    await aside.waitFor();

    expect((await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { owner: { name: "Bob owner" }, category: "BobCat" } })).status()).toBe(200);
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    await expect.poll(() => form.getByLabel("Owner").inputValue()).toBe("Bob owner");
    expect(await aside.textContent()).not.toContain("Ada");

    const sent = patches(a.page);
    await aside.getByRole("button", { name: "Put these back in the form" }).click();
    expect(await form.getByLabel("Title").inputValue()).toBe("   ");
    expect(await form.getByLabel("Owner").inputValue()).toBe("Bob owner");
    expect(await form.getByLabel("Category").inputValue()).toBe("BobCat");
    expect(await a.page.getByRole("group", { name: "Your draft" }).textContent()).toContain("my draft description");
    await form.getByLabel("Title").fill("Put back and fixed");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(async () => (await stored(a.page, risk.id)).title).toBe("Put back and fixed");
    expect(await stored(a.page, risk.id)).toMatchObject({ owner: { name: "Bob owner" }, category: "BobCat" });
    await expect.poll(() => sent.map((r) => r.postDataJSON() as unknown)).toEqual([{ title: "Put back and fixed" }]);
  });

  it("puts a kept-aside draft back on the version it was typed over: Save meets the other user's newer Description as a Conflict, never overwrites it", async () => {
    const { a, b, risk } = await twoUsers({ description: "orig" });
    const form = await openRisk(a.page, risk.id);
    await a.context.setOffline(true);
    await form.getByLabel("Title").fill("   "); // refused by the server
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await form.getByLabel("Description").fill("D-mine"); // a draft typed over version 1
    await a.context.setOffline(false);
    await a.page.getByRole("group", { name: "Refused change" }).waitFor();

    expect((await b.page.request.patch(`/v1/risks/${risk.id}`, { data: { description: "D-bob", owner: { name: "Bob owner" } } })).status()).toBe(200);
    await a.context.setOffline(true);
    await a.context.setOffline(false);
    const version = () => a.page.evaluate(() => [...document.querySelectorAll("dl.facts dt")].find((dt) => dt.textContent === "Version")?.nextElementSibling?.textContent);
    await expect.poll(version).toBe("2");

    await a.page.getByRole("group", { name: "Refused change" }).getByRole("button", { name: "Put these back in the form" }).click();
    expect(await form.getByLabel("Description").inputValue()).toBe("D-bob");
    await a.page.getByRole("group", { name: "Your draft" }).getByRole("button", { name: "Put these back in the form" }).click();
    expect(await form.getByLabel("Description").inputValue()).toBe("D-mine");
    await form.getByRole("button", { name: "Save changes" }).click();
    await a.page.getByRole("region", { name: "Conflict" }).waitFor();
    expect(await stored(a.page, risk.id)).toMatchObject({ description: "D-bob", owner: { name: "Bob owner" }, version: 2 });
  });

  it("keeps both of one user's edits: Title while offline, a reload that still shows it, then Owner", async () => {
    const { a, risk } = await twoUsers();
    let form = await openRisk(a.page, risk.id);
    // Every PATCH fails before reaching the server, as with no connection, while the page itself still loads.
    await a.page.route("**/v1/risks/*", (route) => (route.request().method() === "PATCH" ? route.abort("internetdisconnected") : route.fallback()));
    const title = unique("Flood, pumped out");
    await form.getByLabel("Title").fill(title);
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");

    await a.page.reload();
    form = a.page.getByRole("form", { name: "Edit risk" });
    await expect.poll(() => form.getByLabel("Title").inputValue()).toBe(title);
    await form.getByLabel("Owner").fill("Grace");
    await form.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => a.page.getByTestId("pending-indicator").textContent()).toContain("2 changes pending");
    expect(await form.getByLabel("Title").inputValue()).toBe(title);

    await a.page.unroute("**/v1/risks/*");
    await a.page.getByRole("button", { name: "Retry now" }).click().catch(() => undefined);
    await allSaved(a.page);
    expect(await stored(a.page, risk.id)).toMatchObject({ title, owner: { name: "Grace" } });
    expect(await noConflict(a.page)).toBe(true);
  });
});

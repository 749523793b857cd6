// Honest refusals (docs/dashboard.md, "The outbox" 5), in a real Chromium
// against a real riskapi: a refused change puts back what the user typed with
// the error beside its field, nothing the page showed as changed stays, and
// the header counts the refusal in its own colour.

import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createRisk, harness, settled, signIn, titled, unique } from "./ui";

const env = harness();

async function signedIn(role: "admin" | "member" = "admin", tenantId?: string): Promise<Page> {
  const { page } = await env.browser();
  await signIn(page, await env.server().account(role, tenantId));
  return page;
}

const header = (page: Page) => page.getByTestId("pending-indicator");

describe(`refusals in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("puts a refused new risk back in its form, the error beside Title, and counts it as refused", async () => {
    const page = await signedIn();
    const form = page.getByRole("form", { name: "New risk" });
    await form.getByLabel("Category").fill("Operations");
    await createRisk(page, "   ", "2", "5"); // blank to the server, not to the browser's `required`
    await settled(page, "Create risk", "refused");
    await expect.poll(() => form.getByRole("textbox", { name: /^Title/ }).inputValue()).toBe("   ");
    expect(await form.getByLabel("Impact").inputValue()).toBe("5");
    expect(await form.getByLabel("Category").inputValue()).toBe("Operations");
    // The error is beside the field, and names it to assistive technology.
    const title = form.getByRole("textbox", { name: /^Title/ });
    expect(await title.getAttribute("aria-invalid")).toBe("true");
    const err = page.locator(`#${await title.getAttribute("aria-describedby")}`);
    expect(await err.textContent()).toContain("must not be blank");
    await expect.poll(() => header(page).textContent()).toContain("1 change refused");
    expect(await header(page).textContent()).not.toContain("All changes saved");
    expect(await header(page).getAttribute("class")).toContain("refused");
  });

  it("keeps a title over the server's limit in the form when the create is refused, the error beside it", async () => {
    // Sent past the input's maxlength (a script, or a change queued by an older
    // page): the refusal came back with its error beside an empty Title.
    const page = await signedIn();
    const form = page.getByRole("form", { name: "New risk" });
    const title = form.getByRole("textbox", { name: /^Title/ });
    const long = "t".repeat(250);
    await title.evaluate((el, v) => {
      const input = el as HTMLInputElement;
      input.value = v;
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }, long);
    await form.getByLabel("Category").fill("Operations");
    await form.getByRole("button", { name: "Create risk" }).click();
    await settled(page, "Create risk", "refused");
    await expect.poll(() => title.getAttribute("aria-invalid")).toBe("true");
    expect(await title.inputValue()).toBe(long);
    expect(await form.getByLabel("Category").inputValue()).toBe("Operations");
    expect(await page.locator(`#${await title.getAttribute("aria-describedby")}`).textContent()).toMatch(/200/);
  });

  it("shows what was typed in an edit of a risk deleted meanwhile, since its form went with it, an owner by email", async () => {
    const { page } = await env.browser();
    const admin = await env.server().account();
    const colleague = await env.server().account("member", admin.tenantId);
    await signIn(page, admin);
    const title = unique("Deleted under the edit");
    const made = await page.request.post("/v1/risks", { data: { title } });
    const { id } = (await made.json()) as { id: string };
    await page.goto(`/risks/${id}`);
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Title").fill("Renamed after all");
    await edit.getByLabel("Owner").fill(colleague.email); // sent as {userId}: the tab has listed the users
    expect((await page.request.delete(`/v1/risks/${id}`)).status()).toBe(204);
    await edit.getByRole("button", { name: "Save changes" }).click();
    await settled(page, "Edit risk", "refused");
    const row = page.locator("li.change.refused", { hasText: "Edit risk" });
    await expect.poll(() => row.textContent()).toContain("it is gone, and its form with it; what you typed: ");
    expect(await row.textContent()).toContain("title “Renamed after all”");
    expect(await row.textContent()).toContain(`owner “${colleague.email}”`);
    expect(await row.textContent()).not.toMatch(/usr_[0-9a-f]{8,}/);
    // After a reload too, on a page that never lists the users (the risk is gone).
    await page.reload();
    await expect.poll(() => row.textContent()).toContain(`owner “${colleague.email}”`);
    expect(await row.textContent()).not.toMatch(/usr_[0-9a-f]{8,}/);
    expect(await row.textContent()).not.toContain("its form holds what you typed");
  });

  it("keeps the new draft typed after an offline create that is then refused, with the refused values beside the form to put back", async () => {
    const page = await signedIn();
    const form = page.getByRole("form", { name: "New risk" });
    const title = form.getByRole("textbox", { name: /^Title/ });
    const category = form.getByLabel("Category");
    // The inputs hold no more than the server accepts (internal/risks/risk.go: category at most 100 characters).
    await category.pressSequentially("c".repeat(120));
    expect((await category.inputValue()).length).toBe(100);

    await page.context().setOffline(true);
    await category.fill("Operations");
    await createRisk(page, "   ", "2", "5"); // blank to the server, not to the browser's `required`
    await title.fill("Flooded archive");
    await category.fill("Facilities");
    await page.context().setOffline(false);
    await settled(page, "Create risk", "refused");

    // The draft stays; the refused change waits beside the form with the server's error.
    const refused = page.getByRole("group", { name: "Refused change" });
    await refused.getByText("must not be blank").waitFor();
    expect(await refused.textContent()).toContain("Operations");
    expect(await title.inputValue()).toBe("Flooded archive");
    expect(await category.inputValue()).toBe("Facilities");

    // Put back: the refused values in the form with their error, the draft kept aside in turn.
    await refused.getByRole("button", { name: "Put these back in the form" }).click();
    await expect.poll(() => title.inputValue()).toBe("   ");
    expect(await category.inputValue()).toBe("Operations");
    expect(await form.getByLabel("Impact").inputValue()).toBe("5");
    expect(await title.getAttribute("aria-invalid")).toBe("true");
    const draft = page.getByRole("group", { name: "Your draft" });
    expect(await draft.textContent()).toContain("Flooded archive");
    await draft.getByRole("button", { name: "Put these back in the form" }).click();
    await expect.poll(() => title.inputValue()).toBe("Flooded archive");
    expect(await category.inputValue()).toBe("Facilities");
  });

  it("puts a refused edit back in the risk's form, with the error beside Title", async () => {
    const page = await signedIn();
    const name = unique("Edited into a blank");
    await createRisk(page, name);
    await settled(page, name);
    await page.getByRole("link", { name, exact: true }).click();
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Owner").fill("ops@example.com");
    await edit.getByRole("textbox", { name: /^Title/ }).fill("  ");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await settled(page, "Edit risk", "refused");
    await expect.poll(() => edit.getByRole("textbox", { name: /^Title/ }).inputValue()).toBe("  ");
    expect(await edit.getByLabel("Owner").inputValue()).toBe("ops@example.com");
    await edit.getByText("must not be blank").waitFor();
    // The page still shows the risk as the server holds it.
    await page.getByRole("heading", { name }).waitFor();
    expect(await titled(page, name)).toMatchObject([{ title: name }]);
  });

  it("leaves no form for a risk deleted elsewhere when its edit is refused", async () => {
    const page = await signedIn();
    // The live poll (src/live.ts: the newest event, every 1.5 s) would hear of the
    // deletion and re-read the page, dropping the form before Save is pressed (so
    // CI saw at load 4): this is the refusal's test, so the page hears it from the
    // save. Cut from the start, not just before the deletion: a poll already in
    // flight then could still reach the server after it (CI saw that too).
    await page.route((u) => u.pathname === "/v1/events" && u.searchParams.get("limit") === "1", (r) => r.abort());
    const name = unique("Deleted in another browser");
    await createRisk(page, name);
    await settled(page, name);
    const [risk] = await titled(page, name);
    await page.getByRole("link", { name, exact: true }).click();
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.waitFor();
    expect((await page.request.delete(`/v1/risks/${risk!.id}`, { headers: { "Idempotency-Key": crypto.randomUUID() } })).status()).toBe(204);
    await edit.getByLabel("Owner").fill("too late");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await settled(page, "Edit risk", "refused");
    await page.getByText("This risk does not exist").waitFor();
    expect(await page.getByRole("form", { name: "Edit risk" }).count()).toBe(0);
  });

  it("shows the true role after demoting the last admin is refused", async () => {
    const page = await signedIn();
    await page.goto("/admin/users");
    const role = page.getByRole("combobox", { name: /^Role of / });
    await role.waitFor();
    await role.selectOption("member");
    // Their own role: asked first (pages.test.ts), then sent and refused.
    await page.getByRole("group", { name: "Make yourself a member?" }).getByRole("button", { name: "Confirm" }).click();
    await settled(page, "member", "refused");
    await expect.poll(() => role.inputValue()).toBe("admin");
    await page.getByRole("alert").filter({ hasText: "last admin" }).waitFor();
    await expect.poll(() => header(page).textContent()).toContain("1 change refused");
  });
});

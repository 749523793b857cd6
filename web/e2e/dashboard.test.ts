// The dashboard in a real Chromium against a real riskapi (docs/dashboard.md):
// sessions, risks, attachments, the outbox through offline spells, reloads,
// lost responses and refusals, and the browser-side security promises.

import { createHash } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { Browser } from "./browser";
import type { Account } from "./server";
import { allSaved, createRisk, harness, risks, settled, signIn, titled, unique } from "./ui";

const env = harness();
const browser = env.browser;

/** A signed-in browser of a new tenant's admin. */
async function signedIn(): Promise<{ b: Browser; page: Page; account: Account }> {
  const account = await env.server().account();
  const b = await browser();
  await signIn(b.page, account);
  return { b, page: b.page, account };
}


describe(`the dashboard in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("is served with a strict CSP and X-Frame-Options, and loads nothing from another origin", async () => {
    const b = await browser();
    const urls: string[] = [];
    const violations: string[] = [];
    b.page.on("request", (r) => urls.push(r.url()));
    b.page.on("console", (m) => m.type() === "error" && violations.push(m.text()));
    const res = await b.page.goto("/");
    const h = res!.headers();
    expect(h["content-security-policy"]).toContain("default-src 'self'");
    expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(h["content-security-policy"]).not.toContain("unsafe-inline");
    expect(h["x-frame-options"]).toBe("DENY");
    await b.page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(urls.length).toBeGreaterThan(1);
    for (const u of urls) expect(new URL(u).origin).toBe(env.server().baseUrl);
    expect(await b.page.locator("script:not([src])").count()).toBe(0);
    // 401 from the session probe is expected; a CSP violation is not.
    expect(violations.filter((v) => /Content Security Policy/i.test(v))).toEqual([]);
  });

  it("signs in and out, and creates, edits and deletes a risk", async () => {
    const { page } = await signedIn();
    const title = unique("Vendor contract missing a DPA");
    await createRisk(page, title, "3", "4");
    await page.getByRole("link", { name: title, exact: true }).waitFor();
    await settled(page, title);
    const [r] = await titled(page, title);
    expect(r).toMatchObject({ riskScore: 12, status: "open" });

    await page.getByRole("link", { name: title, exact: true }).click();
    const edit = page.getByRole("form", { name: "Edit risk" });
    const renamed = unique("DPA signed, review pending");
    await edit.getByLabel("Title").fill(renamed);
    await edit.getByLabel("Status").selectOption("mitigated");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("heading", { name: renamed }).waitFor();
    await settled(page, "Edit risk “" + renamed);
    expect(await titled(page, renamed)).toMatchObject([{ id: r!.id, status: "mitigated" }]);

    await page.getByRole("button", { name: "Delete risk" }).click();
    await page.getByRole("button", { name: "Confirm delete" }).click();
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    await settled(page, "Delete risk “" + renamed);
    expect(await titled(page, renamed)).toEqual([]);
    await expect.poll(() => page.locator("table.risks").getByText(renamed).count()).toBe(0);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect((await page.request.get("/v1/risks")).status()).toBe(401);
  });

  it("goes back to the list after a delete whose event the page heard before its answer", async () => {
    // live.ts sees the delete's event and the page re-reads the risk (404)
    // while the DELETE's answer is still on its way to the outbox: the page
    // must not be left saying the risk does not exist.
    const { page } = await signedIn();
    const title = unique("Deleted while its answer is slow");
    await createRisk(page, title);
    await settled(page, title);
    await page.getByRole("link", { name: title, exact: true }).click();
    await page.getByRole("heading", { name: title }).waitFor();
    let reread = false;
    page.on("response", (r) => {
      if (r.request().method() === "GET" && /\/v1\/risks\/[^/]+$/.test(new URL(r.url()).pathname) && r.status() === 404) reread = true;
    });
    await page.route("**/v1/risks/*", async (route) => {
      if (route.request().method() !== "DELETE") return route.fallback();
      const answer = await route.fetch(); // committed: its event is the tenant's newest
      for (let t = Date.now(); !reread && Date.now() - t < 10_000; ) await new Promise((r) => setTimeout(r, 100));
      await route.fulfill({ response: answer });
    });
    await page.getByRole("button", { name: "Delete risk" }).click();
    await page.getByRole("button", { name: "Confirm delete" }).click();
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    expect(reread).toBe(true);
    await settled(page, "Delete risk “" + title);
    expect(await titled(page, title)).toEqual([]);
  });

  it("creates a risk given only its title as not assessed, not as a made-up 3 × 3", async () => {
    const { page } = await signedIn();
    const title = unique("Unassessed supplier risk");
    const form = page.getByRole("form", { name: "New risk" });
    expect(await form.getByLabel("Likelihood").inputValue()).toBe("");
    expect(await form.getByLabel("Impact").inputValue()).toBe("");
    await form.getByLabel("Title").fill(title);
    await form.getByRole("button", { name: "Create risk" }).click();
    await settled(page, title);
    const [r] = await titled(page, title);
    expect(r).toMatchObject({ riskScore: null, likelihood: null, impact: null });
  });

  it("pages through the list", async () => {
    const { page } = await signedIn();
    const prefix = unique("Paged");
    for (let i = 0; i < 22; i++) {
      const res = await page.request.post("/v1/risks", { data: { title: `${prefix} ${String(i).padStart(2, "0")}` } });
      expect(res.status()).toBe(201);
    }
    await page.reload();
    const rows = page.locator("table.risks tbody tr");
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => rows.count()).toBe(20);
  });

  it("uploads an attachment with a progress bar and downloads the same bytes", async () => {
    const { b, page } = await signedIn();
    const title = unique("Flood in the server room");
    await createRisk(page, title);
    await settled(page, title);
    await page.getByRole("link", { name: title, exact: true }).click();
    await page.getByRole("heading", { name: "Attachments" }).waitFor();

    const bytes = Buffer.alloc(2 << 20);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff;
    // Slow the upload to ~1 MiB/s so the progress bar has something to show.
    const cdp = await b.context.newCDPSession(page);
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1 << 20 });
    await page.getByLabel("File").setInputFiles({ name: "photo.bin", mimeType: "application/octet-stream", buffer: bytes });
    await page.getByLabel("Attachment description").fill("the wet rack");
    await page.getByRole("button", { name: "Upload" }).click();

    const seen = new Set<number>();
    const bar = page.getByRole("progressbar", { name: "Upload progress" }).first();
    for (let i = 0; i < 200 && !(await page.getByRole("link", { name: "photo.bin" }).count()); i++) {
      const v = await bar.getAttribute("value", { timeout: 100 }).catch(() => null);
      if (v !== null) seen.add(Number(v));
      await page.waitForTimeout(50);
    }
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    // Several distinct values between 0 and 100: the bar moved as bytes went out.
    expect([...seen].filter((v) => v > 0 && v < 100).length).toBeGreaterThanOrEqual(2);

    const link = page.getByRole("link", { name: "photo.bin" });
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    const path = await download.path();
    const { readFile } = await import("node:fs/promises");
    const got = await readFile(path);
    expect(createHash("sha256").update(got).digest("hex")).toBe(createHash("sha256").update(bytes).digest("hex"));
  });

  it("creates one risk when Create risk is double-clicked, uploads a file once when Upload is, and queues one edit for Save changes", async () => {
    const { b, page } = await signedIn();
    const title = unique("Double-clicked");
    const form = page.getByRole("form", { name: "New risk" });
    await form.getByLabel("Title").fill(title);
    const posts: string[] = [];
    page.on("request", (r) => r.method() === "POST" && new URL(r.url()).pathname === "/v1/risks" && posts.push(r.headers()["idempotency-key"] ?? ""));
    await form.getByRole("button", { name: "Create risk" }).dblclick();
    await allSaved(page);
    await page.waitForTimeout(500); // a second change, had one been queued, would be on its way
    expect(await titled(page, title)).toHaveLength(1);
    expect(new Set(posts).size).toBe(1);

    // The same for a file: one upload, one attachment.
    await page.getByRole("link", { name: title, exact: true }).click();
    await page.getByRole("heading", { name: "Attachments" }).waitFor();
    await page.getByLabel("File").setInputFiles({ name: "twice.txt", mimeType: "text/plain", buffer: Buffer.from("uploaded once") });
    await page.getByRole("button", { name: "Upload" }).dblclick();
    await page.getByRole("link", { name: "twice.txt" }).waitFor();
    await allSaved(page);
    await page.waitForTimeout(500);
    const [risk] = await titled(page, title);
    const list = (await (await page.request.get(`/v1/risks/${risk!.id}/attachments`)).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(1);

    // An edit: one PATCH, even offline, where nothing settles between the clicks.
    const patches: string[] = [];
    page.on("request", (r) => r.method() === "PATCH" && patches.push(r.headers()["idempotency-key"] ?? ""));
    await b.context.setOffline(true);
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Title").fill(`${title} renamed`);
    await edit.getByRole("button", { name: "Save changes" }).dblclick();
    await page.waitForTimeout(300);
    await b.context.setOffline(false);
    await allSaved(page);
    await page.waitForTimeout(500);
    expect(new Set(patches).size).toBe(1);
    expect(await titled(page, `${title} renamed`)).toHaveLength(1);
  });

  it("creates one API key when Create API key is double-clicked", async () => {
    const { page } = await signedIn();
    await page.goto("/admin/api-keys");
    if ((await page.request.get("/v1/api-keys")).status() === 404) return;
    const name = unique("double-clicked key");
    await page.getByRole("form", { name: "Create an API key" }).getByLabel("Name").fill(name);
    await page.getByRole("button", { name: "Create API key" }).dblclick();
    await page.getByTestId("secret").waitFor();
    await page.waitForTimeout(500);
    const keys = (await (await page.request.get("/v1/api-keys?limit=100")).json()) as { data: { name: string }[] };
    expect(keys.data.filter((k) => k.name === name)).toHaveLength(1);
  });

  it("keeps a change made offline and applies it exactly once on reconnecting", async () => {
    const { b, page } = await signedIn();
    const title = unique("Created on a train");
    await b.context.setOffline(true);
    await createRisk(page, title);
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await page.getByText(title).first().waitFor();
    await page.waitForTimeout(1500); // a few failed attempts while offline
    await b.context.setOffline(false);
    await settled(page, title);
    expect(await titled(page, title)).toHaveLength(1);
  });

  it("shows a title edit queued offline in the risk's heading and its list row, marked, until it is sent", async () => {
    const { b, page } = await signedIn();
    const title = unique("Title before the train");
    const renamed = unique("Title typed on the train");
    await createRisk(page, title);
    await settled(page, title);
    const [r] = await titled(page, title);
    // Every attempt at the edit fails before reaching the server until the route is removed.
    await page.route(`**/v1/risks/${r!.id}`, (route) => (route.request().method() === "PATCH" ? route.abort("internetdisconnected") : route.fallback()));
    await page.getByRole("link", { name: title, exact: true }).click();
    const heading = page.getByRole("heading", { level: 1 });
    await expect.poll(() => heading.textContent()).toBe(title);
    await b.context.setOffline(true);
    const edit = page.getByRole("form", { name: "Edit risk" });
    await edit.getByLabel("Title").fill(renamed);
    await edit.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await expect.poll(() => heading.textContent()).toBe(`${renamed} not sent yet`);
    expect(await heading.locator(".badge.pending").count()).toBe(1);

    // Back online with the edit still waiting for a retry: the list's row shows it too.
    await b.context.setOffline(false);
    await page.goto("/");
    const row = page.locator(`tr[data-risk="${r!.id}"]`);
    await expect.poll(() => row.locator("td.title a").textContent()).toBe(renamed);
    expect(await row.locator(".badge.pending").textContent()).toBe("change pending");

    // Sent: the stored title, unmarked.
    await page.unroute(`**/v1/risks/${r!.id}`);
    await page.getByRole("button", { name: "Retry now" }).click().catch(() => undefined);
    await settled(page, "Edit risk “" + renamed);
    await expect.poll(() => row.locator(".badge").count()).toBe(0);
    // Polled: the row drops its mark when the change leaves the outbox and shows the
    // list's title until the list is read again (on a loaded CI machine, read once
    // it still held the old title).
    await expect.poll(() => row.locator("td.title a").textContent()).toBe(renamed);
    expect(await titled(page, renamed)).toHaveLength(1);
    await row.getByRole("link", { name: renamed, exact: true }).click();
    await expect.poll(() => heading.textContent()).toBe(renamed);
  });

  it("sends a change still queued at a reload exactly once, with its key", async () => {
    const { page } = await signedIn();
    const title = unique("Queued across a reload");
    const keys: string[] = [];
    // Every attempt fails before reaching the server until the route is removed.
    await page.route("**/v1/risks", (route) =>
      route.request().method() === "POST" ? (keys.push(route.request().headers()["idempotency-key"]!), route.abort("internetdisconnected")) : route.fallback(),
    );
    await createRisk(page, title);
    await expect.poll(() => keys.length).toBeGreaterThanOrEqual(1);
    await page.reload();
    await page.getByRole("heading", { name: "Risks" }).waitFor();
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    const sent = waitForPost(page);
    await page.unroute("**/v1/risks");
    // The outbox's own backoff may send it before the click lands (the button then
    // leaves the page); either way it must go exactly once, with its key.
    const clicked = page.getByRole("button", { name: "Retry now" }).click().catch(() => undefined);
    await Promise.race([sent, clicked]);
    const req = await sent;
    await settled(page, title);
    expect(new Set([...keys, req.headers()["idempotency-key"]]).size).toBe(1);
    expect(await titled(page, title)).toHaveLength(1);
  });

  it("retries a change whose response was lost with the same key, and the server replays it", async () => {
    const { page } = await signedIn();
    const title = unique("Response lost on the way back");
    let firstKey = "";
    await page.route("**/v1/risks", async (route) => {
      if (route.request().method() !== "POST" || firstKey) return route.fallback();
      firstKey = route.request().headers()["idempotency-key"]!;
      const committed = await route.fetch(); // the server runs it and commits...
      expect(committed.status()).toBe(201);
      await route.abort("connectionreset"); // ...and the browser never hears back.
    });
    const retried = page.waitForResponse((r) => r.request().method() === "POST" && r.url().endsWith("/v1/risks") && r.request().headers()["idempotency-key"] === firstKey);
    await createRisk(page, title);
    const res = await retried;
    expect(res.status()).toBe(201);
    expect(res.headers()["idempotent-replayed"]).toBe("true");
    await settled(page, title);
    await expect.poll(() => page.locator("li.change.done", { hasText: title }).textContent()).toContain("replayed by the server");
    expect(await titled(page, title)).toHaveLength(1);
  });

  it("shows a reused key as refused, and later changes still go through", async () => {
    const { page } = await signedIn();
    const title = unique("Original body");
    const other = unique("Another body under the same key");
    let intercepted = false;
    await page.route("**/v1/risks", async (route) => {
      if (route.request().method() !== "POST" || intercepted) return route.fallback();
      intercepted = true;
      // The key is first used with another body, and that answer is lost.
      await route.fetch({ postData: JSON.stringify({ title: other }) });
      await route.abort("connectionreset");
    });
    await createRisk(page, title);
    const refused = page.locator("li.change.refused", { hasText: title });
    await refused.waitFor({ timeout: 30_000 });
    await expect.poll(() => refused.textContent()).toContain("IDEMPOTENCY_KEY_REUSED");
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change refused");

    const later = unique("Made after the refusal");
    await createRisk(page, later);
    await settled(page, later);
    expect(await titled(page, later)).toHaveLength(1);
    expect(await titled(page, title)).toHaveLength(0);
    expect(await titled(page, other)).toHaveLength(1);
  });

  it("asks before signing out with a change unsent, and never sends it after", async () => {
    const { page, account } = await signedIn();
    const title = unique("Left behind at sign-out");
    let attempts = 0;
    await page.route("**/v1/risks", (route) =>
      route.request().method() === "POST" ? (attempts++, route.abort("internetdisconnected")) : route.fallback(),
    );
    await createRisk(page, title);
    await expect.poll(() => attempts).toBeGreaterThanOrEqual(1);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("alertdialog", { name: "Sign out with unsent changes" }).waitFor();
    await page.getByRole("button", { name: "Discard and sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    await page.unroute("**/v1/risks");
    await signIn(page, account);
    await page.waitForTimeout(1000);
    // Discarded, and the user's history went with the sign-out: nothing of it is left.
    expect(await page.locator("li.change", { hasText: title }).count()).toBe(0);
    expect(await titled(page, title)).toEqual([]);
  });

  it("signs out at once while offline, ends the server's session on reconnecting, and keeps the change for its author", async () => {
    const { b, page, account } = await signedIn();
    const title = unique("Kept through an offline sign-out");
    let posts = 0;
    page.on("request", (r) => r.method() === "POST" && r.url().endsWith("/v1/risks") && posts++);
    await b.context.setOffline(true);
    await createRisk(page, title);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("alertdialog", { name: "Sign out with unsent changes" }).waitFor();
    await page.getByRole("button", { name: "Keep and sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor({ timeout: 5000 });
    const note = page.getByText("Signed out in this browser. The server could not be reached");
    await note.waitFor();
    // Read from the outbox (IndexedDB) after the note is shown: it may come a moment later.
    await expect.poll(() => page.getByText(`1 change of ${account.email} is waiting`).count()).toBe(1);
    await b.context.setOffline(false);
    // The cookie the server still honoured until now is ended, and signs nobody back in.
    await expect.poll(async () => (await page.request.get("/v1/me")).status()).toBe(401);
    expect(await page.getByRole("button", { name: "Sign in" }).isVisible()).toBe(true);
    await expect.poll(() => note.count()).toBe(0);
    await page.waitForTimeout(500);
    expect(posts).toBe(0); // nothing went out under the signed-out user
    await signIn(page, account);
    await settled(page, title);
    expect(await titled(page, title)).toHaveLength(1);
  });

  it("signs nobody else in until the session signed out offline has ended on the server", async () => {
    const { b, page } = await signedIn();
    const other = await env.server().account();
    const old = (await b.context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    const me = (cookie: string) => fetch(`${env.server().baseUrl}/v1/me`, { headers: { cookie } }).then((r) => r.status);
    await b.context.setOffline(true);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor({ timeout: 5000 });
    // Back online, but the sign-out's DELETE is lost on the way, again and again.
    let ends = 0;
    await page.route("**/v1/sessions", (r) => (r.request().method() === "DELETE" ? (ends++, r.abort("connectionreset")) : r.fallback()));
    await b.context.setOffline(false);
    await expect.poll(() => ends).toBeGreaterThanOrEqual(1);
    await page.getByLabel("Email").fill(other.email);
    await page.getByLabel("Password").fill(other.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Cannot reach the server").waitFor();
    expect(await me(old)).toBe(200); // not ended yet, so nobody else is signed in over it
    expect(await page.getByRole("heading", { name: "Risks" }).count()).toBe(0);
    await page.unroute("**/v1/sessions");
    await signIn(page, other);
    expect(await me(old)).toBe(401);
  });

  it("sends from one tab at a time, and another tab takes over when it closes", async () => {
    const { b, page: one } = await signedIn();
    const two = await b.context.newPage();
    await two.goto("/");
    // Once seen to time out in a local run beside other suites, never alone: say what the tab showed.
    await two.getByRole("heading", { name: "Risks" }).waitFor().catch(async (err: unknown) => {
      throw new Error(`${String(err)}\nthe second tab showed: ${(await two.locator("body").innerText()).slice(0, 800)}`);
    });
    const from = new Map<Page, number>([[one, 0], [two, 0]]);
    for (const p of [one, two]) p.on("request", (r: Request) => r.method() === "POST" && r.url().endsWith("/v1/risks") && from.set(p, from.get(p)! + 1));
    const prefix = unique("Two tabs");
    for (let i = 0; i < 3; i++) {
      await createRisk(one, `${prefix} one ${i}`);
      await createRisk(two, `${prefix} two ${i}`);
    }
    for (let i = 0; i < 3; i++) {
      await settled(one, `${prefix} two ${i}`);
      await settled(two, `${prefix} one ${i}`);
    }
    expect((await risks(one)).filter((r) => r.title.startsWith(prefix))).toHaveLength(6);
    const [sender, other] = from.get(one)! > 0 ? [one, two] : [two, one];
    expect(from.get(sender)).toBe(6);
    expect(from.get(other)).toBe(0);

    await sender.close();
    await createRisk(other, `${prefix} after`);
    await settled(other, `${prefix} after`);
    expect(from.get(other)).toBe(1);
    expect(await titled(other, `${prefix} after`)).toHaveLength(1);
  });

  it("refuses a cross-site write that carries only the session cookie", async () => {
    const { page } = await signedIn();
    const title = unique("Forged");
    // Another origin of the same site (another port): the browser sends the
    // SameSite=Lax cookie with its form post.
    const evil = await attacker(`<form method="post" action="${env.server().baseUrl}/v1/risks" enctype="text/plain">
      <input name='{"title":"${title}","x":"' value='"}'><button>Win a prize</button></form>
      <iframe src="${env.server().baseUrl}/" title="framed"></iframe>`);
    try {
      await page.goto(evil.url);
      const framed = page.frames().find((f) => f.url().startsWith(env.server().baseUrl));
      expect(await framed?.locator("#app").count().catch(() => 0) ?? 0).toBe(0); // frame-ancestors 'none'
      const [res] = await Promise.all([page.waitForResponse(`${env.server().baseUrl}/v1/risks`), page.getByRole("button", { name: "Win a prize" }).click()]);
      expect(res.status()).toBe(403);
      expect(await res.json()).toMatchObject({ code: "FORBIDDEN" });
      expect(await titled(page, title)).toEqual([]);
    } finally {
      await evil.close();
    }
  });

  it("shows admin pages to admins only; a member gets 403 from those routes", async (ctx) => {
    const { page, account } = await signedIn();
    const me = await page.request.get("/v1/me");
    if (me.status() === 404) {
      const why = "member vs admin: this server has no GET /v1/me yet (users and roles, docs/openapi.yaml)";
      console.warn("SKIPPED " + why);
      ctx.skip(why);
    }
    await page.getByRole("link", { name: "Admin" }).click();
    await page.getByRole("cell", { name: account.email }).waitFor();

    const member = await env.server().account("member", account.tenantId);
    const mb = await browser();
    await signIn(mb.page, member);
    await expect.poll(() => mb.page.getByRole("link", { name: "Admin" }).count()).toBe(0);
    // Routes that change the tenant's credentials are admin only (docs/openapi.yaml).
    for (const [path, data] of [
      ["/v1/api-keys", { name: "member's key", scopes: ["risks:read"] }],
      ["/v1/users", { email: "x@e2e.test", password: "long enough password", role: "admin" }],
    ] as const) {
      const res = await mb.page.request.post(path, { data });
      expect(res.status(), `POST ${path}`).toBe(403);
    }
    await mb.page.goto("/admin/users");
    await mb.page.getByText("Only admins manage users").waitFor();
  });

  it("shows the request log, events and API keys, or says the server lacks them", async () => {
    const { b, page } = await signedIn();
    const title = unique("Logged");
    await createRisk(page, title);
    await settled(page, title);
    const key = await page.locator("li.change.done", { hasText: title }).getAttribute("data-key");

    await page.getByRole("link", { name: "Request log" }).click();
    if ((await page.request.get("/v1/requests")).status() === 404) {
      await page.getByText("The request log is not available on this server.").waitFor();
    } else {
      await page.getByRole("form", { name: "Filters" }).getByLabel("Idempotency key").fill(key!);
      // Entries are written off the request path, within about a second (docs/requests.md):
      // filter again until the create's entry is there.
      const entry = page.getByRole("cell", { name: new RegExp(`${key}.*executed`) });
      await expect.poll(async () => {
        await page.getByRole("button", { name: "Filter" }).click();
        return entry.count();
      }, { timeout: 10_000, interval: 500 }).toBeGreaterThan(0);
    }

    await page.getByRole("link", { name: "Events" }).click();
    if ((await page.request.get("/v1/events")).status() === 404) {
      await page.getByText("The event list is not available on this server.").waitFor();
    } else {
      await page.getByRole("button", { name: "risk.created" }).first().waitFor();
    }

    await page.goto("/admin/api-keys");
    if ((await page.request.get("/v1/api-keys")).status() === 404) {
      await page.getByText("API key management is not available on this server.").waitFor();
      return;
    }
    const create = page.getByRole("button", { name: "Create API key" });
    await b.context.setOffline(true);
    await expect.poll(() => create.isDisabled()).toBe(true); // a secret is never queued
    await b.context.setOffline(false);
    await page.getByRole("form", { name: "Create an API key" }).getByLabel("Name").fill("from the dashboard");
    await create.click();
    const secret = await page.getByTestId("secret").textContent();
    expect(secret).toMatch(/^rk_/);
    const res = await page.request.get("/v2/risks", { headers: { Authorization: `Bearer ${secret}` } });
    expect(res.status()).toBe(200);
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.getByTestId("secret").count()).toBe(0);
  });

  it("screenshot: the risk list with a pending change", async () => {
    const { b, page } = await signedIn();
    for (const [t, l, i] of [["Vendor contract missing a DPA", 3, 4], ["Single point of failure in payments", 2, 5], ["Laptops without disk encryption", 4, 3], ["Backups never restored in a test", 3, 3]] as const) {
      await page.request.post("/v1/risks", { data: { title: t, likelihood: l, impact: i, category: "Operations" } });
    }
    await page.reload();
    await page.getByRole("link", { name: "Backups never restored in a test" }).waitFor();
    await b.context.setOffline(true);
    await createRisk(page, "Flood risk at the Leeds office", "2", "4");
    await expect.poll(() => page.getByTestId("pending-indicator").textContent()).toContain("1 change pending");
    await page.waitForTimeout(1200);
    const out = process.env.E2E_SCREENSHOT;
    if (out) await page.screenshot({ path: out, clip: { x: 0, y: 0, width: 1280, height: 520 } });
    await b.context.setOffline(false);
    await settled(page, "Flood risk at the Leeds office");
    await allSaved(page);
    expect(await titled(page, "Flood risk at the Leeds office")).toHaveLength(1);
  });
});

function waitForPost(page: Page): Promise<Request> {
  return page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/v1/risks"));
}

/** attacker serves html at http://127.0.0.1:<another port>/: same site, another origin. */
async function attacker(html: string): Promise<{ url: string; close: () => Promise<void> }> {
  const srv: HttpServer = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end(`<!doctype html><title>prize</title>${html}`);
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => {
    srv.close(() => resolve());
    srv.closeAllConnections(); // the browser keeps its connection alive
  }) };
}

// Whose change it is (docs/dashboard.md), in a real Chromium against a real
// riskapi: a change whose author's session ended is never sent under whoever
// signs in next on that browser, in another tenant or the same one; it is
// sent once when its author is back, logged under the author; and the next
// user sees nothing of an earlier user's changes.

import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { Account } from "./server";
import { createRisk, harness, settled, signIn, titled, unique } from "./ui";

const h = harness();
const browser = h.browser;

/** call sends one request to the server outside the browser, with a session token as Bearer. */
async function call(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(h.server().baseUrl + path, {
    method,
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** token signs a in outside the browser (another device) and returns the session token and user id. */
async function token(a: Account): Promise<{ token: string; userId: string }> {
  const s = await call("POST", "/v1/sessions", undefined, { email: a.email, password: a.password });
  expect(s.status).toBe(201);
  const me = await call("GET", "/v1/me", s.json.token);
  return { token: s.json.token, userId: me.json.user.id };
}

/**
 * endSessionElsewhere changes a's password from another device: every other
 * session of a ends (docs/openapi.yaml, POST /v1/me/password).
 */
async function endSessionElsewhere(a: Account): Promise<void> {
  const { token: t } = await token(a);
  const newPassword = a.password + "-2";
  const res = await fetch(h.server().baseUrl + "/v1/me/password", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${t}`, "Idempotency-Key": crypto.randomUUID() },
    body: JSON.stringify({ currentPassword: a.password, newPassword }),
  });
  expect(res.status).toBe(204);
  a.password = newPassword;
}

/** posts records the risk creations the page sends, with their keys. */
function posts(page: Page): { key: string; at: number }[] {
  const seen: { key: string; at: number }[] = [];
  page.on("request", (r: Request) => {
    if (r.method() === "POST" && r.url().endsWith("/v1/risks")) seen.push({ key: r.headers()["idempotency-key"] ?? "", at: Date.now() });
  });
  return seen;
}

/** logOf returns the request-log entries of key, as the tenant's admin reads them. */
async function logOf(adminToken: string, key: string): Promise<{ status: number; credential: { type: string; id: string } }[]> {
  const res = await call("GET", `/v1/requests?idempotencyKey=${encodeURIComponent(key)}`, adminToken);
  expect(res.status).toBe(200);
  return res.json.data;
}

/**
 * The member's session ends, they make a change (answered 401, so it waits),
 * and `next` signs in on the same browser: nothing is sent under next, nothing
 * of it is shown to next; then the member signs in again and it is sent once.
 */
async function waitsForItsAuthor(next: Account, memberAdmin: Account, member: Account): Promise<void> {
  const { page } = await browser();
  const sent = posts(page);
  await signIn(page, member);
  await endSessionElsewhere(member);
  const title = unique("Made as the session ended");
  await createRisk(page, title);

  // The sign-in page names whose change waits, and not what it is.
  const waiting = page.getByRole("status").filter({ hasText: member.email });
  await waiting.waitFor();
  expect(await waiting.textContent()).toContain("1 change");
  expect(await page.getByText(title).count()).toBe(0);
  expect(sent).toHaveLength(1); // the attempt answered 401
  const key = sent[0]!.key;

  await signIn(page, next);
  const signedInAt = Date.now();
  await page.waitForTimeout(2500);
  expect(sent.filter((s) => s.at >= signedInAt)).toEqual([]); // nothing sent under next
  expect(await titled(page, title)).toEqual([]);
  expect(await page.getByText(title).count()).toBe(0); // nor shown to next
  expect(await page.getByTestId("pending-indicator").textContent()).toContain("All changes saved");

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("status").filter({ hasText: member.email }).waitFor();
  await signIn(page, member);
  await settled(page, title);
  expect(await titled(page, title)).toHaveLength(1);
  expect(new Set(sent.map((s) => s.key))).toEqual(new Set([key]));
  expect(sent).toHaveLength(2); // the 401, then the one that made it

  // The request log of the member's tenant (which logs requests that authenticated
  // to it, so not the 401): one create, under the member.
  const { token: adminToken } = await token(memberAdmin);
  const { userId } = await token(member);
  await expect.poll(async () => (await logOf(adminToken, key)).length, { timeout: 10_000 }).toBe(1);
  const [created] = await logOf(adminToken, key);
  expect(created).toMatchObject({ status: 201, credential: { type: "session", id: userId } });
}

describe(`whose change it is, in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("sends nothing under an admin of another tenant, and sends the member's change once they are back", async () => {
    const memberAdmin = await h.server().account("admin");
    const member = await h.server().account("member", memberAdmin.tenantId);
    const otherTenantAdmin = await h.server().account("admin");
    await waitsForItsAuthor(otherTenantAdmin, memberAdmin, member);
    // And nothing reached the other tenant.
    const { token: t } = await token(otherTenantAdmin);
    const theirs = await call("GET", "/v1/risks?limit=100", t);
    expect(theirs.json.data).toEqual([]);
  });

  it("sends nothing under the member's own admin: the change is logged under its author", async () => {
    const admin = await h.server().account("admin");
    const member = await h.server().account("member", admin.tenantId);
    await waitsForItsAuthor(admin, admin, member);
  });

  it("sends nothing when the cookie changes under the tab without the dashboard: the server refuses another author", async () => {
    const a = await h.server().account("admin");
    const b = await h.server().account("admin", a.tenantId);
    const { page } = await browser();
    const sent = posts(page);
    await signIn(page, a);
    // Attempts fail on the network until B is signed in, so the outbox tries again
    // after that (a retry that came first, under load, went out on A's cookie).
    let failed = false;
    let bSince = 0;
    await page.route("**/v1/risks", (route) => {
      if (route.request().method() === "POST" && !bSince) {
        failed = true;
        return route.abort("connectionreset");
      }
      return route.fallback();
    });
    const title = unique("Made by A");
    await createRisk(page, title);
    await expect.poll(() => failed).toBe(true);
    // Meanwhile a script on the same origin signs B in: the cookie is B's, and the tab was not told.
    const status = await page.evaluate(async (body) => (await fetch("/v1/sessions", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    })).status, { email: b.email, password: b.password });
    expect(status).toBe(201);
    bSince = Date.now();
    // The retry names A as its author: 401, nothing created; the tab learns it is B's session.
    await expect.poll(() => sent.some((s) => s.at >= bSince), { timeout: 30_000 }).toBe(true);
    await page.getByText(b.email).first().waitFor();
    const { token: bToken } = await token(b);
    expect((await call("GET", "/v1/risks?limit=100", bToken)).json.data).toEqual([]);
    const audit = await call("GET", "/v1/audit-log?action=risk.created", bToken);
    expect(audit.json.data).toEqual([]);

    // A signs in again: the change is sent once, as A's. Wait for the sign-out to
    // finish (the sign-in page names A's waiting change) before navigating, or the
    // navigation could cut its request and leave B's cookie in place.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("status").filter({ hasText: a.email }).waitFor();
    await signIn(page, a);
    await settled(page, title);
    expect(await titled(page, title)).toHaveLength(1);
    const created = await call("GET", "/v1/audit-log?action=risk.created", bToken);
    expect(created.json.data.map((e: { actor: { email?: string } }) => e.actor.email)).toEqual([a.email]);
  });

  it("shows the next user none of the previous user's changes", async () => {
    const a = await h.server().account("admin");
    const b = await h.server().account("admin");
    const { page } = await browser();
    await signIn(page, a);
    const title = unique("Settled before signing out");
    await createRisk(page, title);
    await settled(page, title);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    await signIn(page, b);
    await page.waitForTimeout(500);
    expect(await page.getByText(title).count()).toBe(0);
    expect(await page.getByRole("complementary", { name: "Changes" }).count()).toBe(0);
    // Not even in the browser's storage.
    const stored = await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open("riskapi-outbox");
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const all = await new Promise<unknown[]>((resolve) => {
        const r = db.transaction("changes").objectStore("changes").getAll();
        r.onsuccess = () => resolve(r.result);
      });
      return JSON.stringify(all);
    });
    expect(stored).not.toContain(title);
  });
});

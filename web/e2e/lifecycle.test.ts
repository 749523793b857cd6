// Keys and endpoints have a lifecycle (docs/roles-and-credentials.md, docs/events.md),
// in a real Chromium against a real riskapi: a key's expiry and last use on the keys
// page, a roll that shows the new secret once and lets the old one work for its
// overlap; an endpoint's page with its deliveries, disable/enable (skipped
// deliveries), a ping to a real receiver, and a secret roll shown once.

import { createServer, type IncomingMessage, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { harness, signIn } from "./ui";

const env = harness({ WEBHOOK_ALLOW_PRIVATE: "true" });

/** A webhook receiver on loopback that answers 204 and records the types it got. */
async function receiver(): Promise<{ url: string; types: string[]; headers: IncomingMessage["headers"][]; server: HttpServer }> {
  const types: string[] = [];
  const headers: IncomingMessage["headers"][] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      types.push((JSON.parse(body) as { type: string }).type);
      headers.push(req.headers);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, types, headers, server };
}

const servers: HttpServer[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function signedIn(): Promise<Page> {
  const account = await env.server().account();
  const { page } = await env.browser();
  await signIn(page, account);
  return page;
}

/** status of a GET /v2/risks with key, from the page (same origin). */
const useKey = (page: Page, key: string) => page.evaluate(async (k) => (await fetch("/v2/risks", { headers: { Authorization: `Bearer ${k}` } })).status, key);

describe(`lifecycles in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("shows a key's expiry and last use, and rolls it showing the new secret once", async () => {
    const page = await signedIn();
    await page.goto("/admin/api-keys");
    const form = page.getByRole("form", { name: "Create an API key" });
    await form.getByLabel("Name").fill("deploy");
    await form.getByLabel("Expires (optional)").fill("2099-01-02T03:04");
    // The browser reaches the server from the loopback network.
    await form.getByLabel("Allowed networks (optional)").fill("127.0.0.0/8, ::1");
    await page.getByRole("button", { name: "Create API key" }).click();
    const oldKey = (await page.getByTestId("secret").textContent())!;
    await page.getByRole("button", { name: "Done" }).click();
    const row = page.getByRole("row").filter({ hasText: "deploy" });
    await expect.poll(() => row.textContent()).toContain("2099");
    await expect.poll(() => row.textContent()).toContain("never"); // not used yet
    expect(await row.textContent()).toContain("from 127.0.0.0/8, ::1/128");
    expect(await useKey(page, oldKey)).toBe(200);
    // The last use is written off the request's path: read the page again until it shows.
    await expect.poll(async () => {
      await page.reload();
      return page.getByRole("row").filter({ hasText: "deploy" }).textContent();
    }, { timeout: 10_000 }).not.toContain("never");

    await page.getByRole("button", { name: "Roll" }).click();
    const roll = page.getByRole("group", { name: "Roll deploy" });
    await roll.getByLabel("Old key works for").selectOption({ label: "stops now" });
    // The new key's expiry starts as the old one's: a key made to lapse still does.
    expect(await roll.getByLabel("New key expires (empty: never)").inputValue()).toBe("2099-01-02T03:04");
    // A refused roll says so beside its own controls, not under the creation form.
    await roll.getByLabel("New key expires (empty: never)").fill("2020-01-01T10:00");
    await roll.getByRole("button", { name: "Confirm roll" }).click();
    await expect.poll(() => roll.getByRole("alert").textContent()).toContain("Not rolled:");
    expect(await page.getByRole("alert").filter({ hasText: "Not created" }).count()).toBe(0);
    await roll.getByLabel("New key expires (empty: never)").fill("2098-05-06T07:08");
    await roll.getByRole("button", { name: "Confirm roll" }).click();
    const newKey = (await page.getByTestId("secret").textContent())!;
    expect(newKey).toMatch(/^rk_/);
    expect(newKey).not.toBe(oldKey);
    await page.getByRole("button", { name: "Done" }).click();
    await expect.poll(() => page.getByTestId("secret").count()).toBe(0);
    expect(await useKey(page, newKey)).toBe(200);
    expect(await useKey(page, oldKey)).toBe(401);
    await expect.poll(() => page.getByRole("row").filter({ hasText: "expired" }).count()).toBe(1);
    const successor = page.getByRole("row").filter({ hasText: "deploy" }).filter({ hasNotText: "expired" });
    await expect.poll(() => successor.textContent()).toContain("2098");
    expect(await successor.textContent()).toContain("from 127.0.0.0/8, ::1/128");
  });

  it("opens an endpoint's page: ping, disable with skipped deliveries, enable, roll its secret", async () => {
    const rcv = await receiver();
    servers.push(rcv.server);
    const page = await signedIn();
    await page.goto("/admin/webhooks");
    const add = page.getByRole("form", { name: "Add a webhook endpoint" });
    await add.getByLabel("URL").fill(rcv.url);
    await add.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("link", { name: rcv.url }).click();
    const state = page.getByTestId("endpoint-state");
    await expect.poll(() => state.textContent()).toBe("Enabled");

    await page.getByRole("button", { name: "Ping" }).click();
    await expect.poll(() => page.getByTestId("ping-result").textContent()).toMatch(/^Ping delivered: 204 in \d+ ms$/);
    expect(rcv.types).toEqual(["endpoint.ping"]);

    await page.getByRole("button", { name: "Disable" }).click();
    await expect.poll(() => state.textContent()).toMatch(/^Disabled since/);
    // A change while disabled: logged as skipped, not sent.
    expect(await page.evaluate(async () => (await fetch("/v1/risks", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "while disabled" }),
    })).status)).toBe(201);
    await page.reload();
    await expect.poll(() => page.getByRole("table", { name: "Deliveries" }).textContent(), { timeout: 10_000 }).toContain("skipped");
    expect(rcv.types).toEqual(["endpoint.ping"]);

    await page.getByRole("button", { name: "Enable" }).click();
    await expect.poll(() => state.textContent()).toBe("Enabled");

    const rollForm = page.getByRole("form", { name: "Roll the signing secret" });
    await rollForm.getByLabel("Old secret signs for").selectOption({ label: "1 day" });
    await rollForm.getByRole("button", { name: "Roll secret" }).click();
    const secret = (await page.getByTestId("secret").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => state.textContent()).toContain("previous secret signs until");
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("button", { name: "Ping" }).click();
    await expect.poll(() => rcv.types.length).toBe(2);
    // Both secrets sign during the overlap.
    expect(String(rcv.headers[1]!["webhook-signature"]).split(" ")).toHaveLength(2);
  });
});

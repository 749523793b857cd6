// What the dashboard's Chromium tests do as a user would, shared by the e2e
// files: sign in, make a risk, read what the server holds, wait for a change.

import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, inject } from "vitest";
import { closeChromium, openBrowser, type Browser } from "./browser";
import { startServer, type Account, type Server } from "./server";

/** signIn signs a in on the sign-in page and waits for the risk list. */
export async function signIn(page: Page, a: Account): Promise<void> {
  await page.goto("/");
  await page.getByLabel("Email").fill(a.email);
  await page.getByLabel("Password").fill(a.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Risks" }).waitFor();
}

/** createRisk fills the new-risk form and submits it (the change is queued, not yet sent). */
export async function createRisk(page: Page, title: string, likelihood = "4", impact = "2"): Promise<void> {
  const form = page.getByRole("form", { name: "New risk" });
  await form.getByLabel("Title").fill(title);
  await form.getByLabel("Likelihood").selectOption(likelihood);
  await form.getByLabel("Impact").selectOption(impact);
  await form.getByRole("button", { name: "Create risk" }).click();
}

/** risks returns what the server holds for the signed-in tenant (the session cookie, over the API). */
export async function risks(page: Page): Promise<{ id: string; title: string; riskScore: number; status: string }[]> {
  const res = await page.request.get("/v1/risks?limit=100");
  expect(res.status()).toBe(200);
  return ((await res.json()) as { data: { id: string; title: string; riskScore: number; status: string }[] }).data;
}

/** titled returns the signed-in tenant's risks with this title. */
export const titled = async (page: Page, title: string) => (await risks(page)).filter((r) => r.title === title);
/** settled waits until the changes panel shows the change labelled with text as done (or refused). */
export const settled = (page: Page, text: string, state: "done" | "refused" = "done") =>
  page.locator(`li.change.${state}`, { hasText: text }).first().waitFor({ timeout: 30_000 });
/** allSaved waits until the header says every change is saved. */
export const allSaved = (page: Page) => expect.poll(() => page.getByTestId("pending-indicator").textContent(), { timeout: 30_000 }).toContain("All changes saved");
/** viewsLoaded waits until every lazy view's chunk has come (src/lazy.tsx, preloadViews): only then does each page open offline. */
export const viewsLoaded = (page: Page) => page.locator("html[data-views-loaded]").waitFor({ state: "attached", timeout: 30_000 });
/** unique makes a title no other test uses. */
export const unique = (what: string) => `${what} ${randomUUID().slice(0, 8)}`;

/**
 * harness registers a test file's hooks: one real riskapi for the file (the
 * binary built for the run, a fresh database, env added to its environment),
 * one Chromium for the file, and browsers (its contexts, each with empty
 * storage) closed after each test.
 */
export function harness(env: Record<string, string> = {}): {
  server: () => Server;
  browser: (version?: string | null, serviceWorker?: boolean) => Promise<Browser>;
} {
  let server: Server | undefined;
  const browsers: Browser[] = [];
  beforeAll(async () => {
    server = await startServer(inject("riskapiBinary"), env);
  }, 120_000);
  afterAll(async () => {
    await closeChromium();
    await server?.stop();
  });
  afterEach(async () => {
    for (const b of browsers.splice(0)) await b.close();
  });
  return {
    server: () => server!,
    // version: the Riskapi-Version of every request (openBrowser); null sends none over the page's own.
    // serviceWorker: let the dashboard's service worker run (openBrowser).
    browser: async (version?: string | null, serviceWorker?: boolean) => {
      const b = await openBrowser(server!.baseUrl, version, serviceWorker);
      browsers.push(b);
      return b;
    },
  };
}

// Debian's Chromium driven by playwright-core: a fresh profile per browser,
// so IndexedDB, the outbox and cookies start empty.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** CHROMIUM overrides the browser's path; Debian's package installs it here. */
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** A browser with its own profile; pages of one Browser are tabs sharing IndexedDB and Web Locks. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** The API version the tests' own requests speak: the dashboard's (its SDK's, docs/api-versions.md). */
export const API_VERSION = "2027-01-15";

/**
 * openBrowser launches Chromium headless with a fresh --user-data-dir and one
 * page at baseUrl. Its requests send Riskapi-Version API_VERSION unless
 * `version` is null: then nothing overrides what the page itself sends (a test
 * of changes queued in an older version), and the tests' own requests speak
 * the tenant's pin, the newest for a tenant made now.
 *
 * The dashboard's service worker (src/sw/sw.ts) is blocked unless
 * `serviceWorker` is true: Playwright's page.route does not see the requests a
 * service worker answers, and most tests route requests to fail them; a test
 * of the worker itself (offline.test.ts) lets it run.
 */
export async function openBrowser(baseUrl: string, version: string | null = API_VERSION, serviceWorker = false): Promise<Browser> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-e2e-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath,
    headless: true,
    baseURL: baseUrl,
    // The dashboard speaks the newest API version (its SDK's), and so do the
    // tests' own page.request calls, whatever the tenant's pin.
    ...(version ? { extraHTTPHeaders: { "Riskapi-Version": version } } : {}),
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    serviceWorkers: serviceWorker ? "allow" : "block",
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync",
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

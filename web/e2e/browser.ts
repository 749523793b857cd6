// Debian's Chromium driven by playwright-core: one Chromium per test file, and a
// fresh browser context per Browser, so IndexedDB, the outbox, caches, service
// workers and cookies start empty (a context shares none of them with another).

import { chromium, type Browser as Chromium, type BrowserContext, type Page } from "playwright-core";

/** CHROMIUM overrides the browser's path; Debian's package installs it here. */
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** A browser with its own storage; pages of one Browser are tabs sharing IndexedDB and Web Locks. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** The API version the tests' own requests speak: the dashboard's (its SDK's, docs/api-versions.md). */
export const API_VERSION = "2027-01-15";

// Launching Chromium is most of a short test's CPU on a machine of two cores, so
// a test file launches it once (vitest runs each file in its own process) and
// each test gets a new context of it.
let launched: Promise<Chromium> | undefined;

function chromiumOnce(): Promise<Chromium> {
  launched ??= chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync",
    ],
  });
  return launched;
}

/** closeChromium ends the file's Chromium, if one was launched (harness's afterAll). */
export async function closeChromium(): Promise<void> {
  const b = launched;
  launched = undefined;
  if (b) await (await b).close();
}

/**
 * openBrowser opens a fresh context of the file's Chromium (launched headless on
 * first use) with one page at baseUrl. Its requests send Riskapi-Version
 * API_VERSION unless `version` is null: then nothing overrides what the page
 * itself sends (a test of changes queued in an older version), and the tests'
 * own requests speak the tenant's pin, the newest for a tenant made now.
 *
 * The dashboard's service worker (src/sw/sw.ts) is blocked unless
 * `serviceWorker` is true: Playwright's page.route does not see the requests a
 * service worker answers, and most tests route requests to fail them; a test
 * of the worker itself (offline.test.ts) lets it run.
 */
export async function openBrowser(baseUrl: string, version: string | null = API_VERSION, serviceWorker = false): Promise<Browser> {
  const context = await (await chromiumOnce()).newContext({
    baseURL: baseUrl,
    // The dashboard speaks the newest API version (its SDK's), and so do the
    // tests' own page.request calls, whatever the tenant's pin.
    ...(version ? { extraHTTPHeaders: { "Riskapi-Version": version } } : {}),
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    serviceWorkers: serviceWorker ? "allow" : "block",
  });
  const page = await context.newPage();
  return { context, page, close: () => context.close() };
}

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

/** openBrowser launches Chromium headless with a fresh --user-data-dir and one page at baseUrl. */
export async function openBrowser(baseUrl: string): Promise<Browser> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-e2e-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath,
    headless: true,
    baseURL: baseUrl,
    // The dashboard speaks API version 2026-12-01 (its SDK's, docs/api-versions.md),
    // and so do the tests' own page.request calls, whatever the tenant's pin.
    extraHTTPHeaders: { "Riskapi-Version": "2026-12-01" },
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
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

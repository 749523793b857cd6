// A risk opened from the list right after the dashboard loads, in a real
// Chromium under load (its CPU throttled 4×): the page used to stay on
// "Loading…" for good when the risk page's chunk, fetched by the idle-time
// preload, came between the render that said "Loading…" and that render's
// effect (src/lazy.tsx; issue 43). Each round holds the chunk and lets it come
// a little later after the click, so the rounds cover that window. Before the
// fix this failed in round 7 with the risk list itself stuck on "Loading…"
// (its chunk, preloaded too, met the same window).

import { describe, it } from "vitest";
import { harness, signIn, unique } from "./ui";

const env = harness();
const ROUNDS = 16;

describe(`a risk opened right after load in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it(`opens every time, ${ROUNDS} rounds, the risk page's chunk arriving 0–150 ms after the click`, async () => {
    const { page, context } = await env.browser();
    await signIn(page, await env.server().account());
    const title = unique("Opened right after load");
    const made = await page.request.post("/v1/risks", { data: { title } });
    const { id } = (await made.json()) as { id: string };
    const cdp = await context.newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
    for (let i = 0; i < ROUNDS; i++) {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      // Routing turns the HTTP cache off, so every round fetches the chunk anew.
      await page.route("**/assets/risk-*.js", async (route) => {
        await held;
        await route.continue();
      });
      await page.goto("/");
      await page.locator(`a[href="/risks/${id}"]`).click({ timeout: 15_000 }).catch(async (e: unknown) => {
        throw new Error(`round ${i}: ${String(e)}\n${await page.locator("main, body").first().innerText()}`);
      });
      await new Promise((r) => setTimeout(r, (i * 10) % 160));
      release();
      await page.getByRole("heading", { name: title, exact: true }).waitFor({ timeout: 15_000 });
      await page.unrouteAll({ behavior: "wait" });
    }
  }, 300_000);
});

// A risk's History in a real Chromium against a real riskapi whose due-date
// finder runs every second (docs/dashboard.md, "Pages"): what the
// schedule found of a risk reads as words, not as the raw action it records.

import { describe, expect, it } from "vitest";
import { harness, signIn, unique } from "./ui";

const env = harness({ SCHEDULE_SPEC: "@every 1s" });

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe(`a risk's History in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("says in words that the schedule found the review overdue", async () => {
    const { page } = await env.browser();
    await signIn(page, await env.server().account());
    const made = await page.request.post("/v1/risks", { data: { title: unique("Overdue review"), reviewDate: day(-2) } });
    expect(made.status()).toBe(201);
    const { id } = (await made.json()) as { id: string };
    // The schedule records risk.review_overdue (actor system) within a few runs.
    await expect.poll(async () => {
      const res = await page.request.get(`/v1/risks/${id}/history`);
      return ((await res.json()) as { data: { action: string }[] }).data.map((e) => e.action);
    }, { timeout: 30_000 }).toContain("risk.review_overdue");
    await page.goto(`/risks/${id}`);
    const heads = page.locator(".history-list .entry-head");
    await expect.poll(() => heads.allTextContents()).toHaveLength(2);
    const found = (await heads.allTextContents())[1]!;
    expect(found).toContain("Its review is overdue");
    expect(found).not.toMatch(/review_overdue|system|command line/);
    // The risk as the schedule found it is no change: no field list under it.
    expect(await page.locator(".history-list > li").nth(1).locator("ul.changes").count()).toBe(0);
  });
});

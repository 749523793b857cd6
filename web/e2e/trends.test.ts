// The register as pictures (docs/dashboard.md, "Trends" and "Report"), in a
// real Chromium against a real riskapi whose schedule snapshots the register
// every second: the Trends page draws its charts from the snapshots, a risk's
// page its score history, and the Report page prints the heat map, the top
// risks, what is overdue and the trends, without the navigation.

import { describe, expect, it } from "vitest";
import { createRisk, harness, settled, signIn, titled, unique } from "./ui";

const env = harness({ SCHEDULE_SPEC: "@every 1s" });

describe(`trends and report in Chromium (${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "SQLite"})`, () => {
  it("draws trends and score history from real data, and prints the report without navigation", async () => {
    const { page } = await env.browser();
    await page.setViewportSize({ width: 1100, height: 900 });
    await signIn(page, await env.server().account());
    const high = unique("Supplier outage");
    const low = unique("Stale laptop");
    await createRisk(page, high, "5", "4");
    await createRisk(page, low, "1", "2");
    await settled(page, high);
    await settled(page, low);

    // The schedule's next run snapshots both risks: the chart's table says so.
    await expect.poll(async () => {
      await page.goto("/trends");
      await page.getByRole("heading", { name: "Trends", exact: true }).waitFor();
      const figure = page.locator("figure.chart").first();
      if (!(await figure.isVisible().catch(() => false))) return "no chart";
      return (await page.locator('svg[data-chart="bands"] circle').count()) > 0 ? await figure.locator(".chart-summary").textContent() : "no point";
    }, { timeout: 30_000, interval: 1000 }).toMatch(/Low: 1, Medium: 0, High: 0, Critical: 1 on \d{4}-\d{2}-\d{2}\./);
    // The numbers are there for a screen reader, as a table.
    await page.getByText("Risks by score band: the numbers").click();
    await expect.poll(() => page.locator("figure.chart").first().locator("tbody tr").last().textContent()).toMatch(/1\s*0\s*0\s*1$/);
    // A risk made after today's point was taken: the next run refreshes today's
    // point (never the day's first snapshot standing for the day), on Trends and
    // on the Report, and the page says as of when.
    const mid = unique("Courier strike");
    await page.goto("/");
    await createRisk(page, mid, "3", "2");
    await settled(page, mid);
    await expect.poll(async () => {
      await page.goto("/trends");
      return page.locator("figure.chart .chart-summary").first().textContent({ timeout: 10_000 }).catch(() => "no chart");
    }, { timeout: 30_000, interval: 1000 }).toMatch(/Low: 1, Medium: 1, High: 0, Critical: 1 on \d{4}-\d{2}-\d{2}\./);
    expect(await page.getByTestId("trends-as-of").textContent()).toMatch(/as of \d{2}:\d{2} UTC/);
    const dir = process.env.E2E_SCREENSHOTS;
    if (dir) await page.screenshot({ path: `${dir}/dashboard-trends.png`, fullPage: true });

    // A risk's page: its score history as a chart.
    const [risk] = await titled(page, high);
    await expect.poll(async () => {
      await page.goto(`/risks/${risk!.id}`);
      await page.getByRole("heading", { name: high }).waitFor();
      return page.locator('svg[data-chart="score-history"] circle').first().waitFor({ timeout: 5000 }).then(() => true, async () =>
        (await page.locator(".score-history, p.error").allTextContents()).join(" | ") || "no chart");
    }, { timeout: 30_000, interval: 500 }).toBe(true);
    expect(await page.locator("#score-history-summary").textContent()).toContain("Risk score: 20");

    // The report, printed.
    await page.goto("/report");
    await page.getByRole("heading", { name: "Top risks" }).waitFor();
    await page.locator('svg[data-chart="bands"]').waitFor();
    await page.emulateMedia({ media: "print" });
    expect(await page.locator("header").isVisible()).toBe(false);
    expect(await page.locator("aside.changes").isVisible()).toBe(false);
    expect(await page.getByRole("button", { name: "Print or save as PDF" }).isVisible()).toBe(false);
    for (const h of ["Heat map", "Top risks", "Overdue reviews", "Trends (by week)"]) {
      expect(await page.getByRole("heading", { name: h }).isVisible(), h).toBe(true);
    }
    expect(await page.locator("table.heatmap").isVisible()).toBe(true);
    expect(await page.locator(".report").getByRole("link", { name: high }).isVisible()).toBe(true);
    expect(await page.locator('svg[data-chart="bands"]').isVisible()).toBe(true);
    expect(await page.locator(".report figure.chart .chart-summary").first().textContent()).toMatch(/Low: 1, Medium: 1, High: 0, Critical: 1 on /);
    if (dir) await page.screenshot({ path: `${dir}/dashboard-report.png`, fullPage: true });
    const pdf = await page.pdf({ format: "A4" });
    expect(pdf.byteLength).toBeGreaterThan(10_000);
  });

  it("shows on the heat map where risks moved from since a picked day, as a table too", async () => {
    const { page } = await env.browser();
    await signIn(page, await env.server().account());
    const made = unique("Flood");
    await createRisk(page, made, "2", "3");
    await settled(page, made);
    await page.goto("/?show=heatmap");
    await page.locator('[data-cell="2x3"]').waitFor();
    expect(await page.getByRole("table", { name: /Where risks moved/ }).count()).toBe(0);

    const today = new Date().toISOString().slice(0, 10);
    // The picker offers no day after today (UTC): the API refuses one.
    expect(await page.getByLabel("Show moves since").getAttribute("max")).toBe(today);
    await page.getByLabel("Show moves since").fill(today);
    await expect.poll(() => new URL(page.url()).searchParams.get("movedSince")).toBe(today);
    const moves = page.getByRole("table", { name: `Where risks moved from since ${today} (UTC)` });
    await moves.waitFor();
    expect((await moves.locator("tbody tr").allTextContents()).map((t) => t.replace(/\s+/g, " "))).toEqual([
      "not on the map (new or not assessed)likelihood 2, impact 31",
    ]);
    expect(await page.locator('[data-cell="2x3"]').getAttribute("aria-label")).toBe(`Likelihood 2, impact 3: 1 risk; since ${today}, 1 came in, 0 left`);
    expect(await page.locator('[data-flow="2x3"]').textContent()).toBe("+1");
    // A day the API refuses (typed past the picker's max): its reason is what
    // the user sees, with no grid or moves of the day before beside it.
    await page.getByLabel("Show moves since").fill("2999-01-01");
    const refused = page.getByRole("alert").filter({ hasText: "Could not load the heat map" });
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/movedSince: must not be after today/);
    expect(await page.locator("table.heatmap").count()).toBe(0);
    expect(await page.getByRole("table", { name: /Where risks moved/ }).count()).toBe(0);
    await page.getByLabel("Show moves since").fill(today);
    await moves.waitFor();
    expect(await refused.count()).toBe(0);
    // A reload keeps the day (it is in the address); Hide moves takes it away.
    await page.reload();
    await moves.waitFor();
    await page.getByRole("button", { name: "Hide moves" }).click();
    await expect.poll(() => page.getByRole("table", { name: /Where risks moved/ }).count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("movedSince")).toBeNull();
  });
});

// The register's views rendered to HTML: the heat map's cells and their
// links, the import report with its bad rows, the edit form's PATCH.

import { render } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { HeatmapTable } from "./heatmap";
import { RegisterFields, registerChanges, registerForm } from "./fields";
import { ImportReportView, isEmptyReport } from "./transfer";
import { readView } from "./view";

const view = readView(new URLSearchParams("show=heatmap&status=open"));
const cells = Array.from({ length: 25 }, (_, i) => ({ likelihood: Math.floor(i / 5) + 1, impact: (i % 5) + 1, count: 0 }));

describe("the heat map", () => {
  it("shows each cell's count as a link to the list of that cell, under the map's filters", () => {
    const map = { basis: "inherent" as const, cells: cells.map((c) => (c.likelihood === 4 && c.impact === 2 ? { ...c, count: 7 } : c)), unassessed: 3 };
    const html = render(<HeatmapTable map={map} view={view} />);
    const links = [...html.matchAll(/<a href="([^"]+)" aria-label="([^"]+)" data-cell="(\d)x(\d)">(\d+)<\/a>/g)];
    expect(links).toHaveLength(25);
    const cell = links.find((m) => m[3] === "4" && m[4] === "2")!;
    expect(cell[5]).toBe("7");
    expect(cell[2]).toBe("Likelihood 4, impact 2: 7 risks");
    expect(cell[1]!.replaceAll("&amp;", "&")).toBe("/?status=open&likelihood=4&impact=2");
    // Likelihood 5 on top, impact 1 on the left.
    expect(links[0]![3] + "x" + links[0]![4]).toBe("5x1");
    expect(html).toContain("Not assessed (no likelihood or impact): 3");
  });

  it("links residual cells to the residual list", () => {
    const html = render(<HeatmapTable map={{ basis: "residual", cells, unassessed: 0 }} view={view} />);
    expect(html.replaceAll("&amp;", "&")).toContain('href="/?status=open&basis=residual&likelihood=1&impact=1"');
  });
});

describe("the import report", () => {
  it("names every bad row, its field and what is wrong, and says nothing was written", () => {
    const html = render(
      <ImportReportView dryRun outcome={{ detail: "2 rows are invalid", rows: [{ row: 3, field: "likelihood", detail: "must be 1–5" }, { row: 5, field: "status", detail: "unknown status" }] }} />,
    );
    const rows = [...html.matchAll(/<tr><td>(\d+)<\/td><td>(\w+)<\/td><td>([^<]+)<\/td><\/tr>/g)].map((m) => m.slice(1));
    expect(rows).toEqual([["3", "likelihood", "must be 1–5"], ["5", "status", "unknown status"]]);
    expect(html).toContain("Nothing would be imported");
    expect(html).toContain('role="alert"');
  });

  it("gives the counts of a clean dry run and of an import", () => {
    const report = { created: 2, updated: 1, unchanged: 4, errors: [] };
    expect(render(<ImportReportView dryRun outcome={{ report }} />)).toContain("Would create 2, update 1, 4 unchanged. Nothing was written yet.");
    expect(render(<ImportReportView dryRun={false} outcome={{ report }} />)).toContain("Created 2, updated 1, 4 unchanged.");
  });

  it("says a file with its header alone has nothing to import, not 'Would create 0'", () => {
    const report = { created: 0, updated: 0, unchanged: 0, errors: [] };
    const html = render(<ImportReportView dryRun outcome={{ report }} />);
    expect(html).toContain("no rows under its header");
    expect(html).not.toContain("Would create");
    expect(isEmptyReport(report)).toBe(true);
    expect(isEmptyReport({ ...report, unchanged: 1 })).toBe(false);
  });
});

describe("the register's part of the edit form", () => {
  const stored = {
    treatment: "accept", reviewDate: "2026-12-01", residualLikelihood: 2, residualImpact: null, metadata: { ticket: "SEC-1", team: "ops" },
  } as unknown as Parameters<typeof registerForm>[0];

  it("sends only what changed: cleared fields as null, metadata key by key with removed keys as empty", () => {
    const was = registerForm(stored);
    const now = { ...was, treatment: "", residualImpact: "4", metadata: JSON.stringify([["ticket", "SEC-2"], ["site", "Lyon"], ["", "ignored"]]) };
    expect(registerChanges(was, now)).toEqual({ treatment: null, residualImpact: 4, metadata: { ticket: "SEC-2", site: "Lyon", team: "" } });
    expect(registerChanges(was, was)).toEqual({});
  });

  it("offers a review cadence, shown as stored and sent when changed: set, changed, or cleared as null", () => {
    const was = registerForm({ ...stored, reviewEvery: null } as typeof stored);
    expect(was.reviewEvery).toBe("");
    const html = render(<RegisterFields f={{ ...was, reviewEvery: "P3M" }} set={() => () => undefined} errors={{}} />);
    const select = /<label>Review every<select>(.*?)<\/select>/.exec(html);
    expect(select).not.toBeNull();
    const options = [...select![1]!.matchAll(/<option( selected)? value(?:="([^"]*)")?>([^<]*)<\/option>/g)].map((m) => [m[2] ?? "", m[3], !!m[1]]);
    expect(options).toEqual([
      ["", "no cadence", false], ["P1M", "every month", false], ["P3M", "every 3 months", true], ["P6M", "every 6 months", false], ["P1Y", "every year", false],
    ]);
    expect(registerChanges(was, { ...was, reviewEvery: "P3M" })).toEqual({ reviewEvery: "P3M" });
    const every = registerForm({ ...stored, reviewEvery: "P6M" } as typeof stored);
    expect(every.reviewEvery).toBe("P6M");
    expect(registerChanges(every, { ...every, reviewEvery: "" })).toEqual({ reviewEvery: null });
  });
});

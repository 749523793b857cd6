// The risk list's view in the URL (register/view.ts): what a reload, the
// back button or a shared link shows is what the URL says.

import { describe, expect, it } from "vitest";
import { apiFilter, cellURL, EMPTY_VIEW, ignoredParams, isOverdue, listParams, readView, sortBy, sortOf, viewURL } from "./view";

const read = (url: string) => readView(new URL(url, "http://x").searchParams);

describe("the list's view in the URL", () => {
  it("survives a round trip: filters, search, sort, cell and page read back as they were written", () => {
    const v = {
      ...EMPTY_VIEW, status: ["open", "mitigated"] as const, treatment: ["avoid"] as const, category: "IT & OT", owner: "ada@x.test",
      minScore: "4", maxScore: "20", overdue: true, q: "vendor dpa", sort: "-reviewDate" as const,
      cell: { basis: "residual" as const, likelihood: 2, impact: 5 }, cursors: ["c1", "c2"],
    };
    const url = viewURL({ ...v, status: [...v.status], treatment: [...v.treatment] });
    expect(read(url)).toEqual({ ...v, status: ["open", "mitigated"], treatment: ["avoid"], basis: "residual" });
    expect(url).toBe("/?status=open%2Cmitigated&treatment=avoid&category=IT+%26+OT&owner=ada%40x.test&minScore=4&maxScore=20&overdue=1&q=vendor+dpa&sort=-reviewDate&basis=residual&likelihood=2&impact=5&cursor=c1&cursor=c2");
  });

  it("keeps the heat map's moved-since day in the URL, on the heat map only; a day it cannot read is named", () => {
    const v = { ...EMPTY_VIEW, show: "heatmap" as const, basis: "residual" as const, movedSince: "2026-11-30" };
    expect(viewURL(v)).toBe("/?show=heatmap&basis=residual&movedSince=2026-11-30");
    expect(read(viewURL(v))).toEqual(v);
    expect(viewURL({ ...v, show: "list" })).not.toContain("movedSince");
    expect(read("/?movedSince=2026-11-30")).toEqual(EMPTY_VIEW);
    expect(ignoredParams(new URL("/?show=heatmap&movedSince=last+week", "http://x").searchParams)).toEqual(["movedSince=last week"]);
  });

  it("is / for the default view, and leaves out what it does not know", () => {
    expect(viewURL(EMPTY_VIEW)).toBe("/");
    expect(read("/?status=open,bogus&sort=owner&minScore=99&likelihood=7&impact=2&show=nope")).toEqual({ ...EMPTY_VIEW, status: ["open"] });
  });

  it("names what it left out, so the page can say so; a valid link and parameters it does not use name nothing", () => {
    const q = (url: string) => ignoredParams(new URL(url, "http://x").searchParams);
    expect(q("/?minScore=abc&status=open,bogus&sort=owner&q=vendor&likelihood=7&impact=2&show=nope&overdue=yes&utm_source=mail&__proto__=x&toString=y")).toEqual([
      "minScore=abc", "status=open,bogus", "sort=owner", "likelihood=7", "show=nope", "overdue=yes",
    ]);
    // A range no risk can be in (the API refuses it): both bounds left out, and named.
    expect(q("/?maxScore=5&status=open&minScore=20")).toEqual(["maxScore=5", "minScore=20"]);
    expect(read("/?maxScore=5&status=open&minScore=20")).toEqual({ ...EMPTY_VIEW, status: ["open"] });
    expect(read("/?minScore=5&maxScore=5")).toMatchObject({ minScore: "5", maxScore: "5" });
    expect(q("/?status=open%2Cmitigated&treatment=avoid&minScore=4&maxScore=20&overdue=1&sort=-reviewDate&basis=residual&likelihood=2&impact=5&show=heatmap&cursor=c1")).toEqual([]);
    // Given twice: the first value is read, the later ones named (cursors are a list).
    expect(q("/?minScore=5&status=open&minScore=6&status=closed&q=a&q=b&cursor=c1&cursor=c2")).toEqual(["minScore=6", "status=closed", "q=b"]);
    expect(read("/?minScore=5&minScore=6")).toMatchObject({ minScore: "5" });
  });

  it("sorts ascending, then descending, and starts again at page 1 (a cursor belongs to its sort)", () => {
    const v = read("/?status=open&cursor=c1");
    const asc = sortBy(v, "title");
    expect([asc.sort, asc.cursors, sortOf(asc, "title")]).toEqual(["title", [], "ascending"]);
    const desc = sortBy(asc, "title");
    expect([desc.sort, sortOf(desc, "title"), sortOf(desc, "riskScore")]).toEqual(["-title", "descending", "none"]);
    expect(sortOf(EMPTY_VIEW, "createdAt")).toBe("descending");
    expect(viewURL(desc)).toBe("/?status=open&sort=-title");
  });

  it("asks the API for the view's filters, the overdue reviews as those of risks not closed before today, and the page's cursor", () => {
    const v = read("/?status=open,closed&owner=ada&overdue=1&q=+flood++&maxScore=9&sort=riskScore&cursor=a&cursor=b");
    expect(listParams(v, 20, "2026-12-02")).toEqual({
      status: ["open"], owner: "ada", reviewBefore: "2026-12-02", q: "flood", maxScore: 9, limit: 20, sort: "riskScore", cursor: "b",
    });
    expect(apiFilter(read("/?overdue=1"), "2026-12-02")).toEqual({ status: ["open", "mitigated"], reviewBefore: "2026-12-02" });
    expect(apiFilter(read("/"))).toEqual({});
  });

  it("marks a review overdue only when its date has passed", () => {
    expect(isOverdue({ reviewDate: "2026-12-01", status: "open" }, "2026-12-02")).toBe(true);
    expect(isOverdue({ reviewDate: "2026-12-01", status: "mitigated" }, "2026-12-02")).toBe(true);
    expect(isOverdue({ reviewDate: "2026-12-01", status: "closed" }, "2026-12-02")).toBe(false);
    expect(isOverdue({ reviewDate: "2026-12-02", status: "open" }, "2026-12-02")).toBe(false);
    expect(isOverdue({ reviewDate: null, status: "open" }, "2026-12-02")).toBe(false);
  });
});

describe("a heat-map cell's link", () => {
  it("keeps the view's filters and sort, names the cell, and starts at page 1 of the list", () => {
    const v = read("/?show=heatmap&status=open&q=fire&sort=title&cursor=c9&basis=residual");
    const url = cellURL(v, "residual", 3, 4);
    expect(url).toBe("/?status=open&q=fire&sort=title&basis=residual&likelihood=3&impact=4");
    expect(read(url).cell).toEqual({ basis: "residual", likelihood: 3, impact: 4 });
    expect(read(url).show).toBe("list");
  });

  it("asks the API for the cell's factors of its basis, beside the view's filters", () => {
    expect(apiFilter(read("/?status=open&likelihood=3&impact=4"))).toEqual({ status: ["open"], likelihood: 3, impact: 4 });
    expect(apiFilter(read("/?basis=residual&likelihood=1&impact=2"))).toEqual({ residualLikelihood: 1, residualImpact: 2 });
  });
});

// A change in the audit log as a person reads it, in a risk's History and on
// the audit page (ChangeList, rendered to HTML): names in words, a value set
// from nothing as that value.

import { render } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../api";
import { ChangeList } from "./audit";

/** lines is each rendered change's text. */
const lines = (html: string) => [...html.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ""));

describe("a change in words", () => {
  it("names fields in words and shows a value set from nothing as that value, not none → X", () => {
    // The History said "residualLikelihood none → 2" for a creation.
    const changes: AuditEntry["changes"] = {
      residualLikelihood: { from: null, to: 2 },
      reviewDate: { from: "2026-01-01", to: null },
      owner_email: { from: "a@x", to: "b@x" },
    };
    const html = render(<ChangeList changes={changes} action="risk.updated" />);
    expect(lines(html)).toEqual([
      "Owner email: a@x → b@x", "Residual likelihood: 2", "Review date: 2026-01-01 → none",
    ]);
    expect(lines(html).join("\n")).not.toMatch(/residualLikelihood|none → 2/);
  });

  it("shows a creation's values as set, without none → before each", () => {
    const html = render(<ChangeList changes={{ title: { from: null, to: "Flood" }, riskScore: { from: null, to: 8 } }} action="risk.created" />);
    expect(lines(html)).toEqual(["Risk score: 8", "Title: Flood"]);
  });
});

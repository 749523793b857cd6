// The acceptance form's "Valid until" picker offers only the days the server
// takes (docs/register.md, "Acceptances"): after today, at most a year on.

import { describe, expect, it } from "vitest";
import { validUntilBounds } from "./followup";

describe("validUntilBounds", () => {
  it("starts tomorrow (UTC) and ends on the same date a year on", () => {
    expect(validUntilBounds(new Date("2026-12-06T10:00:00Z"))).toEqual({ min: "2026-12-07", max: "2027-12-06" });
  });

  it("counts days in UTC, across a year's end", () => {
    expect(validUntilBounds(new Date("2026-12-31T23:30:00Z"))).toEqual({ min: "2027-01-01", max: "2027-12-31" });
  });

  it("is a calendar year across a 29 February, as the server counts it", () => {
    expect(validUntilBounds(new Date("2027-03-01T00:00:00Z"))).toEqual({ min: "2027-03-02", max: "2028-03-01" });
    expect(validUntilBounds(new Date("2028-02-29T12:00:00Z"))).toEqual({ min: "2028-03-01", max: "2029-03-01" });
  });
});

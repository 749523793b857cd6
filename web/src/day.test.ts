import { describe, expect, it } from "vitest";
import { today } from "./day";

describe("today", () => {
  it("is the UTC day, whatever the user's clock: 23:30 in California on the 6th is already the 7th", () => {
    const evening = Date.parse("2026-12-06T23:30:00-08:00");
    expect(today(0, evening)).toBe("2026-12-07");
    expect(today(-1, evening)).toBe("2026-12-06");
    expect(today(90, Date.parse("2026-12-06T12:00:00Z"))).toBe("2027-03-06");
  });
});

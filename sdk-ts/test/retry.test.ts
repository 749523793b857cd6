import { describe, expect, it } from "vitest";
import { NetworkError, backoffDelay, classify, parseRetryAfter } from "../src/index.js";

describe("classify", () => {
  const table: [string, number | unknown, boolean][] = [
    ["200", 200, false],
    ["201", 201, false],
    ["204", 204, false],
    ["409 in progress", 409, true],
    ["429 rate limited", 429, true],
    ["502", 502, true],
    ["503 store unavailable", 503, true],
    ["504", 504, true],
    ["500 internal", 500, false],
    ["501", 501, false],
    ["400", 400, false],
    ["401", 401, false],
    ["403", 403, false],
    ["404", 404, false],
    ["413", 413, false],
    ["422 key reused", 422, false],
    ["fetch failed (TypeError)", new TypeError("fetch failed"), true],
    ["NetworkError", new NetworkError("cut", { method: "POST", path: "/v2/risks" }), true],
    ["attempt timeout", new DOMException("slow", "TimeoutError"), true],
    ["caller abort", new DOMException("stop", "AbortError"), false],
    ["an error with status 503", { status: 503, name: "RiskApiError" }, true],
    ["an error with status 422", { status: 422, name: "RiskApiError" }, false],
    ["a bug", new RangeError("oops"), false],
    ["a string", "weird", false],
  ];
  it.each(table)("%s", (_name, input, want) => {
    const d = classify(input);
    expect(d.retry).toBe(want);
    expect(d.reason).not.toBe("");
  });
});

describe("backoffDelay", () => {
  const top = () => 1 - Number.EPSILON; // the top of Math.random's range

  it("is full jitter below an exponential ceiling", () => {
    expect(backoffDelay(0, undefined, () => 0)).toBe(0);
    expect(backoffDelay(0, undefined, () => 0.5)).toBe(250);
    expect(backoffDelay(0, undefined, top)).toBe(499);
    expect(backoffDelay(1, undefined, top)).toBe(999);
    expect(backoffDelay(2, undefined, top)).toBe(1999);
    expect(backoffDelay(5, undefined, top)).toBe(15999);
  });

  it("caps every wait at maxWaitMs", () => {
    expect(backoffDelay(6, undefined, top)).toBe(29999);
    expect(backoffDelay(1000, undefined, top)).toBe(29999);
    expect(backoffDelay(3, undefined, top, 1000)).toBe(999);
  });

  it("stays in [0, ceiling) for any random value, even a bad one", () => {
    for (const r of [0, 0.1, 0.9999999, 1, 2, -1]) {
      const d = backoffDelay(2, undefined, () => r);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(2000);
    }
  });

  it("honours Retry-After exactly, capped at maxWaitMs", () => {
    expect(backoffDelay(0, 2000, () => 0)).toBe(2000);
    expect(backoffDelay(7, 1000, top)).toBe(1000);
    expect(backoffDelay(0, 120_000, () => 0)).toBe(30_000);
    expect(backoffDelay(0, 120_000, () => 0, 5000)).toBe(5000);
    expect(backoffDelay(0, 0, () => 0.5)).toBe(250); // 0 means "none"
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-12-01T08:00:00Z");
  it.each([
    ["delay-seconds", "3", 3000],
    ["delay-seconds with spaces", " 1 ", 1000],
    ["zero", "0", 0],
    ["HTTP-date 90 s ahead", "Tue, 01 Dec 2026 08:01:30 GMT", 90_000],
    ["HTTP-date in the past", "Tue, 01 Dec 2026 07:59:00 GMT", undefined],
    ["absurd seconds", "99999999999", 24 * 3600 * 1000],
    ["negative", "-5", undefined],
    ["fraction", "1.5", undefined],
    ["free text", "tomorrow", undefined],
    ["empty", "", undefined],
    ["absent", null, undefined],
  ])("%s", (_name, value, want) => {
    expect(parseRetryAfter(value, now)).toBe(want);
  });
});

// instant and localValue: a datetime-local value to RFC 3339 and back.

import { describe, expect, it } from "vitest";
import { instant, localValue } from "./instant";

describe("instant and localValue", () => {
  it("turn a time on the user's clock into RFC 3339 and back to the minute", () => {
    const at = instant("2099-01-02T03:04")!;
    expect(at).toBe(new Date(2099, 0, 2, 3, 4).toISOString());
    expect(localValue(at)).toBe("2099-01-02T03:04");
  });

  it("leave an empty value out, and send an unreadable one as typed", () => {
    expect(instant("")).toBeUndefined();
    expect(instant("soon")).toBe("soon");
  });
});

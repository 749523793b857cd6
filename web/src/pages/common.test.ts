// fieldErrors: what a form shows of its refused change.

import { describe, expect, it } from "vitest";
import type { Change } from "../outbox/change";
import { fieldErrors, STALE_EDIT } from "./common";

const refused = (problem: Change["problem"]): Change => ({ problem, lastStatus: 412 }) as Change;

describe("fieldErrors", () => {
  it("says in words that an edit met a newer version, not the API's If-Match detail", () => {
    const e = fieldErrors(refused({ code: "PRECONDITION_FAILED", detail: `If-Match does not name the action's version "3"` }));
    expect(e).toEqual({ form: STALE_EDIT });
    expect(e.form).not.toContain("If-Match");
  });

  it("names each field of a validation failure, and keeps any other detail", () => {
    expect(fieldErrors(refused({ code: "VALIDATION_FAILED", errors: [{ field: "title", detail: "is required" }] }))).toEqual({ title: "is required" });
    expect(fieldErrors(refused({ code: "OWNER_USER_UNKNOWN", detail: "no such user" }))).toEqual({ form: "no such user" });
  });
});

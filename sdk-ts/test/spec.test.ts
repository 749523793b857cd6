import { readFile } from "node:fs/promises";
import openapiTS, { astToString } from "openapi-typescript";
import { describe, expect, it } from "vitest";
import type { RiskCreateParams, RiskReplaceParams, RiskUpdateParams } from "../src/index.js";

const spec = new URL("../../docs/openapi.yaml", import.meta.url);
const generated = new URL("../src/openapi.ts", import.meta.url);

describe("types generated from docs/openapi.yaml", () => {
  it("are current (run `npm run generate -w sdk-ts` after changing the spec)", async () => {
    const want = astToString(await openapiTS(spec));
    const got = await readFile(generated, "utf8");
    // The CLI adds a banner; compare what follows it.
    expect(got.slice(got.indexOf("export "))).toBe(want.slice(want.indexOf("export ")));
  });

  it("type a risk creation, with title required (tsc --strict checks this file)", () => {
    const create: RiskCreateParams = { title: "Vendor contract missing a DPA", likelihood: 3, impact: 4, status: "open" };
    const replace: RiskReplaceParams = { title: "t", owner: { userId: "usr_1" } };
    const patch: RiskUpdateParams = { likelihood: null, owner: { name: "Facilities" } };
    // @ts-expect-error 2027-01-15: an owner is an object, no longer a string
    const stringOwner: RiskUpdateParams = { owner: "alice@example.com" };
    // @ts-expect-error an owner written is a user or a name, not both
    const bothOwner: RiskUpdateParams = { owner: { userId: "usr_1", name: "Ada" } };
    // @ts-expect-error title is required on create
    const noTitle: RiskCreateParams = { likelihood: 3 };
    // @ts-expect-error status is one of open, mitigated, closed
    const badStatus: RiskUpdateParams = { status: "done" };
    expect([create, replace, patch, stringOwner, bothOwner, noTitle, badStatus]).toHaveLength(7);
  });
});

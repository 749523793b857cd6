// Versions of risks: If-Match on the wire, the typed 412 with the stored
// risk, and modify's read-change-write that redoes the change on a newer
// version instead of overwriting it.

import { describe, expect, it } from "vitest";
import { etag, MAX_MODIFY_ATTEMPTS, RiskApiError, StaleRiskError, type Risk } from "../src/index.js";
import { fakeClient, json, problem, risk } from "./fake.js";

/** The 412 the server answers a write over a newer version: a problem whose `current` is the stored risk. */
async function staleAnswer(current: Record<string, unknown>): Promise<Response> {
  const p = problem(412, "PRECONDITION_FAILED", { detail: "If-Match names none of the risk's versions" });
  const body = { ...(JSON.parse(await p.text()) as object), current };
  return new Response(JSON.stringify(body), { status: 412, headers: p.headers });
}

const sent = (b: Uint8Array | undefined) => JSON.parse(new TextDecoder().decode(b)) as unknown;

describe("versions of risks", () => {
  it("sends If-Match as the version's quoted ETag on update, replace and delete", async () => {
    const { client, seen } = fakeClient([json(200, risk("risk_1", "t", 4)), json(200, risk("risk_1", "t", 5)), new Response(null, { status: 204 })]);
    const r = (await client.risks.update("risk_1", { title: "t" }, { ifMatch: etag({ version: 3 }) })) as Risk;
    expect(r.version).toBe(4);
    await client.risks.replace("risk_1", { title: "t" }, { ifMatch: etag(r) });
    await client.risks.delete("risk_1", { ifMatch: '"5"' });
    expect(seen.map((s) => s.headers.get("If-Match"))).toEqual(['"3"', '"4"', '"5"']);
    const plain = fakeClient([json(200, risk("risk_1"))]);
    await plain.client.risks.update("risk_1", { title: "t" });
    expect(plain.seen[0]!.headers.has("If-Match")).toBe(false);
  });

  it("rejects a stale write with a StaleRiskError carrying the risk as stored, sent once", async () => {
    for (const call of ["update", "replace", "delete"] as const) {
      const { client, seen } = fakeClient([await staleAnswer(risk("risk_1", "theirs", 7))]);
      const p =
        call === "delete" ? client.risks.delete("risk_1", { ifMatch: '"6"' }) : client.risks[call]("risk_1", { title: "mine" }, { ifMatch: '"6"' });
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StaleRiskError);
      expect(err).toBeInstanceOf(RiskApiError);
      expect(err).toMatchObject({ status: 412, code: "PRECONDITION_FAILED", current: { title: "theirs", version: 7 } });
      expect(seen).toHaveLength(1); // a 412 is not retried: sending it again cannot succeed
    }
  });

  it("leaves a 412 without a stored risk a plain RiskApiError", async () => {
    const { client } = fakeClient([problem(412, "PRECONDITION_FAILED")]);
    const err = await client.risks.update("risk_1", { title: "t" }, { ifMatch: '"1"' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RiskApiError);
    expect(err).not.toBeInstanceOf(StaleRiskError);
  });

  it("modify redoes the change on the version the 412 carried and writes over that one", async () => {
    const first = { ...risk("risk_1", "Flood", 2), owner: { userId: null, name: "Ada" } };
    const theirs = { ...risk("risk_1", "Flood in the cellar", 3), owner: { userId: null, name: "Ada" } };
    const { client, seen } = fakeClient([
      json(200, first),
      await staleAnswer(theirs),
      json(200, { ...theirs, owner: { userId: null, name: "ada" }, version: 4 }),
    ]);
    const saw: number[] = [];
    const r = await client.risks.modify("risk_1", (cur) => {
      saw.push(cur.version);
      return { owner: { name: cur.owner.name.toLowerCase() } };
    });
    expect(r).toMatchObject({ title: "Flood in the cellar", owner: { userId: null, name: "ada" }, version: 4 });
    expect(saw).toEqual([2, 3]);
    expect(seen.map((s) => [s.method, s.headers.get("If-Match")])).toEqual([["GET", null], ["PATCH", '"2"'], ["PATCH", '"3"']]);
    expect(sent(seen[2]!.body)).toEqual({ owner: { name: "ada" } });
  });

  it("modify gives up after MAX_MODIFY_ATTEMPTS writes that all found a newer version", async () => {
    const steps: Response[] = [json(200, risk("risk_1", "t", 1))];
    for (let v = 2; v <= MAX_MODIFY_ATTEMPTS + 1; v++) steps.push(await staleAnswer(risk("risk_1", "t", v)));
    const { client, seen } = fakeClient(steps);
    const err = await client.risks.modify("risk_1", () => ({ title: "mine" })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StaleRiskError);
    expect((err as StaleRiskError).current.version).toBe(MAX_MODIFY_ATTEMPTS + 1);
    expect(seen.filter((s) => s.method === "PATCH")).toHaveLength(MAX_MODIFY_ATTEMPTS);
  });

  it("modify stops at once when change rejects, writing nothing", async () => {
    const { client, seen } = fakeClient([json(200, risk("risk_1"))]);
    await expect(client.risks.modify("risk_1", () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(seen.map((s) => s.method)).toEqual(["GET"]);
  });
});

import { describe, expect, it } from "vitest";
import { afterAttempt, newChange, redone, STALE_REASON, type Change } from "./change";

const key = "6f1c2b1e-8d7a-4c5b-9e0f-1a2b3c4d5e6f";
const fresh = (): Change =>
  newChange({ method: "POST", path: "/risks", body: { kind: "json", json: { title: "Flood" } }, label: "Create risk" }, { userId: "usr_1", tenantId: "ten_1", email: "a@x.test" }, key, 1000);
const half = () => 0.5;

describe("afterAttempt", () => {
  it("says a delete refused 412 was not applied because someone changed it, not the API's If-Match wording", () => {
    const del = newChange({ method: "DELETE", path: "/risks/rsk_1", body: null, label: "Delete risk", ifMatch: '"1"' }, { userId: "usr_1", tenantId: "ten_1", email: "a@x.test" }, key, 1000);
    const json = { code: "PRECONDITION_FAILED", detail: 'If-Match does not name the risk\'s version "2"', current: { id: "rsk_1", version: 2 } };
    const c = afterAttempt(del, { status: 412, json }, 2000, half);
    expect(c.state).toBe("refused");
    expect(c.lastReason).toBe(STALE_REASON);
    expect(c.problem?.code).toBe("PRECONDITION_FAILED");
  });

  it.each([
    [201, "done"],
    [204, "done"],
    [200, "done"],
    [409, "pending"],
    [429, "pending"],
    [502, "pending"],
    [503, "pending"],
    [504, "pending"],
    [500, "refused"],
    [422, "refused"],
    [400, "refused"],
    [403, "refused"],
    [404, "refused"],
    [413, "refused"],
  ] as const)("status %i leaves the change %s", (status, state) => {
    const c = afterAttempt(fresh(), { status }, 2000, half);
    expect(c.state).toBe(state);
    expect(c.key).toBe(key);
    expect(c.attempts).toBe(1);
    expect(c.lastStatus).toBe(status);
  });

  it("refuses a 409 no retry can change (ACCEPTANCE_DECIDED), and retries the 409s that pass", () => {
    const decided = afterAttempt(fresh(), { status: 409, json: { code: "ACCEPTANCE_DECIDED", detail: "the acceptance is approved" } }, 2000, half);
    expect(decided.state).toBe("refused");
    expect(decided.problem?.code).toBe("ACCEPTANCE_DECIDED");
    expect(decided.lastReason).toBe("the acceptance is approved");
    for (const code of ["IDEMPOTENCY_REQUEST_IN_PROGRESS", "IMPORT_IN_PROGRESS"]) {
      expect(afterAttempt(fresh(), { status: 409, json: { code } }, 2000, half).state).toBe("pending");
    }
  });

  it("retries a network error and keeps the key", () => {
    const c = afterAttempt(fresh(), { error: new TypeError("Failed to fetch") }, 2000, half);
    expect(c.state).toBe("pending");
    expect(c.key).toBe(key);
    expect(c.lastStatus).toBe(0);
    expect(c.nextAttemptAt).toBeGreaterThanOrEqual(2000);
  });

  it("refuses what is not a network failure", () => {
    const c = afterAttempt(fresh(), { error: new RangeError("bug") }, 2000, half);
    expect(c.state).toBe("refused");
  });

  it("honours Retry-After exactly, capped at 30 s", () => {
    const c = afterAttempt(fresh(), { status: 429, retryAfterMs: 7000 }, 2000, () => 0);
    expect(c.nextAttemptAt).toBe(9000);
    const capped = afterAttempt(fresh(), { status: 503, retryAfterMs: 3_600_000 }, 2000, () => 0);
    expect(capped.nextAttemptAt).toBe(32_000);
  });

  it("backs off with full jitter inside a doubling ceiling capped at 30 s", () => {
    let c = fresh();
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const before = c.attempts;
      c = afterAttempt(c, { status: 502 }, 0, () => 0.999999);
      waits.push(c.nextAttemptAt);
      expect(c.nextAttemptAt).toBeLessThan(Math.min(30_000, 500 * 2 ** before));
      expect(afterAttempt({ ...c, attempts: before }, { status: 502 }, 0, () => 0).nextAttemptAt).toBe(0);
    }
    expect(waits[0]).toBeGreaterThan(400);
    expect(waits.at(-1)).toBeGreaterThan(29_000);
  });

  it("settles on a replay and says so", () => {
    const c = afterAttempt(fresh(), { status: 201, replayed: true, json: { id: "risk_1" }, requestId: "req_1" }, 2000, half);
    expect(c).toMatchObject({ state: "done", replayed: true, result: { id: "risk_1" }, requestId: "req_1", settledAt: 2000 });
  });

  it("shows a reused key as refused with the server's problem", () => {
    const problem = { code: "IDEMPOTENCY_KEY_REUSED", detail: "this key was used with another request", requestId: "req_9" };
    const c = afterAttempt(fresh(), { status: 422, json: problem }, 2000, half);
    expect(c.state).toBe("refused");
    expect(c.problem).toEqual(problem);
    expect(c.lastReason).toBe(problem.detail);
  });

  it("holds a change on 401 until the user signs in again", () => {
    const c = afterAttempt(fresh(), { status: 401 }, 2000, half);
    expect(c.state).toBe("pending");
    expect(c.nextAttemptAt).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe("redone", () => {
  const ada = { userId: "usr_1", tenantId: "ten_1", email: "a@x.test" };
  const bob = { userId: "usr_2", tenantId: "ten_1", email: "b@x.test" };
  const edit = (k: string, at: number, state: Change["state"], owner = ada, target = "risk_1"): Change => ({
    ...newChange({ method: "PATCH", path: `/risks/${target}`, body: { kind: "json", json: { title: "x" } }, label: "Edit risk", form: { name: "edit-risk", target, values: { title: "x" } } }, owner, k, at),
    state,
  });
  const refused = edit("k1", 1000, "refused");

  it("is true once the same user's later change from the same form is saved", () => {
    expect(redone(refused, [refused, edit("k2", 2000, "done")])).toBe(true);
  });

  it("is false while the later change is pending, refused or in conflict, or was made before", () => {
    for (const state of ["pending", "refused", "conflict"] as const) expect(redone(refused, [refused, edit("k2", 2000, state)])).toBe(false);
    expect(redone(refused, [refused, edit("k0", 500, "done")])).toBe(false);
  });

  it("is false when the later change sent other fields only, as after Keep theirs dropped the refused one's field", () => {
    const owner: Change = { ...edit("k2", 2000, "done"), body: { kind: "json", json: { owner: "Ada" } }, form: { name: "edit-risk", target: "risk_1", values: { title: "x", owner: "Ada" } } };
    expect(redone(refused, [refused, owner])).toBe(false);
  });

  it("is false for another user's change, or one from another form or of another risk", () => {
    expect(redone(refused, [refused, edit("k2", 2000, "done", bob)])).toBe(false);
    expect(redone(refused, [refused, edit("k2", 2000, "done", ada, "risk_2")])).toBe(false);
    const create = { ...newChange({ method: "POST", path: "/risks", body: null, label: "Create", form: { name: "new-risk", values: {} } }, ada, "k3", 2000), state: "done" as const };
    expect(redone(refused, [refused, create])).toBe(false);
  });
});

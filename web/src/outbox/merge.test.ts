import "fake-indexeddb/auto";
import { locks } from "web-locks";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Attempt, Change, ChangeInput, Fields, Owner } from "./change";
import { newChange } from "./change";
import { afterOwn, keepTheirs, queuedTitle, seenAfterOwn, withPending } from "./merge";
import { Outbox, type Transport } from "./outbox";
import { ChangeStore } from "./store";

/**
 * RiskServer holds one risk with a version and answers PATCHes as the server
 * does (docs/dashboard.md, "Conflicts"): If-Match of another version is 412
 * with `current` and changes nothing; a match applies the fields and counts a
 * version. What a user would notice is what it holds at the end.
 */
class RiskServer implements Transport {
  risk: Fields & { version: number } = { id: "risk_1", title: "Flood", owner: "Ada", likelihood: 2, impact: 3, riskScore: 6, version: 1 };
  readonly sent: { key: string; ifMatch: string | undefined; json: Fields }[] = [];

  /** elsewhere is another user's write, applied online. */
  elsewhere(f: Fields): void {
    this.risk = { ...this.risk, ...f, version: this.risk.version + 1 };
  }

  async send(c: Change): Promise<Attempt> {
    await new Promise((r) => setTimeout(r, 1));
    const json = (c.body as { json: Fields }).json;
    this.sent.push({ key: c.key, ifMatch: c.ifMatch, json });
    if (c.ifMatch !== undefined && c.ifMatch !== `"${this.risk.version}"`) {
      return { status: 412, json: { code: "PRECONDITION_FAILED", detail: "stale", current: { ...this.risk } } };
    }
    this.elsewhere(json);
    // As the server does: factors written without a score derive it again.
    if (("likelihood" in json || "impact" in json) && !("riskScore" in json)) this.risk.riskScore = Number(this.risk.likelihood) * Number(this.risk.impact);
    return { status: 200, json: { ...this.risk } };
  }
}

const ALICE: Owner = { userId: "usr_alice", tenantId: "ten_1", email: "alice@one.test" };
let n = 0;
const open: Outbox[] = [];
async function tab(db: string, server: RiskServer): Promise<Outbox> {
  const o = new Outbox({ store: await ChangeStore.open(db), transport: server, locks, identity: () => ALICE, rand: () => 0 });
  open.push(o);
  o.start();
  return o;
}

/** An edit as the risk page makes it: only the fields changed, If-Match and base of what the user saw. */
function edit(seen: Fields & { version: number }, json: Fields): ChangeInput {
  const base = Object.fromEntries(Object.keys(json).map((k) => [k, seen[k] ?? null]));
  return { method: "PATCH", path: "/risks/risk_1", body: { kind: "json", json }, label: "Edit", ifMatch: `"${seen.version}"`, base };
}

/** quiet waits until no change of the outbox is pending, and returns them. */
async function quiet(o: Outbox): Promise<Change[]> {
  for (let i = 0; i < 500; i++) {
    const all = await o.list();
    if (all.every((c) => c.state !== "pending")) return all;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("outbox did not settle: " + JSON.stringify(await o.list()));
}

/**
 * settlesTo waits until the outbox, quiet, holds what `want` says: a tab's
 * follow-up work (dropping an edit a resolved one overrides, another tab's
 * broadcast) can land a moment after nothing is pending, later under load.
 */
async function settlesTo(o: Outbox, want: unknown): Promise<void> {
  await vi.waitFor(async () => expect(await quiet(o)).toMatchObject(want as object), { timeout: 5000, interval: 20 });
}

afterEach(async () => {
  for (const o of open.splice(0)) await o.stop();
});

describe("an edit that meets a newer version", () => {
  it("is sent again on its own when the other writer changed other fields, and both changes survive", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Flood in the cellar" });
    const o = await tab("merge" + n++, server);
    await o.enqueue(edit(seen, { owner: "Grace" }));
    const [c] = await quiet(o);
    expect(c).toMatchObject({ state: "done" });
    expect(server.risk).toMatchObject({ title: "Flood in the cellar", owner: "Grace", version: 3 });
    expect(server.sent.map((s) => s.ifMatch)).toEqual(['"1"', '"2"']);
    expect(server.sent.map((s) => s.json)).toEqual([{ owner: "Grace" }, { owner: "Grace" }]);
  });

  it("waits as a conflict when both changed the same field, with both values, across a reload", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Theirs" });
    const db = "merge" + n++;
    const o = await tab(db, server);
    await o.enqueue(edit(seen, { title: "Mine" }));
    const [c] = await quiet(o);
    expect(c).toMatchObject({ state: "conflict", conflict: { version: 2, fields: ["title"], theirs: { title: "Theirs" } } });
    expect(server.risk.title).toBe("Theirs");
    await o.stop();
    open.splice(open.indexOf(o), 1);
    const again = await tab(db, server);
    expect(await again.list()).toMatchObject([{ key: c!.key, state: "conflict" }]);
    expect(server.sent).toHaveLength(1); // a conflict is not sent again on its own
  });

  it("keeps a conflict when settled history is cleared at sign-out, and cannot be dismissed unseen", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Theirs" });
    const o = await tab("merge" + n++, server);
    const c = await o.enqueue(edit(seen, { title: "Mine" }));
    await quiet(o);
    await o.forget(ALICE, false);
    await o.dismiss(c.key);
    expect(await o.list()).toMatchObject([{ key: c.key, state: "conflict" }]);
  });

  it("Keep mine sends the user's value over the version it met", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Theirs" });
    const o = await tab("merge" + n++, server);
    const c = await o.enqueue(edit(seen, { title: "Mine" }));
    await quiet(o);
    await o.resolve(c.key, "mine");
    await settlesTo(o, [{ state: "done" }]);
    expect(server.risk).toMatchObject({ title: "Mine", version: 3 });
    expect(server.sent.map((s) => [s.key, s.ifMatch])).toEqual([[c.key, '"1"'], [c.key, '"2"']]);
  });

  it("Keep theirs sends nothing and forgets the change", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Theirs" });
    const o = await tab("merge" + n++, server);
    const c = await o.enqueue(edit(seen, { title: "Mine" }));
    await quiet(o);
    await o.resolve(c.key, "theirs");
    await new Promise((r) => setTimeout(r, 50));
    expect(await o.list()).toEqual([]);
    expect(server.sent).toHaveLength(1);
    expect(server.risk).toMatchObject({ title: "Theirs", version: 2 });
  });

  it("Keep theirs still sends the user's fields nobody else changed", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Theirs" });
    const o = await tab("merge" + n++, server);
    const c = await o.enqueue(edit(seen, { title: "Mine", owner: "Grace" }));
    await settlesTo(o, [{ state: "conflict", conflict: { fields: ["title"] } }]);
    await o.resolve(c.key, "theirs");
    await settlesTo(o, [{ state: "done" }]);
    expect(server.risk).toMatchObject({ title: "Theirs", owner: "Grace" });
    expect(server.sent.at(-1)!.json).toEqual({ owner: "Grace" });
  });

  // Keep theirs on a title conflict; renameMeanwhile is another rename after the
  // conflict and before the change is sent again.
  for (const renameMeanwhile of [undefined, "Theirs again"]) {
    const kept = renameMeanwhile ?? "Theirs";
    it(`Keep theirs names what is still sent by the title stored when it was done (“${kept}”), not the one dropped`, async () => {
      const server = new RiskServer();
      const seen = { ...server.risk };
      server.elsewhere({ title: "Theirs" });
      const o = await tab("merge" + n++, server);
      const c = await o.enqueue({ ...edit(seen, { title: "Mine", owner: "Grace" }), label: "Edit risk “Mine”" });
      await settlesTo(o, [{ state: "conflict", conflict: { fields: ["title"] } }]);
      if (renameMeanwhile) server.elsewhere({ title: renameMeanwhile });
      await o.resolve(c.key, "theirs");
      await settlesTo(o, [{ state: "done", label: `Edit risk “${kept}”` }]);
      expect(server.risk).toMatchObject({ title: kept, owner: "Grace" });
    });
  }

  it("an edit of other fields merged over a rename is named by the new title", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Flood in the cellar" });
    const o = await tab("merge" + n++, server);
    await o.enqueue({ ...edit(seen, { owner: "Grace" }), label: "Edit risk “Flood”" });
    await settlesTo(o, [{ state: "done", label: "Edit risk “Flood in the cellar”" }]);
  });

  it("counts a clash on likelihood as a clash on the score an edit queued by an older dashboard sends with it", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ likelihood: 5, riskScore: 15 });
    const o = await tab("merge" + n++, server);
    await o.enqueue(edit(seen, { likelihood: 2, impact: 4, riskScore: 8 }));
    await settlesTo(o, [{ state: "conflict", conflict: { fields: ["likelihood", "impact", "riskScore"] } }]);
  });

  it("keeps both when one user changed impact and the other likelihood: the score is their product", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ likelihood: 5, riskScore: 15 });
    const o = await tab("merge" + n++, server);
    await o.enqueue(edit(seen, { impact: 4 }));
    await settlesTo(o, [{ state: "done" }]);
    expect(server.risk).toMatchObject({ likelihood: 5, impact: 4, riskScore: 20, version: 3 });
    expect(server.sent.map((s) => s.json)).toEqual([{ impact: 4 }, { impact: 4 }]);
  });

  it("counts a clash on likelihood as a clash on impact when the edit changed both", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ likelihood: 5, riskScore: 15 });
    const o = await tab("merge" + n++, server);
    await o.enqueue(edit(seen, { likelihood: 1, impact: 4 }));
    await settlesTo(o, [{ state: "conflict", conflict: { fields: ["likelihood", "impact"] } }]);
    expect(server.risk).toMatchObject({ likelihood: 5, impact: 3, version: 2 });
  });

  it("is no conflict when the other writer made the same change", async () => {
    const server = new RiskServer();
    const seen = { ...server.risk };
    server.elsewhere({ title: "Same", owner: "Linus" });
    const o = await tab("merge" + n++, server);
    await o.enqueue(edit(seen, { title: "Same" }));
    await settlesTo(o, [{ state: "done" }]);
    expect(server.risk).toMatchObject({ title: "Same", owner: "Linus" });
  });

  it("compares owners by who they are (2027-01-15): {userId} sent is {userId, name} stored; another owner is a conflict", async () => {
    const server = new RiskServer();
    server.risk.owner = { userId: null, name: "Ada" };
    const seen = { ...server.risk };
    // The same user made owner elsewhere: no conflict, sent again over the new version.
    server.elsewhere({ owner: { userId: "usr_grace", name: "grace@x.test" } });
    const o = await tab("merge" + n++, server);
    await o.enqueue(edit(seen, { owner: { userId: "usr_grace" } }));
    await settlesTo(o, [{ state: "done" }]);
    // An unchanged owner read back is the one the user saw: an edit of title alone is no conflict either.
    const seen2 = { ...server.risk };
    server.elsewhere({ owner: { userId: null, name: "Linus" } });
    await o.enqueue(edit(seen2, { owner: { name: "Ada" } }));
    const all = await quiet(o);
    expect(all[1]).toMatchObject({ state: "conflict", conflict: { fields: ["owner"], theirs: { owner: { userId: null, name: "Linus" } } } });
  });

  it("keeps both of one user's edits made on the same version, even of the same field", async () => {
    const server = new RiskServer();
    const db = "merge" + n++;
    const seen = { ...server.risk };
    // Offline: nothing is sent until the tab starts; the page shows the first edit laid over the risk.
    const store = await ChangeStore.open(db);
    const offline = new Outbox({ store, transport: server, locks, identity: () => ALICE });
    const first = await offline.enqueue(edit(seen, { title: "Flood, v2" }));
    const shown = withPending(seen, "/risks/risk_1", [first]);
    expect(shown).toMatchObject({ title: "Flood, v2", owner: "Ada", version: 1 });
    await offline.enqueue(edit(shown, { title: "Flood, v3", owner: "Grace" }));
    store.close();
    const o = await tab(db, server);
    await settlesTo(o, [{ state: "done" }, { state: "done" }]);
    expect(server.risk).toMatchObject({ title: "Flood, v3", owner: "Grace", version: 3 });
  });
});

describe("one user's edits of a risk that wait together, while another user changes it", () => {
  /**
   * offline queues, as the risk page does while offline, an edit of Title (T1),
   * one of Owner and a second one of Title (T2), each typed over the risk with
   * the earlier ones laid over it; then another user changes Title and
   * Description. The tab starts once they are queued.
   */
  async function offline(server: RiskServer): Promise<{ o: Outbox; first: Change; owner: Change; later: Change }> {
    const db = "merge" + n++;
    const store = await ChangeStore.open(db);
    const queue = new Outbox({ store, transport: server, locks, identity: () => ALICE });
    const seen = { ...server.risk };
    const first = await queue.enqueue(edit(seen, { title: "T1" }));
    const owner = await queue.enqueue(edit(withPending(seen, "/risks/risk_1", [first]), { owner: "O1" }));
    const later = await queue.enqueue(edit(withPending(seen, "/risks/risk_1", [first, owner]), { title: "T2" }));
    expect(later.base).toEqual({ title: "T1" });
    store.close();
    server.elsewhere({ title: "B-title", description: "d-bob" });
    return { o: await tab(db, server), first, owner, later };
  }

  it("shows both Title edits as conflicts against the version stored last, the Owner edit merged", async () => {
    const server = new RiskServer();
    const { o } = await offline(server);
    await settlesTo(o, [
      { state: "conflict", conflict: { version: 3, fields: ["title"], theirs: { title: "B-title" } } },
      { state: "done" },
      { state: "conflict", conflict: { version: 3, fields: ["title"], theirs: { title: "B-title" } } },
    ]);
    // The later edit was compared with the version the Owner edit stored, with no request of its own.
    expect(server.sent.map((s) => [s.ifMatch, s.json])).toEqual([['"1"', { title: "T1" }], ['"1"', { owner: "O1" }], ['"2"', { owner: "O1" }]]);
  });

  it("Keep mine on the first: the later edit, typed over T1, is sent over the version T1 is stored in, with no second question", async () => {
    const server = new RiskServer();
    const { o, first, later } = await offline(server);
    await quiet(o);
    await o.resolve(first.key, "mine");
    await settlesTo(o, [{ state: "done" }, { state: "done" }, { state: "done" }]);
    expect(server.risk).toMatchObject({ title: "T2", owner: "O1", description: "d-bob", version: 5 });
    expect(server.sent.slice(3).map((s) => [s.key, s.ifMatch, s.json])).toEqual([[first.key, '"3"', { title: "T1" }], [later.key, '"4"', { title: "T2" }]]);
  });

  it("Keep theirs on the first: the later edit still clashes with the other user's Title, the version stored now", async () => {
    const server = new RiskServer();
    const { o, first, later } = await offline(server);
    await quiet(o);
    await o.resolve(first.key, "theirs");
    await settlesTo(o, [
      { state: "done" },
      { key: later.key, state: "conflict", conflict: { version: 3, fields: ["title"], theirs: { title: "B-title" } } },
    ]);
    expect(server.sent).toHaveLength(3);
    await o.resolve(later.key, "mine");
    await quiet(o);
    expect(server.risk).toMatchObject({ title: "T2", owner: "O1", description: "d-bob", version: 4 });
  });

  it("Keep mine on the later one first: the earlier edit of Title, which it overrides, is dropped, never sent over it", async () => {
    const server = new RiskServer();
    const { o, later } = await offline(server);
    await quiet(o);
    await o.resolve(later.key, "mine");
    await settlesTo(o, [{ state: "done" }, { key: later.key, state: "done" }]);
    expect(server.risk).toMatchObject({ title: "T2", owner: "O1", version: 4 });
    expect(server.sent).toHaveLength(4);
  });

  it("afterOwn keeps an older edit's fields and metadata keys the later one did not set, and ignores a replay", () => {
    const at = (createdAt: number, json: Fields, base: Fields, extra: Partial<Change> = {}): Change => ({
      key: "k" + createdAt, createdAt, method: "PATCH", path: "/risks/risk_1", body: { kind: "json", json }, label: "Edit",
      owner: ALICE, ifMatch: '"1"', base, state: "pending", attempts: 0, nextAttemptAt: 0, ...extra,
    });
    const stored = { title: "T2", owner: "Ada", metadata: { a: "2", b: "1" }, version: 4 };
    const older = at(1, { title: "T1", metadata: { a: "1", b: "1" } }, { title: "Flood", metadata: {} });
    const done = at(2, { title: "T2", metadata: { a: "2" } }, { title: "T1", metadata: {} }, { state: "done", result: stored });
    expect(afterOwn(older, done)).toMatchObject({ state: "pending", ifMatch: '"4"', body: { json: { metadata: { b: "1" } } } });
    expect(afterOwn(at(1, { title: "T1" }, { title: "Flood" }), done)).toBeUndefined();
    const replayed = { ...done, replayed: true };
    expect(afterOwn(older, replayed)).toBe(older);
  });
});

describe("keepTheirs on a metadata clash", () => {
  it("drops only the keys in conflict: a key nobody else changed is still sent, over the version it met", () => {
    const c: Change = {
      ...newChange({ method: "PATCH", path: "/risks/risk_1", body: { kind: "json", json: { title: "Mine", metadata: { env: "staging", site: "y" } } }, label: "Edit risk" },
        { userId: "usr_1", tenantId: "ten_1", email: "a@x.test" }, "k1", 1000),
      state: "conflict", ifMatch: '"1"', base: { title: "T0", metadata: { env: "prod", site: "x" } },
      conflict: { version: 2, theirs: { title: "Theirs", metadata: { site: "x" } }, fields: ["title", "metadata"] },
    };
    const next = keepTheirs(c);
    expect(next?.body).toEqual({ kind: "json", json: { metadata: { site: "y" } } });
    expect(next?.ifMatch).toBe('"2"');
    expect(next?.state).toBe("pending");
  });
});

describe("the title a risk's heading and list row show", () => {
  const risk = { id: "risk_1", title: "Flood", owner: "Ada", version: 1 };
  const queued = (json: Fields, state: Change["state"] = "pending") => ({ ...newChange(edit(risk, json), ALICE, "k" + n++, 0), state });

  it("is a pending edit's title, the latest of several, and none when nothing pending changes it", () => {
    expect(queuedTitle(risk, [queued({ title: "Flood, v2" })])).toBe("Flood, v2");
    expect(queuedTitle(risk, [queued({ title: "Flood, v2" }), queued({ owner: "Grace" }), queued({ title: "Flood, v3" })])).toBe("Flood, v3");
    expect(queuedTitle(risk, [queued({ owner: "Grace" })])).toBeUndefined();
    // Sent, refused or in conflict: the stored title stands (a conflict shows both values itself).
    for (const state of ["done", "refused", "conflict"] as const) expect(queuedTitle(risk, [queued({ title: "Flood, v2" }, state)])).toBeUndefined();
    // Another risk's edit is not this one's.
    expect(queuedTitle({ ...risk, id: "risk_2" }, [queued({ title: "Flood, v2" })])).toBeUndefined();
  });
});

describe("seenAfterOwn: the version a delete goes over", () => {
  const owner: Owner = { userId: "usr_1", tenantId: "ten_1", email: "a@x.test" };
  let n = 0;
  const edit = (ifMatch: string, version: number, extra: Partial<Change> = {}): Change => ({
    ...newChange({ method: "PATCH", path: "/risks/r1", body: { kind: "json", json: { title: "t" } }, label: "Edit", ifMatch }, owner, `k${++n}`, 1000 + n),
    state: "done",
    result: { id: "r1", version },
    ...extra,
  });
  it("moves over the user's own edits stored since the version asked about, in order", () => {
    const first = edit('"1"', 2);
    const second = edit('"2"', 3);
    expect(seenAfterOwn('"1"', "/risks/r1", [second, first])).toBe('"3"');
  });
  it("stays when another writer's version came between: the server refuses the delete", () => {
    expect(seenAfterOwn('"1"', "/risks/r1", [edit('"2"', 3)])).toBe('"1"');
  });
  it("ignores another risk's edit and one not yet done", () => {
    const changes = [edit('"1"', 2, { path: "/risks/r2" }), edit('"1"', 2, { state: "pending" })];
    expect(seenAfterOwn('"1"', "/risks/r1", changes)).toBe('"1"');
  });
  it("moves over an edit whose answer was lost and replayed: the replay names the version that edit stored", () => {
    expect(seenAfterOwn('"1"', "/risks/r1", [edit('"1"', 2, { replayed: true })])).toBe('"2"');
  });
});

import "fake-indexeddb/auto";
import { locks } from "web-locks";
import { afterEach, describe, expect, it } from "vitest";
import type { Attempt, Change, Owner } from "./change";
import { Outbox, SESSION_LOCK, type Transport } from "./outbox";
import { ChangeStore } from "./store";

/**
 * FakeServer keeps idempotency records the way docs/idempotency.md says the
 * server does, so the tests see what a user would: how many risks exist.
 */
class FakeServer implements Transport {
  readonly records = new Map<string, { body: string; status: number; json: unknown }>();
  readonly risks: string[] = [];
  readonly sent: { key: string; path: string; by: string }[] = [];
  /** Scripted outcomes of the next attempts, taken in order. */
  readonly script: ("lose-response" | "network" | { status: number; retryAfterMs?: number })[] = [];
  inFlight = 0;
  maxInFlight = 0;
  constructor(private readonly who = "tab") {}

  as(who: string): Transport {
    return { send: (c, p) => this.handle(c, p, who) };
  }

  send(c: Change, p: (l: number, t: number) => void): Promise<Attempt> {
    return this.handle(c, p, this.who);
  }

  private async handle(c: Change, _p: (l: number, t: number) => void, by: string): Promise<Attempt> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setTimeout(r, 2));
      this.sent.push({ key: c.key, path: c.path, by });
      const step = this.script.shift();
      if (step === "network") return { error: new TypeError("Failed to fetch") };
      if (step && typeof step === "object") return { status: step.status, ...(step.retryAfterMs ? { retryAfterMs: step.retryAfterMs } : {}) };
      const body = JSON.stringify(c.body);
      const rec = this.records.get(c.key);
      let res: Attempt;
      if (rec && rec.body !== body) res = { status: 422, json: { code: "IDEMPOTENCY_KEY_REUSED", detail: "reused" } };
      else if (rec) res = { status: rec.status, json: rec.json, replayed: true };
      else {
        const title = (c.body as { json: { title: string } }).json.title;
        this.risks.push(title);
        const json = { id: "risk_" + this.risks.length, title };
        this.records.set(c.key, { body, status: 201, json });
        res = { status: 201, json, replayed: false };
      }
      // The server committed, then the response was lost on the way back.
      if (step === "lose-response") return { error: new TypeError("Failed to fetch") };
      return res;
    } finally {
      this.inFlight--;
    }
  }
}

const ALICE: Owner = { userId: "usr_alice", tenantId: "ten_1", email: "alice@one.test" };
const BOB: Owner = { userId: "usr_bob", tenantId: "ten_2", email: "bob@two.test" };
const CAROL: Owner = { userId: "usr_carol", tenantId: "ten_1", email: "carol@one.test" };
/** Who is signed in, as the browser's tabs share it (localStorage in the app). */
let who: Owner | null = ALICE;
const identity = () => who;
/** signInAs changes who is signed in as session.ts does: under SESSION_LOCK. */
const signInAs = (o: Owner | null) => locks.request(SESSION_LOCK, async () => void (who = o));

let n = 0;
const open: Outbox[] = [];
async function tab(dbName: string, transport: Transport, start = true): Promise<Outbox> {
  const o = new Outbox({
    store: await ChangeStore.open(dbName),
    transport,
    locks,
    identity,
    channel: new BroadcastChannel(dbName),
    rand: () => 0,
  });
  open.push(o);
  if (start) o.start();
  return o;
}
const create = (title: string) => ({ method: "POST", path: "/risks", body: { kind: "json", json: { title } }, label: title }) as const;

/** settled waits until every change in the outbox has left "pending". */
async function settled(o: Outbox, count: number): Promise<Change[]> {
  for (let i = 0; i < 500; i++) {
    const all = await o.list();
    if (all.length === count && all.every((c) => c.state !== "pending")) return all;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("outbox did not settle: " + JSON.stringify(await o.list()));
}

afterEach(async () => {
  for (const o of open.splice(0)) await o.stop();
  who = ALICE;
});

describe("Outbox", () => {
  it("keeps the mode a change was made in (the Test data switch), whatever the switch says when it is sent", async () => {
    let mode: "live" | "test" = "test";
    const modes: (string | undefined)[] = [];
    const server = new FakeServer();
    const transport: Transport = { send: (c, p) => (modes.push(c.mode), server.send(c, p)) };
    const o = new Outbox({ store: await ChangeStore.open("db" + n++), transport, locks, identity, rand: () => 0, mode: () => mode });
    open.push(o);
    const a = await o.enqueue(create("Sandbox flood"));
    mode = "live";
    const b = await o.enqueue(create("Live flood"));
    expect([a.mode, b.mode]).toEqual(["test", "live"]);
    o.start();
    await settled(o, 2);
    expect(modes).toEqual(["test", "live"]);
  });

  it("sends a retry with the same key after a lost response, and the server's replay settles it", async () => {
    const server = new FakeServer();
    server.script.push("lose-response", "network");
    const o = await tab("db" + n++, server);
    const c = await o.enqueue(create("Flood"));
    const [done] = await settled(o, 1);
    expect(server.sent.map((s) => s.key)).toEqual([c.key, c.key, c.key]);
    expect(server.risks).toEqual(["Flood"]);
    expect(done).toMatchObject({ state: "done", replayed: true, attempts: 3 });
  });

  it("mints a different UUID v4 key for each change", async () => {
    const server = new FakeServer();
    const o = await tab("db" + n++, server);
    const a = await o.enqueue(create("A"));
    const b = await o.enqueue(create("B"));
    expect(a.key).not.toBe(b.key);
    expect(a.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await settled(o, 2);
  });

  it("shows a reused key as refused and still sends the changes after it", async () => {
    const server = new FakeServer();
    const o = await tab("db" + n++, server, false);
    const a = await o.enqueue(create("A"));
    server.records.set(a.key, { body: "another body", status: 201, json: {} });
    await o.enqueue(create("B"));
    o.start();
    const [ra, rb] = await settled(o, 2);
    expect(ra).toMatchObject({ state: "refused", lastStatus: 422, problem: { code: "IDEMPOTENCY_KEY_REUSED" } });
    expect(rb).toMatchObject({ state: "done", label: "B" });
    expect(server.risks).toEqual(["B"]);
  });

  it("keeps sending in the order the user acted", async () => {
    const server = new FakeServer();
    server.script.push({ status: 503 }, { status: 409 });
    // A clock that never moves: changes made within one millisecond keep their order.
    const o = new Outbox({ store: await ChangeStore.open("db" + n++), transport: server, locks, identity, rand: () => 0, now: () => 1000 });
    open.push(o);
    for (const t of ["1", "2", "3", "4", "5", "6"]) await o.enqueue(create(t));
    o.start();
    await settled(o, 6);
    expect(server.risks).toEqual(["1", "2", "3", "4", "5", "6"]);
  });

  it("waits at least Retry-After before the next attempt", async () => {
    const server = new FakeServer();
    server.script.push({ status: 429, retryAfterMs: 300 });
    const o = await tab("db" + n++, server);
    const times: number[] = [];
    o.subscribe((e) => e.type === "changed" && times.push(Date.now()));
    await o.enqueue(create("A"));
    await settled(o, 1);
    // times: enqueued, after the 429, after the 201.
    expect(times).toHaveLength(3);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(290);
  });

  it("sends a change queued before a reload exactly once, from the reloaded page", async () => {
    const db = "db" + n++;
    const server = new FakeServer();
    const before = await tab(db, server, false);
    const c = await before.enqueue(create("Queued"));
    await before.stop();
    const after = await tab(db, server);
    const [done] = await settled(after, 1);
    expect(done!.key).toBe(c.key);
    expect(server.risks).toEqual(["Queued"]);
  });

  it("holds a change after 401 until retryNow (signed in again)", async () => {
    const server = new FakeServer();
    server.script.push({ status: 401 });
    const o = await tab("db" + n++, server);
    await o.enqueue(create("A"));
    await new Promise((r) => setTimeout(r, 100));
    expect((await o.list())[0]).toMatchObject({ state: "pending", lastStatus: 401 });
    expect(server.sent).toHaveLength(1);
    o.retryNow();
    await settled(o, 1);
    expect(server.risks).toEqual(["A"]);
  });

  it("has one sender across two tabs, and the other takes over when it closes", async () => {
    const db = "db" + n++;
    const server = new FakeServer();
    const one = await tab(db, server.as("one"));
    const two = await tab(db, server.as("two"));
    await new Promise((r) => setTimeout(r, 50));
    expect([one.isSender, two.isSender].filter(Boolean)).toHaveLength(1);
    const [sender, other] = one.isSender ? [one, two] : [two, one];
    const senderName = one.isSender ? "one" : "two";
    for (let i = 0; i < 5; i++) {
      await one.enqueue(create("one-" + i));
      await two.enqueue(create("two-" + i));
    }
    await settled(other, 10);
    expect(server.maxInFlight).toBe(1);
    expect(new Set(server.sent.map((s) => s.by))).toEqual(new Set([senderName]));
    expect(server.risks).toHaveLength(10);
    expect(new Set(server.sent.map((s) => s.key)).size).toBe(10);

    await sender.stop();
    await new Promise((r) => setTimeout(r, 50));
    expect(other.isSender).toBe(true);
    await other.enqueue(create("after"));
    await settled(other, 11);
    expect(server.sent.at(-1)!.by).not.toBe(senderName);
  });

  it("waits while offline and sends on retryNow (the online event)", async () => {
    const server = new FakeServer();
    let online = false;
    const o = new Outbox({ store: await ChangeStore.open("db" + n++), transport: server, locks, identity, online: () => online });
    open.push(o);
    o.start();
    await o.enqueue(create("A"));
    await new Promise((r) => setTimeout(r, 100));
    expect(server.sent).toHaveLength(0);
    online = true;
    o.retryNow();
    await settled(o, 1);
    expect(server.sent).toHaveLength(1);
  });

  it("never sends a change discarded at sign-out, and forgets the user's history", async () => {
    const server = new FakeServer();
    const o = await tab("db" + n++, server, false);
    await o.enqueue(create("A"));
    who = BOB;
    await o.enqueue(create("Bob's"));
    who = ALICE;
    await o.forget(ALICE, true);
    o.start();
    expect(await o.list()).toEqual([]);
    who = BOB;
    await settled(o, 1);
    expect(server.risks).toEqual(["Bob's"]);
    await o.forget(BOB, false);
    expect(await o.list()).toEqual([]);
  });

  it("never brings back a change discarded while its attempt was in flight", async () => {
    let release!: () => void;
    let attempts = 0;
    const failing: Transport = {
      send: async () => {
        attempts++;
        await new Promise<void>((r) => (release = r));
        return { error: new TypeError("Failed to fetch") }; // would be retried after a backoff
      },
    };
    const o = await tab("db" + n++, failing);
    await o.enqueue(create("A"));
    for (let i = 0; i < 100 && attempts === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(attempts).toBe(1);
    await o.forget(ALICE, true); // "Discard and sign out" while the attempt is out
    release();
    await new Promise((r) => setTimeout(r, 30));
    expect(await o.list()).toEqual([]);
    o.retryNow(); // Alice signs in again: nothing of hers is left to send
    await new Promise((r) => setTimeout(r, 30));
    expect(attempts).toBe(1);
    expect(await o.list()).toEqual([]);
  });

  it("queues one DELETE for a double click, from one tab or two, and a later one once the first has settled", async () => {
    const db = "db" + n++;
    const deletes: string[] = [];
    const server: Transport = { send: async (c) => (deletes.push(c.key), { status: 204 }) };
    const one = await tab(db, server, false);
    const two = await tab(db, server, false);
    const del = { method: "DELETE", path: "/risks/risk_1", body: null, label: "Delete risk" } as const;
    const [a, b, c] = await Promise.all([one.enqueue(del), one.enqueue(del), two.enqueue(del)]);
    expect(new Set([a.key, b.key, c.key]).size).toBe(1);
    expect(await one.list()).toHaveLength(1);
    // Another user's identical click is their own change.
    who = CAROL;
    await two.enqueue(del);
    who = ALICE;
    one.start();
    await settled(one, 1);
    expect(deletes).toEqual([a.key]);
    const again = await one.enqueue(del); // settled: a new click is a new change
    expect(again.key).not.toBe(a.key);
    await settled(one, 2);
    expect(deletes).toEqual([a.key, again.key]);
  });

  it("tells other tabs when a change settles", async () => {
    const db = "db" + n++;
    const server = new FakeServer();
    const sender = await tab(db, server);
    const watcher = await tab(db, server, false);
    const seen: string[] = [];
    watcher.subscribe((e) => e.type === "changed" && e.state && seen.push(e.state));
    await watcher.enqueue(create("A"));
    await settled(watcher, 1);
    await new Promise((r) => setTimeout(r, 20));
    expect(seen).toContain("done");
    expect(sender.isSender).toBe(true);
  });
});

describe("Outbox: a change belongs to its author", () => {
  it("sends only the signed-in user's changes; another user's wait unseen, and go once their author is back", async () => {
    const server = new FakeServer();
    const o = await tab("db" + n++, server, false);
    await o.enqueue(create("Alice's"));
    await signInAs(BOB); // another tenant's admin, on the same browser
    o.start();
    await o.enqueue(create("Bob's"));
    await settled(o, 1);
    expect(server.risks).toEqual(["Bob's"]);
    expect((await o.list()).map((c) => c.label)).toEqual(["Bob's"]);
    expect((await o.waiting()).map((w) => [w.email, w.count])).toEqual([["alice@one.test", 1]]);

    await signInAs(CAROL); // the same tenant, another user: still nothing of Alice's goes
    o.retryNow();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.risks).toEqual(["Bob's"]);

    await signInAs(ALICE);
    o.retryNow();
    const [done] = await settled(o, 1);
    expect(done).toMatchObject({ label: "Alice's", state: "done", owner: ALICE });
    expect(server.risks).toEqual(["Bob's", "Alice's"]);
    expect(server.sent.filter((s) => s.key === done!.key)).toHaveLength(1);
    expect(await o.waiting()).toEqual([]);
  });

  it("holds a change refused with 401 for its author, not for the next user", async () => {
    const server = new FakeServer();
    server.script.push({ status: 401 }); // the session ended elsewhere (password changed)
    const o = await tab("db" + n++, server);
    await o.enqueue(create("A"));
    await new Promise((r) => setTimeout(r, 50));
    expect(server.sent).toHaveLength(1);
    await signInAs(BOB);
    o.retryNow();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.sent).toHaveLength(1);
    expect(await o.list()).toEqual([]);
    await signInAs(ALICE);
    o.retryNow();
    await settled(o, 1);
    expect(server.risks).toEqual(["A"]);
  });

  it("never has an attempt in flight while who is signed in changes", async () => {
    let release!: () => void;
    const log: string[] = [];
    const slow: Transport = {
      send: async () => {
        log.push("attempt start");
        await new Promise<void>((r) => (release = r));
        log.push("attempt end");
        return { status: 201, json: {} };
      },
    };
    const o = await tab("db" + n++, slow);
    await o.enqueue(create("A"));
    await o.enqueue(create("B"));
    await new Promise((r) => setTimeout(r, 30));
    const switched = signInAs(BOB).then(() => log.push("signed in as Bob"));
    await new Promise((r) => setTimeout(r, 30));
    expect(log).toEqual(["attempt start"]); // the sign-in waits for the attempt
    release();
    await switched;
    await new Promise((r) => setTimeout(r, 50));
    // A went out under Alice's session; B, Alice's too, waits for her.
    expect(log).toEqual(["attempt start", "attempt end", "signed in as Bob"]);
    expect((await o.waiting()).map((w) => w.count)).toEqual([1]);
  });

  it("lets a new user see no earlier user's settled history", async () => {
    const server = new FakeServer();
    const o = await tab("db" + n++, server);
    await o.enqueue(create("Alice's secret title"));
    await settled(o, 1);
    await signInAs(BOB);
    await o.forgetOthersHistory(BOB);
    expect(await o.list()).toEqual([]);
    await signInAs(ALICE);
    expect(await o.list()).toEqual([]);
  });

  it("needs someone signed in to make a change", async () => {
    const o = await tab("db" + n++, new FakeServer());
    who = null;
    await expect(o.enqueue(create("nobody's"))).rejects.toThrow(/sign in/);
  });
});

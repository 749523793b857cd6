/**
 * Outbox queues the user's writes in IndexedDB and sends them, one at a time
 * and in the order they were made, until each settles (docs/dashboard.md).
 *
 * Only one tab of a browser sends: the sender holds the Web Lock
 * {@link SENDER_LOCK} for as long as it lives, and the other tabs wait for it
 * (the browser hands the lock on when the sender's tab closes). Every tab may
 * enqueue; only the sender changes a pending change's state, so no two tabs
 * ever race on a record. Tabs tell each other about new changes, progress and
 * settled ones through a BroadcastChannel.
 *
 * Every change belongs to the user who made it (its owner), and is sent only
 * while that user is the one signed in: the sender takes the Web Lock
 * {@link SESSION_LOCK} for each attempt and checks the signed-in identity under
 * it, and signing in or out (session.ts) changes the identity only under that
 * lock, so no attempt ever goes out with another user's cookie. Another user
 * neither sends nor sees the change; see docs/dashboard.md, "Whose change it is".
 */
import { afterAttempt, newChange, resume, sameOwner, unsettled, type Attempt, type Change, type ChangeInput, type Owner } from "./change";
import { afterOwn, deleteAfterOwn, keepMine, keepTheirs } from "./merge";
import type { ChangeStore } from "./store";

/** The Web Lock the sending tab holds. */
export const SENDER_LOCK = "riskapi-outbox-sender";

/**
 * The Web Lock held by each attempt and by every change of who is signed in
 * (signing in or out, learning who the cookie belongs to): an attempt never
 * overlaps a change of the session cookie.
 */
export const SESSION_LOCK = "riskapi-session";

/** Transport sends one attempt of a change; it never throws: a failure is `{error}`. */
export interface Transport {
  send(c: Change, onProgress: (loaded: number, total: number) => void): Promise<Attempt>;
}

/** The part of the Web Locks API (navigator.locks) the outbox uses. */
export interface LockManagerLike {
  request(name: string, callback: (lock: unknown) => Promise<unknown>): Promise<unknown>;
}

/** The part of BroadcastChannel the outbox uses. */
export interface ChannelLike {
  postMessage(message: unknown): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  close(): void;
}

/** What subscribers hear: the queue changed (re-read it), or an upload progressed. */
export type OutboxEvent =
  | { type: "changed"; key?: string; state?: Change["state"] }
  | { type: "progress"; key: string; loaded: number; total: number };

/** Messages between tabs. */
type Message = OutboxEvent | { type: "wake" } | { type: "retry" };

/** OutboxOptions wire an outbox; only store, transport, locks and identity are required. */
export interface OutboxOptions {
  store: ChangeStore;
  transport: Transport;
  locks: LockManagerLike;
  /** Who is signed in now (shared by the tabs), or null; read under SESSION_LOCK before each attempt. */
  identity: () => Owner | null;
  /** Optional. Default () => "live". The data a new change is made in (the Test data switch, mode.ts); the change keeps it. */
  mode?: () => "live" | "test";
  /** Optional. Reaches the other tabs; without it, one tab only. */
  channel?: ChannelLike;
  /** Optional. Default Date.now. */
  now?: () => number;
  /** Optional. Default Math.random (the backoff's jitter). */
  rand?: () => number;
  /** Optional. Default crypto.randomUUID (a UUID v4 idempotency key). */
  newKey?: () => string;
  /**
   * Optional. Default () => true. When it says false (navigator.onLine), the
   * sender waits for retryNow() (the "online" event) instead of failing attempts.
   */
  online?: () => boolean;
}

/** Outbox: see the file comment. Call start() once per tab, stop() when it goes away. */
export class Outbox {
  private readonly o: Required<Omit<OutboxOptions, "channel">> & { channel?: ChannelLike };
  private readonly listeners = new Set<(e: OutboxEvent) => void>();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private force = true;
  private lastCreated = 0;
  private stopped = false;
  private release: (() => void) | undefined;
  private sending = false;
  private done: Promise<unknown> | undefined;

  constructor(opts: OutboxOptions) {
    this.o = {
      now: () => Date.now(),
      rand: Math.random,
      newKey: () => crypto.randomUUID(),
      online: () => true,
      mode: () => "live",
      ...opts,
    };
    if (this.o.channel) this.o.channel.onmessage = (ev) => this.receive(ev.data as Message);
  }

  /** isSender is true while this tab holds the sender lock. */
  get isSender(): boolean {
    return this.sending;
  }

  /**
   * enqueue stores a new change of the signed-in user with a freshly minted key
   * and wakes the sender. A change without a body (a DELETE, a redelivery) while
   * the same user's same method on the same path still waits is the same
   * intent, a second click: nothing new is stored, and the waiting change is
   * returned.
   */
  async enqueue(input: ChangeInput): Promise<Change> {
    const owner = this.o.identity();
    if (!owner) throw new Error("sign in first: a change needs its author");
    // Strictly increasing in this tab, so that two changes made within one
    // millisecond keep their order (the queue is sorted by createdAt).
    this.lastCreated = Math.max(this.o.now(), this.lastCreated + 1);
    const c = newChange({ ...input, mode: input.mode ?? this.o.mode() }, owner, this.o.newKey(), this.lastCreated);
    if (c.body === null) {
      const twin = await this.o.store.putUnlessTwin(c, (x) =>
        x.state === "pending" && x.body === null && x.method === c.method && x.path === c.path && (x.mode ?? "live") === c.mode && sameOwner(x.owner, owner));
      if (twin) return twin;
    } else {
      await this.o.store.put(c);
    }
    this.publish({ type: "changed", key: c.key, state: c.state });
    this.nudge();
    return c;
  }

  /** list returns the signed-in user's changes, oldest first; nobody's when no one is signed in. */
  async list(): Promise<Change[]> {
    const me = this.o.identity();
    return (await this.o.store.all()).filter((c) => sameOwner(c.owner, me));
  }

  /**
   * waiting says whose changes wait for their author to sign in again: the
   * email and how many, never their content (the sign-in page shows it).
   */
  async waiting(): Promise<{ email: string; count: number; owner: Owner }[]> {
    const me = this.o.identity();
    const out = new Map<string, { email: string; count: number; owner: Owner }>();
    for (const c of await this.o.store.all()) {
      if (!unsettled(c) || sameOwner(c.owner, me)) continue;
      const id = `${c.owner.tenantId}/${c.owner.userId}`;
      const w = out.get(id) ?? { email: c.owner.email, count: 0, owner: c.owner };
      w.count++;
      out.set(id, w);
    }
    return [...out.values()];
  }

  /** dismiss forgets a settled change of the signed-in user; a pending one or one in conflict cannot be dismissed. */
  async dismiss(key: string): Promise<void> {
    const c = await this.o.store.get(key);
    if (!c || unsettled(c) || !sameOwner(c.owner, this.o.identity())) return;
    await this.o.store.delete(key);
    this.publish({ type: "changed", key });
  }

  /** acknowledge marks a refused change as restored in its form (or dismissed there), so it is put back once. */
  async acknowledge(key: string): Promise<void> {
    const c = await this.o.store.get(key);
    if (!c || c.state !== "refused" || c.restored) return;
    await this.o.store.put({ ...c, restored: true });
    this.publish({ type: "changed", key, state: c.state });
  }

  /**
   * resolve settles a conflict of the signed-in user as they chose (merge.ts):
   * "mine" sends their change again over the version it met; "theirs" drops
   * their fields in conflict, sending any others, and forgets the change when
   * none are left. Only a change in conflict, which no tab is sending, is
   * touched, so any tab may do this.
   */
  async resolve(key: string, keep: "mine" | "theirs"): Promise<void> {
    const me = this.o.identity();
    // In one transaction: the sender may be carrying it onto a newer version meanwhile (carry).
    const { changed, value: next } = await this.o.store.update(key, (c) =>
      c.state !== "conflict" || !sameOwner(c.owner, me) ? c : keep === "mine" ? keepMine(c) : keepTheirs(c));
    if (!changed) return;
    this.publish({ type: "changed", key, ...(next ? { state: next.state } : {}) });
    if (next) this.nudge();
  }

  /**
   * forget deletes owner's settled changes (their history, cleared at sign-out
   * or when another user signs in) and, with pending true, their unsent ones
   * and conflicts too (discarded at the user's request). Other users' changes
   * stay. A change whose attempt is in flight may still reach the server (its
   * author is still signed in: signing out waits for the attempt), but it is
   * never written back nor sent again.
   */
  async forget(owner: Owner, pending: boolean): Promise<void> {
    for (const c of await this.o.store.all()) {
      if (!sameOwner(c.owner, owner) || (unsettled(c) && !pending)) continue;
      await this.o.store.delete(c.key);
    }
    this.publish({ type: "changed" });
  }

  /** forgetOthersHistory deletes the settled changes of every user but me: a new user sees no earlier history. */
  async forgetOthersHistory(me: Owner): Promise<void> {
    for (const c of await this.o.store.all()) if (!unsettled(c) && !sameOwner(c.owner, me)) await this.o.store.delete(c.key);
    this.publish({ type: "changed" });
  }

  /**
   * retryNow makes the waiting change due now, ignoring its backoff: the
   * browser is back online, the user signed in again, or asked.
   */
  retryNow(): void {
    this.force = true;
    this.wake();
    this.o.channel?.postMessage({ type: "retry" } satisfies Message);
  }

  /** subscribe calls fn on every event of this tab or another; returns the unsubscribe. */
  subscribe(fn: (e: OutboxEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** start queues for the sender lock; once held, this tab sends until stop(). */
  start(): void {
    if (this.done) return;
    this.done = this.o.locks.request(SENDER_LOCK, () => {
      if (this.stopped) return Promise.resolve();
      this.sending = true;
      return new Promise<void>((resolve) => {
        this.release = resolve;
        void this.run().finally(() => {
          this.sending = false;
          resolve();
        });
      });
    });
  }

  /** stop ends sending (releasing the lock to another tab) and closes the channel. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    this.release?.();
    await this.done;
    this.o.channel?.close();
  }

  private async run(): Promise<void> {
    // force starts true: a change left waiting or mid-attempt by a closed tab
    // is due at once (it may have reached the server; its key makes sending it
    // again safe).
    while (!this.stopped) {
      // Only the signed-in user's changes: another's wait for them.
      const head = (await this.list()).find((c) => c.state === "pending");
      if (!head || !this.o.online()) {
        await this.sleep(Infinity);
        continue;
      }
      const c = this.force ? resume(head) : head;
      this.force = false;
      const wait = c.nextAttemptAt - this.o.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      const attempt = await this.attempt(c);
      if (!attempt) continue;
      const next = afterAttempt(c, attempt, this.o.now(), this.o.rand);
      // Discarded while in flight (forget): it stays gone, or the next
      // sign-in would send a change its author chose to drop.
      if (await this.o.store.replace(next)) {
        this.publish({ type: "changed", key: next.key, state: next.state });
        if (next.state === "done") await this.carry(next);
      }
    }
  }

  /**
   * carry brings the author's other waiting edits of the risk `done` just
   * stored onto the version it stored (merge.ts, afterOwn): a later edit typed
   * over the user's own pending value goes out without a 412, and a conflict
   * compares with what is stored now, so it never shows the user's own value as
   * someone else's (docs/dashboard.md, "Conflicts").
   */
  private async carry(done: Change): Promise<void> {
    // Only an edit's answer is a version to carry onto: a create, upload or delete reads nothing more.
    if (done.method !== "PATCH") return;
    for (const c of await this.o.store.all()) {
      if (c.key === done.key || c.path !== done.path || !unsettled(c) || !sameOwner(c.owner, done.owner)) continue;
      const { changed, value } = await this.o.store.update(c.key, (x) => (x.method === "DELETE" ? deleteAfterOwn(x, done) : afterOwn(x, done)));
      if (changed) this.publish({ type: "changed", key: c.key, ...(value ? { state: value.state } : {}) });
    }
  }

  /**
   * attempt sends c once under SESSION_LOCK, if its owner is still the one
   * signed in; undefined when the identity changed before the lock was held.
   */
  private async attempt(c: Change): Promise<Attempt | undefined> {
    let out: Attempt | undefined;
    await this.o.locks.request(SESSION_LOCK, async () => {
      if (!sameOwner(c.owner, this.o.identity())) return;
      out = await this.o.transport.send(c, (loaded, total) => this.publish({ type: "progress", key: c.key, loaded, total }));
    });
    return out;
  }

  /** sleep waits ms, or less when woken (a wake before the sleep counts). */
  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = Number.isFinite(ms) ? setTimeout(finish, Math.min(ms, 2 ** 31 - 1)) : undefined;
      const self = this;
      function finish() {
        clearTimeout(t);
        self.wakeUp = undefined;
        self.woken = false;
        resolve();
      }
      this.wakeUp = finish;
    });
  }

  private wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  /** nudge wakes the sender, here or in another tab. */
  private nudge(): void {
    this.wake();
    this.o.channel?.postMessage({ type: "wake" } satisfies Message);
  }

  private receive(m: Message): void {
    if (m.type === "retry") this.force = true;
    if (m.type === "wake" || m.type === "retry") this.wake();
    else this.emit(m);
  }

  private publish(e: OutboxEvent): void {
    this.emit(e);
    this.o.channel?.postMessage(e);
  }

  private emit(e: OutboxEvent): void {
    for (const fn of this.listeners) fn(e);
  }
}

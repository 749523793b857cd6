/**
 * The outbox's persistence: one IndexedDB object store of changes keyed by
 * their idempotency key. Everything the sender needs survives a reload, a
 * crash of the tab or a closed browser. It speaks IndexedDB directly: the few
 * calls it needs are not worth a wrapper library in the first load
 * (docs/dashboard.md, "First load").
 */
import type { Change } from "./change";

/** The database name the dashboard uses; tests pass their own. */
export const DEFAULT_DB_NAME = "riskapi-outbox";

const STORE = "changes";

/** result settles with a request's result, or rejects with its error. */
function result<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

/** done settles once tx has committed (a write is durable then), or rejects when it fails or aborts. */
function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new DOMException("transaction aborted", "AbortError"));
  });
}

/** ChangeStore reads and writes changes; all methods are single IndexedDB transactions. */
export class ChangeStore {
  private constructor(private readonly db: IDBDatabase) {}

  /**
   * open opens (creating if needed) the outbox database `name`. Version 2
   * binds each change to its author; the changes of version 1 have none, so
   * nobody can be known to own them and they are dropped rather than sent
   * under whoever signs in next (docs/dashboard.md).
   */
  static async open(name: string = DEFAULT_DB_NAME): Promise<ChangeStore> {
    const req = indexedDB.open(name, 2);
    req.onupgradeneeded = (e) => {
      const db = req.result;
      if (e.oldVersion < 1) {
        const s = db.createObjectStore(STORE, { keyPath: "key" });
        s.createIndex("byCreatedAt", "createdAt");
      } else if (e.oldVersion < 2) {
        req.transaction!.objectStore(STORE).clear();
      }
    };
    return new ChangeStore(await result(req));
  }

  /** put stores the change, replacing the record with the same key; it resolves once committed. */
  put(c: Change): Promise<void> {
    const tx = this.db.transaction(STORE, "readwrite");
    tx.objectStore(STORE).put(c);
    return done(tx);
  }

  /** get returns the change with this key, or undefined. */
  get(key: string): Promise<Change | undefined> {
    return result(this.db.transaction(STORE).objectStore(STORE).get(key) as IDBRequest<Change | undefined>);
  }

  /** all returns every change of every user, oldest first. */
  all(): Promise<Change[]> {
    return result(this.db.transaction(STORE).objectStore(STORE).index("byCreatedAt").getAll() as IDBRequest<Change[]>);
  }

  /** delete forgets a change; it resolves once committed. */
  delete(key: string): Promise<void> {
    const tx = this.db.transaction(STORE, "readwrite");
    tx.objectStore(STORE).delete(key);
    return done(tx);
  }

  /** close closes the connection. */
  close(): void {
    this.db.close();
  }
}

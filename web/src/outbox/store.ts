/**
 * The outbox's persistence: one IndexedDB object store of changes keyed by
 * their idempotency key, through the `idb` wrapper. Everything the sender
 * needs survives a reload, a crash of the tab or a closed browser.
 */
import { openDB, type DBSchema, type IDBPDatabase } from "idb";
import type { Change } from "./change";

interface OutboxSchema extends DBSchema {
  changes: {
    key: string;
    value: Change;
    indexes: { byCreatedAt: number };
  };
}

/** The database name the dashboard uses; tests pass their own. */
export const DEFAULT_DB_NAME = "riskapi-outbox";

/** ChangeStore reads and writes changes; all methods are single IndexedDB transactions. */
export class ChangeStore {
  private constructor(private readonly db: IDBPDatabase<OutboxSchema>) {}

  /**
   * open opens (creating if needed) the outbox database `name`. Version 2
   * binds each change to its author; the changes of version 1 have none, so
   * nobody can be known to own them and they are dropped rather than sent
   * under whoever signs in next (docs/dashboard.md).
   */
  static async open(name: string = DEFAULT_DB_NAME): Promise<ChangeStore> {
    const db = await openDB<OutboxSchema>(name, 2, {
      upgrade(db, oldVersion, _newVersion, tx) {
        if (oldVersion < 1) {
          const s = db.createObjectStore("changes", { keyPath: "key" });
          s.createIndex("byCreatedAt", "createdAt");
        } else if (oldVersion < 2) {
          void tx.objectStore("changes").clear();
        }
      },
    });
    return new ChangeStore(db);
  }

  /** put stores the change, replacing the record with the same key. */
  async put(c: Change): Promise<void> {
    await this.db.put("changes", c);
  }

  /**
   * replace stores the change only if a change with its key is still stored,
   * in one transaction, and says whether it did: the sender's write after an
   * attempt must not bring back a change discarded while it was in flight.
   */
  async replace(c: Change): Promise<boolean> {
    const tx = this.db.transaction("changes", "readwrite");
    const there = (await tx.store.getKey(c.key)) !== undefined;
    if (there) await tx.store.put(c);
    await tx.done;
    return there;
  }

  /**
   * update rewrites the change with this key as `fn` returns it, in one
   * transaction, so that two writers of one change (the sender carrying it
   * onto a new version, a tab resolving its conflict) never undo each other:
   * fn gets the record as stored; undefined deletes it, the same object
   * leaves it alone. It returns the record as it is now, and whether it
   * changed.
   */
  async update(key: string, fn: (c: Change) => Change | undefined): Promise<{ changed: boolean; value: Change | undefined }> {
    const tx = this.db.transaction("changes", "readwrite");
    const was = await tx.store.get(key);
    const value = was && fn(was);
    if (was && value === undefined) await tx.store.delete(key);
    else if (was && value !== was) await tx.store.put(value!);
    await tx.done;
    return { changed: !!was && value !== was, value };
  }

  /**
   * putUnlessTwin stores the change unless a stored one is its twin (`twin`
   * says), in one transaction, so that two tabs or two clicks cannot both
   * store one; it returns the twin found, or undefined when it stored c.
   */
  async putUnlessTwin(c: Change, twin: (x: Change) => boolean): Promise<Change | undefined> {
    const tx = this.db.transaction("changes", "readwrite");
    const found = (await tx.store.getAll()).find(twin);
    if (!found) await tx.store.put(c);
    await tx.done;
    return found;
  }

  /** get returns the change with this key, or undefined. */
  get(key: string): Promise<Change | undefined> {
    return this.db.get("changes", key);
  }

  /** all returns every change of every user, oldest first. */
  all(): Promise<Change[]> {
    return this.db.getAllFromIndex("changes", "byCreatedAt");
  }

  /** delete forgets a change. */
  async delete(key: string): Promise<void> {
    await this.db.delete("changes", key);
  }

  /** close closes the connection. */
  close(): void {
    this.db.close();
  }
}

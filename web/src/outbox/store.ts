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

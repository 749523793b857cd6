// A fresh database of the store under test, one per test run: a temporary
// SQLite file, or, when TEST_DATABASE_URL names a PostgreSQL server, a new
// database on it (named riskapi_t_…, which .ci/run's cleanup also drops),
// dropped by drop().

import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";

/** A database for one server. */
export interface Database {
  /** The DATABASE_URL to give the server. */
  url: string;
  store: "sqlite" | "postgres";
  /** Drops the PostgreSQL database (its server must be stopped or is disconnected); nothing for SQLite. */
  drop(): Promise<void>;
}

/**
 * freshDatabase makes the database: a SQLite file in dir, or a PostgreSQL
 * database named prefix + 12 random hex digits. prefix must start with
 * "riskapi_t_" and be a plain SQL identifier, e.g. "riskapi_t_ts_".
 */
export async function freshDatabase(dir: string, prefix: string): Promise<Database> {
  if (!/^riskapi_t_[a-z0-9_]*$/.test(prefix)) throw new Error(`database prefix ${prefix} is not riskapi_t_[a-z0-9_]*`);
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin || !/^postgres(ql)?:\/\//.test(admin)) {
    return { url: "sqlite://" + join(dir, "riskapi.db"), store: "sqlite", drop: async () => {} };
  }
  const name = prefix + randomBytes(6).toString("hex");
  const query = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = "/" + name;
  return { url: url.toString(), store: "postgres", drop: () => query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

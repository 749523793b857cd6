// A real riskapi server for the SDK's integration tests: the binary built by
// globalSetup.ts, run with `serve --demo` on a fresh database of the store
// under test (@riskapi/testkit's freshDatabase: SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set).

import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstLine, freshDatabase, listenAddr, terminate } from "@riskapi/testkit";

/** The credentials `serve --demo` prints once, on one JSON line. */
export interface Demo {
  apiKey: string;
  email: string;
  password: string;
  tenantId: string;
}

/** A running server. */
export interface Server {
  /** "http://127.0.0.1:<port>". */
  baseUrl: string;
  demo: Demo;
  store: "sqlite" | "postgres";
  stop(): Promise<void>;
}

/** Starts the binary with a fresh database; stop() ends it (SIGTERM) and drops the database. */
export async function startServer(binary: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-ts-srv-"));
  const db = await freshDatabase(dir, "riskapi_t_ts_");
  const child = spawn(binary, ["serve", "--demo"], {
    // No rate limit: the tests send bursts from one key.
    env: { PATH: process.env.PATH ?? "", ADDR: "127.0.0.1:0", DATABASE_URL: db.url, UPLOAD_DIR: join(dir, "uploads"), RATE_LIMIT_RPS: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log: string[] = [];
  const stop = async () => {
    await terminate(child);
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [demo, baseUrl] = await Promise.all([firstLine(child, "stdout", () => true, log), listenAddr(child, log)]);
    return { baseUrl, demo: JSON.parse(demo) as Demo, store: db.store, stop };
  } catch (e) {
    await stop();
    throw new Error(`riskapi did not start: ${String(e)}\n${log.join("\n")}`);
  }
}

// The real riskapi server as a child process, on a fresh database, for the
// npm workspaces' integration and end-to-end tests.

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDatabase } from "./database.js";
import { listenAddr, terminate } from "./process.js";

/** Options of {@link startServer}. */
export interface ServerOptions {
  /** Arguments after `serve`, e.g. ["--demo"]. */
  args?: string[];
  /** The PostgreSQL database name prefix, e.g. "riskapi_t_ts_" (see freshDatabase). */
  dbPrefix: string;
  /** Extra environment, added to (and overriding) the defaults. */
  env?: Record<string, string>;
}

/** A running server. */
export interface ServerProcess {
  /** "http://127.0.0.1:<port>". */
  baseUrl: string;
  store: "sqlite" | "postgres";
  /** The environment it runs with, without ADDR: give it to `api` subcommands so they use the same database. */
  env: Record<string, string>;
  child: ChildProcess;
  /** Its stderr so far, one log line an entry. */
  log: string[];
  /** Ends it (SIGTERM), drops its database and removes its files. */
  stop(): Promise<void>;
}

/**
 * startServer runs `binary serve …args` on 127.0.0.1 and a free port, with a
 * fresh database and upload folder, rate limiting off (tests send bursts from
 * one credential and one address), and waits until it listens. Its stdout is a
 * pipe on child.stdout (serve --demo prints its credentials there).
 */
export async function startServer(binary: string, opts: ServerOptions): Promise<ServerProcess> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-srv-"));
  const db = await freshDatabase(dir, opts.dbPrefix);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    DATABASE_URL: db.url,
    UPLOAD_DIR: join(dir, "uploads"),
    RATE_LIMIT_RPS: "0",
    // On PostgreSQL the server has no data directory of its own and would write
    // its key file to ./data in whatever folder the tests run from.
    ...(db.store === "postgres" ? { SECRET_KEY: randomBytes(32).toString("hex") } : {}),
    ...opts.env,
  };
  const child = spawn(binary, ["serve", ...(opts.args ?? [])], {
    env: { ...env, ADDR: "127.0.0.1:0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log: string[] = [];
  const stop = async () => {
    await terminate(child);
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const baseUrl = await listenAddr(child, log);
    return { baseUrl, store: db.store, env, child, log, stop };
  } catch (e) {
    await stop();
    throw new Error(`riskapi did not start: ${String(e)}\n${log.join("\n")}`);
  }
}

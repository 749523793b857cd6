// A real riskapi for the dashboard's end-to-end tests: the binary built once
// by globalSetup.ts, on a fresh database of the store under test — a
// temporary SQLite file, or, when TEST_DATABASE_URL names a PostgreSQL server,
// a database riskapi_t_e2e_<random> created for the run and dropped after it.

import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freshDatabase, listenAddr, terminate } from "@riskapi/testkit";

/** A user the tests sign in as. */
export interface Account {
  email: string;
  password: string;
  tenantId: string;
}

/** A running server. */
export interface Server {
  /** "http://127.0.0.1:<port>". */
  baseUrl: string;
  store: "sqlite" | "postgres";
  /** Runs an `api` subcommand against the server's database; returns its stdout's JSON line. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  /** A new tenant with one user of the given role. */
  account(role?: "admin" | "member", tenantId?: string): Promise<Account>;
  stop(): Promise<void>;
}

/** startServer starts binary with a fresh database; stop() ends it (SIGTERM) and drops the database. */
export async function startServer(binary: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-e2e-"));
  const db = await freshDatabase(dir, "riskapi_t_e2e_");
  const env = {
    PATH: process.env.PATH ?? "",
    DATABASE_URL: db.url,
    UPLOAD_DIR: join(dir, "uploads"),
    JWT_SECRET: randomBytes(32).toString("hex"),
    // Sign-in is rate limited per address, and every test signs in from 127.0.0.1.
    RATE_LIMIT_RPS: "0",
  };
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(binary, args, { env });
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  };
  const child = spawn(binary, ["serve"], { env: { ...env, ADDR: "127.0.0.1:0" }, stdio: ["ignore", "ignore", "pipe"] });
  const log: string[] = [];
  const stop = async () => {
    await terminate(child);
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const baseUrl = await listenAddr(child, log);
    const account = async (role: "admin" | "member" = "admin", tenantId?: string): Promise<Account> => {
      const tid = tenantId ?? String((await cli("tenant", "create", "--name", "e2e " + randomBytes(3).toString("hex"))).id);
      const email = `${role}-${randomBytes(4).toString("hex")}@e2e.test`;
      const password = randomBytes(12).toString("base64url");
      const args = ["user", "create", "--tenant", tid, "--email", email, "--password", password];
      await cli(...args, ...(role === "member" ? ["--role", "member"] : []));
      return { email, password, tenantId: tid };
    };
    return { baseUrl, store: db.store, cli, account, stop };
  } catch (e) {
    await stop();
    throw new Error(`riskapi did not start: ${String(e)}\n${log.join("\n")}`);
  }
}

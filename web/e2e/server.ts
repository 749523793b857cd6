// A real riskapi for the dashboard's end-to-end tests (testkit's server: the
// binary built once for the run, a fresh database of the store under test —
// SQLite, or PostgreSQL riskapi_t_e2e_<random> when TEST_DATABASE_URL is set),
// plus what only these tests need: tenants and users of either role, made
// with the binary's own commands.

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { startServer as start } from "@riskapi/testkit";

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
  /** A new user of the given role, in a new tenant unless tenantId is given. */
  account(role?: "admin" | "member", tenantId?: string): Promise<Account>;
  stop(): Promise<void>;
}

/** startServer starts binary (with env added to its environment); stop() ends it (SIGTERM) and drops its database. */
export async function startServer(binary: string, env: Record<string, string> = {}): Promise<Server> {
  const srv = await start(binary, { dbPrefix: "riskapi_t_e2e_", env });
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(binary, args, { env: srv.env });
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  };
  const account = async (role: "admin" | "member" = "admin", tenantId?: string): Promise<Account> => {
    const tid = tenantId ?? String((await cli("tenant", "create", "--name", "e2e " + randomBytes(3).toString("hex"))).id);
    const email = `${role}-${randomBytes(4).toString("hex")}@e2e.test`;
    const password = randomBytes(12).toString("base64url");
    await cli("user", "create", "--tenant", tid, "--email", email, "--password", password, ...(role === "member" ? ["--role", "member"] : []));
    return { email, password, tenantId: tid };
  };
  return { baseUrl: srv.baseUrl, account, stop: srv.stop };
}

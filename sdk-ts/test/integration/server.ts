// A real riskapi server for the SDK's integration tests: the binary built by
// @riskapi/testkit's globalSetup, run with `serve --demo` on a fresh database
// of the store under test (SQLite, or PostgreSQL when TEST_DATABASE_URL is set).

import { firstLine, startServer as start } from "@riskapi/testkit";

/** The credentials `serve --demo` prints once, on one JSON line. */
export interface Demo {
  apiKey: string;
  email: string;
  password: string;
  tenantId: string;
}

/** A running server and its demo tenant's credentials. */
export interface Server {
  /** "http://127.0.0.1:<port>". */
  baseUrl: string;
  demo: Demo;
  store: "sqlite" | "postgres";
  stop(): Promise<void>;
}

/** Starts `serve --demo` with a fresh database; stop() ends it and drops the database. */
export async function startServer(binary: string): Promise<Server> {
  const s = await start(binary, { args: ["--demo"], dbPrefix: "riskapi_t_ts_" });
  try {
    const demo = JSON.parse(await firstLine(s.child, "stdout", () => true, s.log)) as Demo;
    return { baseUrl: s.baseUrl, demo, store: s.store, stop: s.stop };
  } catch (e) {
    await s.stop();
    throw e;
  }
}

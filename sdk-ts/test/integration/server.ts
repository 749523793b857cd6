// A real riskapi server for integration tests: the binary built by
// globalSetup.ts, run with `serve --demo` on a fresh database of the store
// under test — a temporary SQLite file, or, when TEST_DATABASE_URL names a
// PostgreSQL server, a database riskapi_t_ts_<random> created on it for this
// run and dropped afterwards.

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";

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
  /** "sqlite" or "postgres". */
  store: string;
  stop(): Promise<void>;
}

/** Starts the binary with a fresh database; stop() ends it (SIGTERM) and drops the database. */
export async function startServer(binary: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-ts-srv-"));
  const db = await freshDatabase(dir);
  const child = spawn(binary, ["serve", "--demo"], {
    env: { PATH: process.env.PATH ?? "", ADDR: "127.0.0.1:0", DATABASE_URL: db.url, UPLOAD_DIR: join(dir, "uploads"), RATE_LIMIT_RPS: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  try {
    const [demo, addr] = await Promise.all([firstLine(child, "stdout", () => true, stderr), firstLine(child, "stderr", (l) => l.includes("riskapi listening"), stderr)]);
    const baseUrl = "http://" + (JSON.parse(addr) as { addr: string }).addr;
    return {
      baseUrl,
      demo: JSON.parse(demo) as Demo,
      store: db.store,
      stop: async () => {
        await terminate(child);
        await db.drop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await terminate(child);
    await db.drop();
    await rm(dir, { recursive: true, force: true });
    throw new Error(`riskapi did not start: ${String(e)}\n${stderr.join("\n")}`);
  }
}

function firstLine(child: ChildProcess, stream: "stdout" | "stderr", match: (line: string) => boolean, log: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child[stream]! });
    let found = false;
    rl.on("line", (line) => {
      if (stream === "stderr") log.push(line);
      if (!found && match(line)) {
        found = true;
        resolve(line);
      }
    });
    child.once("exit", (code) => found || reject(new Error(`exited with ${code} before a line on ${stream}`)));
    setTimeout(() => found || reject(new Error(`no line on ${stream} within 60 s`)), 60_000).unref();
  });
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

async function freshDatabase(dir: string): Promise<{ url: string; store: string; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin || !/^postgres(ql)?:\/\//.test(admin)) {
    return { url: "sqlite://" + join(dir, "riskapi.db"), store: "sqlite", drop: async () => {} };
  }
  const name = "riskapi_t_ts_" + randomBytes(6).toString("hex");
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
  return {
    url: url.toString(),
    store: "postgres",
    drop: () => query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

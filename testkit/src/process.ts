// Helpers for a server run as a child process.

import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * firstLine resolves with the first line of the child's stream that match
 * accepts, and rejects if the child exits first or nothing matches within
 * 60 s. Every line of stderr is appended to log, for the failure message.
 */
export function firstLine(child: ChildProcess, stream: "stdout" | "stderr", match: (line: string) => boolean, log: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let found = false;
    createInterface({ input: child[stream]! }).on("line", (line) => {
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

/** listenAddr waits for the server's "riskapi listening" log line and returns its base URL, "http://host:port". */
export async function listenAddr(child: ChildProcess, log: string[]): Promise<string> {
  const line = await firstLine(child, "stderr", (l) => l.includes("riskapi listening"), log);
  return "http://" + (JSON.parse(line) as { addr: string }).addr;
}

/** terminate stops the child with SIGTERM (in-flight requests finish), SIGKILL after 15 s. */
export async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

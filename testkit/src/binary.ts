// The riskapi binary, built once per test run from this repository's
// ./cmd/api (so it embeds the committed web/dist), for tests that run the real
// server as a process.

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The repository root: testkit/src/ is two levels below it. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** A built binary; remove() deletes it and its temporary folder. */
export interface Binary {
  path: string;
  remove(): Promise<void>;
}

/** buildApi runs `go build -o <tmp>/api ./cmd/api` at the repository root. */
export async function buildApi(): Promise<Binary> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-bin-"));
  const path = join(dir, "api");
  try {
    await promisify(execFile)("go", ["build", "-o", path, "./cmd/api"], { cwd: repoRoot, maxBuffer: 16 << 20 });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

// Builds the riskapi binary once for every end-to-end test file
// (`go build -o <tmp>/api ./cmd/api`, which embeds web/dist), and removes it
// afterwards.

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), "riskapi-e2e-bin-"));
  const bin = join(dir, "api");
  await promisify(execFile)("go", ["build", "-o", bin, "./cmd/api"], { cwd: repoRoot, maxBuffer: 16 << 20 });
  project.provide("riskapiBinary", bin);
  return () => rm(dir, { recursive: true, force: true });
}

declare module "vitest" {
  export interface ProvidedContext {
    riskapiBinary: string;
  }
}

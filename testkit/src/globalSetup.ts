// A Vitest globalSetup that builds the riskapi binary once for every test
// file of a run and removes it afterwards; test files get its path with
// inject("riskapiBinary"). Use it as `globalSetup: ["@riskapi/testkit/globalSetup"]`.

import type { TestProject } from "vitest/node";
import { buildApi } from "./binary.js";
import "./provided.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const binary = await buildApi();
  project.provide("riskapiBinary", binary.path);
  return binary.remove;
}


// Builds the riskapi binary once for every integration test file, and removes
// it afterwards.

import { buildApi } from "@riskapi/testkit";
import type { TestProject } from "vitest/node";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const binary = await buildApi();
  project.provide("riskapiBinary", binary.path);
  return binary.remove;
}

declare module "vitest" {
  export interface ProvidedContext {
    riskapiBinary: string;
  }
}

// Builds the riskapi binary once for every end-to-end test file (it embeds
// web/dist), and removes it afterwards.

import { buildApi } from "@riskapi/testkit";
import type { TestProject } from "vitest/node";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const bin = await buildApi();
  project.provide("riskapiBinary", bin.path);
  return bin.remove;
}

declare module "vitest" {
  export interface ProvidedContext {
    riskapiBinary: string;
  }
}

// What the globalSetup provides to test files, typed for inject().

import type {} from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The path of the riskapi binary built for this run (globalSetup.ts). */
    riskapiBinary: string;
  }
}

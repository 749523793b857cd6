import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["@riskapi/testkit/globalSetup"],
    // Building the server and starting it on PostgreSQL take a while on a busy machine.
    hookTimeout: 300_000,
    testTimeout: 60_000,
  },
});

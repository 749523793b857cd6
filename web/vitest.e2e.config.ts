import { defineConfig } from "vitest/config";

// End-to-end tests drive a real Chromium against a real riskapi server (see
// e2e/harness.ts); they share one server binary and run one file at a time on
// this machine's few cores.
export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts"],
    globalSetup: ["e2e/globalSetup.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    pool: "forks",
  },
});

import { defineConfig } from "vitest/config";

// End-to-end tests drive a real Chromium against a real riskapi server (see
// e2e/server.ts and e2e/browser.ts); the binary is built once for the run
// (testkit's globalSetup), and files run one at a time on a machine of few cores.
export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts"],
    globalSetup: ["@riskapi/testkit/globalSetup"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    // The browser and the server share a busy machine with the Go tests.
    expect: { poll: { timeout: 15_000, interval: 100 } },
    pool: "forks",
  },
});

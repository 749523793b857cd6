import { defineConfig } from "vitest/config";

// End-to-end tests drive a real Chromium against a real riskapi server (see
// e2e/server.ts and e2e/browser.ts); the binary is built once for the run
// (testkit's globalSetup). Two files run at once, each with its own server and
// browser: on CI's two cores that took the suite from about 6 to 4.5 minutes
// (about 9 on a slower machine of the same kind), inside CI's 45 (.ci/run runs
// it on SQLite only).
export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts"],
    globalSetup: ["@riskapi/testkit/globalSetup"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 240_000,
    fileParallelism: true,
    maxWorkers: 2,
    // The browser and the server share a busy machine with the Go tests.
    expect: { poll: { timeout: 15_000, interval: 100 } },
    pool: "forks",
  },
});

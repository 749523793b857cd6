import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Unit tests (the outbox's state machine and sender, the register's URL state
// and views rendered to HTML) run in Node with fake-indexeddb; the SDK comes from its source, as in the build.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@riskapi\/sdk\/retry$/, replacement: fileURLToPath(new URL("../sdk-ts/src/retry.ts", import.meta.url)) },
      { find: /^@riskapi\/sdk$/, replacement: fileURLToPath(new URL("../sdk-ts/src/index.ts", import.meta.url)) },
    ],
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    include: ["src/**/*.test.{ts,tsx}"],
    environment: "node",
  },
});

import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The SDK is compiled from its source, so building the dashboard never
// depends on sdk-ts having been built first (sdk-ts is the dashboard's only
// HTTP client, and sdk-ts/src/retry.ts the one home of the retry rule).
const sdk = (file: string) => fileURLToPath(new URL(`../sdk-ts/src/${file}`, import.meta.url));

export default defineConfig({
  // JSX for Preact (the automatic runtime, as tsconfig.json says).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  resolve: {
    alias: [
      { find: /^@riskapi\/sdk\/retry$/, replacement: sdk("retry.ts") },
      { find: /^@riskapi\/sdk$/, replacement: sdk("index.ts") },
    ],
  },
  // `npm run dev`: the API stays same-origin through Vite's proxy, so the
  // session cookie and the cross-site write check work as they do at /.
  server: { proxy: { "/v1": process.env.RISKAPI_URL ?? "http://127.0.0.1:8080" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Deterministic output: content-hashed names, no source maps (which would
    // carry absolute paths), nothing inlined as data: URLs (the CSP allows
    // only 'self').
    sourcemap: false,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});

import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vite";

// The SDK is compiled from its source, so building the dashboard never
// depends on sdk-ts having been built first (sdk-ts is the dashboard's only
// HTTP client, and sdk-ts/src/retry.ts the one home of the retry rule).
const sdk = (file: string) => fileURLToPath(new URL(`../sdk-ts/src/${file}`, import.meta.url));

// The first load is one chunk: every module main.tsx reaches through static
// imports (the sign-in form, the shell, the outbox, the risk list, Preact and
// the SDK's client). What only a dynamic import() reaches (the other pages,
// src/lazy.tsx) gets chunks of its own. Without this group, Rolldown would put
// the modules the lazy chunks share with the first load into a second file,
// and the first load would take two requests and compress less well.
const entry = fileURLToPath(new URL("src/main.tsx", import.meta.url));
let firstLoad: Set<string> | undefined;
const resetFirstLoad: Plugin = { name: "riskapi:first-load", buildStart: () => void (firstLoad = undefined) };
interface Graph {
  getModuleInfo(id: string): { importedIds: readonly string[] } | null;
}
function inFirstLoad(id: string, graph: Graph): string | null {
  if (!firstLoad) {
    firstLoad = new Set([entry]);
    for (const m of firstLoad) for (const dep of graph.getModuleInfo(m)?.importedIds ?? []) firstLoad.add(dep);
  }
  return firstLoad.has(id) ? "index" : null;
}

export default defineConfig({
  plugins: [resetFirstLoad],
  // JSX for Preact (the automatic runtime, as tsconfig.json says).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  resolve: {
    alias: [
      { find: /^@riskapi\/sdk\/retry$/, replacement: sdk("retry.ts") },
      // Its own entry, so that the first load, which imports the SDK's index, carries none of it.
      { find: /^@riskapi\/sdk\/trends$/, replacement: sdk("trends.ts") },
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
    rolldownOptions: { output: { codeSplitting: { groups: [{ name: inFirstLoad }] } } },
  },
});

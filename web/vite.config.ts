import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig, transformWithOxc, type Plugin } from "vite";

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

// The service worker (src/sw/sw.ts, docs/dashboard.md "Offline") is a file of
// its own at the root, /sw.js, so that its scope is the whole app: compiled
// from TypeScript alone (it imports nothing), with the list of the build's
// files it stores at install and a hash of them that names its cache. Its
// text changes whenever a file of the build does, so a new release installs a
// new worker. Not minified: it is no part of the first load.
const swSource = fileURLToPath(new URL("src/sw/sw.ts", import.meta.url));
const publicDir = fileURLToPath(new URL("public", import.meta.url));
const serviceWorker: Plugin = {
  name: "riskapi:service-worker",
  apply: "build",
  enforce: "post",
  async generateBundle(_options, bundle) {
    const built = Object.keys(bundle).filter((f) => f !== "index.html");
    const files = ["/", ...[...built, ...readdirSync(publicDir)].sort().map((f) => "/" + f)];
    const hash = createHash("sha256");
    for (const name of Object.keys(bundle).sort()) {
      const out = bundle[name]!;
      hash.update(name).update(out.type === "chunk" ? out.code : out.source);
    }
    const { code } = await transformWithOxc(readFileSync(swSource, "utf8"), swSource, { lang: "ts" });
    const source = code
      .replace(/^export \{\};\n/m, "")
      .replace("__RISKAPI_FILES__", JSON.stringify(files))
      .replace("__RISKAPI_BUILD__", JSON.stringify(hash.digest("hex").slice(0, 16)));
    this.emitFile({ type: "asset", fileName: "sw.js", source });
  },
};

export default defineConfig({
  plugins: [resetFirstLoad, serviceWorker],
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

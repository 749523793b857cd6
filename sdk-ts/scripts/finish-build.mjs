// Run by `npm run build` after both builds. It marks dist/cjs as CommonJS, and
// replaces the ESM build's copy of the generated API types (openapi.d.ts, about
// 360 kB, types only: nothing of it exists at run time) with a re-export of the
// CommonJS build's, so the package ships them once (docs/sdk-typescript.md,
// "Install and build"). That way round because an ES module may import a CommonJS one under
// every moduleResolution, while the reverse is refused under node16 (TS1479), even
// for types.
import { readFileSync, writeFileSync } from "node:fs";

writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs" }) + "\n");

const shared = "openapi";
const exported = (text) => [...text.matchAll(/^export (?:type|interface) (\$?\w+)/gm)].map((m) => m[1]);
const esm = readFileSync(`dist/${shared}.d.ts`, "utf8");
const names = exported(readFileSync(`dist/cjs/${shared}.d.ts`, "utf8"));
if (names.length === 0 || names.join() !== exported(esm).join() || /^export (?!type |interface )/m.test(esm)) {
  throw new Error(`dist/${shared}.d.ts is not the types-only twin of dist/cjs/${shared}.d.ts`);
}
writeFileSync(
  `dist/${shared}.d.ts`,
  `// The generated API types, declared once for both builds: in ./cjs/${shared}.d.ts.\n` +
    `export type { ${names.join(", ")} } from "./cjs/${shared}.js";\n`,
);
